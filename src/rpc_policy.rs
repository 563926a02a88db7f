//! Scheduler RPC timing and retry policy (seed 002): minimum RPC time, randomised
//! exponential backoff after failed RPCs and crashing computations, master-page
//! refetch, when results must be reported, which session to start, and the
//! exponentially averaged resource debt. Constants are BOINC 8.x's (docs/design.md).

use crate::Time;
use crate::model::{ClientState, Job, JobId, Project, ProjectId, RunMode, SECONDS_PER_DAY};
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Base of the RPC backoff, seconds: the wait before the first retry is 60 × U[0.5, 1).
pub const RPC_BACKOFF_MIN: f64 = 60.0;

/// The longest RPC backoff, seconds (4 hours).
pub const RPC_BACKOFF_MAX: f64 = 14_400.0;

/// The backoff exponent stops growing here (60 · 2¹⁰ is already past the maximum).
pub const RPC_BACKOFF_MAX_EXPONENT: u32 = 10;

/// Every this many consecutive RPC failures the master page is fetched again, in case
/// the project's scheduler URLs changed.
pub const MASTER_FETCH_PERIOD: u32 = 10;

/// Seed 002 EXP_DECAY_RATE: `exp_avg_cpu` decays by a factor e every week (per second).
pub const EXP_DECAY_RATE: f64 = 1.0 / (7.0 * SECONDS_PER_DAY);

/// Below this `exp_avg_cpu` (seconds) a project counts as having had this much, so its
/// resource debt stays finite: large, and still ordered by resource share.
pub const MIN_EXP_AVG_CPU: f64 = 1.0;

/// Report a result once it has been waiting this long after completion, seconds.
pub const REPORT_DELAY_AFTER_COMPLETION: f64 = 3600.0;

/// Report when a project has this many results ready.
pub const MAX_READY_RESULTS: u32 = 64;

/// Report batching: a result whose latency (deadline − receipt) is shorter than the
/// reporting margin would be reported as soon as it completes, one scheduler RPC per
/// job (6-minute jobs due in an hour: ten an hour). While its project's queue is well
/// stocked (see [`crate::work_fetch::report_batching`]) it waits instead until
/// its deadline is this fraction of its latency away, or until the queue has drained to
/// its refill point, when the report and the work request that refills the queue share
/// one RPC.
pub const HELD_REPORT_LEAD_FRACTION: f64 = 0.25;

/// The least time before its deadline a held result is reported at, seconds: room for
/// a few retries of a failed RPC.
pub const MIN_HELD_REPORT_LEAD: f64 = 300.0;

/// The wait after `nfailures` earlier consecutive failures: min(60 · 2ⁿ, 14400) ×
/// U[0.5, 1), n capped at [`RPC_BACKOFF_MAX_EXPONENT`]; the randomness spreads clients
/// out so that a server coming back up doesn't meet them all at once.
pub fn rpc_backoff_delay(nfailures: u32, rng: &mut impl Rng) -> f64 {
    let n = nfailures.min(RPC_BACKOFF_MAX_EXPONENT);
    exponential_backoff(n, RPC_BACKOFF_MIN, RPC_BACKOFF_MAX, rng)
}

/// BOINC's randomised exponential backoff after `n` failures: min(`min` · 2ⁿ, `max`) ×
/// U[0.5, 1). Scheduler RPCs and file transfers both back off this way.
pub fn exponential_backoff(n: u32, min: f64, max: f64, rng: &mut impl Rng) -> f64 {
    // 2³⁰ times any sensible minimum is past any sensible maximum.
    let base = (min * f64::from(1u32 << n.min(30))).min(max);
    base * rng.random_range(0.5..1.0)
}

/// A scheduler RPC to every URL of the project failed: back off (the first failure
/// waits about a minute) and, every [`MASTER_FETCH_PERIOD`] failures, ask for the
/// master page to be fetched again.
pub fn on_rpc_failure(project: &mut Project, now: Time, rng: &mut impl Rng) {
    project.nrpc_failures = project.nrpc_failures.saturating_add(1);
    project.last_rpc_failure = Some(now);
    let delay = rpc_backoff_delay(project.nrpc_failures - 1, rng);
    project.min_rpc_time = project.min_rpc_time.max(now + delay);
    if project.nrpc_failures % MASTER_FETCH_PERIOD == 0 {
        project.master_fetch_pending = true;
    }
}

/// A scheduler RPC succeeded: the failure count resets, a pending user request is
/// served, and the reply's `request_delay` can only push the next RPC later, never
/// earlier (a project's request is honoured even if another rule would allow sooner).
pub fn on_rpc_success(project: &mut Project, request_delay: Option<f64>, now: Time) {
    project.nrpc_failures = 0;
    project.last_rpc_time = now;
    project.sched_rpc_pending = false;
    if let Some(delay) = request_delay.filter(|d| d.is_finite() && *d > 0.0) {
        project.min_rpc_time = project.min_rpc_time.max(now + delay);
    }
}

