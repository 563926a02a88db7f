//! Building a simulation: the nearly-runnable jobs gathered into per-project,
//! per-resource queues in queue order (running first, earliest deadline, first received),
//! and each project's fair-share target on each resource; and the buffers handed back for
//! the next simulation.

use super::keys::{NO_EVENT, from_order_bits, order_bits};
use super::queue::Queue;
use super::simulate::RrSimScratch;
use super::simulation::{
    JobOrigin, MIN_JOB_USAGE, NO_JOB, NRESOURCES, ResourceState, SimJob, Simulation, queue_index,
    queue_resource,
};
use crate::estimate::{remaining_after, unstarted_from, usable_flops, version_dcf};
use crate::model::{ClientState, JobId, ProjectFacts, ProjectId, ResourceType, is_positive_finite};

/// What a job's simulation takes from its app version.
#[derive(Debug, Clone, Copy)]
pub(super) struct VersionFacts {
    pub(super) resource: usize,
    pub(super) usage: f64,
    pub(super) cpu: f64,
    pub(super) flops: f64,
    /// Its duration correction factor (its own, else its project's).
    pub(super) dcf: f64,
}

/// What the gathering pass keeps of a simulated job until the jobs are put in queue
/// order (small, so that the sort moves keys and the jobs are built once, in place).
#[derive(Debug, Clone, Copy)]
pub(super) struct Gathered {
    /// Its sort key (queue, running first, deadline, position in the gathered list),
    /// kept in the record so that gathering writes one record per job.
    pub(super) key: u128,
    pub(super) job: u32,
    pub(super) remaining: f64,
    /// Its version's [`VersionFacts::usage`] and [`VersionFacts::cpu`], copied here so
    /// that building the job needs no second look-up.
    pub(super) usage: f64,
    pub(super) cpu: f64,
    pub(super) received: f64,
}

/// Instances of its main resource a job occupies, made usable (see [`MIN_JOB_USAGE`] and
/// the module's allowances).
pub(super) fn job_usage(declared: f64, instances: f64) -> f64 {
    let usage = if declared.is_finite() { declared.max(MIN_JOB_USAGE) } else { 1.0 };
    if instances > 0.0 { usage.min(instances) } else { usage }
}

/// Sorts the jobs' keys: a counting sort by queue (the top bits; `starts[q + 1]` holds
/// the number of keys of queue `q`, counted while the keys were made), then each queue's keys
/// are sorted only when they are not in order already, as they usually are (jobs arrive
/// in deadline order, and the running ones are the oldest).
/// The keys are read from the gathered records; the result goes to `sorted`; `fill` is
/// working space.
pub(super) fn sort_by_queue(
    gathered: &[Gathered],
    starts: &mut [usize],
    fill: &mut Vec<usize>,
    sorted: &mut Vec<u128>,
) {
    let queue_of = |key: u128| (key >> 97) as usize;
    let mut total = 0;
    for start in starts.iter_mut() {
        total += *start;
        *start = total;
    }
    sorted.clear();
    sorted.resize(gathered.len(), 0);
    fill.clear();
    fill.extend_from_slice(starts);
    for &Gathered { key, .. } in gathered {
        let q = queue_of(key);
        sorted[fill[q]] = key;
        fill[q] += 1;
    }
    // The queue is the key's top bits, so keys of different queues are always in order:
    // a key smaller than the one before it is inside an unsorted queue, which is sorted
    // whole. One pass over the keys, rather than one slice per queue (most are empty).
    let Some((_, after_first)) = sorted.split_first() else { return };
    let Some(descent) = sorted.iter().zip(after_first).position(|(a, b)| a > b) else {
        return;
    };
    let mut i = descent + 1;
    while i < sorted.len() {
        if sorted[i - 1] > sorted[i] {
            let q = queue_of(sorted[i]);
            sorted[starts[q]..starts[q + 1]].sort_unstable();
            // The first key of the next queue is above the last of this one.
            i = starts[q + 1];
        }
        i += 1;
    }
}

