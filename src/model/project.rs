//! Projects and the per-project state the policies keep: debts (seed 000, 003), the
//! per-resource work-fetch state (seed 003 "PRSC_PROJECT_DATA"), RPC timing (seed 002)
//! and recent estimated credit (modern BOINC).

use super::resource::ResourceMap;
use crate::Time;
use serde::{Deserialize, Serialize};

/// One attached project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Project {
    /// Human-readable name (`<project_name>`); keys the project in `explain` output.
    pub name: String,
    /// The project's master URL, its identity.
    pub master_url: String,
    /// Scheduler URLs from the master page.
    pub scheduler_urls: Vec<String>,
    /// The account's key (`<authenticator>`, from the account file): every scheduler
    /// request carries it.
    #[serde(default)]
    pub authenticator: String,
    /// The project's id for this host (`<hostid>`; 0 until the first reply gives one).
    #[serde(default)]
    pub hostid: u64,
    /// Scheduler requests sent since the project last gave a host id (`<rpc_seqno>`):
    /// lets the project notice a state file copied to another host.
    #[serde(default)]
    pub rpc_seqno: u64,
    /// The account's user name (`<user_name>`).
    #[serde(default)]
    pub user_name: String,
    /// The account's team name (`<team_name>`).
    #[serde(default)]
    pub team_name: String,
    /// The account's user id (`<userid>`).
    #[serde(default)]
    pub userid: u64,
    /// The account's team id (`<teamid>`; 0: no team).
    #[serde(default)]
    pub teamid: u64,
    /// The venue the account puts this host in (`<host_venue>`: "home", "work",
    /// "school" or empty): which of a project's preference sets applies here.
    #[serde(default)]
    pub host_venue: String,
    /// The user's cross-project identifier (`<cross_project_id>`).
    #[serde(default)]
    pub cross_project_id: String,
    /// The key the project signs its executables with (`<code_sign_key>`, BOINC's hex
    /// text format), pinned at attach.
    #[serde(default)]
    pub code_sign_key: Option<String>,
    /// Resource share (relative weight, ≥ 0).
    pub resource_share: f64,
    /// Suspended by the user: no computation, no fetch.
    pub suspended: bool,
    /// "No new tasks": the user asked not to fetch work.
    pub dont_request_more_work: bool,
    /// Detach once the project's tasks are done and reported
    /// (`<detach_when_done/>`; GUI RPC `project_detach_when_done`).
    #[serde(default)]
    pub detach_when_done: bool,
    /// A fetch of the master page is pending (seed 002, after repeated RPC failures).
    pub master_fetch_pending: bool,
    /// Earliest time of the next scheduler RPC (seed 002 "Minimum RPC time").
    pub min_rpc_time: Time,
    /// Consecutive failed scheduler RPCs.
    pub nrpc_failures: u32,
    /// Consecutive failed master-page fetches.
    pub master_fetch_failures: u32,
    /// Time of the last scheduler RPC (0: never).
    pub last_rpc_time: Time,
    /// When a scheduler RPC or master-page fetch to the project last failed; `None`
    /// if none has. Work fetch tops up the buffers of a project that failed recently
    /// whenever it can be reached (see `work_fetch::intermittent`).
    #[serde(default)]
    pub last_rpc_failure: Option<Time>,
    /// The user or the project asked for an RPC at the next opportunity.
    pub sched_rpc_pending: bool,
    /// A scheduler RPC or master-page fetch to the project is under way: no second one
    /// starts until it ends (the control loop's own bookkeeping, never saved).
    #[serde(default, skip_serializing)]
    pub rpc_in_flight: bool,
    /// The user detached from the project: it gets no work and holds no jobs, and counts
    /// for nothing in the shares, until the user attaches again.
    #[serde(default)]
    pub detached: bool,
    /// The project's apps don't use the CPU intensively (no scheduling, fetch by presence).
    pub non_cpu_intensive: bool,
    /// The last reply said "no work because of deadlines" and its delay lasts until this
    /// time (seed 000 "latency-limited"); `None` when not latency-limited.
    pub latency_limited_until: Option<Time>,
    /// Duration correction factor (seed 000 note 3), per project as in BOINC.
    pub duration_correction_factor: f64,
    /// The project's last reply said `<dont_use_dcf/>`: its estimates are already
    /// right, so the factor stays 1 and is not learnt from finished jobs.
    #[serde(default)]
    pub dont_use_dcf: bool,
    /// Short-term debt, seconds (seed 000): owed processing, for the CPU scheduler.
    pub short_term_debt: f64,
    /// Per-resource state for work fetch (seed 003).
    pub resources: ResourceMap<ProjectResource>,
    /// Recent estimated credit (peak-flops-seconds, decaying) for the `rec` policy.
    pub rec: f64,
    /// When `rec` was last brought up to date.
    pub rec_time: Time,
    /// Exponentially averaged processing time (seed 002 "Resource debt").
    pub exp_avg_cpu: f64,
    /// When `exp_avg_cpu` was last updated.
    pub exp_avg_time: Time,
    /// Failed computations in a row, for the app-failure backoff of seed 002.
    pub app_failures: u32,
    /// Emulator scenarios only: the project's server is up this fraction of the time.
    pub availability: Option<Availability>,
    /// Which of its files the client deletes first when disk space runs short (seed 004
    /// "Project Deletion Policy").
    #[serde(default)]
    pub deletion_policy: DeletionPolicy,
    /// The volunteer's account on the project as its server last described it (names,
    /// ids, credit), and whether an account manager attached it.
    #[serde(default)]
    pub account: ProjectAccount,
    /// The project-wide backoff of its downloads and uploads, after several of its
    /// transfers failed in a row.
    #[serde(default)]
    pub transfer_backoff: TransferBackoffs,
    /// The project's jobs this client computed to their end (BOINC's `njobs_success`).
    #[serde(default)]
    pub njobs_success: u64,
    /// Its jobs that ended in an error here (`njobs_error`).
    #[serde(default)]
    pub njobs_error: u64,
    /// The elapsed time of those jobs, seconds (`elapsed_time`).
    #[serde(default)]
    pub elapsed_time: f64,
    /// The user's app_config.xml for the project, as last read: kept so that apps and
    /// versions a later reply brings take it, and the project's own limits.
    #[serde(default)]
    pub app_config: super::app_config::AppConfig,
    /// The volunteer runs their own apps for the project (an app_info.xml in its
    /// directory, BOINC's anonymous platform): requests say `anonymous` and list those
    /// versions, and no reply replaces them. Read from the file at every start, never
    /// saved.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub anonymous_platform: bool,
}

