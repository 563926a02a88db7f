//! User preferences (`global_prefs.xml`, `global_prefs_override.xml`) and client options
//! (`cc_config.xml`) that the policies read: the work buffer of seed 000/002 (min_queue,
//! the low and high water marks), the scheduling period, CPU and memory limits.

use super::ProxyInfo;
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

/// BOINC's default for `disk_interval`: apps checkpoint at most once a minute.
pub const DEFAULT_DISK_INTERVAL: f64 = 60.0;

/// Serde's default for a state serialised before the field existed.
fn default_disk_interval() -> f64 {
    DEFAULT_DISK_INTERVAL
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
    /// Apps write checkpoints at most this often, seconds (`<disk_interval>`; they are
    /// told in init_data.xml's `checkpoint_period`).
    #[serde(default = "default_disk_interval")]
    pub disk_interval: f64,
    /// The preferences boinc-rs keeps and tells projects without acting on them.
    #[serde(default)]
    pub reported: ReportedPrefs,
}

/// Preferences a scheduler request carries as BOINC's client sends them (projects read
/// them, and show them back to the user on their web sites), beyond the ones the
/// policies read: the time-of-day windows, `suspend_if_no_recent_input` and
/// `suspend_cpu_usage` are judged by `control::host_view`; the others (battery charge,
/// transfer limits, connection habits) are kept and reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReportedPrefs {
    /// The project whose web preferences these are (`<source_project>`).
    pub source_project: String,
    /// When they were last changed there (`<mod_time>`).
    pub mod_time: f64,
    /// Compute on batteries only above this charge, percent.
    pub battery_charge_min_pct: f64,
    /// Stop computing above this battery temperature, °C.
    pub battery_max_temperature: f64,
    /// Suspend when there has been no input for this many minutes (0: never).
    pub suspend_if_no_recent_input: f64,
    /// Suspend while non-BOINC CPU use is above this percentage (0: never).
    pub suspend_cpu_usage: f64,
    /// Compute only from this hour of the day (equal to `end_hour`: always).
    pub start_hour: f64,
    /// Compute only until this hour of the day.
    pub end_hour: f64,
    /// Use the network only from this hour of the day.
    pub net_start_hour: f64,
    /// Use the network only until this hour of the day.
    pub net_end_hour: f64,
    /// Ask before connecting to the network (dial-up hosts).
    pub confirm_before_connecting: bool,
    /// Hang up a dial-up connection when done.
    pub hangup_if_dialed: bool,
    /// Do not verify virtual-machine images.
    pub dont_verify_images: bool,
    /// Use at most this percentage of virtual memory.
    pub vm_max_used_pct: f64,
    /// Upload at most this many bytes a second (0: no limit).
    pub max_bytes_sec_up: f64,
    /// Download at most this many bytes a second (0: no limit).
    pub max_bytes_sec_down: f64,
    /// Transfer at most this many MB per period (0: no limit).
    pub daily_xfer_limit_mb: f64,
    /// The transfer limit's period, days.
    pub daily_xfer_period_days: u32,
    /// The user's global_prefs_override.xml is in force (`<override_file_present>`).
    pub override_file_present: bool,
    /// Transfer only over Wi-Fi.
    pub network_wifi_only: bool,
    /// Windows of one day of the week that replace the daily ones (`<day_prefs>`).
    pub day_prefs: Vec<DayPrefs>,
}

/// A time-of-day window, hours from local midnight, as BOINC judges it: equal ends (or
/// 0 to 24) never suspend, 24 to 0 always does, and a start after the end wraps over
/// midnight (22 to 6: the night).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimeWindow {
    /// The window opens at this hour.
    pub start_hour: f64,
    /// The window closes at this hour.
    pub end_hour: f64,
}

impl TimeWindow {
    /// Whether the window is closed at `hour` (0 to 24, local time).
    pub fn excludes(&self, hour: f64) -> bool {
        let (start, end) = (self.start_hour, self.end_hour);
        if start == end || (start == 0.0 && end == 24.0) {
            return false;
        }
        if start == 24.0 && end == 0.0 {
            return true;
        }
        if start < end { hour < start || hour >= end } else { hour >= end && hour < start }
    }
}

/// One day's own windows (`<day_prefs>`): where a window is given it replaces the daily
/// one on that day.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DayPrefs {
    /// The day, 0 (Sunday) to 6 (`<day_of_week>`).
    pub day_of_week: u8,
    /// When computing is allowed that day (`<start_hour>`, `<end_hour>`).
    pub computing: Option<TimeWindow>,
    /// When the network may be used that day (`<net_start_hour>`, `<net_end_hour>`).
    pub network: Option<TimeWindow>,
}

