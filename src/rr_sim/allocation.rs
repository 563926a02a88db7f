//! Sharing a resource among the projects with jobs on it: weighted water-filling, and
//! the CPUs the running coprocessor jobs take off the CPU.

use super::simulation::{EPSILON, Simulation, at_most};
use crate::model::ResourceType;

impl Simulation {
    /// Recomputes the allocations of resource `r` at time `t` after completions in the
    /// dirty queues (or from scratch with `force`), and moves the affected queues on.
    pub(super) fn reallocate(&mut self, r: usize, t: f64, force: bool) {
        let cpu = r == ResourceType::Cpu.index();
        let capacity = self.capacity(r);
        let full = force
            || (cpu && self.coprocessor_cpus_changed)
            || (capacity - self.resources[r].capacity).abs() > EPSILON
            || self.dirty.iter().any(|&q| {
                let queue = &self.queues[q as usize];
                at_most(queue.total_usage, capacity) < queue.alloc - EPSILON
            });
        self.reallocate_as(r, t, force, full);
    }

    /// [`Simulation::reallocate`] when the caller has already made its test and found
    /// that the allocations must be recomputed.
    pub(super) fn refill(&mut self, r: usize, t: f64) {
        self.reallocate_as(r, t, false, true);
    }

    /// The instances of resource `r` its queues share: on the CPU, those the running
    /// coprocessor jobs leave. Never NaN (`max` gives 0 for a NaN difference).
    pub(super) fn capacity(&self, r: usize) -> f64 {
        let instances = self.resources[r].instances;
        if r == ResourceType::Cpu.index() {
            (instances - self.coprocessor_cpus).max(0.0)
        } else {
            instances
        }
    }

    /// [`Simulation::reallocate`] once it is known whether the allocations must be
    /// recomputed (`full`) or the dirty queues only moved on at theirs.
    fn reallocate_as(&mut self, r: usize, t: f64, force: bool, full: bool) {
        let cpu = r == ResourceType::Cpu.index();
        let capacity = self.capacity(r);
        if cpu {
            self.coprocessor_cpus_changed = false;
        }
        if full {
            self.resources[r].capacity = capacity;
            self.water_fill(r, capacity);
            // The allocations are summed in queue order as the queues are updated (an
            // update moves only its own queue's allocation): the sum `Iterator::sum` would
            // make afterwards, from the same -0.0 (+0.0 once a queue was dropped, whose
            // +0.0 term would have turned a -0.0 sum to +0.0 and changed no other).
            let mut used = if self.resources[r].dropped_empty { 0.0 } else { -0.0 };
            let mut i = 0;
            while i < self.resources[r].queues.len() {
                let q = self.resources[r].queues[i] as usize;
                let queue = &self.queues[q];
                if force || queue.dirty || (queue.pending_alloc - queue.alloc).abs() > EPSILON {
                    let alloc = queue.pending_alloc;
                    self.update_queue(q, alloc, t);
                    // A queue that has run out of jobs can never claim the resource again:
                    // once it holds exactly nothing it only adds +0.0 terms to the sums
                    // and is passed over by every later allocation, so it is dropped
                    // (keeping the others' order, which the sums follow).
                    let queue = &self.queues[q];
                    if queue.live == 0
                        && queue.alloc.to_bits() == 0
                        && queue.held_cpus.to_bits() == 0
                    {
                        let resource = &mut self.resources[r];
                        resource.queues.remove(i);
                        resource.dropped_empty = true;
                        used += 0.0;
                        continue;
                    }
                }
                used += self.queues[q].alloc;
                i += 1;
            }
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
        // A plain walk and a clear: `drain` would also move a tail that is never there.
        let Simulation { queues, dirty, .. } = self;
        for &q in dirty.iter() {
            queues[q as usize].dirty = false;
        }
        dirty.clear();
        if !cpu {
            self.recount_coprocessor_cpus();
        }
    }

    /// Sums the CPUs the coprocessor jobs hold after a coprocessor queue changed, and
    /// flags the CPU for reallocation when the sum moved. When no queue's held CPUs moved
    /// since the last count, the sum would be the same float and so lead to the same
    /// decision: it is skipped.
    pub(super) fn recount_coprocessor_cpus(&mut self) {
        if !std::mem::take(&mut self.held_cpus_moved) {
            return;
        }
        let mut total: f64 = ResourceType::GPUS
            .iter()
            .flat_map(|g| self.resources[g.index()].queues.iter())
            .map(|&q| self.queues[q as usize].held_cpus)
            .sum();
        // A dropped queue's +0.0 term would only have turned a -0.0 sum to +0.0.
        if ResourceType::GPUS.iter().any(|g| self.resources[g.index()].dropped_empty) {
            total += 0.0;
        }
        if (total - self.coprocessor_cpus).abs() > EPSILON {
            self.coprocessor_cpus = total;
            self.coprocessor_cpus_changed = true;
        }
    }

    /// Splits `capacity` among the queues of resource `r` by weight, capping each at its
    /// demand and handing what it leaves to the others (zero-weight queues share what the
    /// weighted ones leave). Results go to `pending_alloc`.
    pub(super) fn water_fill(&mut self, r: usize, capacity: f64) {
        let Simulation { queues, resources, unsettled, .. } = self;
        unsettled.clear();
        // The unsettled claims' weights are summed in their order while each pass lays
        // them out: the sum `Iterator::sum` would make of them, from the same -0.0.
        let mut total_weight = -0.0;
        for &q in &resources[r].queues {
            let queue = &mut queues[q as usize];
            // A demand is used only when above EPSILON, and the capacity is never NaN: a
            // plain comparison does for `min`, and no floor at zero is needed.
            let demand = if queue.live > 0 { at_most(queue.total_usage, capacity) } else { 0.0 };
            queue.pending_alloc = 0.0;
            if demand > EPSILON {
                unsettled.push(Claim { queue: q, weight: queue.weight, demand });
                total_weight += queue.weight;
            }
        }
        let mut remaining = capacity;
        while !unsettled.is_empty() && remaining > EPSILON {
            let equal = total_weight <= 0.0;
            let count = unsettled.len() as f64;
            let fair = |weight: f64| {
                if equal { remaining / count } else { remaining * weight / total_weight }
            };
            let before = unsettled.len();
            let mut given = 0.0;
            let mut kept = 0;
            let mut kept_weight = -0.0;
            for i in 0..before {
                let claim = unsettled[i];
                if claim.demand <= fair(claim.weight) + EPSILON {
                    queues[claim.queue as usize].pending_alloc = claim.demand;
                    given += claim.demand;
                } else {
                    unsettled[kept] = claim;
                    kept += 1;
                    kept_weight += claim.weight;
                }
            }
            if kept == before {
                for claim in unsettled.iter() {
                    queues[claim.queue as usize].pending_alloc = fair(claim.weight);
                }
                break;
            }
            unsettled.truncate(kept);
            total_weight = kept_weight;
            remaining = (remaining - given).max(0.0);
        }
    }
}

/// A queue still unsettled in [`Simulation::water_fill`], with what the rounds read of it
/// kept at hand.
#[derive(Debug, Clone, Copy)]
pub(super) struct Claim {
    queue: u32,
    weight: f64,
    demand: f64,
}
