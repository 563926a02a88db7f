//! What a project server serves and how (`boinc-rs project-server`'s options).

use boinc_core::protocol::ServerMessage;
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

/// The most bytes of a scheduler request read: far beyond a real client's (a host with
/// thousands of queued jobs sends a few megabytes).
pub const MAX_SCHEDULER_REQUEST_BYTES: usize = 32 << 20;

/// An app the project serves.
#[derive(Debug, Clone, PartialEq)]
pub enum AppSource {
    /// boinc-rs's example app: `exe` is a `boinc-rs` binary, run as `boinc-rs
    /// example-app --seconds S --input in --output out`.
    ExampleApp {
        /// The `boinc-rs` binary.
        exe: PathBuf,
    },
    /// Another program: run with its input as `in` and its output as `out` (open names
    /// the app resolves through BOINC's API, or finds as link files in its slot).
    Executable(PathBuf),
}

/// How jobs are made.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorConfig {
    /// Make this many jobs in all, then stop; `None`: keep a stock of unsent jobs
    /// forever.
    pub jobs: Option<u64>,
    /// CPU seconds of each job: drawn uniformly from this range.
    pub seconds: (f64, f64),
    /// Seconds from sending a job to its report deadline.
    pub deadline: f64,
    /// Bytes of each generated job's input file.
    pub input_bytes: u64,
    /// Unsent jobs kept ready in continuous mode.
    pub stock: usize,
    /// The share of the example app's jobs told to crash (SIGSEGV) partway through
    /// each run (a soak's misbehaving app; 0: none).
    pub crash_fraction: f64,
    /// The share of the example app's jobs told to hang once, at the start of their
    /// first run (0: none).
    pub hang_fraction: f64,
}

impl Default for GeneratorConfig {
    fn default() -> Self {
        GeneratorConfig {
            jobs: None,
            seconds: (10.0, 30.0),
            deadline: 86_400.0,
            input_bytes: 1024,
            stock: 32,
            crash_fraction: 0.0,
            hang_fraction: 0.0,
        }
    }
}

/// A project server's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectServerConfig {
    /// The project directory: records, keys, downloads, uploads, the inbox.
    pub dir: PathBuf,
    /// The address to listen on.
    pub bind: IpAddr,
    /// The port; `None`: the one used last time in this directory, else a free one.
    pub port: Option<u16>,
    /// The project's name (`<project_name>`).
    pub name: String,
    /// The apps served; empty: the example app of the running `boinc-rs`.
    pub apps: Vec<AppSource>,
    /// Job generation.
    pub generator: GeneratorConfig,
    /// Seconds a client waits before its next request (`<request_delay>`).
    pub request_delay: f64,
    /// Jobs in progress a host may hold per usable CPU (BOINC's
    /// `max_wus_in_progress`).
    pub max_jobs_in_progress_per_cpu: u32,
    /// HTTP worker threads.
    pub workers: usize,
    /// Messages every scheduler reply carries (`--message PRIORITY:TEXT`): what a
    /// project tells its volunteers, shown in their event log (and as a notice when
    /// the priority is `notice`).
    pub messages: Vec<ServerMessage>,
    /// The project's news, served as its notice feed (`/notices.php`, RSS) and named
    /// in every reply's `<rss_feeds>` (`--notice TITLE:TEXT`).
    pub notices: Vec<NewsItem>,
    /// The accounts' web preferences (`--web-prefs FILE`): the content of a
    /// `<global_preferences>` (venues and all), sent to a host whose request carries
    /// older ones, as a BOINC project sends the preferences edited on its site.
    pub web_prefs: Option<String>,
    /// The venue every host is in (`--host-venue`: `home`, `work`, `school`).
    pub host_venue: Option<String>,
}

/// One item of the project's news.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewsItem {
    /// Its title.
    pub title: String,
    /// Its text (HTML).
    pub text: String,
}

impl ProjectServerConfig {
    /// A configuration with the defaults for a project in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ProjectServerConfig {
            dir: dir.into(),
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: None,
            name: "boinc-rs test project".into(),
            apps: Vec::new(),
            generator: GeneratorConfig::default(),
            request_delay: 5.0,
            max_jobs_in_progress_per_cpu: 4,
            workers: 2,
            messages: Vec::new(),
            notices: Vec::new(),
            web_prefs: None,
            host_venue: None,
        }
    }
}
