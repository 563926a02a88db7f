//! How much work a project should be asked for at most: what its fair share of a
//! resource can finish within the time the project gives its jobs (its latency, seen on
//! its jobs as deadline − receipt).
//!
//! Seed 000's work fetch and seed 003's per-resource requests size a request by the
//! shortfall alone, and the project's server then sends as much as would meet the
//! deadlines if the whole host worked for it. For a project with short deadlines
//! (seed 000's scenario 1: 6-minute jobs due in an hour) that queue can be met only in
//! EDF mode, starving the other projects and missing deadlines at the slightest
//! disturbance. Capping the request at `share × latency` keeps such a project within
//! its share without ever running in EDF.

use crate::estimate::{
    remaining_duration, unstarted_duration, unstarted_from, usable_flops, version_dcf,
};
use crate::model::{
    AppVersion, ClientState, JobId, ProjectFacts, ProjectId, ResourceMap, ResourceType,
};
use crate::rpc_policy::{ReportBatching, report_margin, reports_may_wait};
use crate::rr_sim::RrSimOutput;

/// Only this fraction of a project's latency is booked: the rest is slack for what the
/// estimates don't see (jobs longer than estimated, the scheduling period's rotation,
/// the time to report), so that a queue sized to the cap meets its deadlines without EDF.
pub(crate) const LATENCY_BOOKING: f64 = 0.5;

/// A project is well stocked, and its short-deadline results may wait to be reported
/// (see [`crate::rpc_policy::HELD_REPORT_LEAD_FRACTION`]), while what it holds under its
/// latency cap stays above this fraction of the cap: when the queue drains to it, the
/// held reports go out with a request that refills the queue (several jobs in one RPC
/// instead of one job per RPC as each finishes).
pub const LATENCY_REFILL: f64 = 0.5;

/// A project is well stocked only where its latency cap holds at least this many of its
/// jobs: a refill at [`LATENCY_REFILL`] then brings two or more jobs, while holding the
/// results of a project whose cap holds a job or two would save no RPC and only delay
/// the requests its reports carry.
pub const MIN_BATCH_JOBS: f64 = 4.0;

/// What a project may hold of one resource under the latency cap, and what it holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LatencyBooking {
    /// Instance-seconds its fair share can finish within [`LATENCY_BOOKING`] of its
    /// latency (infinite where the latency or the share is not known).
    pub capacity: f64,
    /// Instance-seconds of its nearly runnable jobs queued there.
    pub queued: f64,
    /// The capacity comes from the project's latency; otherwise (it has no job there to
    /// learn it from) it is a first request's worth (see [`latency_bookings`]).
    pub from_latency: bool,
}

impl LatencyBooking {
    /// The most instance-seconds worth asking for now.
    pub(crate) fn room(&self) -> f64 {
        if self.capacity.is_finite() {
            (self.capacity - self.queued).max(0.0)
        } else {
            f64::INFINITY
        }
    }

    /// Whether the cap keeps the project from holding its fair part of a full buffer
    /// (`share × buffer`, instance-seconds): it then runs dry between fetches made at
    /// the resource's low water mark, unless it is asked again as its own queue drains.
    pub(crate) fn binds(&self, share: f64, buffer: f64) -> bool {
        self.from_latency
            && self.capacity.is_finite()
            && share > 0.0
            && self.capacity < share * buffer
    }
}

/// Per resource, the most instance-seconds worth asking `project` for: its fair-share
/// instances (all of the resource's where its target there is none) ×
/// [`LATENCY_BOOKING`] × its latency × the resource's availability, less the work it
/// already has queued there. Infinite where the latency is not known. `rr` is the round-robin simulation of this same `state`: the queued work is
/// read from its remaining durations.
pub(crate) fn latency_caps(
    state: &ClientState,
    facts: &[ProjectFacts],
    rr: &RrSimOutput,
    project: ProjectId,
) -> ResourceMap<f64> {
    latency_bookings(state, facts, rr, project).map(|_, b| b.room())
}