/// Fetching the master page failed: back off by the master-fetch failure count; the
/// fetch stays pending.
pub fn on_master_fetch_failure(project: &mut Project, now: Time, rng: &mut impl Rng) {
    project.master_fetch_failures = project.master_fetch_failures.saturating_add(1);
    project.last_rpc_failure = Some(now);
    let delay = rpc_backoff_delay(project.master_fetch_failures - 1, rng);
    project.min_rpc_time = project.min_rpc_time.max(now + delay);
}

/// The master page was read. If it named new scheduler URLs, the RPC failures were
/// probably the old URLs' fault: the failure count and the backoff are cleared.
pub fn on_master_fetch_success(project: &mut Project, scheduler_urls_changed: bool) {
    project.master_fetch_pending = false;
    project.master_fetch_failures = 0;
    if scheduler_urls_changed {
        project.nrpc_failures = 0;
        project.min_rpc_time = 0.0;
    }
}

/// One of the project's computations failed (the app crashed, or a transfer failed):
/// hold its RPCs back by an exponential backoff so that a broken app doesn't cycle
/// through jobs as fast as the server sends them.
pub fn on_app_failure(project: &mut Project, now: Time, rng: &mut impl Rng) {
    project.app_failures = project.app_failures.saturating_add(1);
    let delay = rpc_backoff_delay(project.app_failures - 1, rng);
    project.min_rpc_time = project.min_rpc_time.max(now + delay);
}

/// A computation of the project succeeded: the app-failure backoff starts over.
pub fn on_app_success(project: &mut Project) {
    project.app_failures = 0;
}

/// Why a project's results should be reported now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReportReason {
    /// The user (or the project) asked for an RPC.
    UserRequest,
    /// A ready result's deadline is within max(1 day, work_buf_min).
    DeadlineNear(JobId),
    /// The project has at least [`MAX_READY_RESULTS`] results ready.
    TooManyResults(u32),
    /// `report_results_immediately` in cc_config.xml or the project's app_config.xml.
    ReportImmediately,
    /// A result completed more than an hour ago (or at an unknown time).
    CompletedLongAgo(JobId),
}

impl ReportReason {
    /// Rank for choosing among projects: lower is more urgent.
    fn rank(self) -> u8 {
        match self {
            ReportReason::UserRequest => 0,
            ReportReason::DeadlineNear(_) => 1,
            ReportReason::TooManyResults(_) => 2,
            ReportReason::ReportImmediately => 3,
            ReportReason::CompletedLongAgo(_) => 4,
        }
    }
}

impl fmt::Display for ReportReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportReason::UserRequest => f.write_str("requested by user or project"),
            ReportReason::DeadlineNear(job) => {
                write!(f, "the deadline of result #{} is near", job.0)
            }
            ReportReason::TooManyResults(n) => write!(f, "{n} results are ready to report"),
            ReportReason::ReportImmediately => {
                f.write_str("report_results_immediately is set (cc_config.xml or app_config.xml)")
            }
            ReportReason::CompletedLongAgo(job) => {
                write!(f, "result #{} completed more than an hour ago", job.0)
            }
        }
    }
}

/// How a project's short-deadline results are reported (see
/// [`HELD_REPORT_LEAD_FRACTION`]; decided by [`crate::work_fetch::report_batching`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportBatching {
    /// As they fall due: it has no result waiting, its jobs' latency is a day or more,
    /// its latency cap is unknown or holds fewer than [`crate::work_fetch::MIN_BATCH_JOBS`] of its jobs.
    #[default]
    Unbatched,
    /// It holds more than [`crate::work_fetch::LATENCY_REFILL`] of its latency cap wherever it has one: its
    /// short-deadline results may wait.
    WellStocked,
    /// Its queue has drained to the refill point: its results go now, with a request
    /// for its uncovered share ([`crate::work_fetch::piggyback_request`]).
    Refill,
}

/// What one pass over the jobs tells about a project's unreported results.
#[derive(Debug, Clone, Copy, Default)]
struct Ready {
    count: u32,
    /// The result that falls due first because of its deadline: its deadline, how long
    /// before it it is reported (see [`ReportLead::lead`]), and which.
    earliest_due: Option<(Time, f64, JobId)>,
    earliest_completion: Option<(Time, JobId)>,
}

/// How long before its deadline a result is reported at the latest, unless held:
/// max(1 day, work_buf_min). A result whose latency is shorter is reported on
/// completion.
pub fn report_margin(state: &ClientState) -> f64 {
    SECONDS_PER_DAY.max(state.prefs.work_buf_min())
}

/// Whether short-deadline results may be held for batching at all: only on a host
/// always in reach ([`crate::model::TimeStats::late_report_margin`] zero). One that may
/// be off or offline when the deadline comes reports them as soon as it can.
pub fn reports_may_wait(state: &ClientState) -> bool {
    state.time_stats.late_report_margin() <= 0.0
}

