//! One project's jobs on one resource: the active head of the queue, the common progress
//! clock its active jobs run on, and their completions in order.

use super::keys::{Completion, NO_EVENT, event_key};
use super::simulation::{
    EPSILON, NO_JOB, NRESOURCES, SimJob, Simulation, is_stale, queue_index, queue_project,
    queue_resource,
};
use crate::model::ResourceType;

/// The pending completions of a queue's active jobs, earliest first: the entries from
/// `first` on, in ascending order (those before it were taken).
///
/// A job activated later usually finishes later (the queue runs its active jobs at one
/// rate, and jobs of a project tend to be alike), so a new entry usually belongs at the
/// end: kept sorted, taking the earliest is a step of `first` rather than a heap's sift to
/// the bottom, and adding one is usually a single comparison. The queues' active jobs
/// are few (they share the instances of one resource), which bounds the shifting when an
/// entry does belong further in. The entries are distinct (a job's stamp changes with
/// every activation), so they come out in the same order as from any priority queue.
#[derive(Debug, Default)]
pub(super) struct Completions {
    entries: Vec<Completion>,
    first: usize,
}

impl Completions {
    pub(super) fn clear(&mut self) {
        self.entries.clear();
        self.first = 0;
    }

    /// Room for `additional` more entries than are in the list.
    pub(super) fn reserve(&mut self, additional: usize) {
        self.entries.reserve(additional);
    }

    /// The earliest pending completion.
    pub(super) fn peek(&self) -> Option<Completion> {
        self.entries.get(self.first).copied()
    }

    /// Takes the earliest pending completion.
    pub(super) fn pop(&mut self) {
        self.first += 1;
    }

    /// Adds a completion in its place, moving it down past any later ones. Once all were
    /// taken, the list starts over, so that it holds no more than the entries added since
    /// it was last empty.
    pub(super) fn push(&mut self, entry: Completion) {
        if self.entries.len() <= self.first {
            self.clear();
        }
        self.entries.push(entry);
        let entries = self.entries.as_mut_slice();
        for i in (self.first + 1..entries.len()).rev() {
            if entries[i - 1] <= entry {
                break;
            }
            entries.swap(i - 1, i);
        }
    }
}

/// The jobs of one project on one resource, and that project's accounting on it. The
/// project and the resource are those of its index (see [`queue_index`]), so that the
/// queues the event loop walks stay small.
#[derive(Debug, Default)]
pub(super) struct Queue {
    /// The project's resource share, the water-filling weight.
    pub(super) weight: f64,
    /// The resource's availability, kept here since every clock update needs it.
    pub(super) availability: f64,
    /// First live job; the active jobs are `head ..= active_end` along the links.
    pub(super) head: u32,
    pub(super) active_end: u32,
    pub(super) active_usage: f64,
    pub(super) active_cpu: f64,
    /// Usage of all live jobs, and their number.
    pub(super) total_usage: f64,
    pub(super) live: u32,
    pub(super) pending_alloc: f64,
    /// Instances allocated to the project on this resource.
    pub(super) alloc: f64,
    /// Fraction of the time each active job runs (allocation / active usage).
    pub(super) rate: f64,
    /// CPUs its active jobs hold ([`coprocessor_cpus_of`]) as of its last update: the
    /// CPU accounting moves only when this does.
    pub(super) held_cpus: f64,
    /// Processing seconds each active job has received since the start (the clock the
    /// completion keys are on), as of `progress_time`.
    pub(super) progress: f64,
    pub(super) progress_time: f64,
    pub(super) completions: Completions,
    /// Its place in the event list (`Simulation::event_times`), if it has jobs.
    pub(super) event_slot: u32,
    pub(super) dirty: bool,
    /// seed 003 share(P, R), instances.
    pub(super) share: f64,
    /// Instances the project uses on the resource, since `used_since`.
    pub(super) used: f64,
    pub(super) used_since: f64,
    pub(super) shortfall: f64,
}

impl Queue {
    /// Makes the queue as it is before a simulation starts: no jobs, nothing allocated or
    /// used, with the project's `weight` and the resource's `availability`. Its completion
    /// list keeps its allocation.
    pub(super) fn reset(&mut self, weight: f64, availability: f64) {
        // Built whole from the default, so that no field of a new kind can be left with
        // the last simulation's value.
        let mut completions = std::mem::take(&mut self.completions);
        completions.clear();
        *self = Queue {
            weight,
            availability,
            head: NO_JOB,
            active_end: NO_JOB,
            event_slot: u32::MAX,
            completions,
            ..Queue::default()
        };
    }

    /// Moves the progress clock to time `t` at the current rate.
    pub(super) fn advance(&mut self, t: f64) {
        if self.rate > 0.0 && t != self.progress_time {
            self.progress += self.rate * self.availability * (t - self.progress_time);
        }
        self.progress_time = t;
    }