/// Per resource, what `project` may hold under the latency cap and what it holds (see
/// [`latency_caps`]). Where the project has no unreported job on a resource, its latency
/// there is unknown: it is asked for at most its share of the low-water buffer, enough
/// to learn how soon it wants its jobs back. Asking a project with one-hour deadlines for
/// a whole buffer because none of its jobs is on hand would fill the queue with work
/// that can only miss.
pub(crate) fn latency_bookings(
    state: &ClientState,
    facts: &[ProjectFacts],
    rr: &RrSimOutput,
    project: ProjectId,
) -> ResourceMap<LatencyBooking> {
    // Only the resources where the latency is known need the queue measured.
    let (_, share) = shares(state, rr, project);
    let latency = facts.get(project.index()).map(|f| f.min_latency).unwrap_or_default();
    let known = ResourceMap::from_fn(|r| latency[r].is_some() && share[r] > 0.0);
    let mut queued: ResourceMap<f64> = ResourceMap::default();
    for index in 0..state.jobs.len() {
        if state.jobs[index].project != project {
            continue;
        }
        if let Some((resource, work, _)) = queued_work(state, rr, index, |r| known[r]) {
            queued[resource] += work;
        }
    }
    latency_bookings_with(state, facts, rr, project, |r| queued[r])
}

/// The per-project lists [`latency_bookings_each`] works in, kept between decisions.
#[derive(Debug, Clone, Default)]
pub(crate) struct BookingScratch {
    /// Per project, the resources whose latency is known.
    known: Vec<ResourceMap<bool>>,
    /// Per project, the instance-seconds queued per resource.
    queued: Vec<ResourceMap<f64>>,
}

/// [`latency_bookings`] of every project, handed to `each` in project order, from one
/// pass over the jobs: the queues are summed in the same order as one project's alone,
/// so each project's figures are exactly [`latency_bookings`]'s.
pub(crate) fn latency_bookings_each(
    state: &ClientState,
    facts: &[ProjectFacts],
    rr: &RrSimOutput,
    scratch: &mut BookingScratch,
    mut each: impl FnMut(ProjectId, ResourceMap<LatencyBooking>),
) {
    let BookingScratch { known, queued } = scratch;
    known.clear();
    known.extend(state.project_ids().map(|project| {
        let (_, share) = shares(state, rr, project);
        let latency = facts.get(project.index()).map(|f| f.min_latency).unwrap_or_default();
        ResourceMap::from_fn(|r| latency[r].is_some() && share[r] > 0.0)
    }));
    queued.clear();
    queued.resize(known.len(), ResourceMap::default());
    for index in 0..state.jobs.len() {
        let p = state.jobs[index].project.index();
        let Some(known) = known.get(p) else { continue };
        if !known.0.iter().any(|&k| k) {
            continue;
        }
        if let Some((resource, work, _)) = queued_work(state, rr, index, |r| known[r]) {
            queued[p][resource] += work;
        }
    }
    for project in state.project_ids() {
        let queued = &queued[project.index()];
        each(project, latency_bookings_with(state, facts, rr, project, |r| queued[r]));
    }
}

