//! How the live process host runs apps (issue "Running real apps"): the grace periods
//! of BOINC's client (docs/design.md "BOINC 8.x behaviour": a quit escalates to a kill after
//! 60 s, an app that leaves the client's messages unread for 180 s is hung), how often
//! the slot's disk use is measured, whether an app's writes are confined to its slot,
//! and the user apps run as.

use boinc_core::protocol::app_api::InitHostInfo;
use std::path::PathBuf;
use std::time::Duration;

/// The live process host's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessHostConfig {
    /// The client's data directory: `slots/` and `projects/` are in it.
    pub data_dir: PathBuf,
    /// How long an app asked to quit may take before it is killed.
    pub quit_grace: Duration,
    /// How long an app asked to abort may take before it is killed.
    pub abort_grace: Duration,
    /// How long a message to an app using BOINC's API (its heartbeat, a process-control
    /// request) may stay unread before the app counts as hung, is killed and restarted.
    pub hung_after: Duration,
    /// How often a task's slot directory is measured against its disk bound (walking a
    /// slot costs more than the other checks, which run at every poll).
    pub disk_check_interval: Duration,
    /// Confine each app's writes to its slot and project directories (and `/dev`) with
    /// Landlock, where the kernel has it (Linux 5.13 and later).
    pub contain_writes: bool,
    /// The client's process id, told to apps so that they exit when it is gone.
    pub client_pid: u32,
    /// The host as apps see it in `init_data.xml`.
    pub host_info: InitHostInfo,
    /// The most memory a task may use, bytes, told to apps with each heartbeat.
    pub max_working_set: f64,
    /// The user apps run as (`--app-user`; `None`: the client's own user). Look it up
    /// with [`super::AppUser::look_up`], which refuses a user the client cannot become.
    pub app_user: Option<super::AppUser>,
}

/// BOINC's default share of the host's memory a task may use while the user is busy
/// (`ram_max_used_busy_pct`).
const MEMORY_SHARE: f64 = 0.5;

impl ProcessHostConfig {
    /// BOINC's settings for a client whose data directory is `data_dir`, with the host
    /// as the system describes it.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        let mut system = sysinfo::System::new();
        system.refresh_memory();
        let memory = system.total_memory() as f64;
        ProcessHostConfig {
            data_dir: data_dir.into(),
            quit_grace: Duration::from_secs(60),
            abort_grace: Duration::from_secs(15),
            hung_after: Duration::from_secs(180),
            disk_check_interval: Duration::from_secs(60),
            contain_writes: true,
            client_pid: std::process::id(),
            host_info: InitHostInfo {
                p_ncpus: std::thread::available_parallelism()
                    .map_or(1, |n| u32::try_from(n.get()).unwrap_or(u32::MAX)),
                m_nbytes: memory,
                domain_name: sysinfo::System::host_name().unwrap_or_default(),
                os_name: sysinfo::System::name().unwrap_or_default(),
                os_version: sysinfo::System::long_os_version().unwrap_or_default(),
                ..InitHostInfo::default()
            },
            max_working_set: memory * MEMORY_SHARE,
            app_user: None,
        }
    }
}
