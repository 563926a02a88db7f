//! The whole client state: everything a decision is a function of (with `now`).

use super::app::{App, AppVersion};
use super::host::{Host, NetStats, TimeStats};
use super::ids::{AppId, AppVersionId, FileId, JobId, ProjectId, WorkunitId};
use super::job::Job;
use super::prefs::{CcConfig, Prefs};
use super::project::Project;
use super::resource::{ResourceMap, ResourceType};
use super::workunit::{FileInfo, FileRef, Workunit};
use serde::{Deserialize, Serialize};

/// The user's run mode for computation or network (`<user_run_request>` and friends).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum RunMode {
    /// Always run, whatever the preferences say (1).
    Always,
    /// Follow the preferences (2).
    #[default]
    Auto,
    /// Never run (3).
    Never,
}

impl RunMode {
    /// The mode from BOINC's number; `None` for an unknown number.
    pub fn from_code(code: i64) -> Option<RunMode> {
        match code {
            1 => Some(RunMode::Always),
            2 => Some(RunMode::Auto),
            3 => Some(RunMode::Never),
            _ => None,
        }
    }
}

/// The client's complete state. Vectors are indexed by the typed ids ([`super::JobId`], [`super::ProjectId`] and the others).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientState {
    /// The host.
    pub host: Host,
    /// Availability statistics.
    pub time_stats: TimeStats,
    /// Network transfer averages.
    #[serde(default)]
    pub net_stats: NetStats,
    /// Global preferences in force.
    pub prefs: Prefs,
    /// Client configuration.
    pub config: CcConfig,
    /// Attached projects.
    pub projects: Vec<Project>,
    /// Apps of all projects.
    pub apps: Vec<App>,
    /// App versions of all projects.
    pub app_versions: Vec<AppVersion>,
    /// Workunits of all projects.
    pub workunits: Vec<Workunit>,
    /// Jobs of all projects.
    pub jobs: Vec<Job>,
    /// Files of all projects.
    pub files: Vec<FileInfo>,
    /// Computation mode.
    pub run_mode: RunMode,
    /// GPU computation mode.
    pub gpu_mode: RunMode,
    /// Network mode.
    pub network_mode: RunMode,
    /// Computing is suspended for lack of disk space (seed 004): `run_mode` is `Never`
    /// and this is the mode the user had, restored when space returns. Kept in the state
    /// file so that a client restarted meanwhile still knows the suspension is the
    /// disk's, not the user's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_mode_before_disk_suspension: Option<RunMode>,
    /// Bytes moved each day, oldest first (kept beside the state in
    /// daily_xfer_history.xml, as BOINC keeps it).
    #[serde(default)]
    pub daily_transfers: Vec<super::DailyTransfer>,
}

impl ClientState {
    /// The project with an id.
    pub fn project(&self, id: ProjectId) -> &Project {
        &self.projects[id.index()]
    }

    /// The job with an id.
    pub fn job(&self, id: JobId) -> &Job {
        &self.jobs[id.index()]
    }

    /// The app with an id.
    pub fn app(&self, id: AppId) -> &App {
        &self.apps[id.index()]
    }

    /// The app version with an id.
    pub fn app_version(&self, id: AppVersionId) -> &AppVersion {
        &self.app_versions[id.index()]
    }

    /// The workunit with an id.
    pub fn workunit(&self, id: WorkunitId) -> &Workunit {
        &self.workunits[id.index()]
    }

    /// The file with an id.
    pub fn file(&self, id: FileId) -> &FileInfo {
        &self.files[id.index()]
    }

    /// The name the app opens a referenced file by: its `<open_name>`, else the file's
    /// own name.
    pub fn open_name<'s>(&'s self, reference: &'s FileRef) -> &'s str {
        if reference.open_name.is_empty() {
            &self.file(reference.file).name
        } else {
            &reference.open_name
        }
    }

    /// The executable of an app version: its `<main_program/>` reference and the file.
    pub fn main_program(&self, version: AppVersionId) -> Option<(&FileRef, &FileInfo)> {
        let reference = self.app_version(version).main_program()?;
        Some((reference, self.files.get(reference.file.index())?))
    }

    /// The files a job's task reads: its workunit's inputs, by the names the app opens.
    pub fn job_input_files(&self, job: JobId) -> &[FileRef] {
        &self.workunit(self.job(job).workunit).input_files
    }

    /// The files a job's task writes, by the names the app opens.
    pub fn job_output_files(&self, job: JobId) -> &[FileRef] {
        &self.job(job).output_files
    }

    /// Ids of all projects.
    pub fn project_ids(&self) -> impl Iterator<Item = ProjectId> + use<> {
        (0..self.projects.len()).map(ProjectId::from_index)
    }

    /// Ids of all jobs.
    pub fn job_ids(&self) -> impl Iterator<Item = JobId> + use<> {
        (0..self.jobs.len()).map(JobId::from_index)
    }

    /// The project with a master URL.
    pub fn project_by_url(&self, master_url: &str) -> Option<ProjectId> {
        self.projects.iter().position(|p| p.master_url == master_url).map(ProjectId::from_index)
    }

    /// The project with a name.
    pub fn project_by_name(&self, name: &str) -> Option<ProjectId> {
        self.projects.iter().position(|p| p.name == name).map(ProjectId::from_index)
    }

    /// CPUs the client may use: the hardware count, or cc_config's `<ncpus>`, limited by
    /// the `max_ncpus_pct` and `max_ncpus` preferences; at least one, at most
    /// [`MAX_CPUS`](crate::model::MAX_CPUS).
    pub fn ncpus(&self) -> u32 {
        self.prefs.usable_cpus(self.reported_ncpus().min(crate::model::MAX_CPUS))
    }

    /// The CPU count the client reports to projects (`<p_ncpus>`): cc_config's
    /// `<ncpus>` when set, as the real client reports it, else the hardware count. The
    /// preferences' limits are applied by whoever reads it ([`Prefs::usable_cpus`]).
    pub fn reported_ncpus(&self) -> u32 {
        self.config.ncpus.filter(|&n| n > 0).unwrap_or(self.host.p_ncpus)
    }

    /// Whether the client uses any GPU: BOINC tells nothing of GPU computation (no
    /// suspend reason, no event) on a host whose GPUs it does not use.
    pub fn uses_gpus(&self) -> bool {
        ResourceType::GPUS.into_iter().any(|gpu| self.instances(gpu) > 0)
    }

    /// Instances of a processing resource the client may use (GPUs: at most
    /// [`MAX_GPU_INSTANCES`](crate::model::MAX_GPU_INSTANCES) of a type).
    pub fn instances(&self, resource: ResourceType) -> u32 {
        match resource {
            ResourceType::Cpu => self.ncpus(),
            _ if self.config.no_gpus => 0,
            gpu => self.host.hardware_instances(gpu).min(crate::model::MAX_GPU_INSTANCES),
        }
    }

    /// Instances of every resource the client may use.
    pub fn instance_counts(&self) -> ResourceMap<u32> {
        ResourceMap::from_fn(|r| self.instances(r))
    }

    /// The resources the client may use (at least one instance), CPU first.
    pub fn usable_resources(&self) -> impl Iterator<Item = ResourceType> + '_ {
        ResourceType::ALL.into_iter().filter(|&r| self.instances(r) > 0)
    }

    /// Sum of the resource shares of the projects for which `include` holds.
    pub fn total_share(&self, mut include: impl FnMut(ProjectId) -> bool) -> f64 {
        self.project_ids()
            .filter(|&p| include(p))
            .map(|p| self.project(p).resource_share.max(0.0))
            .sum()
    }
}