/// [`latency_bookings`] for `project` whose queued instance-seconds per resource are
/// `queued` (only read where its latency is known).
fn latency_bookings_with(
    state: &ClientState,
    facts: &[ProjectFacts],
    rr: &RrSimOutput,
    project: ProjectId,
    queued: impl Fn(ResourceType) -> f64,
) -> ResourceMap<LatencyBooking> {
    let unknown = LatencyBooking { capacity: f64::INFINITY, queued: 0.0, from_latency: false };
    let Some(latency) = facts.get(project.index()).map(|f| f.min_latency) else {
        return ResourceMap::from_fn(|_| unknown);
    };
    let (target, share) = shares(state, rr, project);
    let known = ResourceMap::from_fn(|r| latency[r].is_some() && share[r] > 0.0);
    let available = |r: ResourceType| state.time_stats.available_frac(r);
    ResourceMap::from_fn(|r| match latency[r] {
        Some(latency) if known[r] => LatencyBooking {
            capacity: share[r] * LATENCY_BOOKING * latency * available(r),
            queued: queued(r),
            from_latency: true,
        },
        None if share[r] > 0.0 && target[r] > 0.0 => LatencyBooking {
            capacity: share[r] * state.prefs.work_buf_min() * available(r),
            queued: 0.0,
            from_latency: false,
        },
        _ => unknown,
    })
}

/// A project's fair-share target per resource, and the instances its latency cap is
/// sized by: the target, or all of the resource's where the target gives it none.
fn shares(
    state: &ClientState,
    rr: &RrSimOutput,
    project: ProjectId,
) -> (ResourceMap<f64>, ResourceMap<f64>) {
    // A project the fair-share target gives none of a resource is asked for it only
    // when the resource needs work no one else supplies: what it can finish in time
    // there is what the whole resource can.
    let target = rr.projects.get(project.index()).map(|p| p.share).unwrap_or_default();
    let share = ResourceMap::from_fn(|r| {
        if target[r] > 0.0 { target[r] } else { f64::from(state.instances(r)) }
    });
    (target, share)
}

/// The instance-seconds job `index` has queued on its main resource (and the instances
/// it uses there), if it is nearly runnable and `counted` takes that resource.
fn queued_work(
    state: &ClientState,
    rr: &RrSimOutput,
    index: usize,
    counted: impl Fn(ResourceType) -> bool,
) -> Option<(ResourceType, f64, f64)> {
    let job = &state.jobs[index];
    // Most jobs asked about are done computing, waiting to be reported: such a job has
    // nothing queued (the simulation leaves it out, and it is not nearly runnable).
    if job.state.computing_done() {
        return None;
    }
    // A job the simulation took part in is nearly runnable, and the simulation already
    // estimated it: reuse that rather than estimating every queued job again.
    let simulated = rr.jobs.get(index).filter(|sim| sim.simulated);
    let id = JobId::from_index(index);
    if simulated.is_none() && !state.job_nearly_runnable(id) {
        return None;
    }
    let usage = state.app_version(job.app_version?).usage;
    let resource = usage.main_resource();
    if !counted(resource) {
        return None;
    }
    let remaining =
        simulated.map_or_else(|| remaining_duration(state, id), |sim| sim.remaining_duration);
    Some((resource, remaining * usage.main_usage(), usage.main_usage()))
}

/// Per project (by id), how its results are reported (see [`ReportBatching`]): batched
/// on a host always in reach ([`crate::rpc_policy::reports_may_wait`]) when it has
/// results waiting, a latency cap on some resource, and on every resource
/// where it has one, a latency shorter than the reporting margin and room for
/// [`MIN_BATCH_JOBS`] of its largest queued job. `rr` and `facts` are of this same
/// `state`. One pass over the jobs of the projects with results waiting.
pub fn report_batching(
    state: &ClientState,
    facts: &[ProjectFacts],
    rr: &RrSimOutput,
) -> Vec<ReportBatching> {
    let mut batching = Vec::new();
    report_batching_into(state, facts, rr, &mut batching, &mut BatchingScratch::default());
    batching
}

/// The per-project sums [`report_batching_into`] works in, kept by a caller that decides
/// again and again so that a decision allocates nothing for them.
#[derive(Debug, Clone, Default)]
pub(crate) struct BatchingScratch {
    /// Per project: `None` where it cannot be batched; else per resource, the work
    /// queued and the largest job.
    queued: Vec<Option<ResourceMap<(f64, f64)>>>,
    /// Per app version: its usable speed and duration correction factor, looked up at
    /// its first job in a decision (`None` until then).
    versions: Vec<Option<(f64, f64)>>,
}