/// How long before its deadline a ready result is reported.
#[derive(Clone, Copy)]
struct ReportLead {
    /// max(1 day, work_buf_min).
    margin: f64,
    /// Results may be held at all ([`reports_may_wait`]).
    may_wait: bool,
}

impl ReportLead {
    fn of(state: &ClientState) -> Self {
        ReportLead { margin: report_margin(state), may_wait: reports_may_wait(state) }
    }

    /// How long before its deadline `job`'s result is reported: `margin`, or, `held`
    /// (its project's queue well stocked) with a latency shorter than `margin`,
    /// [`HELD_REPORT_LEAD_FRACTION`] of its latency (at least [`MIN_HELD_REPORT_LEAD`]).
    fn lead(self, job: &Job, held: bool) -> f64 {
        let latency = job.report_deadline - job.received_time;
        if held && self.may_wait && latency < self.margin {
            (latency * HELD_REPORT_LEAD_FRACTION).max(MIN_HELD_REPORT_LEAD).min(self.margin)
        } else {
            self.margin
        }
    }
}

impl Ready {
    fn add(&mut self, id: JobId, job: &Job, lead: ReportLead, held: bool) {
        self.count += 1;
        let deadline = job.report_deadline;
        let lead = lead.lead(job, held);
        let earlier = |&(d, l, _): &(Time, f64, JobId)| {
            // Equal leads compare the deadlines themselves, which rounding cannot tie.
            if l == lead { deadline < d } else { deadline - lead < d - l }
        };
        if self.earliest_due.is_none_or(|e| earlier(&e)) {
            self.earliest_due = Some((deadline, lead, id));
        }
        if self.earliest_completion.is_none_or(|(c, _)| job.completed_time < c) {
            self.earliest_completion = Some((job.completed_time, id));
        }
    }
}

/// Whether a job waits to be reported.
fn unreported(job: &Job) -> bool {
    job.ready_to_report && !job.got_server_ack
}

/// Per project, its unreported results; `batching` (by project id) says whose results
/// may be held: the [`ReportBatching::WellStocked`] ones.
fn ready_results(state: &ClientState, batching: &[ReportBatching]) -> Vec<Ready> {
    let mut ready = Vec::new();
    ready_results_into(state, batching, None, &mut ready);
    ready
}

/// [`ready_results`] into `ready` (whatever it held is replaced). `waiting`, when the
/// caller knows it, is how many results wait: the pass over the jobs ends at the last of
/// them (they are mostly old jobs, near the front of the list).
fn ready_results_into(
    state: &ClientState,
    batching: &[ReportBatching],
    waiting: Option<usize>,
    ready: &mut Vec<Ready>,
) {
    ready.clear();
    ready.resize(state.projects.len(), Ready::default());
    let mut left = waiting.unwrap_or(usize::MAX);
    if left == 0 {
        return;
    }
    let lead = ReportLead::of(state);
    for (index, job) in state.jobs.iter().enumerate() {
        if unreported(job) {
            let p = job.project.index();
            if let Some(r) = ready.get_mut(p) {
                let held = batching.get(p) == Some(&ReportBatching::WellStocked);
                r.add(JobId::from_index(index), job, lead, held);
            }
            left -= 1;
            if left == 0 {
                break;
            }
        }
    }
}

fn reason_from(
    state: &ClientState,
    project: &Project,
    ready: &Ready,
    now: Time,
) -> Option<ReportReason> {
    if project.sched_rpc_pending {
        return Some(ReportReason::UserRequest);
    }
    if let Some((deadline, lead, job)) = ready.earliest_due {
        if deadline <= now + lead {
            return Some(ReportReason::DeadlineNear(job));
        }
    }
    if ready.count >= MAX_READY_RESULTS {
        return Some(ReportReason::TooManyResults(ready.count));
    }
    if ready.count > 0 && report_immediately(state, project) {
        return Some(ReportReason::ReportImmediately);
    }
    match ready.earliest_completion {
        // An unknown completion time (0) counts as long ago: the result is ready.
        Some((completed, job))
            if completed <= 0.0 || completed + REPORT_DELAY_AFTER_COMPLETION <= now =>
        {
            Some(ReportReason::CompletedLongAgo(job))
        }
        _ => None,
    }
}

/// Whether `project`'s results are reported as soon as they are uploaded: cc_config's
/// `report_results_immediately`, or the project's app_config.xml's.
fn report_immediately(state: &ClientState, project: &Project) -> bool {
    state.config.report_results_immediately || project.app_config.report_results_immediately
}

/// Why the project's results should be reported now, if they should: a user request;
/// a ready, unacknowledged result whose deadline is within max(1 day, work_buf_min);
/// [`MAX_READY_RESULTS`] or more ready; `report_results_immediately`; a result
/// completed more than an hour ago. The most urgent reason is given. No result is held
/// for batching here (see [`report_reasons`]).
pub fn report_reason(state: &ClientState, project: ProjectId, now: Time) -> Option<ReportReason> {
    let p = state.projects.get(project.index())?;
    let mut ready = Ready::default();
    let lead = ReportLead::of(state);
    for id in state.job_ids() {
        let job = state.job(id);
        if job.project == project && unreported(job) {
            ready.add(id, job, lead, false);
        }
    }
    reason_from(state, p, &ready, now)
}

