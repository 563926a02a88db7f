//! Apps and app versions (seed 000 notes 1–2): an app version says how many CPUs and
//! which coprocessor instances its jobs use, and how fast it runs.

use super::ids::{AppId, ProjectId};
use super::resource::ResourceType;
use super::workunit::FileRef;
use serde::{Deserialize, Serialize};

/// An application of a project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct App {
    /// The project the app belongs to.
    pub project: ProjectId,
    /// Short name (`<name>`).
    pub name: String,
    /// The name shown to users (`<user_friendly_name>`; empty: the short name).
    #[serde(default)]
    pub user_friendly_name: String,
    /// Don't run more than this many of its jobs at once (`None`: no limit).
    pub max_concurrent: Option<u32>,
    /// The app barely uses the CPU; its jobs always run.
    pub non_cpu_intensive: bool,
    /// How an emulated project generates this app's jobs (emulator scenarios only).
    pub emulation: Option<AppEmulation>,
}

impl App {
    /// An app of `project` with no limits and no emulation parameters.
    pub fn new(project: ProjectId, name: impl Into<String>) -> App {
        App {
            project,
            name: name.into(),
            user_friendly_name: String::new(),
            max_concurrent: None,
            non_cpu_intensive: false,
            emulation: None,
        }
    }
}

/// The BOINC client emulator's per-app tags (`<latency_bound>`, `<fpops_est>`,
/// `<fpops><mean><std_dev>`, `<weight>`, `<checkpoint_period>`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AppEmulation {
    /// Deadline = time sent + this, seconds.
    pub latency_bound: f64,
    /// The flops estimate the server sends with each job.
    pub fpops_est: f64,
    /// Mean of the jobs' true flops.
    pub fpops_mean: f64,
    /// Standard deviation of the jobs' true flops.
    pub fpops_std_dev: f64,
    /// Relative probability this app is chosen for a new job.
    pub weight: f64,
    /// The app checkpoints every this many seconds of running (0: never).
    pub checkpoint_period: f64,
    /// The files each of its jobs brings and leaves (all zero: disk is not emulated).
    #[serde(default)]
    pub files: AppFiles,
}

/// The emulator's per-app file tags (seed 004 in the emulator): `<input_nbytes>`,
/// `<sticky_nbytes>`, `<output_nbytes>`, `<file_priority>`, `<file_exp_days>`. Each job of
/// the app downloads one input file and one sticky file of these sizes and writes one
/// output file when it finishes.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct AppFiles {
    /// Size of the job's input file, deleted once the job is acknowledged.
    pub input_nbytes: f64,
    /// Size of the job's sticky file, kept after the job until disk space runs short.
    pub sticky_nbytes: f64,
    /// Size of the job's output file, written when it finishes, kept until acknowledged.
    pub output_nbytes: f64,
    /// The sticky file's deletion priority (seed 004 `<priority>`; `None`: P_LOW).
    pub priority: Option<i32>,
    /// The sticky file's lifetime in days (seed 004 `<exp_days>`; `None`: 60).
    pub exp_days: Option<f64>,
}

impl AppFiles {
    /// Whether the app's jobs take any disk space at all.
    pub fn any(&self) -> bool {
        self.input_nbytes > 0.0 || self.sticky_nbytes > 0.0 || self.output_nbytes > 0.0
    }

    /// Bytes one job needs on disk over its life: the input, sticky and output files.
    pub fn job_nbytes(&self) -> f64 {
        self.input_nbytes + self.sticky_nbytes + self.output_nbytes
    }
}

/// What one job of an app version occupies (seed 003: "some number (possibly
/// fractional) of CPUs, and some number of instances of a particular coprocessor type").
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ResourceUsage {
    /// CPUs used (1 for a plain app, N for a multithread app, a fraction for a GPU app).
    pub avg_ncpus: f64,
    /// The coprocessor type and instances used (0.5 = half a GPU), if any.
    pub coprocessor: Option<(ResourceType, f64)>,
}

impl ResourceUsage {
    /// The resource the job is scheduled on: its coprocessor if it has one, else the CPU.
    pub fn main_resource(&self) -> ResourceType {
        self.coprocessor.map_or(ResourceType::Cpu, |(r, _)| r)
    }

    /// Instances of the main resource used.
    pub fn main_usage(&self) -> f64 {
        self.coprocessor.map_or(self.avg_ncpus, |(_, n)| n)
    }

    /// Instances of `resource` used.
    pub fn usage_of(&self, resource: ResourceType) -> f64 {
        match (resource, self.coprocessor) {
            (ResourceType::Cpu, _) => self.avg_ncpus,
            (r, Some((c, n))) if r == c => n,
            _ => 0.0,
        }
    }

    /// Whether this is a multithread CPU job (more than one CPU, no coprocessor).
    pub fn is_multithread(&self) -> bool {
        self.coprocessor.is_none() && self.avg_ncpus > 1.0
    }
}

/// A version of an app for one platform and plan class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppVersion {
    /// The project.
    pub project: ProjectId,
    /// The app.
    pub app: AppId,
    /// Version number.
    pub version_num: u32,
    /// Plan class (`mt`, `cuda`, …; empty for plain CPU).
    pub plan_class: String,
    /// What each of its jobs occupies.
    pub usage: ResourceUsage,
    /// Estimated flops of one job running on it (seed 000 note 1).
    pub flops: f64,
    /// Its own duration correction factor (seed 000 note 3, kept per app version so that
    /// a project's apps whose estimates are off by different factors are each corrected
    /// by their own): `None` until one of its jobs has finished, the project's applying
    /// until then (`<duration_correction_factor>` in `<app_version>`).
    #[serde(default)]
    pub duration_correction_factor: Option<f64>,
    /// Platform it is built for (`x86_64-pc-linux-gnu`, …; empty: the client's own).
    #[serde(default)]
    pub platform: String,
    /// BOINC API version the app was built with (`<api_version>`; empty: none, the app
    /// is run without the API's shared memory).
    #[serde(default)]
    pub api_version: String,
    /// Arguments added before the workunit's own (`<cmdline>`).
    #[serde(default)]
    pub cmdline: String,
    /// Its files: the executable (`main_program`) and what it brings along.
    #[serde(default)]
    pub files: Vec<FileRef>,
}

impl AppVersion {
    /// A version of `app` with no files, platform or API version: what a scenario's
    /// `<app_version>` or a test starts from.
    pub fn new(
        project: ProjectId,
        app: AppId,
        version_num: u32,
        plan_class: impl Into<String>,
        usage: ResourceUsage,
        flops: f64,
    ) -> AppVersion {
        AppVersion {
            project,
            app,
            version_num,
            plan_class: plan_class.into(),
            usage,
            flops,
            platform: String::new(),
            api_version: String::new(),
            cmdline: String::new(),
            files: Vec::new(),
            duration_correction_factor: None,
        }
    }

    /// The reference to its executable (`<main_program/>`), if it has one.
    pub fn main_program(&self) -> Option<&FileRef> {
        self.files.iter().find(|f| f.main_program)
    }
}
