//! Small hand-built client states for the scheduling, enforcement and accounting tests
//! (built for this crate's tests, and for other crates' with the `test-support` feature).

use crate::Time;
use crate::model::{
    ActiveTask, App, AppId, AppVersion, AppVersionId, ClientState, Coprocessor, Job, JobId,
    Project, ProjectId, ResourceType, ResourceUsage, SchedulerState, Workunit, WorkunitId,
};
use crate::rr_sim::RrSimOutput;

/// Usage of a plain or multithread CPU job.
pub fn cpu(ncpus: f64) -> ResourceUsage {
    ResourceUsage { avg_ncpus: ncpus, coprocessor: None }
}

/// Usage of a GPU job.
pub fn gpu(resource: ResourceType, ncpus: f64, instances: f64) -> ResourceUsage {
    ResourceUsage { avg_ncpus: ncpus, coprocessor: Some((resource, instances)) }
}

/// An rr_sim result in which nothing misses its deadline.
pub fn quiet_rr(state: &ClientState) -> RrSimOutput {
    RrSimOutput {
        jobs: vec![Default::default(); state.jobs.len()],
        projects: vec![Default::default(); state.projects.len()],
        ..Default::default()
    }
}

/// Marks jobs as missing their deadlines in an rr_sim result, counting them per project.
pub fn mark_deadline_missed(state: &ClientState, rr: &mut RrSimOutput, jobs: &[JobId]) {
    for &id in jobs {
        rr.jobs[id.index()].deadline_missed = true;
        let job = state.job(id);
        let resource = state.app_version(job.app_version.unwrap()).usage.main_resource();
        rr.projects[job.project.index()].deadlines_missed[resource] += 1;
    }
}

/// Builds a client state step by step.
#[derive(Clone)]
pub struct StateBuilder {
    /// The state built so far.
    pub state: ClientState,
}

impl StateBuilder {
    /// A host with `ncpus` CPUs of 1 Gflops and nothing attached.
    pub fn new(ncpus: u32) -> Self {
        let mut state = ClientState::default();
        state.host.p_ncpus = ncpus;
        state.host.p_fpops = 1e9;
        StateBuilder { state }
    }

    /// Adds `count` GPUs of a type, each worth 10 CPUs (peak 50 Gflops).
    pub fn gpus(mut self, resource: ResourceType, count: u32) -> Self {
        self.state.host.coprocessors[resource] = Some(Coprocessor {
            resource,
            name: "test gpu".into(),
            count,
            peak_flops: 5e10,
            available_ram: 0.0,
        });
        self
    }

    /// The finished state.
    pub fn build(self) -> ClientState {
        self.state
    }

    /// Attaches a project.
    pub fn project(&mut self, name: &str, share: f64) -> ProjectId {
        self.state.projects.push(Project::new(name, format!("https://{name}.test/"), share));
        ProjectId::from_index(self.state.projects.len() - 1)
    }

    /// Adds an app with one version of the given usage.
    pub fn app_version(&mut self, project: ProjectId, usage: ResourceUsage) -> AppVersionId {
        self.state.apps.push(App::new(project, format!("app{}", self.state.apps.len())));
        let app = AppId::from_index(self.state.apps.len() - 1);
        self.state.app_versions.push(AppVersion::new(project, app, 1, "", usage, 1e9));
        AppVersionId::from_index(self.state.app_versions.len() - 1)
    }

    /// Limits the concurrent jobs of an app version's app.
    pub fn max_concurrent(&mut self, version: AppVersionId, n: u32) {
        let app = self.state.app_version(version).app;
        self.state.apps[app.index()].max_concurrent = Some(n);
    }