/// The earliest time at which some project's results will need reporting (see
/// [`report_reason`]), no earlier than that project's `min_rpc_time`; `None` when no
/// result waits. A client sleeps until then instead of polling. `batching` is
/// [`report_reasons`]'.
pub fn next_report_time(
    state: &ClientState,
    now: Time,
    batching: &[ReportBatching],
) -> Option<Time> {
    next_report_time_with(state, now, batching, None, &mut ReportScratch::default())
}

/// The per-project findings [`next_report_time_with`] works in, kept by a caller that
/// plans again and again so that planning allocates nothing.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReportScratch {
    ready: Vec<Ready>,
}

/// [`next_report_time`], working in `scratch`; `waiting` is how many results wait to be
/// reported, when the caller has just counted them (see
/// [`crate::model::ProjectFacts::ready_to_report`]).
pub(crate) fn next_report_time_with(
    state: &ClientState,
    now: Time,
    batching: &[ReportBatching],
    waiting: Option<usize>,
    scratch: &mut ReportScratch,
) -> Option<Time> {
    ready_results_into(state, batching, waiting, &mut scratch.ready);
    scratch
        .ready
        .iter()
        .zip(&state.projects)
        .filter_map(|(ready, project)| due_time(state, project, ready, now))
        .min_by(f64::total_cmp)
}

/// Per project (by id), when its results will need reporting (see [`report_reason`];
/// the well-stocked projects in `batching` hold their short-deadline results), no earlier than
/// `now` and its `min_rpc_time`; `None` where no result waits.
pub fn report_due_times(
    state: &ClientState,
    now: Time,
    batching: &[ReportBatching],
) -> Vec<Option<Time>> {
    ready_results(state, batching)
        .iter()
        .zip(&state.projects)
        .map(|(ready, project)| due_time(state, project, ready, now))
        .collect()
}

/// When `project`'s results, `ready`, will need reporting (see [`report_due_times`]).
fn due_time(state: &ClientState, project: &Project, ready: &Ready, now: Time) -> Option<Time> {
    let due = if project.sched_rpc_pending
        || ready.count >= MAX_READY_RESULTS
        || (ready.count > 0 && report_immediately(state, project))
    {
        now
    } else {
        let by_deadline = ready.earliest_due.map(|(deadline, lead, _)| deadline - lead);
        let by_completion = ready
            .earliest_completion
            .map(|(c, _)| if c <= 0.0 { now } else { c + REPORT_DELAY_AFTER_COMPLETION });
        match (by_deadline, by_completion) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        }
    };
    Some(due.max(now).max(project.min_rpc_time))
}

/// [`report_reason`] for every project (indexed by id), in one pass over the jobs, with
/// the short-deadline results of the projects `batching` marks well stocked (by id)
/// held (see [`HELD_REPORT_LEAD_FRACTION`]; `&[]`: none held).
pub fn report_reasons(
    state: &ClientState,
    now: Time,
    batching: &[ReportBatching],
) -> Vec<Option<ReportReason>> {
    ready_results(state, batching)
        .iter()
        .zip(&state.projects)
        .map(|(ready, project)| reason_from(state, project, ready, now))
        .collect()
}

/// The project whose results most need reporting now, and why: the most urgent reason
/// first, then the lowest id (seed 002's order), among the projects `may_contact`
/// allows. `None` when no report is due. `batching` is [`report_reasons`]'.
pub fn most_urgent_report(
    state: &ClientState,
    now: Time,
    batching: &[ReportBatching],
    may_contact: impl Fn(ProjectId) -> bool,
) -> Option<(ProjectId, ReportReason)> {
    most_urgent_report_with(state, now, batching, may_contact, &mut ReportScratch::default())
}

/// [`most_urgent_report`], working in `scratch` (asked at every scheduler RPC, it
/// allocated two lists each time).
pub(crate) fn most_urgent_report_with(
    state: &ClientState,
    now: Time,
    batching: &[ReportBatching],
    may_contact: impl Fn(ProjectId) -> bool,
    scratch: &mut ReportScratch,
) -> Option<(ProjectId, ReportReason)> {
    ready_results_into(state, batching, None, &mut scratch.ready);
    let mut best: Option<(ProjectId, ReportReason)> = None;
    for (index, (ready, record)) in scratch.ready.iter().zip(&state.projects).enumerate() {
        let project = ProjectId::from_index(index);
        let reason = reason_from(state, record, ready, now);
        let Some(reason) = reason.filter(|_| may_contact(project)) else { continue };
        if best.is_none_or(|(_, b)| reason.rank() < b.rank()) {
            best = Some((project, reason));
        }
    }
    best
}

