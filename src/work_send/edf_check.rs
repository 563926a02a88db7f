//! Seed 000's work-send check ("Scheduler work-send policy"; BOINC's server never
//! implemented it): a job is sent only if, in an EDF simulation of the client's queue on
//! the resource plus the jobs already accepted, it meets its deadline and no other job
//! misses its deadline by more than it did before. The queue is what the request says:
//! its in-progress results on the resource, remaining time stretched by the fraction of
//! time the resource computes.
//!
//! The simulation is kept in deadline order with instance snapshots every
//! [`EDF_SNAPSHOT_INTERVAL`] positions, so checking a candidate costs the jobs from the
//! snapshot before its place on, not the whole queue. A server keeps one queue's
//! buffers from request to request ([`EdfQueue::refill`]).

use crate::Time;
use crate::model::ResourceType;
use crate::protocol::SchedulerRequest;

/// How much later than its deadline (or than its previous miss) a job may finish in the
/// EDF check before it counts as missing, seconds: rounding, not policy.
const DEADLINE_TOLERANCE: f64 = 1e-3;

/// The EDF check keeps the instances' state every this many queue positions, so a
/// candidate is simulated from the nearest snapshot instead of from the start. New jobs
/// mostly go near the end of the queue (their deadlines are the latest of their
/// project's), so most of the cost of a check is in the jobs from the snapshot to the
/// candidate: a snapshot costs one copy of the instances, a position simulated a
/// placement, and the snapshots lie in one buffer.
const EDF_SNAPSHOT_INTERVAL: usize = 8;

/// Room kept in a queue built from a request for the jobs the reply may add, so that
/// accepting them does not copy the whole queue to a larger buffer.
const ROOM_FOR_SENT_JOBS: usize = 16;

/// Up to this many instances, placing a job moves the free times one by one rather
/// than searching for them and moving them at once.
const FEW_INSTANCES: usize = 8;

/// A duration the EDF check can add up: corrupt values become "forever", so the job is
/// refused rather than slipping through a NaN comparison.
pub(crate) fn sane_duration(x: f64) -> f64 {
    // Below zero or NaN is "forever", and so is infinity, by the min: two float
    // operations per job, where `is_finite() && x >= 0.0` compiles to a dozen
    // instructions classifying the bits.
    let not_negative = if x >= 0.0 { x } else { f64::MAX };
    not_negative.min(f64::MAX)
}

/// When each instance becomes free (seconds after now), earliest first (in
/// `f64::total_cmp` order); always one time per instance. A sorted list rather than a
/// heap: a host has few instances, and a job using several of them takes the first ones
/// and puts its finish back with one move instead of a sift per instance.
type Instances = Vec<f64>;

/// One job in the EDF check, times relative to now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct EdfEntry {
    deadline: f64,
    /// Wall seconds it runs once started.
    duration: f64,
    /// Instances of the resource it occupies.
    usage: f64,
    /// How late it finishes in the current schedule (0: on time).
    miss: f64,
    /// When it finishes in the schedule it was last simulated in (see
    /// [`EdfQueue::pending_shift`] for how much later it may finish now).
    finish: f64,
}

impl EdfEntry {
    pub(crate) fn new(deadline: f64, duration: f64, usage: f64) -> Self {
        EdfEntry { deadline, duration, usage, miss: 0.0, finish: 0.0 }
    }

    /// Whether the job, on time in its last simulation, surely still is after the jobs
    /// before it finish up to `shift` seconds later (in exact arithmetic no job after
    /// them finishes more than `shift` later: list scheduling is monotone in the
    /// instances' free times and moves with them). The margin covers the rounding of the
    /// simulation many times over.
    fn surely_on_time_after(&self, shift: f64) -> bool {
        let margin = DEADLINE_TOLERANCE + 1e-9 * (self.deadline.abs() + self.finish.abs());
        self.miss == 0.0 && self.finish + shift <= self.deadline - margin
    }
}