/// [`report_batching`] into `batching` (whatever it held is replaced), with its sums in
/// `scratch`.
pub(crate) fn report_batching_into(
    state: &ClientState,
    facts: &[ProjectFacts],
    rr: &RrSimOutput,
    batching: &mut Vec<ReportBatching>,
    scratch: &mut BatchingScratch,
) {
    batching.clear();
    batching.resize(state.projects.len(), ReportBatching::Unbatched);
    if !reports_may_wait(state) {
        return;
    }
    let margin = report_margin(state);
    // Only a project with results waiting and jobs due within the margin can be batched.
    let queued = &mut scratch.queued;
    queued.clear();
    queued.extend((0..state.projects.len()).map(|p| {
        facts
            .get(p)
            .is_some_and(|f| {
                f.ready_to_report > 0 && f.min_latency.0.iter().flatten().any(|&l| l < margin)
            })
            .then(ResourceMap::default)
    }));
    if queued.iter().all(Option::is_none) {
        return;
    }
    let versions = &mut scratch.versions;
    versions.clear();
    versions.resize(state.app_versions.len(), None);
    // Per project and resource: the work queued, and the largest job.
    for index in 0..state.jobs.len() {
        let p = state.jobs[index].project.index();
        let Some(Some(queued)) = queued.get_mut(p) else { continue };
        if let Some((resource, work, _)) = queued_work(state, rr, index, |_| true) {
            queued[resource].0 += work;
        }
        // The size of its jobs, whole, as the server sends them (a job nearly done is no
        // measure of the next), from those queued and those waiting to be reported.
        let job = &state.jobs[index];
        if let Some(av) = job.app_version.filter(|_| !job.got_server_ack) {
            let version = state.app_version(av);
            let usage = version.usage;
            let size =
                version_unstarted_duration(state, index, version, versions.get_mut(av.index()))
                    * usage.main_usage();
            let largest = &mut queued[usage.main_resource()].1;
            *largest = largest.max(size);
        }
    }
    for (p, batching) in batching.iter_mut().enumerate() {
        let Some(queued) = &queued[p] else { continue };
        let project = ProjectId::from_index(p);
        let latency = facts[p].min_latency;
        let bookings = latency_bookings_with(state, facts, rr, project, |r| queued[r].0);
        let capped = || bookings.iter().filter(|(_, b)| b.from_latency && b.capacity.is_finite());
        let batched = capped().next().is_some()
            && capped().all(|(r, b)| {
                latency[r].is_some_and(|l| l < margin) && b.capacity >= MIN_BATCH_JOBS * queued[r].1
            });
        if batched {
            let stocked = capped().all(|(_, b)| b.room() < LATENCY_REFILL * b.capacity);
            *batching = if stocked { ReportBatching::WellStocked } else { ReportBatching::Refill };
        }
    }
}