/// Whether a due report goes ahead of a work request to another project: on a host
/// often off or offline (a late-report margin), a result whose deadline is within that
/// margin may not be reportable at all once the host drops out of reach, so it is sent
/// while the host can reach the server. Elsewhere the work request goes first and
/// reports ride along (a minute later at most).
pub fn report_goes_first(state: &ClientState, reason: ReportReason, now: Time) -> bool {
    let margin = state.time_stats.late_report_margin();
    match reason {
        ReportReason::DeadlineNear(job) => {
            margin > 0.0
                && state.jobs.get(job.index()).is_some_and(|j| j.report_deadline <= now + margin)
        }
        _ => false,
    }
}

/// The two kinds of scheduler session of seed 002.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SessionKind {
    /// Get work; results are reported on the side.
    GetWork,
    /// Report results; work may be fetched on the side.
    ReportResults,
}

/// Seed 002's poll function: whether to start a scheduler session now, and with whom.
///
/// With the work buffer below the low water mark (`work_buffer_low`, from the rr_sim
/// saturated times), a get-work session goes to the fetchable, not latency-limited
/// project with the greatest resource debt (the per-resource request itself is
/// `work_fetch::choose_work_fetch`'s). Otherwise, or if no project can be asked for
/// work, a report session goes to a project with results to report now (most urgent
/// reason first, then lowest id). Projects before their min_rpc_time, and suspended
/// projects unless the user asked, are not contacted; with the network mode "never",
/// nobody is.
pub fn poll_session(
    state: &ClientState,
    work_buffer_low: bool,
    now: Time,
) -> Option<(SessionKind, ProjectId)> {
    if state.network_mode == RunMode::Never {
        return None;
    }
    if work_buffer_low {
        let mut best: Option<(f64, ProjectId)> = None;
        for p in state.project_ids() {
            if !state.project_fetchable(p, now) || state.project_latency_limited(p, now) {
                continue;
            }
            let debt = resource_debt(state.project(p));
            if best.is_none_or(|(b, _)| debt > b) {
                best = Some((debt, p));
            }
        }
        if let Some((_, p)) = best {
            return Some((SessionKind::GetWork, p));
        }
    }
    let mut best: Option<(u8, ProjectId)> = None;
    for (index, reason) in report_reasons(state, now, &[]).into_iter().enumerate() {
        let Some(reason) = reason else { continue };
        let project = &state.projects[index];
        if project.min_rpc_time > now || (project.suspended && reason != ReportReason::UserRequest)
        {
            continue;
        }
        if best.is_none_or(|(rank, _)| reason.rank() < rank) {
            best = Some((reason.rank(), ProjectId::from_index(index)));
        }
    }
    best.map(|(_, p)| (SessionKind::ReportResults, p))
}

/// Adds `cpu_seconds` of processing to the project's exponential average, first
/// decaying the average by e per week since its last update (a clock that went back
/// decays nothing).
pub fn update_exp_avg_cpu(project: &mut Project, cpu_seconds: f64, now: Time) {
    let elapsed =
        if project.exp_avg_time > 0.0 { (now - project.exp_avg_time).max(0.0) } else { 0.0 };
    let decayed = project.exp_avg_cpu * (-elapsed * EXP_DECAY_RATE).exp();
    let added = if cpu_seconds.is_finite() { cpu_seconds.max(0.0) } else { 0.0 };
    let average = decayed + added;
    project.exp_avg_cpu = if average.is_finite() { average } else { 0.0 };
    project.exp_avg_time = now;
}

