//! The project's records, kept in `project.json` in the project directory: accounts,
//! hosts, jobs and what became of them, finished uploads, and the durable counters.
//! Everything a restart must not lose is here; the store writes it atomically before a
//! reply that depends on it goes out.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The records' format version (a newer file is refused rather than misread).
pub(crate) const RECORDS_FORMAT: u32 = 1;

/// A volunteer's account, created on first contact (an open project) or by
/// `create_account.php`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub(crate) struct AccountRecord {
    /// The account's id (`<userid>`).
    pub userid: u64,
    /// When it was created.
    pub created: f64,
    /// Its e-mail address, lower case (accounts made by `create_account.php`).
    #[serde(default)]
    pub email_addr: String,
    /// md5(password + e-mail address), hex.
    #[serde(default)]
    pub passwd_hash: String,
    /// The user's name.
    #[serde(default)]
    pub name: String,
    /// Credit granted, all time and recent (decaying), and when the recent figure was
    /// last brought up to date.
    #[serde(default)]
    pub credit: Credit,
}

/// Credit granted to an account or a host (BOINC's total and recent average credit,
/// the average decaying with a half-life of a week).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub(crate) struct Credit {
    /// All time.
    pub total: f64,
    /// Recent average, per day.
    pub expavg: f64,
    /// When `expavg` was last brought up to date.
    pub expavg_time: f64,
}

/// BOINC's half-life of the recent average credit, seconds (a week).
const CREDIT_HALF_LIFE: f64 = 7.0 * 86_400.0;

impl Credit {
    /// Grants `amount` at `now`: the total grows, and the recent average decays since
    /// its last update and takes the new credit in (BOINC's `update_average`).
    pub(crate) fn grant(&mut self, amount: f64, now: f64) {
        if !(amount.is_finite() && amount > 0.0) {
            return;
        }
        self.total += amount;
        let per_day = amount * std::f64::consts::LN_2 * 86_400.0 / CREDIT_HALF_LIFE;
        if self.expavg_time > 0.0 && now > self.expavg_time {
            let weight =
                (-(now - self.expavg_time) * std::f64::consts::LN_2 / CREDIT_HALF_LIFE).exp();
            self.expavg *= weight;
        }
        self.expavg += per_day;
        self.expavg_time = now;
    }
}

/// A host of an account.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub(crate) struct HostRecord {
    /// Its account.
    pub userid: u64,
    /// When it first contacted the project.
    pub created: f64,
    /// Its last scheduler request.
    pub last_request: f64,
    /// Its platform, as it last said.
    pub platform: String,
    /// Credit granted for its results.
    #[serde(default)]
    pub credit: Credit,
}

/// A job's input file, in the download directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct InputFile {
    /// File name (also its name in the download directory).
    pub name: String,
    /// Size, bytes.
    pub nbytes: u64,
    /// MD5, hex.
    pub md5: String,
}

/// What became of a reported result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum Outcome {
    /// Its output arrived and is not empty.
    Valid,
    /// The client said it succeeded, but the output is missing or empty.
    Invalid {
        /// Why.
        reason: String,
    },
    /// The client reported an error.
    ClientError {
        /// The exit status it reported.
        exit_status: i32,
    },
}

/// Where a job stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum JobStatus {
    /// Not sent yet.
    Unsent,
    /// Sent to a host, not reported yet.
    InProgress {
        /// The host.
        hostid: u64,
        /// When it was sent.
        sent: f64,
        /// Its report deadline.
        deadline: f64,
    },
    /// Reported.
    Reported {
        /// The host that reported it.
        hostid: u64,
        /// When the report came.
        received: f64,
        /// The validation's verdict.
        outcome: Outcome,
    },
}

/// How a job's app is told to misbehave (`--crash-fraction`, `--hang-fraction`): the
/// example app's jobs only, for soaking clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Misbehaviour {
    /// It computes and finishes.
    #[default]
    None,
    /// It crashes partway through each run (progress kept by its checkpoints).
    Crash,
    /// Its first run hangs at start; later runs compute.
    HangOnce,
}

impl Misbehaviour {
    /// Its name in `/status`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Misbehaviour::None => "none",
            Misbehaviour::Crash => "crash",
            Misbehaviour::HangOnce => "hang_once",
        }
    }
}