/// [`unstarted_duration`] of job `index`, whose app version is `version`, with the
/// version's speed and duration correction factor kept in `known` from one of its jobs to
/// the next (a job of another project than its version's is estimated afresh: its
/// project's factor may differ).
fn version_unstarted_duration(
    state: &ClientState,
    index: usize,
    version: &AppVersion,
    known: Option<&mut Option<(f64, f64)>>,
) -> f64 {
    let job = &state.jobs[index];
    match known {
        Some(known) if job.project == version.project => {
            let (flops, dcf) = *known.get_or_insert_with(|| {
                let flops = usable_flops(version.flops, state.host.p_fpops);
                (flops, version_dcf(state.project(version.project), version))
            });
            unstarted_from(state.workunit(job.workunit).rsc_fpops_est, flops, dcf)
        }
        _ => unstarted_duration(state, JobId::from_index(index)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ProjectFacts;
    use crate::rr_sim::test_support::{HOUR, StateBuilder, cpu_usage};

    /// Two CPUs, two equal projects: `short` with jobs due in `latency` hours, `long`
    /// with a day's latency.
    fn two_projects(short_jobs: usize, latency: f64) -> (StateBuilder, ProjectId, ProjectId) {
        let mut b = StateBuilder::new(2);
        b.horizon_hours(10.0);
        let short = b.project("short", 1.0);
        let long = b.project("long", 1.0);
        let short_app = b.app_version(short, cpu_usage(1.0), 1e9);
        let long_app = b.app_version(long, cpu_usage(1.0), 1e9);
        for _ in 0..short_jobs {
            b.job(short, short_app, 0.5 * HOUR, latency * HOUR);
        }
        b.job(long, long_app, 5.0 * HOUR, 24.0 * HOUR);
        (b, short, long)
    }

    fn bookings(b: &StateBuilder, project: ProjectId) -> ResourceMap<LatencyBooking> {
        let facts = ProjectFacts::gather(&b.state);
        let rr = b.simulate();
        latency_bookings(&b.state, &facts, &rr, project)
    }

    #[test]
    fn the_cap_is_what_the_share_finishes_in_half_the_latency() {
        // Two jobs of half an hour due in 4 hours, one CPU's share: 2 CPU-hours may be
        // held, one is.
        let (b, short, _) = two_projects(2, 4.0);
        let booking = bookings(&b, short)[ResourceType::Cpu];
        assert!(booking.from_latency);
        // Jobs are received one second apart, so the shortest latency is a second short.
        let latency = 4.0 * HOUR - 1.0;
        assert!((booking.capacity - 1.0 * LATENCY_BOOKING * latency).abs() < 1e-6);
        assert!((booking.queued - 1.0 * HOUR).abs() < 1e-6);
        assert!((booking.room() - (LATENCY_BOOKING * latency - 1.0 * HOUR)).abs() < 1e-6);
        // It cannot hold its share of a full 10-hour buffer: the cap binds.
        assert!(booking.binds(1.0, 10.0 * HOUR));
        assert!(!booking.binds(1.0, 1.0 * HOUR));
    }

    #[test]
    fn without_a_job_to_learn_the_latency_from_a_first_request_is_small() {
        let (b, short, _) = two_projects(0, 4.0);
        let booking = bookings(&b, short)[ResourceType::Cpu];
        assert!(!booking.from_latency);
        assert_eq!(booking.queued, 0.0);
        let first = 1.0 * b.state.prefs.work_buf_min();
        assert!((booking.capacity - first).abs() < 1e-6, "{booking:?}");
        // Nothing is known to bind it: it is not a reason to top up.
        assert!(!booking.binds(1.0, 10.0 * HOUR));
    }

    #[test]
    fn a_project_the_target_gives_nothing_is_capped_by_the_whole_resource() {
        let (mut b, short, long) = two_projects(2, 4.0);
        b.state.projects[long.index()].resource_share = 0.0;
        // "long" has no share: the target gives all of the CPUs to "short".
        let facts = ProjectFacts::gather(&b.state);
        let rr = b.simulate();
        assert_eq!(rr.projects[long.index()].share[ResourceType::Cpu], 0.0);
        let booking = latency_bookings(&b.state, &facts, &rr, long)[ResourceType::Cpu];
        let latency = 24.0 * HOUR - 2.0;
        assert!((booking.capacity - 2.0 * LATENCY_BOOKING * latency).abs() < 1e-6, "{booking:?}");
        assert!(rr.projects[short.index()].share[ResourceType::Cpu] > 1.99);
    }

    /// Two CPUs, two equal projects: `short` with `queued` 6-minute jobs due within
    /// `latency` hours and one such job done and waiting to be reported, `long` with a
    /// day's latency.
    fn reporting(queued: usize, latency: f64) -> (StateBuilder, ProjectId) {
        let mut b = StateBuilder::new(2);
        let short = b.project("short", 1.0);
        let long = b.project("long", 1.0);
        let short_app = b.app_version(short, cpu_usage(1.0), 1e9);
        let long_app = b.app_version(long, cpu_usage(1.0), 1e9);
        let done = b.job(short, short_app, 0.1 * HOUR, latency * HOUR);
        b.state.jobs[done.index()].state = crate::model::JobState::FilesUploaded;
        b.state.jobs[done.index()].ready_to_report = true;
        for _ in 0..queued {
            b.job(short, short_app, 0.1 * HOUR, latency * HOUR);
        }
        b.job(long, long_app, 5.0 * HOUR, 24.0 * HOUR);
        (b, short)
    }

    fn batching_of(b: &StateBuilder, project: ProjectId) -> ReportBatching {
        let facts = ProjectFacts::gather(&b.state);
        report_batching(&b.state, &facts, &b.simulate())[project.index()]
    }

    #[test]
    fn short_deadline_results_are_batched_while_the_queue_is_above_half_its_cap() {
        // One CPU's share of an hour's latency, half of it booked: about five 6-minute
        // jobs. Four queued are more than half of it; two are not.
        assert_eq!(batching_of(&reporting(4, 1.0).0, ProjectId(0)), ReportBatching::WellStocked);
        assert_eq!(batching_of(&reporting(2, 1.0).0, ProjectId(0)), ReportBatching::Refill);
        assert_eq!(batching_of(&reporting(0, 1.0).0, ProjectId(0)), ReportBatching::Refill);
        // The project with nothing to report is not batched.
        assert_eq!(batching_of(&reporting(4, 1.0).0, ProjectId(1)), ReportBatching::Unbatched);
    }

    #[test]
    fn results_are_not_batched_where_it_saves_nothing_or_risks_the_deadline() {
        // A day's latency: the margin already lets results wait.
        let (b, short) = reporting(40, 25.0);
        assert_eq!(batching_of(&b, short), ReportBatching::Unbatched);
        // A cap that holds fewer than MIN_BATCH_JOBS jobs (6-minute jobs due within 20
        // minutes: 10 minutes' booking).
        let (b, short) = reporting(1, 20.0 / 60.0);
        assert_eq!(batching_of(&b, short), ReportBatching::Unbatched);
        // A host that may be out of reach when the deadline comes.
        let (mut b, short) = reporting(4, 1.0);
        b.state.time_stats.on_frac = 0.6;
        assert!(b.state.time_stats.late_report_margin() > 0.0);
        assert_eq!(batching_of(&b, short), ReportBatching::Unbatched);
    }

    #[test]
    fn a_refill_asks_for_the_projects_uncovered_share_within_its_cap_when_the_cpu_is_not_short() {
        // "long" fills the 10-hour buffer of both CPUs; "short" has one job left.
        let (mut b, short) = reporting(1, 1.0);
        let long_app = crate::model::AppVersionId::from_index(1);
        for _ in 0..4 {
            b.job(ProjectId(1), long_app, 5.0 * HOUR, 24.0 * HOUR);
        }
        let facts = ProjectFacts::gather(&b.state);
        let rr = b.simulate();
        assert_eq!(rr.resources[ResourceType::Cpu].shortfall, 0.0);
        let report =
            |batching| super::super::piggyback_request(&b.state, &rr, &facts, short, batching, 0.0);
        let side = report(ReportBatching::Unbatched);
        assert_eq!(side.resources[ResourceType::Cpu].req_seconds, 0.0);
        let refill = report(ReportBatching::Refill);
        let asked = refill.resources[ResourceType::Cpu].req_seconds;
        let room = latency_bookings(&b.state, &facts, &rr, short)[ResourceType::Cpu].room();
        assert!(asked > 0.0 && asked <= room, "asked {asked}, room {room}");
        assert_eq!(refill.work_req_seconds, asked);
    }
}