/// Places a job on the instances by list scheduling; returns when it finishes. A job
/// using at most one instance takes the earliest free one for `duration × usage` (a
/// fractional job shares its instance, so it holds a whole one for that share of its
/// run); a job using more takes the `ceil(usage)` earliest free ones from when the last
/// of them is free, for `duration × usage / ceil(usage)`.
#[inline]
fn place(instances: &mut [f64], count: usize, job: &EdfEntry) -> f64 {
    let (taken, finish) = if job.usage <= 1.0 || count <= 1 {
        let free = instances.first().copied().unwrap_or(0.0);
        (1, free + job.duration * job.usage.max(0.0))
    } else {
        let k = (job.usage.ceil() as usize).min(count);
        let start = instances.iter().take(k).fold(0.0, |start: f64, &free| start.max(free));
        (k, start + job.duration * job.usage / k as f64)
    };
    // The first `taken` instances become free at `finish`: the later times that are not
    // after it move up, and the finish fills the gap they leave. A few times are moved
    // one by one as they are looked at (a call to move a handful costs more than moving
    // them); many are searched for and moved at once.
    let taken = taken.min(instances.len());
    let kept = if instances.len() <= FEW_INSTANCES {
        let mut kept = 0;
        while let Some(&free) = instances.get(taken + kept)
            && free.total_cmp(&finish).is_le()
        {
            instances[kept] = free;
            kept += 1;
        }
        kept
    } else {
        move_up_many(instances, taken, finish)
    };
    instances[kept..kept + taken].fill(finish);
    finish
}

/// [`place`]'s move on many instances: the times after the first `taken` that are not
/// after `finish` move to the front; returns how many moved. Kept out of line so that
/// `place` stays small enough to be inlined where the instances are few.
#[inline(never)]
fn move_up_many(instances: &mut [f64], taken: usize, finish: f64) -> usize {
    let kept = instances[taken..].partition_point(|free| free.total_cmp(&finish).is_le());
    instances.copy_within(taken..taken + kept, 0);
    kept
}

/// The EDF simulation of one resource's queue for the work-send check, kept in deadline
/// order with instance snapshots every [`EDF_SNAPSHOT_INTERVAL`] positions: a candidate
/// is simulated from the snapshot before its place, so checking it costs the jobs from
/// there on, not the whole queue. New jobs mostly have the latest deadlines, so the
/// instances after the whole queue are kept too: such a job is placed from them alone.
#[derive(Debug, Clone, Default)]
pub(crate) struct EdfQueue {
    count: usize,
    entries: Vec<EdfEntry>,
    /// The instances before `entries[i × EDF_SNAPSHOT_INTERVAL]`, at
    /// `snapshots[i × count..(i + 1) × count]`: one buffer rather than one per snapshot.
    snapshots: Vec<f64>,
    /// The instances after every entry.
    tail: Instances,
    /// The instances of the schedule being tried (kept to be reused, not to be read).
    trial: Instances,
    /// The snapshots of the schedule being tried after the one it starts from, laid out
    /// as `snapshots` (kept to be reused; read only when the candidate is accepted).
    trial_snapshots: Vec<f64>,
    /// The misses and finishes of the entries after the candidate in the schedule being
    /// tried (kept to be reused, not to be read).
    misses: Vec<(f64, f64)>,
    /// The entries from here on were not simulated again when a job was accepted before
    /// them (it could not make them late: [`EdfEntry::surely_on_time_after`]): their
    /// misses are right (0), their finishes may be up to `pending_shift` early, and the
    /// snapshots after this position and the tail are dropped until
    /// [`EdfQueue::settle`] simulates them. Most checks of a request then cost the jobs
    /// up to the candidate, not the whole queue after it.
    stale_from: usize,
    /// How much later than their recorded finishes the entries from `stale_from` on
    /// may finish: the sum of the accepted jobs' shifts since they were simulated.
    pending_shift: f64,
}

impl EdfQueue {
    /// A queue of `entries` (any order) on `count` instances, with its baseline schedule.
    #[cfg(test)]
    fn new(count: usize, entries: Vec<EdfEntry>) -> Self {
        let mut queue = EdfQueue { entries, ..EdfQueue::default() };
        queue.schedule(count);
        queue
    }