    /// Adds a runnable job.
    pub fn job(
        &mut self,
        project: ProjectId,
        version: AppVersionId,
        received: Time,
        deadline: Time,
    ) -> JobId {
        let app = self.state.app_version(version).app;
        self.state.workunits.push(Workunit {
            project,
            name: format!("wu{}", self.state.workunits.len()),
            app,
            rsc_fpops_est: 3.6e12,
            rsc_fpops_bound: 3.6e13,
            rsc_memory_bound: 1e8,
            rsc_disk_bound: 1e8,
            command_line: String::new(),
            input_files: Vec::new(),
        });
        let workunit = WorkunitId::from_index(self.state.workunits.len() - 1);
        let name = format!("job{}", self.state.jobs.len());
        self.state.jobs.push(Job::downloaded(project, name, workunit, version, received, deadline));
        JobId::from_index(self.state.jobs.len() - 1)
    }

    /// Gives a job a task in the given scheduler state, started at `run_start`, with
    /// `elapsed` seconds run and a checkpoint at `checkpoint_elapsed` taken at wall time
    /// `checkpoint_wall`.
    pub fn task(
        &mut self,
        job: JobId,
        scheduler_state: SchedulerState,
        run_start: Time,
        elapsed: f64,
        checkpoint_elapsed: f64,
        checkpoint_wall: Time,
    ) -> &mut ActiveTask {
        let slot = self.state.jobs.iter().filter(|j| j.task.is_some()).count() as u32;
        let mut task = ActiveTask::new(slot);
        task.scheduler_state = scheduler_state;
        task.run_start_time = run_start;
        task.elapsed_time = elapsed;
        task.checkpoint_elapsed_time = checkpoint_elapsed;
        task.checkpoint_wall_time = checkpoint_wall;
        self.state.jobs[job.index()].task.insert(task)
    }
}

/// A random host with projects, CPU, multithread and GPU jobs (some running, some
/// preempted, some endangered in the rr_sim), debts and RECs, for the invariant tests.
#[cfg(test)]
pub fn random_scenario() -> impl proptest::strategy::Strategy<Value = (ClientState, RrSimOutput)> {
    use proptest::prelude::*;
    let job =
        (0usize..4, 0usize..6, 0.0f64..1e5, 1e4f64..1e6, 0u8..4, 0.0f64..7200.0, any::<bool>());
    (
        1u32..9,
        0u32..4,
        proptest::collection::vec((0.0f64..200.0, -1e4f64..1e5, 0.0f64..1e13), 1..5),
        proptest::collection::vec(job, 0..40),
        proptest::option::of(1u32..4),
    )
        .prop_map(|(ncpus, ngpus, projects, jobs, max_concurrent)| {
            let mut b = StateBuilder::new(ncpus);
            if ngpus > 0 {
                b = b.gpus(ResourceType::Nvidia, ngpus);
            }
            let usages = [
                cpu(1.0),
                cpu(2.0),
                cpu(5.0),
                gpu(ResourceType::Nvidia, 0.2, 0.5),
                gpu(ResourceType::Nvidia, 1.0, 1.0),
                gpu(ResourceType::Nvidia, 0.5, 0.3),
            ];
            let mut versions = Vec::new();
            for (i, &(share, debt, rec)) in projects.iter().enumerate() {
                let p = b.project(&format!("p{i}"), share);
                b.state.projects[i].short_term_debt = debt;
                b.state.projects[i].rec = rec;
                versions.push(usages.map(|u| b.app_version(p, u)));
            }
            if let Some(n) = max_concurrent {
                b.max_concurrent(versions[0][0], n);
            }
            let mut endangered = Vec::new();
            for &(p, u, received, deadline, kind, ran, missed) in &jobs {
                let p = p % projects.len();
                let id = b.job(ProjectId::from_index(p), versions[p][u], received, deadline);
                match kind {
                    1 => {
                        b.task(id, SchedulerState::Preempted, 0.0, ran, ran / 2.0, 10.0);
                    }
                    2 => {
                        b.task(id, SchedulerState::Uninitialized, 0.0, ran, ran, 10.0);
                    }
                    _ => {}
                }
                if missed {
                    endangered.push(id);
                }
            }
            let state = b.build();
            let mut rr = quiet_rr(&state);
            mark_deadline_missed(&state, &mut rr, &endangered);
            (state, rr)
        })
}
