//! Weighted round-robin simulation (seed 000 "Round-robin simulation", seed 003 "RR
//! simulation", 6.4 notes 6): simulates running the nearly-runnable jobs with each
//! project getting its resource share of each processing resource, and reports which
//! jobs would miss their deadlines, the shortfall per resource and per project over the
//! work-buffer horizon, the idle instances now, and how long each resource stays busy.
//!
//! # The model
//!
//! - **Jobs.** Every nearly-runnable job of a CPU-intensive project and app takes part. It
//!   runs on its main resource (its coprocessor, else the CPU) and occupies
//!   `main_usage` instances of it; a coprocessor job also holds `avg_ncpus` CPUs. Its
//!   work is [`remaining_duration`](crate::estimate::remaining_duration), in processing seconds, computed once.
//! - **Sharing a resource.** The projects with jobs on a resource R share R's instances
//!   in proportion to their resource shares, by water-filling: a project whose remaining
//!   jobs cannot use its whole part (their usage summed, at most the instances) gets what
//!   they can use, and the rest goes to the others by share. Projects with zero share get
//!   only what the others leave, split evenly. On the CPU, the instances shared among CPU
//!   jobs are those the running coprocessor jobs leave free.
//! - **Within a project.** Its jobs on R are queued running ones first, then by earliest
//!   deadline, then in the order received. The head of the queue is active: jobs are taken
//!   until their usage covers the project's allocation, and every active job progresses at
//!   `allocation / Σ usage(active) ≤ 1` times the resource's availability
//!   ([`crate::model::TimeStats::available_frac`]) processing seconds per wall second.
//!   So in seed 000's example (shares 2:1, A1 A2 B1 on two CPUs) all three jobs run at
//!   2/3 until A2 finishes, then A1 and B1 at 1.
//! - **Events.** The simulation steps from one job completion to the next, reallocating
//!   only the resource whose job finished (and the CPU after a coprocessor job finished),
//!   and continues until every job finished, so `deadline_missed` is known for all. Jobs
//!   on a resource without instances never progress: they complete at infinity and miss
//!   their deadlines.
//!
//! # The outputs
//!
//! - **Shortfall(R)** (seed 003 `accumulate_shortfall`): over the horizon H (the high
//!   water mark, [`crate::model::Prefs::work_buf_total`]), the integral of
//!   `instances − used`, where `used` is capped at the instances and, on the CPU, counts
//!   the CPUs held by coprocessor jobs as used (note 6: CPUs idle because GPU jobs hold
//!   them are no shortfall).
//! - **Shortfall(P, R)** (seed 003 `PRSC_PROJECT_DATA`): the integral over H of
//!   `max(0, share(P, R) − used(P, R))`, where `share(P, R)` is P's
//!   [`TargetAllocation`] of R, the cross-resource fair division of the host among the
//!   projects by resource share, each over the resources it can supply (on one resource
//!   alone: `instances × share_P / Σ share`), and `used(P, R)` the instances its jobs
//!   occupy (on the CPU including what its coprocessor jobs hold). A project can supply R
//!   when it is not suspended, not "no new tasks", CPU-intensive, not told by the server
//!   that it has no app for R, and it has an app version for R or a job of R here. The
//!   run rates above stay per resource: the target only says what each project is owed.
//! - **nidle(R)** (seed 003 `set_nidle`): instances idle after the initial assignment.
//! - **saturated_time(R)**: seconds until R's usage first drops below its instances,
//!   capped at H (so H means "busy through the horizon"); 0 for a resource without
//!   instances.
//!
//! # Cost
//!
//! Each project's jobs on a resource progress at one common rate, so a queue keeps one
//! "progress clock" and a heap of its active jobs keyed by the clock value at which they
//! finish; each queue keeps the time of its next completion, and the next event is found
//! by a scan over the queues that have jobs (at most projects × resources, usually a
//! dozen: cheaper than a global heap whose entries mostly go stale). A reallocation
//! changes a queue's rate, never its heap, so it costs O(1) per queue. A completion whose project
//! still wants at least its allocation leaves every allocation unchanged, so it touches
//! only its own queue: the simulation is O(jobs · log jobs) plus O(projects) per
//! reallocation, with no per-event pass over all jobs.
//!
//! Allowances: a job using more instances than the resource has is treated as using all
//! of them (BOINC runs such a job alone), and coprocessor jobs hold their CPUs whatever
//! the CPU count, so the CPU usage right after the initial assignment is at most
//! `max(instances, CPUs held by coprocessor jobs)`.

use crate::Time;
use crate::accounting::fair_share::TargetAllocation;
use crate::estimate::{project_dcf, remaining_after, unstarted_from, usable_flops};
use crate::model::{ClientState, JobId, ProjectFacts, ProjectId, ResourceMap, ResourceType};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What the simulation says about one job.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct JobSim {
    /// The job took part in the simulation (it is nearly runnable).
    pub simulated: bool,
    /// When the simulation finishes it (absolute time; infinite if it never progresses).
    pub projected_completion: Time,
    /// seed 000 deadline_missed(R): the projected completion is after the deadline.
    pub deadline_missed: bool,
    /// Processing seconds the job still needs (the estimate the simulation started
    /// from), so that callers need not estimate it again.
    pub remaining_duration: f64,
}

/// What the simulation says about one processing resource.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ResourceSim {
    /// Instances the client may use.
    pub instances: f64,
    /// Idle instance-seconds over the work-buffer horizon (seed 003 `shortfall`), counting
    /// CPUs held by coprocessor jobs as busy (6.4 note 6).
    pub shortfall: f64,
    /// Instances idle right after the initial job assignment (seed 003 `nidle`).
    pub nidle: f64,
    /// Seconds from now until the first instance becomes idle (the resource stays
    /// saturated until then); the horizon or more when it never idles within it.
    pub saturated_time: f64,
    /// Jobs of this resource that would miss their deadlines.
    pub deadlines_missed: u32,
}

/// What the simulation says about one project.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ProjectSim {
    /// seed 000 deadlines_missed(P), per resource.
    pub deadlines_missed: ResourceMap<u32>,
    /// seed 003 per-project shortfall, instance-seconds over the horizon, per resource.
    pub shortfall: ResourceMap<f64>,
    /// Instances of each resource the project's share entitles it to (seed 003 `share`).
    pub share: ResourceMap<f64>,
}

impl ProjectSim {
    /// Deadline misses over all resources.
    pub fn total_deadlines_missed(&self) -> u32 {
        self.deadlines_missed.0.iter().sum()
    }
}

/// The complete result of one round-robin simulation.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct RrSimOutput {
    /// Per job, indexed by job id (every job has an entry).
    pub jobs: Vec<JobSim>,
    /// Per processing resource.
    pub resources: ResourceMap<ResourceSim>,
    /// Per project, indexed by project id.
    pub projects: Vec<ProjectSim>,
    /// The horizon the shortfalls are measured over, seconds (the high water mark).
    pub horizon: f64,
}

/// Runs the simulation for the state at `now` (see the module documentation for the
/// model). `facts` are the [`ProjectFacts`] of the same state; they only size the
/// buffers. Completion times in the output are absolute; every job has an entry, and
/// those that took no part are left at `JobSim::default()`.
pub fn simulate(state: &ClientState, facts: &[ProjectFacts], now: Time) -> RrSimOutput {
    simulate_with_scratch(state, facts, now, &mut RrSimScratch::default())
}

/// [`simulate`] working in buffers kept from an earlier simulation: a caller that
/// simulates at every decision (the client's control loop) allocates them once instead
/// of once per decision. The result does not depend on what the scratch held.
pub fn simulate_with_scratch(
    state: &ClientState,
    facts: &[ProjectFacts],
    now: Time,
    scratch: &mut RrSimScratch,
) -> RrSimOutput {
    let mut simulation = Simulation::new(state, facts, scratch);
    simulation.run();
    let output = simulation.output(state, now);
    simulation.recycle(scratch);
    output
}

/// The buffers of one round-robin simulation, for [`simulate_with_scratch`]: empty
/// between simulations, with the capacity the last one needed.
#[derive(Debug, Default)]
pub struct RrSimScratch {
    gathered: Vec<Gathered>,
    order: Vec<u128>,
    sorted: Vec<u128>,
    received: Vec<f64>,
    queue_counts: Vec<usize>,
    fill: Vec<usize>,
    versions: Vec<Option<VersionFacts>>,
    project_dcfs: Vec<Option<f64>>,
    jobs: Vec<SimJob>,
    origins: Vec<JobOrigin>,
    finished_at_start: Vec<usize>,
    queues: Vec<Queue>,
    resource_queues: [Vec<u32>; NRESOURCES],
    event_times: Vec<u64>,
    event_queues: Vec<u32>,
    dirty: Vec<u32>,
    unsettled: Vec<u32>,
}

/// A clone starts with empty buffers: what they hold between simulations means nothing.
impl Clone for RrSimScratch {
    fn clone(&self) -> Self {
        RrSimScratch::default()
    }
}

/// A job that declares no use of its main resource is taken to use this many instances,
/// so that a resource is always shared among finitely many jobs.
pub(crate) const MIN_JOB_USAGE: f64 = 0.01;

/// Slack for comparing instance counts and progress, far below anything observable.
const EPSILON: f64 = 1e-9;

/// "No job" in the intrusive queue links.
const NO_JOB: u32 = u32::MAX;

/// An entry of a min-heap, packed into one integer so that a single comparison orders
/// it: the key (in an order-preserving encoding), then the id, then the stamp, so ties
/// break deterministically. Reversed, because `BinaryHeap` pops its greatest entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct HeapEntry(Reverse<u128>);

impl HeapEntry {
    fn new(key: f64, id: u32, stamp: u32) -> Self {
        HeapEntry(Reverse(
            u128::from(order_bits(key)) << 64 | u128::from(id) << 32 | u128::from(stamp),
        ))
    }

    fn key(self) -> f64 {
        from_order_bits((self.0.0 >> 64) as u64)
    }

    fn id(self) -> u32 {
        (self.0.0 >> 32) as u32
    }

    fn stamp(self) -> u32 {
        self.0.0 as u32
    }
}

/// What a job's simulation takes from its app version.
#[derive(Debug, Clone, Copy)]
struct VersionFacts {
    resource: usize,
    usage: f64,
    cpu: f64,
    flops: f64,
}

