//! The round-robin simulation's working state and its event loop: from the initial
//! assignment, step from one job completion to the next until no job can progress.

use super::allocation::Claim;
use super::keys::{Completion, NO_EVENT, event_time};
use super::queue::Queue;
use crate::Time;
use crate::model::{JobId, ResourceType};

/// A job that declares no use of its main resource is taken to use this many instances,
/// so that a resource is always shared among finitely many jobs.
pub(super) const MIN_JOB_USAGE: f64 = 0.01;

/// Slack for comparing instance counts and progress, far below anything observable.
pub(super) const EPSILON: f64 = 1e-9;

/// "No job" in the intrusive queue links.
pub(super) const NO_JOB: u32 = u32::MAX;

/// One simulated job: only what the event loop reads and writes, so that the jobs it
/// walks pack densely (what the output alone needs is in [`JobOrigin`]).
#[derive(Debug, Clone)]
pub(super) struct SimJob {
    pub(super) queue: u32,
    /// Bumped on every activation and deactivation, to recognise stale completion entries.
    pub(super) generation: u32,
    pub(super) prev: u32,
    pub(super) next: u32,
    /// Instances of the main resource it occupies.
    pub(super) usage: f64,
    /// CPUs a coprocessor job holds besides (0 for CPU jobs).
    pub(super) cpu: f64,
    /// Processing seconds left while the job is not active; the queue's progress clock
    /// value at which it finishes while active; its completion time once done. Only one
    /// of these is meaningful at a time, so they share the field.
    pub(super) work: f64,
    pub(super) done: bool,
}

/// What the output needs of a simulated job besides its completion, in the same order
/// as [`Simulation::jobs`].
#[derive(Debug, Clone, Copy)]
pub(super) struct JobOrigin {
    pub(super) job: JobId,
    /// Processing seconds left at the start of the simulation.
    pub(super) initial_remaining: f64,
    pub(super) deadline: Time,
}

/// One processing resource.
#[derive(Debug, Default)]
pub(super) struct ResourceState {
    pub(super) instances: f64,
    pub(super) availability: f64,
    /// The capacity the current allocations were computed for (NaN: none yet).
    pub(super) capacity: f64,
    /// Queues of this resource that have jobs, or had them and still hold a share of
    /// it or CPUs (a queue left with no jobs, nothing allocated and no CPUs is dropped).
    pub(super) queues: Vec<u32>,
    /// Some queue was dropped from `queues`: the sums over them start from +0.0, as the
    /// dropped queues' +0.0 terms would have made them.
    pub(super) dropped_empty: bool,
    /// Instances in use (uncapped), since `used_since`.
    pub(super) used: f64,
    pub(super) used_since: f64,
    pub(super) shortfall: f64,
    pub(super) saturated: Option<f64>,
    pub(super) initial_used: f64,
}

/// The simulation's working state; times are seconds from `now`.
pub(crate) struct Simulation {
    pub(super) jobs: Vec<SimJob>,
    pub(super) origins: Vec<JobOrigin>,
    /// Output slot of each job that was left out of the queues because it has no work
    /// left: it completes at once.
    pub(super) finished_at_start: Vec<usize>,
    pub(super) job_count: usize,
    pub(super) queues: Vec<Queue>,
    pub(super) resources: [ResourceState; 4],
    /// The pending events of the queues that have jobs (seconds from now), kept apart
    /// from the queues so that finding the next one reads a few cache lines: each the
    /// time's [`order_bits`], [`NO_EVENT`] where the queue has none. The slots are in
    /// queue order, so the first slot with the earliest time is the lowest queue index
    /// among those due then, and the scan for it is a plain minimum of small integers.
    pub(super) event_times: Vec<u64>,
    /// The queue of each slot of `event_times`.
    pub(super) event_queues: Vec<u32>,
    pub(super) dirty: Vec<u32>,
    pub(super) unsettled: Vec<Claim>,
    pub(super) horizon: f64,
    /// CPUs held by the active coprocessor jobs.
    pub(super) coprocessor_cpus: f64,
    pub(super) coprocessor_cpus_changed: bool,
    /// Some coprocessor queue's held CPUs moved since they were last summed.
    pub(super) held_cpus_moved: bool,
    pub(super) end_time: f64,
}

pub(super) const NRESOURCES: usize = ResourceType::ALL.len();

pub(super) fn queue_index(project: usize, resource: usize) -> usize {
    project * NRESOURCES + resource
}

/// The smaller of `x` and a `cap` that is never NaN; a NaN `x` gives `cap`. This is
/// `x.min(cap)` without its handling of a NaN `cap`, except that when both are zeros the
/// sign of the result may differ: it is only for results that are compared, or used
/// only when positive.
pub(super) fn at_most(x: f64, cap: f64) -> f64 {
    if x < cap { x } else { cap }
}

/// The project of the queue at index `q`.
pub(super) fn queue_project(q: usize) -> usize {
    q / NRESOURCES
}

/// The resource of the queue at index `q`.
pub(super) fn queue_resource(q: usize) -> usize {
    q % NRESOURCES
}