    /// Sorts the entries by deadline and simulates them from idle instances, `count` of
    /// them: finishes, misses, snapshots and the tail.
    fn schedule(&mut self, count: usize) {
        // Stable: jobs with equal deadlines keep their given order.
        self.entries.sort_by(|a, b| a.deadline.total_cmp(&b.deadline));
        let count = count.max(1);
        self.count = count;
        self.snapshots.clear();
        self.snapshots.resize(count, 0.0);
        self.tail.clear();
        self.tail.resize(count, 0.0);
        // Every entry is yet to be simulated, from idle instances.
        self.stale_from = 0;
        self.pending_shift = 0.0;
        self.settle();
    }

    /// Simulates the entries left stale by [`EdfQueue::try_insert`] from the last
    /// snapshot kept: their finishes, misses (the same), snapshots and the tail.
    fn settle(&mut self) {
        if self.stale_from >= self.entries.len() {
            return;
        }
        let count = self.count;
        let snapshot = self.snapshots.len() / count - 1;
        let start = snapshot * EDF_SNAPSHOT_INTERVAL;
        let instances = &mut self.tail;
        instances.clear();
        instances.extend_from_slice(&self.snapshots[snapshot * count..]);
        for (offset, entry) in self.entries[start..].iter_mut().enumerate() {
            if offset > 0 && (start + offset) % EDF_SNAPSHOT_INTERVAL == 0 {
                self.snapshots.extend_from_slice(instances);
            }
            let finish = place(instances, count, entry);
            entry.miss = (finish - entry.deadline).max(0.0);
            entry.finish = finish;
        }
        self.stale_from = self.entries.len();
        self.pending_shift = 0.0;
    }

    /// Makes this the queue of the request's in-progress results whose main resource is
    /// `resource`, their remaining time stretched by the fraction of time the resource
    /// computes, on `count` instances. The queue's buffers are kept: a server checks a
    /// queue at every request, and building one afresh allocated its lists each time.
    pub(crate) fn refill(
        &mut self,
        request: &SchedulerRequest,
        resource: ResourceType,
        count: u32,
        available: f64,
        now: Time,
    ) {
        let results = request.in_progress_results.as_deref().unwrap_or_default();
        self.entries.clear();
        // Room for every result and the jobs sent at once: grown as it fills, the list
        // would be copied a few times over.
        self.entries.reserve(results.len() + ROOM_FOR_SENT_JOBS);
        self.entries.extend(
            results
                .iter()
                .filter(|job| job.main_resource() == resource && job.time_remaining > 0.0)
                .map(|job| {
                    EdfEntry::new(
                        job.report_deadline - now,
                        sane_duration(job.time_remaining / available),
                        job.usage_of(resource),
                    )
                }),
        );
        self.schedule(count as usize);
    }

