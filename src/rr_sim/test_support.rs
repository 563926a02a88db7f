//! Small client states built by hand for the simulation's tests and those of the
//! modules that read its output.

use super::{RrSimOutput, simulate};
use crate::model::{
    App, AppId, AppVersion, AppVersionId, ClientState, Coprocessor, Job, JobId, Project,
    ProjectFacts, ProjectId, ResourceType, ResourceUsage, Workunit, WorkunitId,
};

pub(crate) const HOUR: f64 = 3600.0;

/// Builds small client states by hand: one app per app version, one workunit per job.
pub(crate) struct StateBuilder {
    pub(crate) state: ClientState,
}

impl StateBuilder {
    /// A host with `ncpus` CPUs of 1 GFLOPS, always on, and a 10-hour horizon.
    pub(crate) fn new(ncpus: u32) -> Self {
        let mut state = ClientState::default();
        state.host.p_ncpus = ncpus;
        state.host.p_fpops = 1e9;
        let mut builder = StateBuilder { state };
        builder.horizon_hours(10.0);
        builder
    }

    /// Sets the high water mark to `hours`.
    pub(crate) fn horizon_hours(&mut self, hours: f64) -> &mut Self {
        self.state.prefs.work_buf_min_days = hours / 24.0;
        self.state.prefs.work_buf_additional_days = 0.0;
        self
    }

    /// Gives the host `count` GPUs of a type.
    pub(crate) fn gpus(&mut self, resource: ResourceType, count: u32) -> &mut Self {
        self.state.host.coprocessors[resource] = Some(Coprocessor {
            resource,
            name: "test GPU".into(),
            count,
            peak_flops: 1e10,
            available_ram: 0.0,
        });
        self
    }

    /// Attaches a project.
    pub(crate) fn project(&mut self, name: &str, share: f64) -> ProjectId {
        self.state.projects.push(Project::new(name, format!("http://{name}/"), share));
        ProjectId::from_index(self.state.projects.len() - 1)
    }

    /// Adds an app and one version of it; the project then has an app version for the
    /// version's main resource.
    pub(crate) fn app_version(
        &mut self,
        project: ProjectId,
        usage: ResourceUsage,
        flops: f64,
    ) -> AppVersionId {
        let app = AppId::from_index(self.state.apps.len());
        self.state.apps.push(App::new(project, format!("app{}", app.index())));
        self.state.app_versions.push(AppVersion::new(project, app, 100, "", usage, flops));
        self.state.projects[project.index()].resources[usage.main_resource()].has_app_version =
            true;
        AppVersionId::from_index(self.state.app_versions.len() - 1)
    }

    /// Adds a downloaded job needing `seconds` of processing, due at `deadline`.
    pub(crate) fn job(
        &mut self,
        project: ProjectId,
        app_version: AppVersionId,
        seconds: f64,
        deadline: f64,
    ) -> JobId {
        let av = self.state.app_version(app_version).clone();
        let workunit = WorkunitId::from_index(self.state.workunits.len());
        self.state.workunits.push(Workunit {
            project,
            name: format!("wu{}", workunit.index()),
            app: av.app,
            rsc_fpops_est: seconds * av.flops,
            rsc_fpops_bound: seconds * av.flops * 10.0,
            rsc_memory_bound: 0.0,
            rsc_disk_bound: 0.0,
            command_line: String::new(),
            input_files: Vec::new(),
        });
        let id = JobId::from_index(self.state.jobs.len());
        let name = format!("job{}", id.index());
        let received = id.index() as f64;
        self.state.jobs.push(Job::downloaded(
            project,
            name,
            workunit,
            app_version,
            received,
            deadline,
        ));
        id
    }

    /// Runs the simulation at time 0.
    pub(crate) fn simulate(&self) -> RrSimOutput {
        simulate(&self.state, &ProjectFacts::gather(&self.state), 0.0)
    }
}

pub(crate) fn cpu_usage(ncpus: f64) -> ResourceUsage {
    ResourceUsage { avg_ncpus: ncpus, coprocessor: None }
}

pub(crate) fn gpu_usage(ncpus: f64, gpus: f64) -> ResourceUsage {
    ResourceUsage { avg_ncpus: ncpus, coprocessor: Some((ResourceType::Nvidia, gpus)) }
}

pub(crate) fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.abs().max(1.0)
}

macro_rules! assert_close {
    ($a:expr, $b:expr) => {{
        let (a, b) = ($a, $b);
        assert!(super::test_support::close(a, b), "{} = {a}, expected {b}", stringify!($a));
    }};
}
pub(crate) use assert_close;