/// Builds the simulated jobs and their origins from the sorted keys, and tells whether
/// every run of equal keys but for the position (same queue, running or not, deadline)
/// is in the order received.
fn build_jobs(
    order: &[u128],
    gathered: &[Gathered],
    jobs: &mut Vec<SimJob>,
    origins: &mut Vec<JobOrigin>,
) -> bool {
    // Two passes, each extending its vector from the keys, which reserves once instead
    // of checking the capacity at every push.
    jobs.clear();
    origins.clear();
    let mut in_order = true;
    // Above every key shifted down, so that the first key starts a run.
    let mut last_tie = u128::MAX;
    let mut last_received = 0.0;
    jobs.extend(order.iter().map(|&key| {
        let gathered = gathered[key as u32 as usize];
        let tie = key >> 32;
        if tie == last_tie && last_received > gathered.received {
            in_order = false;
        }
        last_tie = tie;
        last_received = gathered.received;
        SimJob {
            queue: (key >> 97) as u32,
            generation: 0,
            prev: NO_JOB,
            next: NO_JOB,
            usage: gathered.usage,
            cpu: gathered.cpu,
            work: gathered.remaining,
            done: false,
        }
    }));
    origins.extend(order.iter().map(|&key| {
        let gathered = gathered[key as u32 as usize];
        JobOrigin {
            job: JobId::from_index(gathered.job as usize),
            initial_remaining: gathered.remaining,
            deadline: from_order_bits((key >> 32) as u64),
        }
    }));
    in_order
}

/// The pass over the jobs of [`Simulation::new`]: each nearly-runnable job's record,
/// with its key, goes to `gathered` (counted in `queue_counts`), or its index to
/// `finished_at_start` when it has no work left. A function of its own, so that the loop
/// keeps its tables in registers rather than sharing them with the rest of the building.
#[inline(never)]
fn gather_jobs(
    state: &ClientState,
    versions: &[Option<VersionFacts>],
    project_included: &[bool],
    queue_counts: &mut [usize],
    gathered: &mut Vec<Gathered>,
    finished_at_start: &mut Vec<usize>,
) {
    // Deferred transfers are rare: one look at the file list spares the walk of each
    // job's input files when there is none.
    let some_transfer_deferred = state.files.iter().any(|f| f.transfer_deferred);
    for (index, job) in state.jobs.iter().enumerate() {
        // `job_nearly_runnable`, with the app version and the project's suspension
        // read from `versions` and `project_included`. Most jobs left out are done
        // computing (waiting to upload or report), so that is tested first.
        if job.state.computing_done() || job.suspended {
            continue;
        }
        let Some(av_id) = job.app_version else { continue };
        let Some(&Some(version)) = versions.get(av_id.index()) else { continue };
        if !project_included[job.project.index()]
            || (some_transfer_deferred && state.job_has_deferred_input(job))
        {
            continue;
        }
        let fpops_est = state.workunit(job.workunit).rsc_fpops_est;
        let remaining = remaining_after(unstarted_from(fpops_est, version.flops, version.dcf), job);
        if remaining <= 0.0 {
            finished_at_start.push(index);
            continue;
        }
        let queue = queue_index(job.project.index(), version.resource);
        queue_counts[queue + 1] += 1;
        let major = (queue as u128) << 1 | u128::from(!job.is_running());
        let key = major << 96
            | u128::from(order_bits(job.report_deadline)) << 32
            | gathered.len() as u128;
        gathered.push(Gathered {
            key,
            job: index as u32,
            remaining,
            usage: version.usage,
            cpu: version.cpu,
            received: job.received_time,
        });
    }
}

pub(super) fn sane_weight(share: f64) -> f64 {
    if is_positive_finite(share) { share } else { 0.0 }
}