/// One simulated job: only what the event loop reads and writes, so that the jobs it
/// walks pack densely (what the output alone needs is in [`JobOrigin`]).
#[derive(Debug, Clone)]
struct SimJob {
    queue: u32,
    /// Bumped on every activation and deactivation, to recognise stale heap entries.
    generation: u32,
    prev: u32,
    next: u32,
    /// Instances of the main resource it occupies.
    usage: f64,
    /// CPUs a coprocessor job holds besides (0 for CPU jobs).
    cpu: f64,
    /// Processing seconds left while the job is not active; the queue's progress clock
    /// value at which it finishes while active; its completion time once done. Only one
    /// of these is meaningful at a time, so they share the field.
    work: f64,
    done: bool,
}

/// What the output needs of a simulated job besides its completion, in the same order
/// as [`Simulation::jobs`].
#[derive(Debug, Clone, Copy)]
struct JobOrigin {
    job: JobId,
    /// Processing seconds left at the start of the simulation.
    initial_remaining: f64,
    deadline: Time,
}

/// What the gathering pass keeps of a simulated job until the jobs are put in queue
/// order (small, so that the sort moves keys and the jobs are built once, in place).
#[derive(Debug, Clone, Copy)]
struct Gathered {
    job: u32,
    version: u32,
    remaining: f64,
}

/// The jobs of one project on one resource, and that project's accounting on it.
#[derive(Debug, Default)]
struct Queue {
    project: usize,
    resource: usize,
    /// The project's resource share, the water-filling weight.
    weight: f64,
    /// The resource's availability, kept here since every clock update needs it.
    availability: f64,
    /// First live job; the active jobs are `head ..= active_end` along the links.
    head: u32,
    active_end: u32,
    active_usage: f64,
    active_cpu: f64,
    /// Usage of all live jobs, and their number.
    total_usage: f64,
    live: u32,
    demand: f64,
    pending_alloc: f64,
    /// Instances allocated to the project on this resource.
    alloc: f64,
    /// Fraction of the time each active job runs (allocation / active usage).
    rate: f64,
    /// Processing seconds each active job has received since the start (the clock the
    /// completion keys are on), as of `progress_time`.
    progress: f64,
    progress_time: f64,
    completions: BinaryHeap<HeapEntry>,
    /// Its place in the event list (`Simulation::event_times`), if it has jobs.
    event_slot: u32,
    dirty: bool,
    /// seed 003 share(P, R), instances.
    share: f64,
    /// Instances the project uses on the resource, since `used_since`.
    used: f64,
    used_since: f64,
    shortfall: f64,
}

/// One processing resource.
#[derive(Debug, Default)]
struct ResourceState {
    instances: f64,
    availability: f64,
    /// The capacity the current allocations were computed for (NaN: none yet).
    capacity: f64,
    /// Queues of this resource that have jobs.
    queues: Vec<u32>,
    /// Instances in use (uncapped), since `used_since`.
    used: f64,
    used_since: f64,
    shortfall: f64,
    saturated: Option<f64>,
    initial_used: f64,
}

/// The simulation's working state; times are seconds from `now`.
pub(crate) struct Simulation {
    jobs: Vec<SimJob>,
    origins: Vec<JobOrigin>,
    /// Output slot of each job that was left out of the queues because it has no work
    /// left: it completes at once.
    finished_at_start: Vec<usize>,
    job_count: usize,
    queues: Vec<Queue>,
    resources: [ResourceState; 4],
    /// The pending events of the queues that have jobs (seconds from now), kept apart
    /// from the queues so that finding the next one reads a few cache lines: each the
    /// time's [`order_bits`], [`NO_EVENT`] where the queue has none. The slots are in
    /// queue order, so the first slot with the earliest time is the lowest queue index
    /// among those due then, and the scan for it is a plain minimum of small integers.
    event_times: Vec<u64>,
    /// The queue of each slot of `event_times`.
    event_queues: Vec<u32>,
    dirty: Vec<u32>,
    unsettled: Vec<u32>,
    horizon: f64,
    /// CPUs held by the active coprocessor jobs.
    coprocessor_cpus: f64,
    coprocessor_cpus_changed: bool,
    end_time: f64,
}

const NRESOURCES: usize = ResourceType::ALL.len();

fn queue_index(project: usize, resource: usize) -> usize {
    project * NRESOURCES + resource
}

/// Instances of its main resource a job occupies, made usable (see [`MIN_JOB_USAGE`] and
/// the module's allowances).
fn job_usage(declared: f64, instances: f64) -> f64 {
    let usage = if declared.is_finite() { declared.max(MIN_JOB_USAGE) } else { 1.0 };
    if instances > 0.0 { usage.min(instances) } else { usage }
}

/// Sorts the jobs' keys: a counting sort by queue (the top bits; `starts[q + 1]` holds
/// the number of keys of queue `q`, counted while the keys were made), then each queue's keys
/// are sorted only when they are not in order already, as they usually are (jobs arrive
/// in deadline order, and the running ones are the oldest).
/// The result goes to `sorted`; `fill` is working space.
fn sort_by_queue(
    keys: &[u128],
    starts: &mut [usize],
    fill: &mut Vec<usize>,
    sorted: &mut Vec<u128>,
) {
    let queue_of = |key: u128| (key >> 97) as usize;
    let queues = starts.len() - 1;
    for q in 0..queues {
        starts[q + 1] += starts[q];
    }
    sorted.clear();
    sorted.resize(keys.len(), 0);
    fill.clear();
    fill.extend_from_slice(starts);
    for &key in keys {
        let q = queue_of(key);
        sorted[fill[q]] = key;
        fill[q] += 1;
    }
    for q in 0..queues {
        let bucket = &mut sorted[starts[q]..starts[q + 1]];
        if !bucket.is_sorted() {
            bucket.sort_unstable();
        }
    }
}

/// "No pending event" in `Simulation::event_times`; every real key is smaller (see
/// [`event_key`]).
const NO_EVENT: u64 = u64::MAX;

/// A pending event at time `t`, ordered by time. The one NaN whose bits would read as
/// [`NO_EVENT`] is kept one below it: a NaN time is still an event.
fn event_key(t: f64) -> u64 {
    order_bits(t).min(NO_EVENT - 1)
}

/// The time of a pending event's key.
fn event_time(key: u64) -> f64 {
    from_order_bits(key)
}

/// The float whose [`order_bits`] are `ordered`.
fn from_order_bits(ordered: u64) -> f64 {
    f64::from_bits(if ordered >> 63 == 1 { ordered & !(1 << 63) } else { !ordered })
}

/// A float's bits as an integer with the same order (`f64::total_cmp`'s).
fn order_bits(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 { !bits } else { bits | 1 << 63 }
}

fn sane_weight(share: f64) -> f64 {
    if share.is_finite() && share > 0.0 { share } else { 0.0 }
}