    /// Seed 000's test: adds `candidate` if it meets its deadline and no queued job then
    /// misses its deadline by more than before; returns whether it was added. The check
    /// simulates the queue with the candidate from the snapshot before it (from the tail
    /// when it goes last), which is the new schedule itself: when the candidate is
    /// accepted, its misses, snapshots and tail are kept rather than simulated again.
    pub(crate) fn try_insert(&mut self, candidate: EdfEntry) -> bool {
        let position = self.entries.partition_point(|e| e.deadline <= candidate.deadline);
        if position == self.entries.len() {
            return self.try_append(candidate);
        }
        let EdfQueue {
            count,
            entries,
            snapshots: kept,
            tail,
            trial,
            trial_snapshots,
            misses,
            stale_from,
            pending_shift,
        } = self;
        let count = *count;
        // A snapshot exists for each multiple of the interval below the queue's length,
        // up to where the entries are stale.
        let snapshot = (position / EDF_SNAPSHOT_INTERVAL).min(kept.len() / count - 1);
        let start = snapshot * EDF_SNAPSHOT_INTERVAL;
        let instances = trial;
        instances.clear();
        instances.extend_from_slice(&kept[snapshot * count..(snapshot + 1) * count]);
        trial_snapshots.clear();
        // Positions in the queue with the candidate: the entries before it keep theirs,
        // those after it move one place on.
        let mut snapshot_before = |index: usize, instances: &Instances| {
            if index > start && index % EDF_SNAPSHOT_INTERVAL == 0 {
                trial_snapshots.extend_from_slice(instances);
            }
        };
        for (index, entry) in entries[start..position].iter_mut().enumerate() {
            snapshot_before(start + index, instances);
            // Stale entries before the candidate are simulated exactly here.
            entry.finish = place(instances, count, entry);
        }
        snapshot_before(position, instances);
        let earliest = instances.first().copied().unwrap_or(0.0);
        let finish = place(instances, count, &candidate);
        if finish.is_nan() || finish > candidate.deadline + DEADLINE_TOLERANCE {
            return false;
        }
        let miss = (finish - candidate.deadline).max(0.0);
        // The candidate makes no instance free later than `finish - earliest` beyond
        // what it was, so no job after it finishes later than that beyond its own finish.
        let shift = *pending_shift + (finish - earliest);
        if entries[position..].iter().all(|entry| entry.surely_on_time_after(shift)) {
            // Every job after it stays on time, as simulating them would find: they are
            // left stale rather than simulated.
            entries.insert(position, EdfEntry { miss, finish, ..candidate });
            kept.truncate((snapshot + 1) * count);
            kept.extend_from_slice(trial_snapshots);
            *stale_from = position + 1;
            *pending_shift = shift;
            return true;
        }
        misses.clear();
        for (index, entry) in entries[position..].iter().enumerate() {
            snapshot_before(position + 1 + index, instances);
            let finish = place(instances, count, entry);
            let miss = (finish - entry.deadline).max(0.0);
            if miss > entry.miss + DEADLINE_TOLERANCE {
                return false;
            }
            misses.push((miss, finish));
        }
        for (entry, &(miss, finish)) in entries[position..].iter_mut().zip(misses.iter()) {
            entry.miss = miss;
            entry.finish = finish;
        }
        entries.insert(position, EdfEntry { miss, finish, ..candidate });
        kept.truncate((snapshot + 1) * count);
        kept.extend_from_slice(trial_snapshots);
        std::mem::swap(tail, instances);
        *stale_from = entries.len();
        *pending_shift = 0.0;
        true
    }