impl Simulation {
    /// Makes the initial assignment (coprocessors first, since their jobs' CPUs come off
    /// the CPU), then steps from completion to completion until no job can progress.
    /// Kept out of line, so that the event loop has the registers to itself.
    #[inline(never)]
    pub(super) fn run(&mut self) {
        for gpu in ResourceType::GPUS {
            self.reallocate(gpu.index(), 0.0, true);
        }
        self.reallocate(ResourceType::Cpu.index(), 0.0, true);
        for resource in &mut self.resources {
            resource.initial_used = resource.used;
        }
        while let Some((t, q)) = self.take_next_event() {
            self.end_time = t;
            self.complete_due(q, t);
            let r = queue_resource(q);
            let aftermath = self.aftermath(q);
            if let Aftermath::Covered(alloc) = aftermath {
                // The project still wants at least its allocation, so every allocation
                // on the resource stays as it is: only its own active jobs move on.
                self.update_queue(q, alloc, t);
                if r != ResourceType::Cpu.index() {
                    self.recount_coprocessor_cpus();
                }
            } else {
                if !self.queues[q].dirty {
                    self.queues[q].dirty = true;
                    self.dirty.push(q as u32);
                }
                if aftermath == Aftermath::Reallocate {
                    self.refill(r, t);
                } else {
                    self.reallocate(r, t, false);
                }
            }
            // The CPUs the coprocessor jobs hold moved: the CPU is shared out again.
            if r != ResourceType::Cpu.index() && self.coprocessor_cpus_changed {
                self.refill(ResourceType::Cpu.index(), t);
            }
        }
        let horizon = self.horizon;
        for r in 0..NRESOURCES {
            let used = self.resources[r].used;
            self.set_resource_used(r, used, horizon);
        }
        // Closing a project's interval only adds to its shortfall where it used less than
        // its share (the interval's end is read no more): most queues have neither jobs
        // nor a share, and are left as they are.
        for q in 0..self.queues.len() {
            let queue = &self.queues[q];
            if queue.share - queue.used > EPSILON {
                let used = queue.used;
                self.set_project_used(q, used, horizon);
            }
        }
    }

    /// The queue whose pending event comes first: the earliest time, ties to the lowest
    /// queue index. The queues with jobs are few (at most projects × resources), so a
    /// scan costs less than keeping a heap of events, most of which would go stale.
    /// Takes that event from the event list and returns its time and the queue's index.
    pub(super) fn take_next_event(&mut self) -> Option<(f64, usize)> {
        let mut first = NO_EVENT;
        let mut first_slot = 0;
        for (slot, &key) in self.event_times.iter().enumerate() {
            if key < first {
                first = key;
                first_slot = slot;
            }
        }
        if first == NO_EVENT {
            return None;
        }
        // The slot was found in the event list, and each slot has its queue.
        let (Some(taken), Some(&q)) =
            (self.event_times.get_mut(first_slot), self.event_queues.get(first_slot))
        else {
            return None;
        };
        *taken = NO_EVENT;
        Some((event_time(first), q as usize))
    }

    /// Completes the job queue `q`'s event was for, and any that finish at the same time.
    /// The caller decides whether the allocations must be recomputed.
    pub(super) fn complete_due(&mut self, q: usize, t: f64) {
        let Simulation { queues, jobs, .. } = self;
        let queue = &mut queues[q];
        queue.advance(t);
        let mut first = true;
        while let Some(top) = queue.completions.peek() {
            if is_stale(jobs, &top) {
                queue.completions.pop();
                continue;
            }
            // The tolerance is worked out only when a second completion is in view: most
            // events complete a single job.
            if !first && top.key() > queue.progress + EPSILON * queue.progress.abs().max(1.0) {
                break;
            }
            queue.completions.pop();
            queue.finish(jobs, top.id() as usize, t);
            first = false;
        }
    }

    /// What a completion in queue `q` leaves to do on its resource: the tests
    /// `reallocate` would make with `q` its only dirty queue, made here once.
    pub(super) fn aftermath(&self, q: usize) -> Aftermath {
        let queue = &self.queues[q];
        let r = queue_resource(q);
        let capacity = self.capacity(r);
        let moved = (capacity - self.resources[r].capacity).abs();
        // The capacity is never NaN (see `capacity`).
        let wanted = at_most(queue.total_usage, capacity);
        let floor = queue.alloc - EPSILON;
        if (r == ResourceType::Cpu.index() && self.coprocessor_cpus_changed)
            || moved > EPSILON
            || wanted < floor
        {
            Aftermath::Reallocate
        } else if moved <= EPSILON && wanted >= floor {
            Aftermath::Covered(queue.alloc)
        } else {
            Aftermath::Undecided
        }
    }
}

/// What a completion leaves to do on its queue's resource.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Aftermath {
    /// The capacity has not moved and the project's jobs still want all its allocation
    /// (given, so that the caller need not look it up again): every allocation on the
    /// resource stays as it is.
    Covered(f64),
    /// The capacity moved or the project's jobs want less than its allocation: the
    /// resource is shared out again.
    Reallocate,
    /// Neither holds (a NaN compared): [`Simulation::reallocate`] decides, as for any
    /// dirty queue.
    Undecided,
}

/// Whether a completion entry no longer describes an active job's finish. The stamp
/// alone tells: an entry is pushed only on activation, with the generation that
/// activation set; deactivation moves the generation on; and a finishing job's own
/// entry is the one just popped, so no entry of a done job carries its generation.
pub(super) fn is_stale(jobs: &[SimJob], entry: &Completion) -> bool {
    jobs[entry.id() as usize].generation != entry.stamp()
}