impl Simulation {
    /// Gathers the simulated jobs into their queues and computes the shares; the initial
    /// assignment is made by [`Simulation::run`].
    /// The buffers come from `scratch` and go back with [`Simulation::recycle`].
    pub(crate) fn new(
        state: &ClientState,
        facts: &[ProjectFacts],
        scratch: &mut RrSimScratch,
    ) -> Self {
        let horizon = state.prefs.work_buf_total();
        let horizon = if horizon.is_finite() { horizon.max(0.0) } else { 0.0 };
        let nprojects = state.projects.len();
        let resources: [ResourceState; NRESOURCES] = ResourceType::ALL.map(|r| ResourceState {
            instances: f64::from(state.instances(r)),
            availability: state.time_stats.available_frac(r),
            capacity: f64::NAN,
            ..ResourceState::default()
        });
        // One pass in job order (the job records are large: visit them sequentially)
        // gathers what the simulation needs; then one 128-bit key per job (queue, running
        // first, deadline, position) is sorted, which is several times faster than
        // sorting the jobs. Jobs with equal deadlines are then put in the order received,
        // which the key leaves out.
        let queues_count = nprojects * NRESOURCES;
        let expected: usize =
            facts.iter().flat_map(|f| f.nearly_runnable.0).map(|n| n as usize).sum();
        let capacity = expected.min(state.jobs.len());
        let RrSimScratch {
            gathered,
            order,
            sorted,
            received,
            queue_counts,
            fill,
            versions,
            project_dcfs,
            ..
        } = scratch;
        gathered.clear();
        gathered.reserve(capacity);
        order.clear();
        order.reserve(capacity);
        received.clear();
        received.reserve(capacity);
        let mut finished_at_start = std::mem::take(&mut scratch.finished_at_start);
        finished_at_start.clear();
        queue_counts.clear();
        queue_counts.resize(queues_count + 1, 0);
        // What the jobs need from their app versions and projects, looked up once each
        // rather than once per job (there are thousands of jobs and few of the others).
        versions.clear();
        versions.extend(state.app_versions.iter().map(|av| {
            if state.apps.get(av.app.index()).is_some_and(|a| a.non_cpu_intensive) {
                return None;
            }
            let resource = av.usage.main_resource();
            let cpu = if resource.is_gpu() && av.usage.avg_ncpus.is_finite() {
                av.usage.avg_ncpus.max(0.0)
            } else {
                0.0
            };
            Some(VersionFacts {
                resource: resource.index(),
                usage: job_usage(av.usage.main_usage(), resources[resource.index()].instances),
                cpu,
                flops: usable_flops(av.flops, state.host.p_fpops),
            })
        }));
        // A project's duration correction factor, or None when its jobs take no part (it is
        // not CPU-intensive, or suspended: its jobs are then not nearly runnable).
        project_dcfs.clear();
        project_dcfs.extend(
            state
                .projects
                .iter()
                .map(|p| (!p.non_cpu_intensive && !p.suspended).then(|| project_dcf(p))),
        );
        for (index, job) in state.jobs.iter().enumerate() {
            let Some(av_id) = job.app_version else { continue };
            let Some(&Some(version)) = versions.get(av_id.index()) else { continue };
            let Some(dcf) = project_dcfs[job.project.index()] else { continue };
            // `job_nearly_runnable`, less what the tables above already tested (the app
            // version, the project's suspension).
            if job.suspended || job.state.computing_done() || state.job_has_deferred_input(job) {
                continue;
            }
            let fpops_est = state.workunit(job.workunit).rsc_fpops_est;
            let remaining = remaining_after(unstarted_from(fpops_est, version.flops, dcf), job);
            if remaining <= 0.0 {
                finished_at_start.push(index);
                continue;
            }
            let queue = queue_index(job.project.index(), version.resource);
            queue_counts[queue + 1] += 1;
            let major = (queue as u128) << 1 | u128::from(!job.is_running());
            order.push(
                major << 96
                    | u128::from(order_bits(job.report_deadline)) << 32
                    | gathered.len() as u128,
            );
            received.push(job.received_time);
            gathered.push(Gathered { job: index as u32, version: av_id.index() as u32, remaining });
        }
        sort_by_queue(order, queue_counts, fill, sorted);
        let order = sorted;
        // Jobs usually arrive in order, so a run of equal deadlines is usually in the
        // order received already.
        // The jobs are built directly in queue order, run by run: the queue and the
        // deadline are in the key, the rest in the small gathered record it points to.
        let tie = |key: u128| key >> 32;
        let received_at = |key: u128| received[key as u32 as usize];
        let mut jobs = std::mem::take(&mut scratch.jobs);
        jobs.clear();
        jobs.reserve(order.len());
        let mut origins = std::mem::take(&mut scratch.origins);
        origins.clear();
        origins.reserve(order.len());
        let mut start = 0;
        while start < order.len() {
            let first = tie(order[start]);
            let mut end = start + 1;
            let mut in_order = true;
            while end < order.len() && tie(order[end]) == first {
                if received_at(order[end - 1]) > received_at(order[end]) {
                    in_order = false;
                }
                end += 1;
            }
            let run = &mut order[start..end];
            if !in_order {
                run.sort_by(|&a, &b| received_at(a).total_cmp(&received_at(b)).then(a.cmp(&b)));
            }
            for &key in run.iter() {
                let gathered = gathered[key as u32 as usize];
                let Some(version) = versions[gathered.version as usize] else { continue };
                jobs.push(SimJob {
                    queue: (key >> 97) as u32,
                    generation: 0,
                    prev: NO_JOB,
                    next: NO_JOB,
                    usage: version.usage,
                    cpu: version.cpu,
                    work: gathered.remaining,
                    done: false,
                });
                origins.push(JobOrigin {
                    job: JobId::from_index(gathered.job as usize),
                    initial_remaining: gathered.remaining,
                    deadline: from_order_bits((key >> 32) as u64),
                });
            }
            start = end;
        }

        // The queues are built afresh, each keeping only its heap's allocation.
        let mut queues = std::mem::take(&mut scratch.queues);
        queues.truncate(queues_count);
        let reused = queues.len();
        for q in 0..queues_count {
            let mut completions = if q < reused {
                std::mem::take(&mut queues[q].completions)
            } else {
                BinaryHeap::new()
            };
            completions.clear();
            let queue = Queue {
                project: q / NRESOURCES,
                resource: q % NRESOURCES,
                weight: sane_weight(state.projects[q / NRESOURCES].resource_share),
                availability: resources[q % NRESOURCES].availability,
                head: NO_JOB,
                event_slot: u32::MAX,
                active_end: NO_JOB,
                completions,
                ..Queue::default()
            };
            if q < reused {
                queues[q] = queue;
            } else {
                queues.push(queue);
            }
        }
        let mut resources = resources;
        for (resource, spare) in resources.iter_mut().zip(&mut scratch.resource_queues) {
            resource.queues = std::mem::take(spare);
            resource.queues.clear();
        }
        let mut event_queues = std::mem::take(&mut scratch.event_queues);
        event_queues.clear();
        let mut start = 0;
        while start < jobs.len() {
            let q = jobs[start].queue;
            let end = start + jobs[start..].iter().take_while(|j| j.queue == q).count();
            for i in start + 1..end {
                jobs[i].prev = (i - 1) as u32;
                jobs[i - 1].next = i as u32;
            }
            let queue = &mut queues[q as usize];
            // The jobs are in queue order, so the slots are too.
            queue.event_slot = event_queues.len() as u32;
            event_queues.push(q);
            queue.head = start as u32;
            queue.total_usage = jobs[start..end].iter().map(|j| j.usage).sum();
            queue.live = (end - start) as u32;
            // Room for every job's first activation, so the heap rarely grows.
            queue.completions.reserve(end - start);
            resources[queue.resource].queues.push(q);
            start = end;
        }

        let mut event_times = std::mem::take(&mut scratch.event_times);
        event_times.clear();
        event_times.resize(event_queues.len(), NO_EVENT);

        let can_supply = |p: ProjectId, resource: ResourceType| {
            let project = state.project(p);
            let prsc = &project.resources[resource];
            !project.suspended
                && !project.dont_request_more_work
                && !project.non_cpu_intensive
                && !prsc.no_apps
                && (prsc.has_app_version
                    || queues[queue_index(p.index(), resource.index())].live > 0)
        };
        let target = TargetAllocation::for_state(state, can_supply);
        for queue in &mut queues {
            queue.share = target
                .instances(ProjectId::from_index(queue.project), ResourceType::ALL[queue.resource]);
        }

        Simulation {
            jobs,
            origins,
            finished_at_start,
            job_count: state.jobs.len(),
            queues,
            resources,
            event_times,
            event_queues,
            dirty: {
                let mut dirty = std::mem::take(&mut scratch.dirty);
                dirty.clear();
                dirty
            },
            unsettled: std::mem::take(&mut scratch.unsettled),
            horizon,
            coprocessor_cpus: 0.0,
            coprocessor_cpus_changed: false,
            end_time: 0.0,
        }
    }

    /// Hands the simulation's buffers back to `scratch` for the next one.
    fn recycle(self, scratch: &mut RrSimScratch) {
        let Simulation {
            jobs,
            origins,
            finished_at_start,
            queues,
            resources,
            event_times,
            event_queues,
            dirty,
            unsettled,
            ..
        } = self;
        scratch.jobs = jobs;
        scratch.origins = origins;
        scratch.finished_at_start = finished_at_start;
        scratch.queues = queues;
        for (spare, resource) in scratch.resource_queues.iter_mut().zip(resources) {
            *spare = resource.queues;
        }
        scratch.event_times = event_times;
        scratch.event_queues = event_queues;
        scratch.dirty = dirty;
        scratch.unsettled = unsettled;
    }

    /// Makes the initial assignment (coprocessors first, since their jobs' CPUs come off
    /// the CPU), then steps from completion to completion until no job can progress.
    pub(crate) fn run(&mut self) {
        for gpu in ResourceType::GPUS {
            self.reallocate(gpu.index(), 0.0, true);
        }
        self.reallocate(ResourceType::Cpu.index(), 0.0, true);
        for resource in &mut self.resources {
            resource.initial_used = resource.used;
        }
        while let Some((slot, q)) = self.next_event() {
            let t = event_time(std::mem::replace(&mut self.event_times[slot], NO_EVENT));
            self.end_time = t;
            self.complete_due(q, t);
            let r = self.queues[q].resource;
            if self.still_covered(q) {
                // The project still wants at least its allocation, so every allocation
                // on the resource stays as it is: only its own active jobs move on.
                let alloc = self.queues[q].alloc;
                self.update_queue(q, alloc, t);
                if r != ResourceType::Cpu.index() {
                    self.recount_coprocessor_cpus();
                }
            } else {
                if !self.queues[q].dirty {
                    self.queues[q].dirty = true;
                    self.dirty.push(q as u32);
                }
                self.reallocate(r, t, false);
            }
            if r != ResourceType::Cpu.index() && self.coprocessor_cpus_changed {
                self.reallocate(ResourceType::Cpu.index(), t, false);
            }
        }
        let horizon = self.horizon;
        for r in 0..NRESOURCES {
            let used = self.resources[r].used;
            self.set_resource_used(r, used, horizon);
        }
        for q in 0..self.queues.len() {
            let used = self.queues[q].used;
            self.set_project_used(q, used, horizon);
        }
    }

    /// Recomputes the allocations of resource `r` at time `t` after completions in the
    /// dirty queues (or from scratch with `force`), and moves the affected queues on.
    fn reallocate(&mut self, r: usize, t: f64, force: bool) {
        let cpu = r == ResourceType::Cpu.index();
        let instances = self.resources[r].instances;
        let capacity = if cpu { (instances - self.coprocessor_cpus).max(0.0) } else { instances };
        let full = force
            || (cpu && self.coprocessor_cpus_changed)
            || (capacity - self.resources[r].capacity).abs() > EPSILON
            || self.dirty.iter().any(|&q| {
                let queue = &self.queues[q as usize];
                queue.total_usage.min(capacity) < queue.alloc - EPSILON
            });
        if cpu {
            self.coprocessor_cpus_changed = false;
        }
        if full {
            self.resources[r].capacity = capacity;
            self.water_fill(r, capacity);
            for i in 0..self.resources[r].queues.len() {
                let q = self.resources[r].queues[i] as usize;
                let queue = &self.queues[q];
                if force || queue.dirty || (queue.pending_alloc - queue.alloc).abs() > EPSILON {
                    let alloc = queue.pending_alloc;
                    self.update_queue(q, alloc, t);
                }
            }
            let mut used: f64 =
                self.resources[r].queues.iter().map(|&q| self.queues[q as usize].alloc).sum();
            if cpu {
                used += self.coprocessor_cpus;
            }
            self.set_resource_used(r, used, t);
        } else {
            for i in 0..self.dirty.len() {
                let q = self.dirty[i] as usize;
                let alloc = self.queues[q].alloc;
                self.update_queue(q, alloc, t);
            }
        }
        for q in self.dirty.drain(..) {
            self.queues[q as usize].dirty = false;
        }
        if !cpu {
            self.recount_coprocessor_cpus();
        }
    }

    /// Sums the CPUs the coprocessor jobs hold after a coprocessor queue changed, and
    /// flags the CPU for reallocation when the sum moved.
    fn recount_coprocessor_cpus(&mut self) {
        let total: f64 = ResourceType::GPUS
            .iter()
            .flat_map(|g| self.resources[g.index()].queues.iter())
            .map(|&q| coprocessor_cpus_of(&self.queues[q as usize]))
            .sum();
        if (total - self.coprocessor_cpus).abs() > EPSILON {
            self.coprocessor_cpus = total;
            self.coprocessor_cpus_changed = true;
        }
    }

    /// Splits `capacity` among the queues of resource `r` by weight, capping each at its
    /// demand and handing what it leaves to the others (zero-weight queues share what the
    /// weighted ones leave). Results go to `pending_alloc`.
    fn water_fill(&mut self, r: usize, capacity: f64) {
        let Simulation { queues, resources, unsettled, .. } = self;
        unsettled.clear();
        for &q in &resources[r].queues {
            let queue = &mut queues[q as usize];
            queue.demand =
                if queue.live > 0 { queue.total_usage.min(capacity).max(0.0) } else { 0.0 };
            queue.pending_alloc = 0.0;
            if queue.demand > EPSILON {
                unsettled.push(q);
            }
        }
        let mut remaining = capacity;
        while !unsettled.is_empty() && remaining > EPSILON {
            let total_weight: f64 = unsettled.iter().map(|&q| queues[q as usize].weight).sum();
            let equal = total_weight <= 0.0;
            let count = unsettled.len() as f64;
            let fair = |weight: f64| {
                if equal { remaining / count } else { remaining * weight / total_weight }
            };
            let before = unsettled.len();
            let mut given = 0.0;
            unsettled.retain(|&q| {
                let queue = &mut queues[q as usize];
                if queue.demand <= fair(queue.weight) + EPSILON {
                    queue.pending_alloc = queue.demand;
                    given += queue.demand;
                    false
                } else {
                    true
                }
            });
            if unsettled.len() == before {
                for &q in unsettled.iter() {
                    let queue = &mut queues[q as usize];
                    queue.pending_alloc = fair(queue.weight);
                }
                break;
            }
            remaining = (remaining - given).max(0.0);
        }
    }