impl Simulation {
    /// Gathers the simulated jobs into their queues and computes the shares; the initial
    /// assignment is made by [`Simulation::run`].
    /// The buffers come from `scratch` and go back with [`Simulation::recycle`].
    pub(super) fn new(
        state: &ClientState,
        facts: &[ProjectFacts],
        scratch: &mut RrSimScratch,
    ) -> Self {
        let horizon = state.prefs.work_buf_total();
        let horizon = if horizon.is_finite() { horizon.max(0.0) } else { 0.0 };
        let nprojects = state.projects.len();
        let mut resources: [ResourceState; NRESOURCES] = ResourceType::ALL.map(|r| ResourceState {
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
            gathered, sorted, queue_counts, fill, versions, project_included, ..
        } = scratch;
        gathered.clear();
        gathered.reserve(capacity);
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
                dcf: state.projects.get(av.project.index()).map_or(1.0, |p| version_dcf(p, av)),
            })
        }));
        // Whether a project's jobs take part (not when it is not CPU-intensive, or
        // suspended: its jobs are then not nearly runnable).
        project_included.clear();
        project_included
            .extend(state.projects.iter().map(|p| !p.non_cpu_intensive && !p.suspended));
        gather_jobs(
            state,
            versions,
            project_included,
            queue_counts,
            gathered,
            &mut finished_at_start,
        );
        sort_by_queue(gathered, queue_counts, fill, sorted);
        let order = sorted;
        // The jobs are built directly in queue order: the queue and the deadline are in
        // the key, the rest in the small gathered record it points to. Jobs usually
        // arrive in order, so a run of equal deadlines is usually in the order received
        // already: building tells, and only when some run is not are the runs put in
        // order and the jobs built again.
        let mut jobs = std::mem::take(&mut scratch.jobs);
        let mut origins = std::mem::take(&mut scratch.origins);
        if !build_jobs(order, gathered, &mut jobs, &mut origins) {
            let tie = |key: u128| key >> 32;
            let received_at = |key: u128| gathered[key as u32 as usize].received;
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
                if !in_order {
                    order[start..end].sort_by(|&a, &b| {
                        received_at(a).total_cmp(&received_at(b)).then(a.cmp(&b))
                    });
                }
                start = end;
            }
            build_jobs(order, gathered, &mut jobs, &mut origins);
        }

        // The queues kept from the last simulation are the same project and resource at
        // the same index: they are reset in place, keeping their completion lists' allocations (the
        // queues of projects added since are made first, then reset with the others).
        // A project's weight is the same on each of its queues: it is read once.
        let mut queues = std::mem::take(&mut scratch.queues);
        queues.resize_with(queues_count, Queue::default);
        for (project_queues, project) in queues.chunks_exact_mut(NRESOURCES).zip(&state.projects) {
            let weight = sane_weight(project.resource_share);
            for (queue, resource) in project_queues.iter_mut().zip(&resources) {
                queue.reset(weight, resource.availability);
            }
        }
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
            // Room for every job's first activation, so the list rarely grows.
            queue.completions.reserve(end - start);
            resources[queue_resource(q as usize)].queues.push(q);
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
        let target = scratch.target.for_state(state, can_supply);
        // The target has an entry per project in project order, as the queues do.
        let targets = target.projects();
        for (p, project_queues) in queues.chunks_exact_mut(NRESOURCES).enumerate() {
            let entitled = targets.get(p).map_or([0.0; NRESOURCES], |t| t.instances.0);
            for (queue, instances) in project_queues.iter_mut().zip(entitled) {
                queue.share = instances;
            }
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
            held_cpus_moved: false,
            end_time: 0.0,
        }
    }

    /// Hands the simulation's buffers back to `scratch` for the next one. By reference,
    /// so that the large struct is not copied on the way.
    pub(super) fn recycle(&mut self, scratch: &mut RrSimScratch) {
        scratch.jobs = std::mem::take(&mut self.jobs);
        scratch.origins = std::mem::take(&mut self.origins);
        scratch.finished_at_start = std::mem::take(&mut self.finished_at_start);
        scratch.queues = std::mem::take(&mut self.queues);
        for (spare, resource) in scratch.resource_queues.iter_mut().zip(&mut self.resources) {
            *spare = std::mem::take(&mut resource.queues);
        }
        scratch.event_times = std::mem::take(&mut self.event_times);
        scratch.event_queues = std::mem::take(&mut self.event_queues);
        scratch.dirty = std::mem::take(&mut self.dirty);
        scratch.unsettled = std::mem::take(&mut self.unsettled);
    }
}