    /// Makes the active jobs the shortest head of the queue whose usage covers the
    /// allocation.
    fn refit(&mut self, jobs: &mut [SimJob]) {
        while self.active_usage < self.alloc - EPSILON {
            let next = if self.active_end == NO_JOB {
                self.head
            } else {
                jobs[self.active_end as usize].next
            };
            if next == NO_JOB {
                break;
            }
            let job = &mut jobs[next as usize];
            job.generation = job.generation.wrapping_add(1);
            job.work += self.progress;
            self.completions.push(Completion::new(job.work, next, job.generation));
            self.active_usage += job.usage;
            self.active_cpu += job.cpu;
            self.active_end = next;
        }
        while self.active_end != NO_JOB {
            let last = self.active_end as usize;
            let job = &mut jobs[last];
            if self.active_usage - job.usage < self.alloc - EPSILON {
                break;
            }
            job.work = (job.work - self.progress).max(0.0);
            job.generation = job.generation.wrapping_add(1);
            self.active_usage -= job.usage;
            self.active_cpu -= job.cpu;
            self.active_end = job.prev;
        }
        if self.active_end == NO_JOB {
            self.active_usage = 0.0;
            self.active_cpu = 0.0;
        }
    }

    /// Records job `j`'s completion at `t` and unlinks it from the queue (its own: the
    /// queue's completions are its own jobs').
    pub(super) fn finish(&mut self, jobs: &mut [SimJob], j: usize, t: f64) {
        let job = &mut jobs[j];
        job.done = true;
        job.work = t;
        let (prev, next, usage, cpu) = (job.prev, job.next, job.usage, job.cpu);
        self.active_usage -= usage;
        self.active_cpu -= cpu;
        self.total_usage -= usage;
        self.live -= 1;
        if self.active_end == j as u32 {
            self.active_end = prev;
        }
        if prev == NO_JOB {
            self.head = next;
        } else {
            jobs[prev as usize].next = next;
        }
        if next != NO_JOB {
            jobs[next as usize].prev = prev;
        }
        if self.active_end == NO_JOB {
            self.active_usage = 0.0;
            self.active_cpu = 0.0;
        }
        if self.live == 0 {
            self.total_usage = 0.0;
        }
    }

    /// Drops the queue's pending event (its slot of `event_times`) and schedules its next
    /// completion.
    fn schedule(&mut self, jobs: &[SimJob], event_times: &mut [u64], t: f64) {
        // Only a queue with jobs is ever scheduled, and each has a slot.
        let Some(next_event) = event_times.get_mut(self.event_slot as usize) else { return };
        *next_event = NO_EVENT;
        if self.rate <= 0.0 || self.active_end == NO_JOB {
            return;
        }
        while let Some(top) = self.completions.peek() {
            if is_stale(jobs, &top) {
                self.completions.pop();
                continue;
            }
            let wait = (top.key() - self.progress).max(0.0) / (self.rate * self.availability);
            *next_event = event_key(t + wait);
            break;
        }
    }
}

impl Simulation {
    /// Gives queue `q` a new allocation at time `t`: brings its clock up to date, adjusts
    /// its active jobs and rate, schedules its next completion and updates its usage.
    pub(super) fn update_queue(&mut self, q: usize, alloc: f64, t: f64) {
        let Simulation { queues, jobs, event_times, held_cpus_moved, .. } = self;
        let queue = &mut queues[q];
        queue.advance(t);
        let alloc_changed = queue.alloc != alloc;
        queue.alloc = alloc;
        queue.refit(jobs);
        queue.rate = if queue.active_usage > EPSILON {
            (queue.alloc / queue.active_usage).min(1.0)
        } else {
            0.0
        };
        queue.schedule(jobs, event_times, t);
        // The usage accounting only moves when the allocation or the CPUs held by
        // coprocessor jobs do, which is rare: most completions just start the next job.
        // Every queue's held CPUs are brought up to date here after each change (a
        // completion releases its job's CPUs just before the update), and the project's
        // CPU use is recorded whenever they move, so while the CPU allocation and this
        // queue's held CPUs keep their exact values, the sum would come out as what was
        // recorded (a NaN record is always renewed, as the comparison below would).
        let held = coprocessor_cpus_of(queue, queue_resource(q));
        let held_moved = held.to_bits() != queue.held_cpus.to_bits();
        queue.held_cpus = held;
        *held_cpus_moved |= held_moved;
        let project = queue_project(q);
        let cpu_queue = queue_index(project, ResourceType::Cpu.index());
        if alloc_changed && q != cpu_queue {
            self.set_project_used(q, alloc, t);
        }
        if alloc_changed || held_moved || self.queues[cpu_queue].used.is_nan() {
            let used = self.project_cpu_used(project);
            if used != self.queues[cpu_queue].used {
                self.set_project_used(cpu_queue, used, t);
            }
        }
    }

    /// CPUs the project uses: its CPU allocation and the CPUs its coprocessor jobs hold.
    pub(super) fn project_cpu_used(&self, project: usize) -> f64 {
        let base = queue_index(project, 0);
        let queues = &self.queues[base..base + NRESOURCES];
        queues[0].alloc + queues[1..].iter().map(|queue| queue.held_cpus).sum::<f64>()
    }
}

/// CPUs the active jobs of a coprocessor queue (on `resource`) hold, each for the
/// fraction of the time it runs.
pub(super) fn coprocessor_cpus_of(queue: &Queue, resource: usize) -> f64 {
    if resource == ResourceType::Cpu.index() { 0.0 } else { queue.rate * queue.active_cpu }
}