    /// Gives queue `q` a new allocation at time `t`: brings its clock up to date, adjusts
    /// its active jobs and rate, schedules its next completion and updates its usage.
    fn update_queue(&mut self, q: usize, alloc: f64, t: f64) {
        self.advance(q, t);
        let alloc_changed = self.queues[q].alloc != alloc;
        self.queues[q].alloc = alloc;
        self.refit(q);
        let queue = &mut self.queues[q];
        queue.rate = if queue.active_usage > EPSILON {
            (queue.alloc / queue.active_usage).min(1.0)
        } else {
            0.0
        };
        self.schedule(q, t);
        // The usage accounting only moves when the allocation or the CPUs held by
        // coprocessor jobs do, which is rare: most completions just start the next job.
        // The CPUs held are compared with what was last recorded, not with the queue
        // before this update: the completion that led here already released its job's.
        let project = self.queues[q].project;
        let cpu_queue = queue_index(project, ResourceType::Cpu.index());
        if alloc_changed && q != cpu_queue {
            self.set_project_used(q, alloc, t);
        }
        if alloc_changed || q != cpu_queue {
            let used = self.project_cpu_used(project);
            if used != self.queues[cpu_queue].used {
                self.set_project_used(cpu_queue, used, t);
            }
        }
    }

    /// CPUs the project uses: its CPU allocation and the CPUs its coprocessor jobs hold.
    fn project_cpu_used(&self, project: usize) -> f64 {
        let base = queue_index(project, 0);
        self.queues[base].alloc
            + (1..NRESOURCES).map(|r| coprocessor_cpus_of(&self.queues[base + r])).sum::<f64>()
    }

    /// Moves queue `q`'s progress clock to time `t` at its current rate.
    fn advance(&mut self, q: usize, t: f64) {
        let queue = &mut self.queues[q];
        if queue.rate > 0.0 && t != queue.progress_time {
            queue.progress += queue.rate * queue.availability * (t - queue.progress_time);
        }
        queue.progress_time = t;
    }

    /// Makes the active jobs the shortest head of the queue whose usage covers the
    /// allocation.
    fn refit(&mut self, q: usize) {
        let Simulation { queues, jobs, .. } = self;
        let queue = &mut queues[q];
        while queue.active_usage < queue.alloc - EPSILON {
            let next = if queue.active_end == NO_JOB {
                queue.head
            } else {
                jobs[queue.active_end as usize].next
            };
            if next == NO_JOB {
                break;
            }
            let job = &mut jobs[next as usize];
            job.generation = job.generation.wrapping_add(1);
            job.work += queue.progress;
            queue.completions.push(HeapEntry::new(job.work, next, job.generation));
            queue.active_usage += job.usage;
            queue.active_cpu += job.cpu;
            queue.active_end = next;
        }
        while queue.active_end != NO_JOB {
            let last = queue.active_end as usize;
            let job = &mut jobs[last];
            if queue.active_usage - job.usage < queue.alloc - EPSILON {
                break;
            }
            job.work = (job.work - queue.progress).max(0.0);
            job.generation = job.generation.wrapping_add(1);
            queue.active_usage -= job.usage;
            queue.active_cpu -= job.cpu;
            queue.active_end = job.prev;
        }
        if queue.active_end == NO_JOB {
            queue.active_usage = 0.0;
            queue.active_cpu = 0.0;
        }
    }

    /// The queue whose pending event comes first: the earliest time, ties to the lowest
    /// queue index. The queues with jobs are few (at most projects × resources), so a
    /// scan costs less than keeping a heap of events, most of which would go stale.
    /// Returns its slot in the event list and its index.
    fn next_event(&self) -> Option<(usize, usize)> {
        let mut first = NO_EVENT;
        let mut first_slot = 0;
        for (slot, &key) in self.event_times.iter().enumerate() {
            if key < first {
                first = key;
                first_slot = slot;
            }
        }
        (first != NO_EVENT).then(|| (first_slot, self.event_queues[first_slot] as usize))
    }

    /// Drops queue `q`'s pending event and schedules its next completion.
    fn schedule(&mut self, q: usize, t: f64) {
        let Simulation { queues, jobs, event_times, .. } = self;
        let queue = &mut queues[q];
        // Only a queue with jobs is ever scheduled, and each has a slot.
        let Some(next_event) = event_times.get_mut(queue.event_slot as usize) else { return };
        *next_event = NO_EVENT;
        if queue.rate <= 0.0 || queue.active_end == NO_JOB {
            return;
        }
        while let Some(top) = queue.completions.peek() {
            if is_stale(jobs, top) {
                queue.completions.pop();
                continue;
            }
            let wait = (top.key() - queue.progress).max(0.0) / (queue.rate * queue.availability);
            *next_event = event_key(t + wait);
            break;
        }
    }

    /// Completes the job queue `q`'s event was for, and any that finish at the same time.
    /// The caller decides whether the allocations must be recomputed.
    fn complete_due(&mut self, q: usize, t: f64) {
        self.advance(q, t);
        let tolerance = EPSILON * self.queues[q].progress.abs().max(1.0);
        let mut first = true;
        while let Some(&top) = self.queues[q].completions.peek() {
            if is_stale(&self.jobs, &top) {
                self.queues[q].completions.pop();
                continue;
            }
            if !first && top.key() > self.queues[q].progress + tolerance {
                break;
            }
            self.queues[q].completions.pop();
            self.finish(top.id() as usize, t);
            first = false;
        }
    }

    /// Whether queue `q` can keep its allocation after a completion without reallocating
    /// its resource: the capacity has not moved and its jobs still want it all (the test
    /// `reallocate` makes for its dirty queues).
    fn still_covered(&self, q: usize) -> bool {
        let queue = &self.queues[q];
        let resource = &self.resources[queue.resource];
        let cpu = queue.resource == ResourceType::Cpu.index();
        let capacity = if cpu {
            (resource.instances - self.coprocessor_cpus).max(0.0)
        } else {
            resource.instances
        };
        !(cpu && self.coprocessor_cpus_changed)
            && (capacity - resource.capacity).abs() <= EPSILON
            && queue.total_usage.min(capacity) >= queue.alloc - EPSILON
    }

    /// Records job `j`'s completion at `t` and unlinks it from its queue.
    fn finish(&mut self, j: usize, t: f64) {
        let Simulation { queues, jobs, .. } = self;
        let job = &mut jobs[j];
        job.done = true;
        job.work = t;
        let (prev, next, usage, cpu) = (job.prev, job.next, job.usage, job.cpu);
        let queue = &mut queues[job.queue as usize];
        queue.active_usage -= usage;
        queue.active_cpu -= cpu;
        queue.total_usage -= usage;
        queue.live -= 1;
        if queue.active_end == j as u32 {
            queue.active_end = prev;
        }
        if prev == NO_JOB {
            queue.head = next;
        } else {
            jobs[prev as usize].next = next;
        }
        if next != NO_JOB {
            jobs[next as usize].prev = prev;
        }
        if queue.active_end == NO_JOB {
            queue.active_usage = 0.0;
            queue.active_cpu = 0.0;
        }
        if queue.live == 0 {
            queue.total_usage = 0.0;
        }
    }

    /// Seed 003 `accumulate_shortfall` for a resource: closes the interval since its usage
    /// last changed, then records the new usage (and the first moment it is not saturated).
    fn set_resource_used(&mut self, r: usize, used: f64, t: f64) {
        let horizon = self.horizon;
        let resource = &mut self.resources[r];
        let span = t.min(horizon) - resource.used_since.min(horizon);
        if span > 0.0 {
            // Allocations are sums of shares: an "idle" residue at rounding level is not
            // an idle instance (it would ask a server for work every poll).
            let idle = resource.instances - resource.used.min(resource.instances);
            if idle > EPSILON {
                resource.shortfall += span * idle;
            }
        }
        resource.used = used;
        resource.used_since = t;
        if resource.saturated.is_none() && used < resource.instances - EPSILON {
            resource.saturated = Some(t);
        }
    }

    /// Seed 003 `PRSC_PROJECT_DATA::accumulate_shortfall` for one project and resource.
    fn set_project_used(&mut self, q: usize, used: f64, t: f64) {
        let horizon = self.horizon;
        let queue = &mut self.queues[q];
        let span = t.min(horizon) - queue.used_since.min(horizon);
        if span > 0.0 && queue.share - queue.used > EPSILON {
            queue.shortfall += span * (queue.share - queue.used);
        }
        queue.used = used;
        queue.used_since = t;
    }

    /// The simulation's findings, with job completions as absolute times.
    fn output(&self, state: &ClientState, now: Time) -> RrSimOutput {
        let mut out = RrSimOutput {
            jobs: vec![JobSim::default(); self.job_count],
            resources: ResourceMap::default(),
            projects: vec![ProjectSim::default(); state.projects.len()],
            horizon: self.horizon,
        };
        for &j in &self.finished_at_start {
            let deadline = state.jobs[j].report_deadline;
            out.jobs[j] = JobSim {
                simulated: true,
                projected_completion: now,
                deadline_missed: now > deadline,
                remaining_duration: 0.0,
            };
        }
        for (job, origin) in self.jobs.iter().zip(&self.origins) {
            let projected_completion = if job.done { now + job.work } else { f64::INFINITY };
            let deadline_missed = !job.done || projected_completion > origin.deadline;
            out.jobs[origin.job.index()] = JobSim {
                simulated: true,
                projected_completion,
                deadline_missed,
                remaining_duration: origin.initial_remaining,
            };
            if deadline_missed {
                let queue = &self.queues[job.queue as usize];
                let resource = ResourceType::ALL[queue.resource];
                out.resources[resource].deadlines_missed += 1;
                out.projects[queue.project].deadlines_missed[resource] += 1;
            }
        }
        for (r, resource) in ResourceType::ALL.into_iter().enumerate() {
            let sim = &self.resources[r];
            let saturated_time = if sim.instances <= 0.0 {
                0.0
            } else {
                sim.saturated.unwrap_or(self.horizon).min(self.horizon)
            };
            let out_resource = &mut out.resources[resource];
            out_resource.instances = sim.instances;
            out_resource.shortfall = sim.shortfall;
            let nidle = (sim.instances - sim.initial_used).clamp(0.0, sim.instances);
            out_resource.nidle = if nidle > EPSILON { nidle } else { 0.0 };
            out_resource.saturated_time = saturated_time;
        }
        for (p, project) in out.projects.iter_mut().enumerate() {
            for resource in ResourceType::ALL {
                let queue = &self.queues[queue_index(p, resource.index())];
                project.shortfall[resource] = queue.shortfall;
                project.share[resource] = queue.share;
            }
        }
        out
    }
}