    /// [`EdfQueue::try_insert`] for a candidate due after every queued job: it is placed
    /// from the tail, and no queued job moves.
    fn try_append(&mut self, candidate: EdfEntry) -> bool {
        self.settle();
        let position = self.entries.len();
        self.trial.clone_from(&self.tail);
        let finish = place(&mut self.trial, self.count, &candidate);
        if finish.is_nan() || finish > candidate.deadline + DEADLINE_TOLERANCE {
            return false;
        }
        if position > 0 && position % EDF_SNAPSHOT_INTERVAL == 0 {
            self.snapshots.extend_from_slice(&self.tail);
        }
        let miss = (finish - candidate.deadline).max(0.0);
        self.entries.push(EdfEntry { miss, finish, ..candidate });
        self.stale_from = self.entries.len();
        std::mem::swap(&mut self.tail, &mut self.trial);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const HOUR: f64 = 3600.0;

    fn naive_accepts(count: usize, queue: &[EdfEntry], candidate: EdfEntry) -> bool {
        let schedule = |entries: &[EdfEntry]| -> Vec<f64> {
            let mut sorted: Vec<(usize, EdfEntry)> = entries.iter().copied().enumerate().collect();
            sorted.sort_by(|a, b| a.1.deadline.total_cmp(&b.1.deadline));
            let mut instances: Instances = vec![0.0; count];
            let mut miss = vec![0.0; entries.len()];
            for (i, e) in sorted {
                miss[i] = place(&mut instances, count, &e) - e.deadline;
            }
            miss
        };
        let before = schedule(queue);
        let mut with = queue.to_vec();
        with.push(candidate);
        let after = schedule(&with);
        after[queue.len()] <= DEADLINE_TOLERANCE
            && (0..queue.len())
                .all(|i| after[i].max(0.0) <= before[i].max(0.0) + DEADLINE_TOLERANCE)
    }

    #[test]
    fn incremental_edf_check_at_snapshot_boundaries() {
        let interval = EDF_SNAPSHOT_INTERVAL as u32;
        for len in [interval - 1, interval, interval + 1, 2 * interval, 2 * interval + 1, 129] {
            let queue: Vec<EdfEntry> =
                (0..len).map(|i| EdfEntry::new(f64::from(i) * HOUR, HOUR, 1.0)).collect();
            let mut incremental = EdfQueue::new(2, queue.clone());
            for deadline in [f64::from(len) * HOUR, 0.5 * HOUR, 1e9] {
                let candidate = EdfEntry::new(deadline, HOUR, 1.0);
                let expected = naive_accepts(2, &incremental.entries, candidate);
                assert_eq!(incremental.try_insert(candidate), expected, "len {len}");
            }
            assert!(incremental.entries.len() > queue.len());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// List scheduling on the sorted instance list gives the finishes a min-heap of
        /// free times gives (pop the earliest `ceil(usage)`, start at the latest of them,
        /// push the finish back once per instance).
        #[test]
        fn placing_matches_a_heap_of_free_times(
            count in 1usize..20,
            jobs in prop::collection::vec((1u32..30, 0u32..40), 1..60),
        ) {
            use std::cmp::Reverse;
            use std::collections::BinaryHeap;
            let mut heap: BinaryHeap<Reverse<u64>> = (0..count).map(|_| Reverse(0)).collect();
            let mut instances: Instances = vec![0.0; count];
            for (hours, quarters) in jobs {
                let job = EdfEntry::new(0.0, f64::from(hours) * HOUR, f64::from(quarters) / 4.0);
                let single = job.usage <= 1.0 || count <= 1;
                let k = if single { 1 } else { (job.usage.ceil() as usize).min(count) };
                let mut start: f64 = 0.0;
                for _ in 0..k {
                    let Reverse(free) = heap.pop().unwrap_or(Reverse(0));
                    start = start.max(f64::from_bits(free));
                }
                let expected = if single {
                    start + job.duration * job.usage
                } else {
                    start + job.duration * job.usage / k as f64
                };
                for _ in 0..k {
                    // Non-negative times order like their bits.
                    heap.push(Reverse(expected.to_bits()));
                }
                prop_assert_eq!(place(&mut instances, count, &job).to_bits(), expected.to_bits());
                prop_assert!(instances.is_sorted_by(|a, b| a.total_cmp(b).is_le()));
            }
        }

        #[test]
        fn incremental_edf_check_matches_full_simulation(
            count in 1usize..5,
            queue in prop::collection::vec((0u32..400, 1u32..30, 1u32..9), 0..200),
            candidates in prop::collection::vec((0u32..400, 1u32..30, 1u32..9), 1..20),
        ) {
            // Whole-hour values keep equal deadlines and exact ties common.
            let entry = |(d, l, u): (u32, u32, u32)| {
                EdfEntry::new(f64::from(d) * HOUR, f64::from(l) * HOUR, f64::from(u) / 2.0)
            };
            let mut accepted: Vec<EdfEntry> = queue.iter().copied().map(entry).collect();
            let mut incremental = EdfQueue::new(count, accepted.clone());
            for c in candidates {
                let candidate = entry(c);
                // Equal deadlines: the candidate goes after the queued ones in both.
                let expected = naive_accepts(count, &accepted, candidate);
                prop_assert_eq!(incremental.try_insert(candidate), expected);
                if expected {
                    accepted.push(candidate);
                    // What the check kept is the schedule simulated afresh, once the
                    // entries it left stale are simulated.
                    let mut settled = incremental.clone();
                    settled.settle();
                    let fresh = EdfQueue::new(count, incremental.entries.clone());
                    prop_assert_eq!(&fresh.entries, &settled.entries);
                    prop_assert_eq!(&fresh.snapshots, &settled.snapshots);
                    prop_assert_eq!(&fresh.tail, &settled.tail);
                }
            }
        }
    }
}
