//! User preferences (`global_prefs.xml`, `global_prefs_override.xml`) and client options
//! (`cc_config.xml`) that the policies read: the work buffer of seed 000/002 (min_queue,
//! the low and high water marks), the scheduling period, CPU and memory limits.

use serde::{Deserialize, Serialize};

/// Seconds in a day.
pub const SECONDS_PER_DAY: f64 = 86_400.0;

/// BOINC never buffers less than this, whatever `work_buf_min_days` says.
pub const MIN_WORK_BUFFER_SECONDS: f64 = 180.0;

/// BOINC's default for `idle_time_to_run`, minutes.
pub const DEFAULT_IDLE_TIME_TO_RUN: f64 = 3.0;

/// Serde's default for a state serialised before the field existed.
fn default_idle_time_to_run() -> f64 {
    DEFAULT_IDLE_TIME_TO_RUN
}

/// Global computing preferences, with BOINC's defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prefs {
    /// Keep at least this much work queued, days (seed 000's `min_queue`).
    pub work_buf_min_days: f64,
    /// Buffer this much beyond the minimum when fetching, days.
    pub work_buf_additional_days: f64,
    /// Time slice between switches among projects, minutes.
    pub cpu_scheduling_period_minutes: f64,
    /// Use at most this percentage of the CPUs.
    pub max_ncpus_pct: f64,
    /// Use at most this many CPUs (0: no limit beyond the percentage).
    pub max_ncpus: u32,
    /// Keep preempted tasks in memory instead of quitting them.
    pub leave_apps_in_memory: bool,
    /// Memory usable by tasks while the user is active, percent of physical memory.
    pub ram_max_used_busy_pct: f64,
    /// Memory usable by tasks while the user is idle, percent of physical memory.
    pub ram_max_used_idle_pct: f64,
    /// Throttle CPU usage to this percentage of time.
    pub cpu_usage_limit: f64,
    /// Compute while the user is active.
    pub run_if_user_active: bool,
    /// Use GPUs while the user is active.
    pub run_gpu_if_user_active: bool,
    /// Compute while the host runs on batteries (`<run_on_batteries>`).
    #[serde(default)]
    pub run_on_batteries: bool,
    /// The user counts as idle after this many minutes without input
    /// (`<idle_time_to_run>`).
    #[serde(default = "default_idle_time_to_run")]
    pub idle_time_to_run: f64,
    /// Disk: use at most this many GB (0: no limit).
    pub disk_max_used_gb: f64,
    /// Disk: use at most this percentage of the disk.
    pub disk_max_used_pct: f64,
    /// Disk: leave at least this many GB free.
    pub disk_min_free_gb: f64,
}

impl Default for Prefs {
    fn default() -> Self {
        Prefs {
            work_buf_min_days: 0.1,
            work_buf_additional_days: 0.5,
            cpu_scheduling_period_minutes: 60.0,
            max_ncpus_pct: 100.0,
            max_ncpus: 0,
            leave_apps_in_memory: false,
            ram_max_used_busy_pct: 50.0,
            ram_max_used_idle_pct: 90.0,
            cpu_usage_limit: 100.0,
            run_if_user_active: true,
            run_gpu_if_user_active: false,
            run_on_batteries: false,
            idle_time_to_run: DEFAULT_IDLE_TIME_TO_RUN,
            disk_max_used_gb: 0.0,
            disk_max_used_pct: 90.0,
            disk_min_free_gb: 0.1,
        }
    }
}

impl Prefs {
    /// The scheduling period in seconds (seed 000 "cpu_scheduling_period").
    pub fn scheduling_period(&self) -> f64 {
        (self.cpu_scheduling_period_minutes * 60.0).max(60.0)
    }

    /// Low water mark, seconds: fetch when some instance would idle within it (seed 002).
    pub fn work_buf_min(&self) -> f64 {
        (self.work_buf_min_days * SECONDS_PER_DAY).max(MIN_WORK_BUFFER_SECONDS)
    }

    /// CPUs the client may use on a host with `reported` CPUs (the hardware count, or
    /// cc_config's `<ncpus>`): the `max_ncpus_pct` and `max_ncpus` limits; at least one.
    /// A project server applies the same limits to the count a request reports.
    pub fn usable_cpus(&self, reported: u32) -> u32 {
        let mut n = reported;
        let pct = self.max_ncpus_pct;
        if pct > 0.0 && pct < 100.0 {
            n = ((f64::from(reported) * pct / 100.0).floor() as u32).max(1);
        }
        if self.max_ncpus > 0 {
            n = n.min(self.max_ncpus);
        }
        n.max(1)
    }

    /// High water mark, seconds: the horizon over which shortfall is measured and filled.
    pub fn work_buf_total(&self) -> f64 {
        self.work_buf_min() + (self.work_buf_additional_days * SECONDS_PER_DAY).max(0.0)
    }
}

/// Client options from `cc_config.xml` that change scheduling.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CcConfig {
    /// Pretend the host has this many CPUs (`<ncpus>`; `None`: use the hardware count).
    pub ncpus: Option<u32>,
    /// Ignore all GPUs (`<no_gpus>`).
    pub no_gpus: bool,
    /// Report each result as soon as it is uploaded (`<report_results_immediately>`).
    pub report_results_immediately: bool,
    /// Fetch only enough work to keep every instance busy (`<fetch_minimal_work>`).
    pub fetch_minimal_work: bool,
    /// Don't fetch project lists or version notices (`<no_info_fetch>`); kept so that a
    /// state directory written by boinc-rs round-trips the user's setting.
    pub no_info_fetch: bool,
    /// Any host may connect to the GUI RPC port (with the password)
    /// (`<allow_remote_gui_rpc>`).
    #[serde(default)]
    pub allow_remote_gui_rpc: bool,
}