/// A project's transfer backoff in each direction (BOINC's per-project file transfer
/// backoff, kept apart for downloads and uploads).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct TransferBackoffs {
    /// Downloads.
    pub download: TransferBackoff,
    /// Uploads.
    pub upload: TransferBackoff,
}

/// The backoff of a project's transfers in one direction.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct TransferBackoff {
    /// Transient failures in a row.
    pub failures: u32,
    /// No transfer in this direction starts before this time.
    pub next_time: Time,
}

/// A project account as the client knows it: what the project's scheduler replies
/// say about the user, team and host, shown by the GUI RPC `<project>` element.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProjectAccount {
    /// Credit of the user, all time.
    pub user_total_credit: f64,
    /// Recent average credit of the user.
    pub user_expavg_credit: f64,
    /// Credit of this host, all time.
    pub host_total_credit: f64,
    /// Recent average credit of this host.
    pub host_expavg_credit: f64,
    /// An account manager attached the project (and may detach it).
    pub attached_via_acct_mgr: bool,
    /// The credit history, one entry a day, oldest first (BOINC's
    /// `statistics_<project>.xml`; not part of client_state.xml).
    #[serde(default)]
    pub statistics: Vec<DailyStatistics>,
}

/// The credit figures of one day (the last ones the project's scheduler reported that
/// day), as BOINC's statistics history and GUI RPC `get_statistics` list them.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct DailyStatistics {
    /// The day: its midnight, seconds since 1970 (UTC).
    pub day: Time,
    /// The user's total credit.
    pub user_total_credit: f64,
    /// The user's recent average credit.
    pub user_expavg_credit: f64,
    /// This host's total credit.
    pub host_total_credit: f64,
    /// This host's recent average credit.
    pub host_expavg_credit: f64,
}