/// Seed 002 resource debt = resource_share / exp_avg_cpu, with `exp_avg_cpu` floored at
/// [`MIN_EXP_AVG_CPU`] so a project that has had no processing gets a large finite debt.
pub fn resource_debt(project: &Project) -> f64 {
    let average = if project.exp_avg_cpu.is_finite() { project.exp_avg_cpu } else { 0.0 };
    project.resource_share.max(0.0) / average.max(MIN_EXP_AVG_CPU)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AppId, JobState, Workunit, WorkunitId};
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn rng() -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(42)
    }

    #[test]
    fn backoff_delay_doubles_and_caps() {
        let mut rng = rng();
        for n in 0..12u32 {
            let base = (60.0 * 2f64.powi(n.min(10) as i32)).min(14_400.0);
            for _ in 0..20 {
                let d = rpc_backoff_delay(n, &mut rng);
                assert!(d >= 0.5 * base && d < base, "n={n} d={d}");
            }
        }
        let d = rpc_backoff_delay(u32::MAX, &mut rng);
        assert!((7200.0..14_400.0).contains(&d));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn backoff_delay_within_bounds(n in any::<u32>(), seed in any::<u64>()) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let d = rpc_backoff_delay(n, &mut rng);
            prop_assert!((30.0..14_400.0).contains(&d));
        }
    }

    #[test]
    fn request_delay_only_extends_min_rpc_time() {
        let mut p = Project::new("p", "http://p/", 1.0);
        p.min_rpc_time = 5000.0;
        on_rpc_success(&mut p, Some(100.0), 1000.0);
        assert_eq!(p.min_rpc_time, 5000.0);
        on_rpc_success(&mut p, Some(10_000.0), 1000.0);
        assert_eq!(p.min_rpc_time, 11_000.0);
        on_rpc_success(&mut p, None, 2000.0);
        assert_eq!(p.min_rpc_time, 11_000.0);
        on_rpc_success(&mut p, Some(f64::NAN), 2000.0);
        assert_eq!(p.min_rpc_time, 11_000.0);
        assert_eq!(p.last_rpc_time, 2000.0);
    }

    #[test]
    fn master_fetch_after_ten_failures() {
        let mut rng = rng();
        let mut p = Project::new("p", "http://p/", 1.0);
        for i in 1..=9 {
            on_rpc_failure(&mut p, 1000.0, &mut rng);
            assert_eq!(p.nrpc_failures, i);
            assert!(!p.master_fetch_pending);
        }
        on_rpc_failure(&mut p, 1000.0, &mut rng);
        assert!(p.master_fetch_pending);
        assert!(p.min_rpc_time >= 1000.0 + 0.5 * 14_400.0 * 0.5);

        on_master_fetch_failure(&mut p, 2000.0, &mut rng);
        assert!(p.master_fetch_pending);
        assert_eq!(p.master_fetch_failures, 1);
        on_master_fetch_success(&mut p, false);
        assert!(!p.master_fetch_pending);
        assert_eq!(p.nrpc_failures, 10);
        assert!(p.min_rpc_time > 2000.0);
        on_master_fetch_success(&mut p, true);
        assert_eq!((p.nrpc_failures, p.min_rpc_time), (0, 0.0));

        for _ in 0..10 {
            on_rpc_failure(&mut p, 3000.0, &mut rng);
        }
        assert!(p.master_fetch_pending);
        on_rpc_success(&mut p, None, 4000.0);
        assert_eq!(p.nrpc_failures, 0);
    }

    #[test]
    fn first_failure_waits_about_a_minute() {
        let mut rng = rng();
        let mut p = Project::new("p", "http://p/", 1.0);
        on_rpc_failure(&mut p, 1000.0, &mut rng);
        assert!(p.min_rpc_time >= 1030.0 && p.min_rpc_time < 1060.0);
    }

    #[test]
    fn app_failures_back_off_exponentially_and_reset() {
        let mut rng = rng();
        let mut p = Project::new("p", "http://p/", 1.0);
        on_app_failure(&mut p, 0.0, &mut rng);
        let first = p.min_rpc_time;
        assert!((30.0..60.0).contains(&first));
        for _ in 0..5 {
            on_app_failure(&mut p, 0.0, &mut rng);
        }
        assert!(p.min_rpc_time >= 0.5 * 60.0 * 32.0);
        on_app_success(&mut p);
        assert_eq!(p.app_failures, 0);
    }

    fn state_with_ready(jobs: &[(Time, Time)]) -> ClientState {
        let mut state = ClientState::default();
        state.projects.push(Project::new("a", "http://a/", 1.0));
        state.projects.push(Project::new("b", "http://b/", 1.0));
        state.workunits.push(Workunit {
            project: ProjectId(0),
            name: "wu".into(),
            app: AppId(0),
            rsc_fpops_est: 1e9,
            rsc_fpops_bound: 1e10,
            rsc_memory_bound: 0.0,
            rsc_disk_bound: 0.0,
            command_line: String::new(),
            input_files: Vec::new(),
        });
        for (i, &(deadline, completed)) in jobs.iter().enumerate() {
            state.jobs.push(Job {
                project: ProjectId(0),
                name: format!("j{i}"),
                workunit: WorkunitId(0),
                app_version: None,
                platform: String::new(),
                version_num: 0,
                plan_class: String::new(),
                received_time: 0.0,
                report_deadline: deadline,
                state: JobState::FilesUploaded,
                suspended: false,
                ready_to_report: true,
                got_server_ack: false,
                completed_time: completed,
                final_elapsed_time: 100.0,
                final_cpu_time: 0.0,
                exit_status: 0,
                stderr_out: String::new(),
                final_peaks: Default::default(),
                task: None,
                output_files: Vec::new(),
            });
        }
        state
    }

    #[test]
    fn the_most_urgent_report_goes_first_and_on_a_host_out_of_reach_before_work() {
        let now = 1e6;
        let far = now + 10.0 * SECONDS_PER_DAY;
        // a: a result completed two hours ago; b: one due in 10 hours.
        let mut state = state_with_ready(&[(far, now - 7200.0), (now + 36_000.0, now - 60.0)]);
        state.jobs[1].project = ProjectId(1);
        let anyone = |_| true;
        let b = ProjectId(1);
        assert_eq!(
            most_urgent_report(&state, now, &[], anyone),
            Some((b, ReportReason::DeadlineNear(JobId(1))))
        );
        // A project that may not be contacted now is passed over.
        assert_eq!(
            most_urgent_report(&state, now, &[], |p| p != b),
            Some((ProjectId(0), ReportReason::CompletedLongAgo(JobId(0))))
        );
        // Always in reach: the report rides along with work requests.
        let near = ReportReason::DeadlineNear(JobId(1));
        assert!(!report_goes_first(&state, near, now));
        // On 60% of the time in 4-hour spells, offline half of it in 3-hour spells: a
        // down spell can outlast the 10 hours left, so it goes first.
        state.time_stats.on_frac = 0.6;
        state.time_stats.on_lambda = Some(4.0 * 3600.0);
        state.time_stats.connected_frac = 0.5;
        state.time_stats.connected_lambda = Some(3.0 * 3600.0);
        assert!(state.time_stats.late_report_margin() > 36_000.0);
        assert!(report_goes_first(&state, near, now));
        // Not a result whose deadline is beyond the margin, nor a report for other reasons.
        state.jobs[1].report_deadline = now + 2.0 * state.time_stats.late_report_margin();
        assert!(!report_goes_first(&state, near, now));
        assert!(!report_goes_first(&state, ReportReason::CompletedLongAgo(JobId(0)), now));
    }

    #[test]
    fn report_reasons_follow_the_rules() {
        let now = 1e6;
        let far = now + 10.0 * SECONDS_PER_DAY;
        let a = ProjectId(0);
        // Completed 10 minutes ago, deadline far: nothing yet.
        let mut state = state_with_ready(&[(far, now - 600.0)]);
        assert_eq!(report_reason(&state, a, now), None);
        // An hour after completion.
        assert_eq!(
            report_reason(&state, a, now + 3000.0),
            Some(ReportReason::CompletedLongAgo(JobId(0)))
        );
        // Deadline within a day.
        state.jobs[0].report_deadline = now + 80_000.0;
        assert_eq!(report_reason(&state, a, now), Some(ReportReason::DeadlineNear(JobId(0))));
        // A longer work buffer widens the margin.
        state.jobs[0].report_deadline = now + 2.0 * SECONDS_PER_DAY;
        assert_eq!(report_reason(&state, a, now), None);
        state.prefs.work_buf_min_days = 3.0;
        assert_eq!(report_reason(&state, a, now), Some(ReportReason::DeadlineNear(JobId(0))));
        state.prefs.work_buf_min_days = 0.1;
        // Acknowledged results don't count.
        state.jobs[0].got_server_ack = true;
        state.config.report_results_immediately = true;
        assert_eq!(report_reason(&state, a, now), None);
        state.jobs[0].got_server_ack = false;
        assert_eq!(report_reason(&state, a, now), Some(ReportReason::ReportImmediately));
        state.config.report_results_immediately = false;
        state.projects[0].sched_rpc_pending = true;
        assert_eq!(report_reason(&state, a, now), Some(ReportReason::UserRequest));
        assert_eq!(report_reasons(&state, now, &[]), vec![Some(ReportReason::UserRequest), None]);

        let many = state_with_ready(&vec![(far, now - 60.0); 64]);
        assert_eq!(report_reason(&many, a, now), Some(ReportReason::TooManyResults(64)));
        let fewer = state_with_ready(&vec![(far, now - 60.0); 63]);
        assert_eq!(report_reason(&fewer, a, now), None);
        assert_eq!(report_reasons(&fewer, now, &[]), vec![None, None]);
        assert!(ReportReason::TooManyResults(64).to_string().contains("64"));
    }

    #[test]
    fn next_report_time_is_when_report_reason_first_fires() {
        let now = 1e6;
        let far = now + 10.0 * SECONDS_PER_DAY;
        let mut state = state_with_ready(&[(far, now - 600.0)]);
        // An hour after completion, and report_reason agrees from then on.
        let due = next_report_time(&state, now, &[]).expect("a result waits");
        assert_eq!(due, now - 600.0 + REPORT_DELAY_AFTER_COMPLETION);
        assert_eq!(report_reason(&state, ProjectId(0), due - 1.0), None);
        assert!(report_reason(&state, ProjectId(0), due).is_some());
        // A near deadline makes it due at once; min_rpc_time still holds it back.
        state.jobs[0].report_deadline = now + 1000.0;
        assert_eq!(next_report_time(&state, now, &[]), Some(now));
        state.projects[0].min_rpc_time = now + 50.0;
        assert_eq!(next_report_time(&state, now, &[]), Some(now + 50.0));
        // Nothing waits: no time.
        state.jobs[0].got_server_ack = true;
        assert_eq!(next_report_time(&state, now, &[]), None);
    }

    #[test]
    fn a_well_stocked_projects_short_deadline_results_wait_for_a_quarter_of_their_latency() {
        let now = 1e6;
        let a = ProjectId(0);
        // Received an hour before its deadline, completed a minute ago, due in 50 minutes.
        let mut state = state_with_ready(&[(now + 3000.0, now - 60.0)]);
        state.jobs[0].received_time = now - 600.0;
        let held = [ReportBatching::WellStocked, ReportBatching::Unbatched];
        // Not held: due at once (its deadline is within a day).
        let near = Some(ReportReason::DeadlineNear(JobId(0)));
        assert_eq!(report_reasons(&state, now, &[]), vec![near, None]);
        assert_eq!(next_report_time(&state, now, &[]), Some(now));
        // Held: due a quarter of its hour before the deadline, and report_reasons agrees.
        let due = now + 3000.0 - 900.0;
        assert_eq!(next_report_time(&state, now, &held), Some(due));
        assert_eq!(report_reasons(&state, due - 1.0, &held), vec![None, None]);
        assert_eq!(report_reasons(&state, due, &held), vec![near, None]);
        assert_eq!(most_urgent_report(&state, now, &held, |_| true), None);
        // report_reason holds nothing.
        assert_eq!(report_reason(&state, a, now), near);
        // At least MIN_HELD_REPORT_LEAD before the deadline, whatever the latency.
        state.jobs[0].received_time = now - 100.0;
        state.jobs[0].report_deadline = now + 600.0;
        const { assert!(700.0 * HELD_REPORT_LEAD_FRACTION < MIN_HELD_REPORT_LEAD) };
        assert_eq!(next_report_time(&state, now, &held), Some(now + 600.0 - MIN_HELD_REPORT_LEAD));
        // The other rules still hold: an hour after completion it goes.
        state.jobs[0].report_deadline = now + 20_000.0;
        state.jobs[0].received_time = now - 8000.0;
        assert_eq!(
            next_report_time(&state, now, &held),
            Some(now - 60.0 + REPORT_DELAY_AFTER_COMPLETION)
        );
        // A result with a day's latency or more is not held: the day's margin reports it.
        state.jobs[0].report_deadline = now + 3000.0;
        state.jobs[0].received_time = now + 3000.0 - SECONDS_PER_DAY;
        assert_eq!(report_reasons(&state, now, &held), vec![near, None]);
        // Nor on a host often out of reach: its late-report margin outlasts the latency.
        state.jobs[0].received_time = now - 600.0;
        state.time_stats.on_frac = 0.6;
        state.time_stats.on_lambda = Some(4.0 * 3600.0);
        assert!(state.time_stats.late_report_margin() > 3600.0);
        assert_eq!(report_reasons(&state, now, &held), vec![near, None]);
    }

    #[test]
    fn poll_prefers_get_work_when_buffer_low_else_reports() {
        let now = 1e6;
        let mut state = state_with_ready(&[(now + 1000.0, now - 60.0)]);
        state.projects[0].exp_avg_cpu = 1000.0;
        state.projects[1].exp_avg_cpu = 10.0;
        assert_eq!(poll_session(&state, true, now), Some((SessionKind::GetWork, ProjectId(1))));
        assert_eq!(
            poll_session(&state, false, now),
            Some((SessionKind::ReportResults, ProjectId(0)))
        );
        // b can't be asked: a has the next greatest debt.
        state.projects[1].dont_request_more_work = true;
        assert_eq!(poll_session(&state, true, now), Some((SessionKind::GetWork, ProjectId(0))));
        // Nobody can be asked for work: report instead.
        state.projects[0].latency_limited_until = Some(now + 10.0);
        assert_eq!(
            poll_session(&state, true, now),
            Some((SessionKind::ReportResults, ProjectId(0)))
        );
        // A project-requested delay holds the report back too.
        state.projects[0].min_rpc_time = now + 10.0;
        assert_eq!(poll_session(&state, false, now), None);
        state.projects[0].min_rpc_time = 0.0;
        state.network_mode = RunMode::Never;
        assert_eq!(poll_session(&state, true, now), None);
    }

    #[test]
    fn exp_avg_cpu_decays_by_e_per_week() {
        let mut p = Project::new("p", "http://p/", 2.0);
        assert_eq!(resource_debt(&p), 2.0 / MIN_EXP_AVG_CPU);
        update_exp_avg_cpu(&mut p, 1000.0, 100.0);
        assert_eq!(p.exp_avg_cpu, 1000.0);
        update_exp_avg_cpu(&mut p, 0.0, 100.0 + 7.0 * SECONDS_PER_DAY);
        assert!((p.exp_avg_cpu - 1000.0 / std::f64::consts::E).abs() < 1e-9);
        update_exp_avg_cpu(&mut p, 50.0, 0.0);
        assert!((p.exp_avg_cpu - (1000.0 / std::f64::consts::E + 50.0)).abs() < 1e-9);
        assert!((resource_debt(&p) - 2.0 / p.exp_avg_cpu).abs() < 1e-12);
        p.exp_avg_cpu = f64::NAN;
        assert!(resource_debt(&p).is_finite());
    }
}
