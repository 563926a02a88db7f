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
//!   [`TargetAllocation`](crate::accounting::fair_share::TargetAllocation) of R, the cross-resource fair division of the host among the
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
//! "progress clock" and its active jobs' completions in order of the clock value at which
//! they finish (a sorted list: jobs mostly finish in the order they started, so a new
//! completion usually goes at the end); each queue keeps the time of its next
//! completion, and the next event is found by a scan over the queues that have jobs (at
//! most projects × resources, usually a dozen: cheaper than a global heap whose entries
//! mostly go stale). A reallocation changes a queue's rate, never its completions, so it
//! costs O(1) per queue. A completion whose project still wants at least its allocation
//! leaves every allocation unchanged, so it touches only its own queue: the simulation
//! is O(jobs · active jobs) at worst, O(jobs) when they finish in the order they
//! started, plus O(projects) per reallocation, with no per-event pass over all jobs.
//!
//! Allowances: a job using more instances than the resource has is treated as using all
//! of them (BOINC runs such a job alone), and coprocessor jobs hold their CPUs whatever
//! the CPU count, so the CPU usage right after the initial assignment is at most
//! `max(instances, CPUs held by coprocessor jobs)`.

mod allocation;
mod gather;
mod keys;
mod output;
mod queue;
#[cfg(test)]
mod random_states;
#[cfg(test)]
mod reference_model;
mod shortfall;
mod simulate;
mod simulation;
#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;

pub use output::{JobSim, ProjectSim, ResourceSim, RrSimOutput};
pub use simulate::{RrSimScratch, simulate, simulate_with_scratch};