impl ReportedPrefs {
    /// The computing window on `weekday` (0: Sunday): the day's own, else the daily one.
    pub fn computing_window(&self, weekday: u8) -> TimeWindow {
        let daily = TimeWindow { start_hour: self.start_hour, end_hour: self.end_hour };
        self.days_own(weekday, |d| d.computing).unwrap_or(daily)
    }

    /// The network window on `weekday` (0: Sunday): the day's own, else the daily one.
    pub fn network_window(&self, weekday: u8) -> TimeWindow {
        let daily = TimeWindow { start_hour: self.net_start_hour, end_hour: self.net_end_hour };
        self.days_own(weekday, |d| d.network).unwrap_or(daily)
    }

    fn days_own(
        &self,
        weekday: u8,
        window: impl Fn(&DayPrefs) -> Option<TimeWindow>,
    ) -> Option<TimeWindow> {
        self.day_prefs.iter().rev().find(|d| d.day_of_week == weekday).and_then(window)
    }
}

impl Default for ReportedPrefs {
    /// BOINC 7.20's defaults, as its scheduler requests carry them.
    fn default() -> Self {
        ReportedPrefs {
            source_project: String::new(),
            mod_time: 0.0,
            battery_charge_min_pct: 90.0,
            battery_max_temperature: 40.0,
            suspend_if_no_recent_input: 0.0,
            suspend_cpu_usage: 25.0,
            start_hour: 0.0,
            end_hour: 0.0,
            net_start_hour: 0.0,
            net_end_hour: 0.0,
            confirm_before_connecting: true,
            hangup_if_dialed: false,
            dont_verify_images: false,
            vm_max_used_pct: 75.0,
            max_bytes_sec_up: 0.0,
            max_bytes_sec_down: 0.0,
            daily_xfer_limit_mb: 0.0,
            daily_xfer_period_days: 0,
            override_file_present: false,
            network_wifi_only: false,
            day_prefs: Vec::new(),
        }
    }
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
            disk_interval: DEFAULT_DISK_INTERVAL,
            reported: ReportedPrefs::default(),
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

/// BOINC's default for `<max_file_xfers>`: transfers at once in all.
pub const DEFAULT_MAX_FILE_XFERS: u32 = 8;
/// BOINC's default for `<max_stdout_file_size>`: the event log file is rotated at 2 MiB.
pub const DEFAULT_MAX_STDOUT_FILE_SIZE: u64 = 2 << 20;
/// BOINC's default for `<max_file_xfers_per_project>`.
pub const DEFAULT_MAX_FILE_XFERS_PER_PROJECT: u32 = 2;
/// BOINC's default for `<http_transfer_timeout>`, seconds.
pub const DEFAULT_HTTP_TRANSFER_TIMEOUT: f64 = 300.0;
/// BOINC's default for `<http_transfer_timeout_bps>`, bytes per second.
pub const DEFAULT_HTTP_TRANSFER_TIMEOUT_BPS: f64 = 10.0;

/// Client options from `cc_config.xml`: those that change scheduling, GPU use, transfers
/// and logging.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
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
    pub allow_remote_gui_rpc: bool,
    /// Use every GPU, not only those as capable as the best one (`<use_all_gpus>`).
    pub use_all_gpus: bool,
    /// NVIDIA devices the client never uses (`<ignore_nvidia_dev>`, by device number).
    pub ignore_nvidia_dev: Vec<u32>,
    /// GPUs a project (or one of its apps) may not use (`<exclude_gpu>`).
    pub exclude_gpus: Vec<GpuExclusion>,
    /// File transfers at once, in all (`<max_file_xfers>`).
    pub max_file_xfers: u32,
    /// File transfers at once per project (`<max_file_xfers_per_project>`).
    pub max_file_xfers_per_project: u32,
    /// A transfer slower than `http_transfer_timeout_bps` for this long is abandoned
    /// and retried later, seconds (`<http_transfer_timeout>`).
    pub http_transfer_timeout: f64,
    /// The speed under which a transfer counts as stalled, bytes per second
    /// (`<http_transfer_timeout_bps>`).
    pub http_transfer_timeout_bps: f64,
    /// The `<log_flags>` turned on, by name (`task`, `sched_op_debug`, ...): which
    /// kinds of event the client logs.
    pub log_flags: Vec<String>,
    /// Computing stops while one of these programs runs (`<exclusive_app>`, executable
    /// names).
    pub exclusive_apps: Vec<String>,
    /// GPU computing stops while one of these programs runs (`<exclusive_gpu_app>`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclusive_gpu_apps: Vec<String>,
    /// The event log file (`stdoutdae.txt`) is moved to `stdoutdae.old` when it
    /// reaches this size, bytes (`<max_stdout_file_size>`).
    pub max_stdout_file_size: u64,
    /// The `<log_flags>` set to 0, by name: a flag on by default (`task`, `file_xfer`,
    /// `sched_ops`) named here is off.
    pub log_flags_off: Vec<String>,
    /// AMD devices the client never uses (`<ignore_ati_dev>`, by device number).
    pub ignore_ati_dev: Vec<u32>,
    /// Intel GPU devices the client never uses (`<ignore_intel_dev>`).
    pub ignore_intel_dev: Vec<u32>,
    /// Abort every unfinished task when the client exits (`<abort_jobs_on_exit>`).
    pub abort_jobs_on_exit: bool,
    /// A second client may run in the same data directory
    /// (`<allow_multiple_clients>`); otherwise the second one refuses to start.
    pub allow_multiple_clients: bool,
    /// Take a download whatever its size, checking only its checksum
    /// (`<dont_check_file_sizes>`).
    pub dont_check_file_sizes: bool,
    /// No task starts for this many seconds after the client starts (`<start_delay>`).
    pub start_delay: f64,
    /// The CPU priority of CPU apps, BOINC's level 0 (lowest) to 5 (realtime)
    /// (`<process_priority>`; `None`: BOINC's default, the lowest).
    pub process_priority: Option<u8>,
    /// The CPU priority of GPU and other special apps, the same levels
    /// (`<process_priority_special>`; `None`: BOINC's default, below normal).
    pub process_priority_special: Option<u8>,
    /// The proxy HTTP requests go through (`<proxy_info>`); boxed, as it is rarely set
    /// and large beside the other options, which travel in messages. Left out of the
    /// serialized state when unset, as most hosts have none.
    #[serde(skip_serializing_if = "proxy_unset")]
    pub proxy: Box<ProxyInfo>,
}