/// A project's deletion policy (seed 004: `<deletion_policy_priority/>` and
/// `<deletion_policy_expire/>` in its config.xml, echoed in scheduler replies). Least
/// recently used is always the final order; the flags put other files before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeletionPolicy {
    /// Lowest `<priority>` first, oldest download first within a priority.
    pub priority: bool,
    /// Files past their expiration date first.
    pub expire: bool,
    /// `<delete_from_self/>`: the server may count on the client deleting the project's
    /// own expendable files (the third free-space figure of seed 004).
    pub delete_from_self: bool,
}

/// An emulated project server's up/down process (`<available><frac><lambda>`): up a
/// fraction `frac` of the time, in periods whose mean length is `lambda` seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Availability {
    /// Long-run fraction of time the server is up.
    pub frac: f64,
    /// Mean length of an up period, seconds.
    pub lambda: f64,
}

impl Project {
    /// A project with BOINC's initial values and the given identity and share.
    pub fn new(
        name: impl Into<String>,
        master_url: impl Into<String>,
        resource_share: f64,
    ) -> Self {
        Project {
            name: name.into(),
            master_url: master_url.into(),
            scheduler_urls: Vec::new(),
            authenticator: String::new(),
            hostid: 0,
            rpc_seqno: 0,
            user_name: String::new(),
            team_name: String::new(),
            userid: 0,
            teamid: 0,
            host_venue: String::new(),
            cross_project_id: String::new(),
            code_sign_key: None,
            resource_share,
            suspended: false,
            dont_request_more_work: false,
            detach_when_done: false,
            master_fetch_pending: false,
            min_rpc_time: 0.0,
            nrpc_failures: 0,
            master_fetch_failures: 0,
            last_rpc_time: 0.0,
            last_rpc_failure: None,
            sched_rpc_pending: false,
            rpc_in_flight: false,
            detached: false,
            non_cpu_intensive: false,
            latency_limited_until: None,
            duration_correction_factor: 1.0,
            dont_use_dcf: false,
            short_term_debt: 0.0,
            resources: ResourceMap::default(),
            rec: 0.0,
            rec_time: 0.0,
            exp_avg_cpu: 0.0,
            exp_avg_time: 0.0,
            app_failures: 0,
            availability: None,
            deletion_policy: DeletionPolicy::default(),
            account: ProjectAccount::default(),
            transfer_backoff: TransferBackoffs::default(),
            njobs_success: 0,
            njobs_error: 0,
            elapsed_time: 0.0,
            app_config: super::app_config::AppConfig::default(),
            anonymous_platform: false,
        }
    }
}

/// A project's state for one processing resource (seed 003 "PRSC_PROJECT_DATA" plus the
/// per-resource long-term debt and the accumulate-debt flag D(P, R)).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ProjectResource {
    /// Long-term debt for this resource, instance-seconds (seed 003 "P.R.LTD").
    pub long_term_debt: f64,
    /// D(P, R): whether the project accumulates debt for this resource, i.e. it is
    /// likely to supply a job of this type if asked.
    pub accumulate_debt: bool,
    /// Don't ask for this resource's work before this time.
    pub backoff_time: Time,
    /// The current backoff interval, doubled on each empty reply up to the limit.
    pub backoff_interval: f64,
    /// The project said it has no app for this resource (`<no_rsc_apps>`, or an app
    /// list without one): never ask it for this resource's work.
    pub no_apps: bool,
    /// The project has an app version for this resource (it has sent one).
    pub has_app_version: bool,
}