/// CPUs the active jobs of a coprocessor queue hold (each for the fraction of the time it
/// runs).
fn coprocessor_cpus_of(queue: &Queue) -> f64 {
    if queue.resource == ResourceType::Cpu.index() { 0.0 } else { queue.rate * queue.active_cpu }
}

/// Whether a completion entry no longer describes an active job's finish. The stamp
/// alone tells: an entry is pushed only on activation, with the generation that
/// activation set; deactivation moves the generation on; and a finishing job's own
/// entry is the one just popped, so no entry of a done job carries its generation.
fn is_stale(jobs: &[SimJob], entry: &HeapEntry) -> bool {
    jobs[entry.id() as usize].generation != entry.stamp()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::{
        App, AppId, AppVersion, AppVersionId, Coprocessor, Job, JobState, Project, ProjectId,
        ResourceUsage, Workunit, WorkunitId,
    };
    use proptest::prelude::*;

    const HOUR: f64 = 3600.0;

    /// Builds small client states by hand: one app per app version, one workunit per job.
    pub(crate) struct StateBuilder {
        pub(crate) state: ClientState,
    }

    impl StateBuilder {
        /// A host with `ncpus` CPUs of 1 GFLOPS, always on, and a 10-hour horizon.
        pub(crate) fn new(ncpus: u32) -> Self {
            let mut state = ClientState::default();
            state.host.p_ncpus = ncpus;
            state.host.p_fpops = 1e9;
            let mut builder = StateBuilder { state };
            builder.horizon_hours(10.0);
            builder
        }

        /// Sets the high water mark to `hours`.
        pub(crate) fn horizon_hours(&mut self, hours: f64) -> &mut Self {
            self.state.prefs.work_buf_min_days = hours / 24.0;
            self.state.prefs.work_buf_additional_days = 0.0;
            self
        }

        /// Gives the host `count` GPUs of a type.
        pub(crate) fn gpus(&mut self, resource: ResourceType, count: u32) -> &mut Self {
            self.state.host.coprocessors[resource] = Some(Coprocessor {
                resource,
                name: "test GPU".into(),
                count,
                peak_flops: 1e10,
                available_ram: 0.0,
            });
            self
        }

        /// Attaches a project.
        pub(crate) fn project(&mut self, name: &str, share: f64) -> ProjectId {
            self.state.projects.push(Project::new(name, format!("http://{name}/"), share));
            ProjectId::from_index(self.state.projects.len() - 1)
        }

        /// Adds an app and one version of it; the project then has an app version for the
        /// version's main resource.
        pub(crate) fn app_version(
            &mut self,
            project: ProjectId,
            usage: ResourceUsage,
            flops: f64,
        ) -> AppVersionId {
            let app = AppId::from_index(self.state.apps.len());
            self.state.apps.push(App::new(project, format!("app{}", app.index())));
            self.state.app_versions.push(AppVersion::new(project, app, 100, "", usage, flops));
            self.state.projects[project.index()].resources[usage.main_resource()].has_app_version =
                true;
            AppVersionId::from_index(self.state.app_versions.len() - 1)
        }

        /// Adds a downloaded job needing `seconds` of processing, due at `deadline`.
        pub(crate) fn job(
            &mut self,
            project: ProjectId,
            app_version: AppVersionId,
            seconds: f64,
            deadline: f64,
        ) -> JobId {
            let av = self.state.app_version(app_version).clone();
            let workunit = WorkunitId::from_index(self.state.workunits.len());
            self.state.workunits.push(Workunit {
                project,
                name: format!("wu{}", workunit.index()),
                app: av.app,
                rsc_fpops_est: seconds * av.flops,
                rsc_fpops_bound: seconds * av.flops * 10.0,
                rsc_memory_bound: 0.0,
                rsc_disk_bound: 0.0,
                command_line: String::new(),
                input_files: Vec::new(),
            });
            let id = JobId::from_index(self.state.jobs.len());
            let name = format!("job{}", id.index());
            let received = id.index() as f64;
            self.state.jobs.push(Job::downloaded(
                project,
                name,
                workunit,
                app_version,
                received,
                deadline,
            ));
            id
        }

        /// Runs the simulation at time 0.
        pub(crate) fn simulate(&self) -> RrSimOutput {
            simulate(&self.state, &ProjectFacts::gather(&self.state), 0.0)
        }
    }

    pub(crate) fn cpu_usage(ncpus: f64) -> ResourceUsage {
        ResourceUsage { avg_ncpus: ncpus, coprocessor: None }
    }

    pub(crate) fn gpu_usage(ncpus: f64, gpus: f64) -> ResourceUsage {
        ResourceUsage { avg_ncpus: ncpus, coprocessor: Some((ResourceType::Nvidia, gpus)) }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * b.abs().max(1.0)
    }

    macro_rules! assert_close {
        ($a:expr, $b:expr) => {{
            let (a, b) = ($a, $b);
            assert!(close(a, b), "{} = {a}, expected {b}", stringify!($a));
        }};
    }

    const CPU: ResourceType = ResourceType::Cpu;
    const NVIDIA: ResourceType = ResourceType::Nvidia;

    #[test]
    fn seed_000_worked_example() {
        // Shares 2:1, two CPUs. 0–4 h: A1, A2, B1 all at 2/3; A2 ends at 4 h. 4–8 h: A1
        // and B1 at 1; A1 ends at 8 h. B1 outlasts the 10 h horizon.
        let mut b = StateBuilder::new(2);
        let a = b.project("A", 2.0);
        let bp = b.project("B", 1.0);
        let av_a = b.app_version(a, cpu_usage(1.0), 1e9);
        let av_b = b.app_version(bp, cpu_usage(1.0), 1e9);
        let a1 = b.job(a, av_a, (8.0 / 3.0 + 4.0) * HOUR, 100.0 * HOUR);
        let a2 = b.job(a, av_a, 8.0 / 3.0 * HOUR, 100.0 * HOUR);
        let b1 = b.job(bp, av_b, 12.0 * HOUR, 100.0 * HOUR);
        let out = b.simulate();
        assert_close!(out.horizon, 10.0 * HOUR);
        assert_close!(out.jobs[a2.index()].projected_completion, 4.0 * HOUR);
        assert_close!(out.jobs[a1.index()].projected_completion, 8.0 * HOUR);
        // B1: 8/3 + 4 h done by 8 h, then alone at rate 1.
        assert_close!(out.jobs[b1.index()].projected_completion, (12.0 + 4.0 / 3.0) * HOUR);
        assert_close!(out.projects[a.index()].shortfall[CPU], 4.0 * HOUR);
        assert_close!(out.projects[bp.index()].shortfall[CPU], 0.0);
        assert_close!(out.resources[CPU].shortfall, 2.0 * HOUR);
        assert_close!(out.projects[a.index()].share[CPU], 4.0 / 3.0);
        assert_close!(out.projects[bp.index()].share[CPU], 2.0 / 3.0);
        assert_close!(out.resources[CPU].nidle, 0.0);
        assert_close!(out.resources[CPU].saturated_time, 8.0 * HOUR);
        assert!(out.jobs.iter().all(|j| j.simulated && !j.deadline_missed));
    }

    #[test]
    fn two_half_gpu_jobs_share_one_gpu() {
        let mut b = StateBuilder::new(2);
        b.gpus(NVIDIA, 1);
        let p = b.project("P", 1.0);
        let av = b.app_version(p, gpu_usage(0.25, 0.5), 1e10);
        let j1 = b.job(p, av, HOUR, 1e9);
        let j2 = b.job(p, av, HOUR, 1e9);
        let out = b.simulate();
        assert_close!(out.jobs[j1.index()].projected_completion, HOUR);
        assert_close!(out.jobs[j2.index()].projected_completion, HOUR);
        assert_close!(out.resources[NVIDIA].nidle, 0.0);
        assert_close!(out.resources[NVIDIA].saturated_time, HOUR);
        assert_close!(out.resources[NVIDIA].shortfall, 9.0 * HOUR);
        // The two GPU jobs hold half a CPU; the other 1.5 are idle.
        assert_close!(out.resources[CPU].nidle, 1.5);
    }

    #[test]
    fn a_third_half_gpu_job_waits_its_turn() {
        let mut b = StateBuilder::new(2);
        b.gpus(NVIDIA, 1);
        let p = b.project("P", 1.0);
        let av = b.app_version(p, gpu_usage(0.25, 0.5), 1e10);
        let jobs: Vec<JobId> = (0..3).map(|_| b.job(p, av, HOUR, 1e9)).collect();
        let out = b.simulate();
        assert_close!(out.jobs[jobs[0].index()].projected_completion, HOUR);
        assert_close!(out.jobs[jobs[1].index()].projected_completion, HOUR);
        assert_close!(out.jobs[jobs[2].index()].projected_completion, 2.0 * HOUR);
        assert_close!(out.resources[NVIDIA].saturated_time, HOUR);
    }

    #[test]
    fn multithread_job_fills_all_cpus() {
        let mut b = StateBuilder::new(4);
        let p = b.project("P", 1.0);
        let av = b.app_version(p, cpu_usage(4.0), 4e9);
        let j = b.job(p, av, HOUR, 1e9);
        let out = b.simulate();
        assert_close!(out.jobs[j.index()].projected_completion, HOUR);
        assert_close!(out.resources[CPU].nidle, 0.0);
        assert_close!(out.resources[CPU].shortfall, 4.0 * 9.0 * HOUR);
    }

    #[test]
    fn multithread_job_larger_than_the_host_runs_alone() {
        let mut b = StateBuilder::new(2);
        let p = b.project("P", 1.0);
        let av = b.app_version(p, cpu_usage(8.0), 8e9);
        let j = b.job(p, av, HOUR, 1e9);
        let out = b.simulate();
        assert_close!(out.jobs[j.index()].projected_completion, HOUR);
        assert_close!(out.resources[CPU].nidle, 0.0);
    }

    #[test]
    fn cpus_held_by_gpu_jobs_are_not_shortfall() {
        // One CPU, held entirely by a GPU job for 2 h: the CPU job waits, and the CPU
        // counts as busy meanwhile.
        let mut b = StateBuilder::new(1);
        b.gpus(NVIDIA, 1);
        let p = b.project("P", 1.0);
        let gpu = b.app_version(p, gpu_usage(1.0, 1.0), 1e10);
        let cpu = b.app_version(p, cpu_usage(1.0), 1e9);
        let g = b.job(p, gpu, 2.0 * HOUR, 1e9);
        let c = b.job(p, cpu, HOUR, 1e9);
        let out = b.simulate();
        assert_close!(out.jobs[g.index()].projected_completion, 2.0 * HOUR);
        assert_close!(out.jobs[c.index()].projected_completion, 3.0 * HOUR);
        assert_close!(out.resources[CPU].nidle, 0.0);
        assert_close!(out.resources[CPU].shortfall, 7.0 * HOUR);
        assert_close!(out.projects[p.index()].shortfall[CPU], 7.0 * HOUR);
        assert_close!(out.resources[NVIDIA].shortfall, 8.0 * HOUR);
        assert_close!(out.resources[CPU].saturated_time, 3.0 * HOUR);
    }

    #[test]
    fn deadline_misses_are_counted_per_job_project_and_resource() {
        let mut b = StateBuilder::new(1);
        let p = b.project("P", 1.0);
        let q = b.project("Q", 1.0);
        let av = b.app_version(p, cpu_usage(1.0), 1e9);
        let avq = b.app_version(q, cpu_usage(1.0), 1e9);
        // P's jobs run one at a time in its half of the CPU: 2 h and 4 h.
        let first = b.job(p, av, HOUR, 2.5 * HOUR);
        let second = b.job(p, av, HOUR, 2.5 * HOUR);
        let other = b.job(q, avq, 10.0 * HOUR, 100.0 * HOUR);
        let out = b.simulate();
        assert_close!(out.jobs[first.index()].projected_completion, 2.0 * HOUR);
        assert_close!(out.jobs[second.index()].projected_completion, 4.0 * HOUR);
        assert!(!out.jobs[first.index()].deadline_missed);
        assert!(out.jobs[second.index()].deadline_missed);
        assert!(!out.jobs[other.index()].deadline_missed);
        assert_eq!(out.projects[p.index()].deadlines_missed[CPU], 1);
        assert_eq!(out.projects[p.index()].total_deadlines_missed(), 1);
        assert_eq!(out.projects[q.index()].total_deadlines_missed(), 0);
        assert_eq!(out.resources[CPU].deadlines_missed, 1);
    }

    #[test]
    fn jobs_without_instances_never_finish() {
        let mut b = StateBuilder::new(1);
        let p = b.project("P", 1.0);
        let av = b.app_version(p, gpu_usage(0.5, 1.0), 1e10);
        let j = b.job(p, av, HOUR, 1e12);
        let out = b.simulate();
        assert!(out.jobs[j.index()].simulated);
        assert_eq!(out.jobs[j.index()].projected_completion, f64::INFINITY);
        assert!(out.jobs[j.index()].deadline_missed);
        assert_eq!(out.resources[NVIDIA].deadlines_missed, 1);
        // The stuck GPU job holds no CPU.
        assert_close!(out.resources[CPU].nidle, 1.0);
        assert_close!(out.resources[NVIDIA].nidle, 0.0);
    }

    #[test]
    fn availability_slows_jobs_down() {
        let mut b = StateBuilder::new(1);
        b.state.time_stats.on_frac = 0.8;
        b.state.time_stats.active_frac = 0.5;
        let p = b.project("P", 1.0);
        let av = b.app_version(p, cpu_usage(1.0), 1e9);
        let j = b.job(p, av, 2.0 * HOUR, 1e12);
        let out = b.simulate();
        assert_close!(out.jobs[j.index()].projected_completion, 5.0 * HOUR);
        assert_close!(out.resources[CPU].shortfall, 5.0 * HOUR);
    }

    #[test]
    fn project_without_gpu_app_gets_no_gpu_share() {
        let mut b = StateBuilder::new(1);
        b.gpus(NVIDIA, 1);
        let gpu_project = b.project("G", 1.0);
        let cpu_project = b.project("C", 1.0);
        b.app_version(gpu_project, gpu_usage(0.1, 1.0), 1e10);
        let av = b.app_version(cpu_project, cpu_usage(1.0), 1e9);
        b.state.projects[cpu_project.index()].resources[NVIDIA].no_apps = true;
        b.job(cpu_project, av, 100.0 * HOUR, 1e12);
        let out = b.simulate();
        assert_close!(out.projects[gpu_project.index()].share[NVIDIA], 1.0);
        assert_close!(out.projects[cpu_project.index()].share[NVIDIA], 0.0);
        assert_close!(out.projects[gpu_project.index()].shortfall[NVIDIA], 10.0 * HOUR);
        assert_close!(out.projects[cpu_project.index()].shortfall[NVIDIA], 0.0);
        assert_close!(out.resources[NVIDIA].shortfall, 10.0 * HOUR);
        assert_close!(out.resources[NVIDIA].nidle, 1.0);
        assert_close!(out.resources[NVIDIA].saturated_time, 0.0);
        // The GPU project has no CPU app version and no CPU job: no CPU share either.
        assert_close!(out.projects[gpu_project.index()].share[CPU], 0.0);
        assert_close!(out.projects[cpu_project.index()].share[CPU], 1.0);
    }

    /// Seed 003's example: A has GPU jobs only, B has CPU and GPU jobs, equal shares, the
    /// GPU twice as fast as the CPU. The shares are the cross-resource target (A 75% of
    /// the GPU, B the CPU and 25% of the GPU), not half the GPU each, and with nothing
    /// queued each project's shortfall is its share over the horizon.
    #[test]
    fn shares_span_resources_in_seed_003_example() {
        let mut b = StateBuilder::new(1);
        b.gpus(NVIDIA, 1);
        assert_close!(b.state.host.relative_speed(NVIDIA), 2.0);
        let a = b.project("A", 1.0);
        let bp = b.project("B", 1.0);
        b.app_version(a, gpu_usage(0.1, 1.0), 2e9);
        b.app_version(bp, gpu_usage(0.1, 1.0), 2e9);
        b.app_version(bp, cpu_usage(1.0), 1e9);
        let out = b.simulate();
        let share = |p: ProjectId, r| out.projects[p.index()].share[r];
        assert_close!(share(a, NVIDIA), 0.75);
        assert_close!(share(a, CPU), 0.0);
        assert_close!(share(bp, NVIDIA), 0.25);
        assert_close!(share(bp, CPU), 1.0);
        assert_close!(out.projects[a.index()].shortfall[NVIDIA], 0.75 * out.horizon);
        assert_close!(out.projects[bp.index()].shortfall[NVIDIA], 0.25 * out.horizon);
        assert_close!(out.projects[bp.index()].shortfall[CPU], out.horizon);
    }

    #[test]
    fn suspended_and_no_new_work_projects_do_not_count_for_shares() {
        let mut b = StateBuilder::new(2);
        let p = b.project("P", 1.0);
        let q = b.project("Q", 1.0);
        let r = b.project("R", 2.0);
        for id in [p, q, r] {
            b.app_version(id, cpu_usage(1.0), 1e9);
        }
        b.state.projects[q.index()].dont_request_more_work = true;
        b.state.projects[r.index()].suspended = true;
        let out = b.simulate();
        assert_close!(out.projects[p.index()].share[CPU], 2.0);
        assert_close!(out.projects[q.index()].share[CPU], 0.0);
        assert_close!(out.projects[r.index()].share[CPU], 0.0);
    }

    #[test]
    fn running_jobs_go_first_then_earliest_deadline() {
        let mut b = StateBuilder::new(1);
        let p = b.project("P", 1.0);
        let av = b.app_version(p, cpu_usage(1.0), 1e9);
        let late = b.job(p, av, HOUR, 50.0 * HOUR);
        let early = b.job(p, av, HOUR, 10.0 * HOUR);
        let running = b.job(p, av, HOUR, 90.0 * HOUR);
        let mut task = crate::model::ActiveTask::new(0);
        task.scheduler_state = crate::model::SchedulerState::Running;
        b.state.jobs[running.index()].task = Some(task);
        let out = b.simulate();
        assert_close!(out.jobs[running.index()].projected_completion, HOUR);
        assert_close!(out.jobs[early.index()].projected_completion, 2.0 * HOUR);
        assert_close!(out.jobs[late.index()].projected_completion, 3.0 * HOUR);
    }

    #[test]
    fn zero_share_project_gets_only_leftovers() {
        let mut b = StateBuilder::new(2);
        let p = b.project("P", 1.0);
        let z = b.project("Z", 0.0);
        let avp = b.app_version(p, cpu_usage(1.0), 1e9);
        let avz = b.app_version(z, cpu_usage(1.0), 1e9);
        let pj = b.job(p, avp, HOUR, 1e9);
        let z1 = b.job(z, avz, HOUR, 1e9);
        let z2 = b.job(z, avz, HOUR, 1e9);
        let out = b.simulate();
        // P can use one CPU only; Z gets the other.
        assert_close!(out.jobs[pj.index()].projected_completion, HOUR);
        assert_close!(out.jobs[z1.index()].projected_completion, HOUR);
        assert_close!(out.jobs[z2.index()].projected_completion, 2.0 * HOUR);
        assert_close!(out.projects[z.index()].share[CPU], 0.0);
    }

    #[test]
    fn non_cpu_intensive_and_unrunnable_jobs_are_left_out() {
        let mut b = StateBuilder::new(1);
        let p = b.project("P", 1.0);
        let av = b.app_version(p, cpu_usage(1.0), 1e9);
        let j = b.job(p, av, HOUR, 1e9);
        let done = b.job(p, av, HOUR, 1e9);
        b.state.jobs[done.index()].state = JobState::FilesUploaded;
        b.state.apps[0].non_cpu_intensive = true;
        let out = b.simulate();
        assert!(!out.jobs[j.index()].simulated);
        assert!(!out.jobs[done.index()].simulated);
        assert_close!(out.resources[CPU].shortfall, 10.0 * HOUR);
    }

    #[test]
    fn empty_state_is_all_shortfall() {
        let b = StateBuilder::new(3);
        let out = b.simulate();
        assert!(out.jobs.is_empty());
        assert_close!(out.resources[CPU].shortfall, 30.0 * HOUR);
        assert_close!(out.resources[CPU].nidle, 3.0);
        assert_close!(out.resources[CPU].saturated_time, 0.0);
        assert_close!(out.resources[NVIDIA].instances, 0.0);
    }

    /// A random state: a few projects with CPU, multithread and GPU apps and jobs.
    #[derive(Debug, Clone)]
    struct Scenario {
        ncpus: u32,
        ngpus: u32,
        shares: Vec<f64>,
        /// (project, kind, seconds, deadline hours, running)
        jobs: Vec<(usize, u8, f64, f64, bool)>,
        gpu_cpus: f64,
        active_frac: f64,
    }

    fn scenario() -> impl Strategy<Value = Scenario> {
        (1u32..9, 0u32..3, prop::collection::vec(0.0f64..4.0, 1..5), 0.0f64..1.0, 0.1f64..1.0)
            .prop_flat_map(|(ncpus, ngpus, shares, gpu_cpus, active_frac)| {
                let n = shares.len();
                let job = (0..n, 0u8..4, 60.0f64..200_000.0, 0.0f64..200.0, any::<bool>());
                prop::collection::vec(job, 0..40).prop_map(move |jobs| Scenario {
                    ncpus,
                    ngpus,
                    shares: shares.clone(),
                    jobs,
                    gpu_cpus,
                    active_frac,
                })
            })
    }

    fn build(s: &Scenario) -> StateBuilder {
        let mut b = StateBuilder::new(s.ncpus);
        if s.ngpus > 0 {
            b.gpus(NVIDIA, s.ngpus);
        }
        b.state.time_stats.active_frac = s.active_frac;
        let mut versions = Vec::new();
        for (i, &share) in s.shares.iter().enumerate() {
            let p = b.project(&format!("P{i}"), share);
            versions.push([
                b.app_version(p, cpu_usage(1.0), 1e9),
                b.app_version(p, cpu_usage(f64::from(s.ncpus.min(4))), 4e9),
                b.app_version(p, gpu_usage(s.gpu_cpus, 1.0), 1e10),
                b.app_version(p, gpu_usage(s.gpu_cpus, 0.5), 1e10),
            ]);
        }
        for &(p, kind, seconds, deadline_hours, running) in &s.jobs {
            let av = versions[p][usize::from(kind)];
            let id = b.job(ProjectId::from_index(p), av, seconds, deadline_hours * HOUR);
            if running {
                let mut task = crate::model::ActiveTask::new(0);
                task.scheduler_state = crate::model::SchedulerState::Running;
                task.elapsed_time = seconds / 3.0;
                task.fraction_done = 0.3;
                b.state.jobs[id.index()].task = Some(task);
            }
        }
        b
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn shortfall_and_nidle_stay_in_range(s in scenario()) {
            let b = build(&s);
            let facts = ProjectFacts::gather(&b.state);
            let mut sim = Simulation::new(&b.state, &facts, &mut RrSimScratch::default());
            sim.run();
            let out = sim.output(&b.state, 0.0);
            for (r, res) in out.resources.iter() {
                prop_assert!(res.shortfall >= 0.0 && res.shortfall.is_finite(), "{r}");
                prop_assert!(res.shortfall <= res.instances * out.horizon * (1.0 + 1e-9));
                prop_assert!(res.nidle >= 0.0 && res.nidle <= res.instances, "{r}");
                prop_assert!(res.saturated_time >= 0.0 && res.saturated_time <= out.horizon);
                // The initial assignment never overcommits, beyond the CPUs GPU jobs hold.
                let allowance = if r == CPU { sim.coprocessor_cpus_at_start() } else { 0.0 };
                let initial = sim.resources[r.index()].initial_used;
                prop_assert!(
                    initial <= res.instances.max(allowance) + 1e-6,
                    "{r}: {initial} > {}", res.instances
                );
            }
            for project in &out.projects {
                for (_, &shortfall) in project.shortfall.iter() {
                    prop_assert!(shortfall >= 0.0 && shortfall.is_finite());
                }
            }
            for job in &out.jobs {
                prop_assert!(job.simulated);
                prop_assert!(job.projected_completion >= 0.0);
            }
        }

        #[test]
        fn busy_instances_leave_no_shortfall(
            ncpus in 1u32..9,
            shares in prop::collection::vec(0.1f64..4.0, 1..5),
            extra in 0usize..5,
        ) {
            // Every project has at least as many long single-CPU jobs as there are CPUs.
            let mut b = StateBuilder::new(ncpus);
            let mut projects = Vec::new();
            for (i, &share) in shares.iter().enumerate() {
                let p = b.project(&format!("P{i}"), share);
                let av = b.app_version(p, cpu_usage(1.0), 1e9);
                for k in 0..(ncpus as usize + extra) {
                    b.job(p, av, 20.0 * HOUR + k as f64, 1e12);
                }
                projects.push(p);
            }
            let out = b.simulate();
            prop_assert!(out.resources[CPU].shortfall.abs() < 1e-6);
            prop_assert!(out.resources[CPU].nidle.abs() < 1e-9);
            prop_assert!(close(out.resources[CPU].saturated_time, out.horizon));
            for p in projects {
                prop_assert!(out.projects[p.index()].shortfall[CPU] < 1e-6);
            }
        }
    }

    impl Simulation {
        /// CPUs the coprocessor jobs held after the initial assignment (tests only; they
        /// only change after the first event).
        fn coprocessor_cpus_at_start(&self) -> f64 {
            self.resources[CPU.index()].initial_used
                - self.resources[CPU.index()]
                    .queues
                    .iter()
                    .map(|&q| self.queues[q as usize].alloc)
                    .sum::<f64>()
        }
    }

    /// A straightforward re-statement of the model in the module documentation, to check
    /// the event-driven simulation against: at every completion it recomputes every
    /// allocation, active set and rate from scratch and moves every job on, O(jobs) per
    /// step and O(jobs²) in all, fine for a few dozen jobs.
    mod reference {
        use super::*;
        use crate::estimate::remaining_duration;

        struct RefJob {
            index: usize,
            project: usize,
            resource: usize,
            usage: f64,
            cpu: f64,
            remaining: f64,
            completed: Option<f64>,
        }

        /// Splits `capacity` among `(weight, demand)` pairs (see the module documentation).
        fn water_fill(capacity: f64, claims: &[(f64, f64)]) -> Vec<f64> {
            let mut alloc = vec![0.0; claims.len()];
            let mut open: Vec<usize> =
                (0..claims.len()).filter(|&i| claims[i].1 > EPSILON).collect();
            let mut left = capacity;
            while !open.is_empty() && left > EPSILON {
                let total: f64 = open.iter().map(|&i| claims[i].0).sum();
                let fair = |i: usize| {
                    if total <= 0.0 { left / open.len() as f64 } else { left * claims[i].0 / total }
                };
                let settled: Vec<usize> =
                    open.iter().copied().filter(|&i| claims[i].1 <= fair(i) + EPSILON).collect();
                if settled.is_empty() {
                    for &i in &open {
                        alloc[i] = fair(i);
                    }
                    break;
                }
                for &i in &settled {
                    alloc[i] = claims[i].1;
                    left -= claims[i].1;
                }
                left = left.max(0.0);
                open.retain(|i| !settled.contains(i));
            }
            alloc
        }

        pub(super) fn simulate(state: &ClientState, now: Time) -> RrSimOutput {
            let horizon = state.prefs.work_buf_total().max(0.0);
            let nprojects = state.projects.len();
            let instances: Vec<f64> =
                ResourceType::ALL.iter().map(|&r| f64::from(state.instances(r))).collect();
            let availability: Vec<f64> =
                ResourceType::ALL.iter().map(|&r| state.time_stats.available_frac(r)).collect();
            let mut out = RrSimOutput {
                jobs: vec![JobSim::default(); state.jobs.len()],
                resources: ResourceMap::default(),
                projects: vec![ProjectSim::default(); nprojects],
                horizon,
            };
            let mut jobs = Vec::new();
            for id in state.job_ids() {
                let job = state.job(id);
                let Some(av) = job.app_version.map(|v| state.app_version(v)) else { continue };
                if !state.job_nearly_runnable(id)
                    || state.project(job.project).non_cpu_intensive
                    || state.app(av.app).non_cpu_intensive
                {
                    continue;
                }
                let remaining = remaining_duration(state, id);
                if remaining <= 0.0 {
                    out.jobs[id.index()] = JobSim {
                        simulated: true,
                        projected_completion: now,
                        deadline_missed: now > job.report_deadline,
                        remaining_duration: 0.0,
                    };
                    continue;
                }
                let resource = av.usage.main_resource();
                let cpu = if resource.is_gpu() { av.usage.avg_ncpus.max(0.0) } else { 0.0 };
                jobs.push(RefJob {
                    index: id.index(),
                    project: job.project.index(),
                    resource: resource.index(),
                    usage: job_usage(av.usage.main_usage(), instances[resource.index()]),
                    cpu,
                    remaining,
                    completed: None,
                });
            }
            // Each queue in its order: running first, earliest deadline, first received.
            let key = |j: &RefJob| {
                let job = &state.jobs[j.index];
                (!job.is_running(), job.report_deadline, job.received_time, j.index)
            };
            jobs.sort_by(|a, b| {
                let (ka, kb) = (key(a), key(b));
                (ka.0.cmp(&kb.0))
                    .then(ka.1.total_cmp(&kb.1))
                    .then(ka.2.total_cmp(&kb.2))
                    .then(ka.3.cmp(&kb.3))
            });
            let has_jobs =
                |p: usize, r: usize| jobs.iter().any(|j| j.project == p && j.resource == r);
            let target = TargetAllocation::for_state(state, |p, r| {
                let project = state.project(p);
                let prsc = &project.resources[r];
                !project.suspended
                    && !project.dont_request_more_work
                    && !project.non_cpu_intensive
                    && !prsc.no_apps
                    && (prsc.has_app_version || has_jobs(p.index(), r.index()))
            });
            let share = |p: usize, r: usize| {
                target.instances(ProjectId::from_index(p), ResourceType::ALL[r])
            };

            let mut t = 0.0;
            let mut saturated: [Option<f64>; NRESOURCES] = [None; NRESOURCES];
            let mut first = true;
            loop {
                // Allocations, GPUs first: their jobs' CPUs come off the CPU.
                let mut alloc = vec![[0.0; NRESOURCES]; nprojects];
                let mut rate = vec![[0.0; NRESOURCES]; nprojects];
                let mut active = vec![false; jobs.len()];
                let mut held_cpus = vec![0.0; nprojects];
                let mut used = [0.0; NRESOURCES];
                for r in [1, 2, 3, 0] {
                    let capacity = if r == 0 {
                        (instances[0] - held_cpus.iter().sum::<f64>()).max(0.0)
                    } else {
                        instances[r]
                    };
                    let claims: Vec<(f64, f64)> = (0..nprojects)
                        .map(|p| {
                            let demand: f64 = jobs
                                .iter()
                                .filter(|j| {
                                    j.completed.is_none() && j.project == p && j.resource == r
                                })
                                .map(|j| j.usage)
                                .sum();
                            (sane_weight(state.projects[p].resource_share), demand.min(capacity))
                        })
                        .collect();
                    let shares = water_fill(capacity, &claims);
                    for p in 0..nprojects {
                        alloc[p][r] = shares[p];
                        let (mut usage, mut cpu) = (0.0, 0.0);
                        for (i, j) in jobs.iter().enumerate() {
                            if j.completed.is_none()
                                && j.project == p
                                && j.resource == r
                                && usage < shares[p] - EPSILON
                            {
                                active[i] = true;
                                usage += j.usage;
                                cpu += j.cpu;
                            }
                        }
                        rate[p][r] =
                            if usage > EPSILON { (shares[p] / usage).min(1.0) } else { 0.0 };
                        if r != 0 {
                            held_cpus[p] += rate[p][r] * cpu;
                        }
                        used[r] += shares[p];
                    }
                }
                used[0] += held_cpus.iter().sum::<f64>();
                for r in 0..NRESOURCES {
                    if saturated[r].is_none() && used[r] < instances[r] - EPSILON {
                        saturated[r] = Some(t);
                    }
                }
                if first {
                    for (r, resource) in ResourceType::ALL.into_iter().enumerate() {
                        out.resources[resource].nidle =
                            (instances[r] - used[r]).clamp(0.0, instances[r]);
                    }
                    first = false;
                }
                let speed = |j: &RefJob| rate[j.project][j.resource] * availability[j.resource];
                let step = jobs
                    .iter()
                    .enumerate()
                    .filter(|&(i, j)| active[i] && speed(j) > 0.0)
                    .map(|(_, j)| j.remaining / speed(j))
                    .fold(f64::INFINITY, f64::min);
                // Shortfalls over [t, t + step] ∩ [0, horizon].
                let span = (t + step).min(horizon) - t.min(horizon);
                if span > 0.0 {
                    for (r, resource) in ResourceType::ALL.into_iter().enumerate() {
                        let idle = instances[r] - used[r].min(instances[r]);
                        out.resources[resource].shortfall += span * idle.max(0.0);
                        for p in 0..nprojects {
                            let used = alloc[p][r] + if r == 0 { held_cpus[p] } else { 0.0 };
                            out.projects[p].shortfall[resource] +=
                                span * (share(p, r) - used).max(0.0);
                        }
                    }
                }
                if !step.is_finite() {
                    break;
                }
                t += step;
                for (i, j) in jobs.iter_mut().enumerate() {
                    if !active[i] {
                        continue;
                    }
                    let s = rate[j.project][j.resource] * availability[j.resource];
                    let before = j.remaining;
                    j.remaining -= s * step;
                    if s > 0.0 && (j.remaining / s - 0.0).abs() <= 1e-9 * before.max(1.0) {
                        j.completed = Some(t);
                    }
                }
            }
            for j in &jobs {
                let deadline = state.jobs[j.index].report_deadline;
                let projected_completion = j.completed.map_or(f64::INFINITY, |c| now + c);
                let deadline_missed = j.completed.is_none() || projected_completion > deadline;
                out.jobs[j.index] = JobSim {
                    simulated: true,
                    projected_completion,
                    deadline_missed,
                    remaining_duration: remaining_duration(state, JobId::from_index(j.index)),
                };
                if deadline_missed {
                    let resource = ResourceType::ALL[j.resource];
                    out.resources[resource].deadlines_missed += 1;
                    out.projects[j.project].deadlines_missed[resource] += 1;
                }
            }
            for (r, resource) in ResourceType::ALL.into_iter().enumerate() {
                let sim = &mut out.resources[resource];
                sim.instances = instances[r];
                sim.saturated_time = if instances[r] <= 0.0 {
                    0.0
                } else {
                    saturated[r].unwrap_or(horizon).min(horizon)
                };
                for p in 0..nprojects {
                    out.projects[p].share[resource] = share(p, r);
                }
            }
            out
        }
    }

    /// A project's only GPU job finishes inside the horizon: from then on the CPUs it
    /// held are no longer the project's, and its CPU shortfall counts again.
    #[test]
    fn drained_gpu_queue_releases_its_projects_cpus() {
        let s = Scenario {
            ncpus: 1,
            ngpus: 1,
            shares: vec![0.87, 2.2, 1.98],
            jobs: vec![(0, 3, 45_000.0, 81.0, true)],
            gpu_cpus: 0.64,
            active_frac: 0.22,
        };
        let b = build(&s);
        let out = b.simulate();
        let done = out.jobs[0].projected_completion;
        assert!(done < out.horizon, "{done}");
        let share = out.projects[0].share[CPU];
        assert!(share > 0.0 && share < s.gpu_cpus);
        assert_close!(out.projects[0].shortfall[CPU], share * (out.horizon - done));
        let reference = reference::simulate(&b.state, 0.0);
        assert_close!(out.projects[0].shortfall[CPU], reference.projects[0].shortfall[CPU]);
    }

    fn relatively_close(a: f64, b: f64) -> bool {
        a == b || (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// The event-driven simulation agrees with the from-scratch reference.
        #[test]
        fn simulation_matches_reference(s in scenario(), zero_share in prop::option::of(0usize..4)) {
            let mut s = s;
            if let Some(p) = zero_share.filter(|&p| p < s.shares.len()) {
                s.shares[p] = 0.0;
            }
            let b = build(&s);
            let fast = b.simulate();
            let slow = reference::simulate(&b.state, 0.0);
            for (id, (f, r)) in fast.jobs.iter().zip(&slow.jobs).enumerate() {
                prop_assert_eq!(f.simulated, r.simulated, "job {}", id);
                prop_assert!(
                    relatively_close(f.projected_completion, r.projected_completion),
                    "job {}: {} vs {}", id, f.projected_completion, r.projected_completion
                );
                prop_assert_eq!(f.deadline_missed, r.deadline_missed, "job {}", id);
            }
            let horizon_scale = |x: f64| x / fast.horizon.max(1.0);
            for ((resource, f), (_, r)) in fast.resources.iter().zip(slow.resources.iter()) {
                prop_assert_eq!(f.deadlines_missed, r.deadlines_missed, "{}", resource);
                prop_assert!(
                    relatively_close(horizon_scale(f.shortfall), horizon_scale(r.shortfall)),
                    "{} shortfall {} vs {}", resource, f.shortfall, r.shortfall
                );
                prop_assert!(relatively_close(f.nidle, r.nidle), "{} nidle", resource);
                prop_assert!(
                    relatively_close(horizon_scale(f.saturated_time), horizon_scale(r.saturated_time)),
                    "{} saturated {} vs {}", resource, f.saturated_time, r.saturated_time
                );
            }
            for (p, (f, r)) in fast.projects.iter().zip(&slow.projects).enumerate() {
                prop_assert_eq!(f.deadlines_missed, r.deadlines_missed, "project {}", p);
                for ((resource, fs), (_, rs)) in f.shortfall.iter().zip(r.shortfall.iter()) {
                    prop_assert!(
                        relatively_close(horizon_scale(*fs), horizon_scale(*rs)),
                        "project {} {} shortfall {} vs {}", p, resource, fs, rs
                    );
                }
                prop_assert_eq!(f.share, r.share);
            }
        }
    }

    #[test]
    fn ten_thousand_jobs_all_finish() {
        let mut b = StateBuilder::new(64);
        b.gpus(NVIDIA, 4);
        let mut versions = Vec::new();
        for i in 0..20 {
            let p = b.project(&format!("P{i}"), 1.0 + i as f64);
            versions.push((
                p,
                b.app_version(p, cpu_usage(1.0), 1e9),
                b.app_version(p, gpu_usage(0.5, 1.0), 1e10),
            ));
        }
        for k in 0..10_000usize {
            let (p, cpu, gpu) = versions[k % 20];
            let av = if k % 10 == 0 { gpu } else { cpu };
            b.job(p, av, 1000.0 + (k * 7919 % 50_000) as f64, (k % 500) as f64 * HOUR);
        }
        let facts = ProjectFacts::gather(&b.state);
        let out = simulate(&b.state, &facts, 0.0);
        assert!(out.jobs.iter().all(|j| j.simulated && j.projected_completion.is_finite()));
        assert!(out.resources[CPU].deadlines_missed > 0);
        // Far more work than the horizon: everything stays busy.
        assert_close!(out.resources[CPU].shortfall, 0.0);
        assert_close!(out.resources[NVIDIA].shortfall, 0.0);
        assert_close!(out.resources[CPU].nidle, 0.0);
        // Nothing runs faster than the CPUs allow: the CPU work takes at least its total
        // over 64 CPUs (less the CPUs the GPU jobs hold at the start).
        let (mut cpu_work, mut last) = (0.0, 0.0f64);
        for (id, job) in b.state.jobs.iter().enumerate() {
            if b.state.app_version(job.app_version.unwrap()).usage.coprocessor.is_none() {
                cpu_work += crate::estimate::remaining_duration(&b.state, JobId::from_index(id));
                last = last.max(out.jobs[id].projected_completion);
            }
        }
        assert!(last >= cpu_work / 64.0 * (1.0 - 1e-9), "{last} < {}", cpu_work / 64.0);
    }

    #[test]
    fn rounding_residue_of_the_shares_is_neither_idle_nor_shortfall() {
        // Twenty projects with uneven shares on 64 CPUs, each with more than enough
        // single-thread work: the allocations are sums of share fractions, which need
        // not add back to exactly 64. No instance is idle and nothing is short; a
        // residue at rounding level would have the client ask for work every poll.
        let mut b = StateBuilder::new(64);
        let shares = [100.0, 50.0, 200.0, 25.0, 100.0, 150.0, 75.0, 100.0, 300.0, 10.0];
        for k in 0..20 {
            let p = b.project(&format!("q{k:02}"), shares[k % shares.len()]);
            let v = b.app_version(p, ResourceUsage { avg_ncpus: 1.0, coprocessor: None }, 1e9);
            for _ in 0..12 {
                b.job(p, v, 20.0 * HOUR, 1e9);
            }
        }
        let out = b.simulate();
        assert_eq!(out.resources[ResourceType::Cpu].nidle, 0.0);
        assert_eq!(out.resources[ResourceType::Cpu].shortfall, 0.0);
        assert!(out.projects.iter().all(|p| p.shortfall[ResourceType::Cpu] == 0.0));
    }
}