/// A job: one workunit with one result (no replication).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct JobRecord {
    /// The result's name (`{workunit}_0`); the records' key.
    pub name: String,
    /// Its number: jobs are sent in this order.
    pub number: u64,
    /// The workunit's name.
    pub workunit: String,
    /// Its app, by name.
    pub app: String,
    /// CPU seconds of work it asks for.
    pub seconds: f64,
    /// Its input file, if any.
    pub input: Option<InputFile>,
    /// Its output file's name.
    pub output: String,
    /// The most bytes its output may have.
    pub max_output_bytes: u64,
    /// Seconds from sending to the report deadline.
    pub deadline_span: f64,
    /// When it was made.
    pub created: f64,
    /// Where it stands.
    pub status: JobStatus,
    /// Times it was sent (more than once when a host lost it and it was sent again).
    pub times_sent: u32,
    /// Times a host reported it (exactly once when all is well).
    pub times_reported: u32,
    /// How its app is told to misbehave (records older than the option have none).
    #[serde(default)]
    pub misbehaviour: Misbehaviour,
    /// What the host's first report said of the result, as BOINC's result table keeps
    /// it (records older than this have none).
    #[serde(default)]
    pub report: Option<StoredReport>,
}

/// A reported result's figures and the app's standard error, as BOINC's project
/// database stores them from `<result>`: what projects read to grant credit and to
/// debug a failing app.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub(crate) struct StoredReport {
    /// `<exit_status>`.
    pub exit_status: i32,
    /// `<final_cpu_time>`, seconds.
    pub cpu_time: f64,
    /// `<final_elapsed_time>`, seconds.
    pub elapsed_time: f64,
    /// `<final_peak_working_set_size>`, bytes (0: not sent).
    pub peak_working_set_size: f64,
    /// `<final_peak_swap_size>`, bytes.
    pub peak_swap_size: f64,
    /// `<final_peak_disk_usage>`, bytes.
    pub peak_disk_usage: f64,
    /// `<stderr_out>`, at most [`STORED_STDERR_BYTES`].
    pub stderr_out: String,
}

/// The most of a result's `<stderr_out>` kept: BOINC's result table holds 64 KB of it.
pub(crate) const STORED_STDERR_BYTES: usize = 65_536;

/// An output file fully received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct UploadRecord {
    /// Size, bytes.
    pub nbytes: u64,
    /// MD5 of what arrived, hex.
    pub md5: String,
}

/// Counters that must survive restarts.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub(crate) struct Counters {
    /// Jobs made.
    pub jobs_created: u64,
    /// Jobs sent for the first time.
    pub jobs_sent: u64,
    /// Jobs sent again to a host that had lost them.
    pub jobs_resent: u64,
    /// Results reported (first reports only).
    pub results_received: u64,
    /// Reported results found valid.
    pub results_validated: u64,
    /// Reported results found invalid (missing or empty output).
    pub results_invalid: u64,
    /// Results the client reported as failed.
    pub results_failed: u64,
    /// Reports of results already reported (each acknowledged again).
    pub duplicate_reports: u64,
    /// Reports of results the project never made.
    pub unknown_reports: u64,
    /// Output files fully received.
    pub uploads_completed: u64,
}

/// Everything the project keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ProjectRecords {
    /// The format version ([`RECORDS_FORMAT`]).
    pub format: u32,
    /// The port the project was last served on (kept so the URL stays the same).
    pub port: Option<u16>,
    /// The next account id.
    pub next_userid: u64,
    /// The next host id.
    pub next_hostid: u64,
    /// The next job number.
    pub next_job: u64,
    /// Accounts by authenticator.
    pub accounts: BTreeMap<String, AccountRecord>,
    /// Hosts by id.
    pub hosts: BTreeMap<u64, HostRecord>,
    /// Jobs by result name.
    pub jobs: BTreeMap<String, JobRecord>,
    /// Output files received, by name.
    pub uploads: BTreeMap<String, UploadRecord>,
    /// Counters.
    pub counters: Counters,
}

impl Default for ProjectRecords {
    fn default() -> Self {
        ProjectRecords {
            format: RECORDS_FORMAT,
            port: None,
            next_userid: 1,
            next_hostid: 1,
            next_job: 0,
            accounts: BTreeMap::new(),
            hosts: BTreeMap::new(),
            jobs: BTreeMap::new(),
            uploads: BTreeMap::new(),
            counters: Counters::default(),
        }
    }
}

impl ProjectRecords {
    /// The job whose output file is `name`.
    pub(crate) fn job_with_output(&self, name: &str) -> Option<&JobRecord> {
        // Output names are `{result}_out`: a direct look-up first, a scan otherwise.
        name.strip_suffix("_out")
            .and_then(|result| self.jobs.get(result))
            .filter(|job| job.output == name)
            .or_else(|| self.jobs.values().find(|job| job.output == name))
    }

    /// Jobs of `hostid` in progress.
    pub(crate) fn in_progress_on(&self, hostid: u64) -> impl Iterator<Item = &JobRecord> {
        self.jobs.values().filter(
            move |job| matches!(job.status, JobStatus::InProgress { hostid: h, .. } if h == hostid),
        )
    }
}