// serde hands the field over as it is declared, boxed.
#[allow(clippy::borrowed_box)]
fn proxy_unset(proxy: &Box<ProxyInfo>) -> bool {
    **proxy == ProxyInfo::default()
}

impl Default for CcConfig {
    fn default() -> Self {
        CcConfig {
            ncpus: None,
            no_gpus: false,
            report_results_immediately: false,
            fetch_minimal_work: false,
            no_info_fetch: false,
            allow_remote_gui_rpc: false,
            use_all_gpus: false,
            ignore_nvidia_dev: Vec::new(),
            exclude_gpus: Vec::new(),
            max_file_xfers: DEFAULT_MAX_FILE_XFERS,
            max_file_xfers_per_project: DEFAULT_MAX_FILE_XFERS_PER_PROJECT,
            http_transfer_timeout: DEFAULT_HTTP_TRANSFER_TIMEOUT,
            http_transfer_timeout_bps: DEFAULT_HTTP_TRANSFER_TIMEOUT_BPS,
            log_flags: Vec::new(),
            exclusive_apps: Vec::new(),
            exclusive_gpu_apps: Vec::new(),
            max_stdout_file_size: DEFAULT_MAX_STDOUT_FILE_SIZE,
            log_flags_off: Vec::new(),
            ignore_ati_dev: Vec::new(),
            ignore_intel_dev: Vec::new(),
            abort_jobs_on_exit: false,
            allow_multiple_clients: false,
            dont_check_file_sizes: false,
            start_delay: 0.0,
            process_priority: None,
            process_priority_special: None,
            proxy: Box::default(),
        }
    }
}

/// One `<exclude_gpu>`: a project may not use some GPUs (all of them, one type, one
/// device), for all its apps or one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuExclusion {
    /// The project's master URL (`<url>`).
    pub url: String,
    /// The device number (`<device_num>`; `None`: every device).
    pub device_num: Option<u32>,
    /// The GPU type (`<type>`; `None`: every type).
    pub resource: Option<super::resource::ResourceType>,
    /// The app (`<app>`; `None`: every app of the project).
    pub app: Option<String>,
}
