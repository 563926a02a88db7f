//! Building the run list: the ordered jobs that should hold the processors now.
//!
//! `--policy seed` follows seed 000 "CPU scheduling policy", done per processing resource
//! with the GPU types first so GPUs are kept busy (6.4 note 7), then the CPU:
//!
//! - step 1: every project's anticipated debt starts at its short-term debt;
//! - steps 2–4, EDF: while the resource has room and some project has
//!   `deadlines_missed(P, R) > 0` in the rr_sim, its earliest-deadline runnable job is
//!   scheduled (ties: lowest job index) and the project's anticipated debt drops by the
//!   expected payoff; the project's count of deadline misses drops by one when that job
//!   is one the rr_sim flagged (seed 000 decrements it for any job, which lets a job
//!   about to finish anyway take the place of the endangered one behind it);
//! - before EDF, a running job whose slack is under one scheduling period keeps its
//!   place (reason `edf`): the rr_sim's "on time" assumes it keeps its share, and the
//!   debt order could otherwise take its processor just before its deadline;
//! - step 6, hysteresis: a job running for less than the scheduling period keeps its
//!   place (reason `slice`), so projects rotate once per period rather than at every
//!   scheduling run (seed 000 scenario 1). Its project is charged the payoff too, so the
//!   final anticipated debts say what each project is expected to get;
//! - steps 7–9: then the project with the greatest anticipated debt gets one of its
//!   runnable jobs (a running one if it has one, else the one received first), and
//!   pays the payoff;
//! - after the CPU's pass, an addition to the seed: if whole CPUs are left idle because
//!   a multithread job could not fit beside the single-thread jobs ranked above it, it
//!   takes the places of the lowest-ranked jobs of that pass when that leaves fewer
//!   CPUs idle and each job it displaces can lose a time slice and still finish well
//!   before its deadline (rr_sim's projection, with a margin of twice the longer of its
//!   remaining run and a period, plus the multithread job's run for a job inside its
//!   time slice, stretched by the host's availability).
//!
//! The expected payoff generalises seed 000's "scheduling period divided by NCPUS" (the
//! payoff of a one-CPU job) to any job: `period × Σ_R usage(R) × relative_speed(R) /
//! ncpus`, i.e. the job's CPU-equivalent instances, in the units short-term debt is kept
//! in (see `accounting::short_term_debt`).
//!
//! `--policy legacy` is seed 001: no EDF and no slice, projects in anticipated-debt
//! order, and within a project a running job before a preempted one before a new one
//! (the earliest deadline first among each kind).
//!
//! `--policy rec` is BOINC 8: the same EDF pass and time slice as `seed`, then projects
//! by REC priority (`accounting::rec`). Each scheduled job adds what it is expected to
//! earn over a scheduling period (its peak flops × period) to its project's REC, and the
//! priority is recomputed from that, so a project's priority falls by its share of the
//! expected usage and the others get their turn.
//!
//! Jobs of non-CPU-intensive projects and apps always run and take no processors; they
//! lead the list.

use super::eligibility::job_usage;
use super::instance_pool::InstancePool;
use crate::accounting::rec::priority_from;
use crate::model::{
    AppConfig, ClientState, JobId, JobState, ProjectFacts, ProjectId, ResourceMap, ResourceType,
    ResourceUsage, RunMode, project_running,
};
use crate::rr_sim::RrSimOutput;
use crate::{Policy, Time};
use serde::Serialize;
use std::cmp::Ordering;

/// Why a job is in the run list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunReason {
    /// Earliest deadline first: its project would miss deadlines (seed 000 steps 2–4).
    Edf,
    /// It is running and has not used up its scheduling period (seed 000 step 6).
    Slice,
    /// Its project had the greatest anticipated debt (seed 000 steps 7–9, seed 001).
    Debt,
    /// Its project had the highest REC priority (`--policy rec`).
    Priority,
    /// Non-CPU-intensive: it always runs and takes no processors.
    #[serde(rename = "non_cpu_intensive")]
    NonCpuIntensive,
}

/// One scheduled job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunListEntry {
    /// The job.
    pub job: JobId,
    /// The resource it is scheduled on (its main resource).
    pub resource: ResourceType,
    /// Why it was chosen.
    pub reason: RunReason,
    /// The GPU instances it was fitted onto (empty for CPU jobs).
    pub gpu_instances: Vec<u32>,
}

/// What became of the best-ranked multithread CPU job that did not fit beside the jobs
/// ranked above it (what `explain` tells the user about it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MultithreadNote {
    /// The job.
    pub job: JobId,
    /// What became of it.
    pub outcome: MultithreadOutcome,
}

/// See [`MultithreadNote`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MultithreadOutcome {
    /// It takes the places of jobs that can wait (of jobs inside their time slice too,
    /// when its project's turn had come).
    TakesPlaces {
        /// Jobs it displaced.
        displaced: usize,
        /// Some of them were inside their time slice.
        inside_time_slices: bool,
    },
    /// It waits: the jobs holding the CPUs it needs, or other jobs that would wait for
    /// it, could not wait and still make their deadlines.
    WaitsForDeadlines,
    /// It waits: its project's turn has not come, and taking places would leave no
    /// fewer CPUs idle.
    WaitsItsTurn,
}

/// The jobs that should run, in the order they were chosen.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct RunList {
    /// Scheduled jobs; enforcement starts them in this order.
    pub entries: Vec<RunListEntry>,
    /// Each project's anticipated debt once the list was built, indexed by project id.
    pub anticipated_debt: Vec<f64>,
    /// `--policy rec` only: each project's REC priority once the list was built
    /// (empty for the other policies).
    pub rec_priority: Vec<f64>,
    /// A multithread job that did not fit, and what became of it.
    pub multithread: Option<MultithreadNote>,
}

/// Builds the run list for the state at `now`. `facts` must be
/// [`ProjectFacts::gather`] of this state; `rr` the rr_sim of this state.
pub fn make_run_list(
    state: &ClientState,
    rr: &RrSimOutput,
    facts: &[ProjectFacts],
    policy: Policy,
    now: Time,
) -> RunList {
    make_run_list_with_scratch(state, rr, facts, policy, now, &mut RunListScratch::default())
}

/// The candidate lists' buffers, for [`make_run_list_with_scratch`]: with the capacity
/// the last decision needed (and its lists, emptied when the next one gathers). A
/// decision lists every runnable job per resource and project, so a caller that decides
/// again and again (the control loop) would otherwise allocate and free a list per
/// project and resource each time.
#[derive(Debug, Default)]
pub struct RunListScratch {
    /// Filled in place at each decision: moving the lists out and back in copied them
    /// whole, twice a decision.
    candidates: Candidates,
    /// [`must_start_now`]'s working space.
    free: Vec<f64>,
    /// Per job: already on the list ([`Scheduler`]'s).
    chosen: Vec<bool>,
    /// Per app: its jobs on the list ([`Scheduler`]'s).
    app_running: Vec<u32>,
    /// The projects a pass still takes jobs from, and their deadline misses.
    active: Vec<usize>,
    misses: Vec<u32>,
    /// The lists of a run list no longer needed, which the next one reuses.
    spare_entries: Vec<RunListEntry>,
    spare_debt: Vec<f64>,
}

impl RunListScratch {
    /// Keeps the buffers of a run list the caller is done with for the next one.
    pub fn recycle_list(&mut self, list: RunList) {
        self.spare_entries = list.entries;
        self.spare_debt = list.anticipated_debt;
    }
}

/// A clone starts with empty buffers: what they hold between decisions means nothing.
impl Clone for RunListScratch {
    fn clone(&self) -> Self {
        RunListScratch::default()
    }
}

/// [`make_run_list`] with the candidate lists in `scratch`'s buffers.
pub fn make_run_list_with_scratch(
    state: &ClientState,
    rr: &RrSimOutput,
    facts: &[ProjectFacts],
    policy: Policy,
    now: Time,
    scratch: &mut RunListScratch,
) -> RunList {
    let mut scheduler = Scheduler::new(state, policy, scratch);
    let candidates = &mut scratch.candidates;
    candidates.gather(state, rr, facts, policy, now, &mut scheduler);
    // GPUs first, then the CPU: one array rather than a chain of two, which would
    // test at each step which half it is in.
    let [gpu0, gpu1, gpu2] = ResourceType::GPUS;
    for resource in [gpu0, gpu1, gpu2, ResourceType::Cpu] {
        if !scheduler.pool.has_room(resource) {
            continue;
        }
        if policy != Policy::Legacy {
            let instances = state.instances(resource) as usize;
            let period = state.prefs.scheduling_period();
            let release = &mut candidates.release[resource];
            let critical = &mut candidates.critical[resource];
            let start_now =
                must_start_now(critical, instances, now, period, release, &mut scratch.free);
            for c in &critical[..start_now] {
                if !scheduler.pool.has_room(resource) {
                    break;
                }
                scheduler.try_schedule(c.job, RunReason::Edf);
            }
            // Most decisions project no deadline misses: no EDF pass.
            if candidates.edf_jobs[resource] {
                scheduler.earliest_deadline_first(
                    resource,
                    &mut candidates.edf[resource],
                    rr,
                    &mut scratch.active,
                    &mut scratch.misses,
                );
            }
            for &id in &candidates.slice[resource] {
                if !scheduler.pool.has_room(resource) {
                    break;
                }
                scheduler.try_schedule(id, RunReason::Slice);
            }
        }
        let reason = if policy == Policy::Rec { RunReason::Priority } else { RunReason::Debt };
        scheduler.by_project_order(
            resource,
            &mut candidates.by_project[resource],
            reason,
            rr,
            &mut scratch.active,
        );
    }
    scheduler.finish(scratch)
}

/// A candidate job with the key a pass orders it by: rank, then a time, then the job
/// index (smallest first). Keys are computed once so ordering touches no other memory.
#[derive(Debug, Clone, Copy)]
struct Ranked {
    rank: u8,
    time: Time,
    job: JobId,
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank
            .cmp(&other.rank)
            .then(self.time.total_cmp(&other.time))
            .then(self.job.cmp(&other.job))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked {}

/// A runnable job with less than a scheduling period of slack.
#[derive(Debug, Clone, Copy)]
struct Critical {
    deadline: Time,
    /// Wall seconds it still needs.
    wall: f64,
    /// Running now: among equal deadlines it goes first, so a decision never swaps
    /// one running job for another with the same deadline.
    running: bool,
    job: JobId,
}

/// Spare time a queue of short-deadline jobs must keep if it is to wait for the next
/// release of an instance rather than start now: waiting to the last second would
/// leave nothing for an estimate that is a little short or a report that takes a poll.
const WAIT_MARGIN: f64 = 60.0;

/// Of the jobs that can't wait a scheduling period, those that must start now: the
/// first of `critical` once it is sorted (returns how many).
///
/// `release` holds, for the instances held by running jobs inside their time slice,
/// the seconds until each is released anyway; every other instance counts as released
/// a scheduling period from now (it is about to be handed out for one). If the jobs,
/// run in deadline order on each instance as it is released, all meet their deadlines
/// with [`WAIT_MARGIN`] to spare, none must start now. Otherwise the fewest instances
/// taken now that make every deadline (all of them if none does) are taken, and the
/// jobs that get those instances start now. One instance is enough for a project of
/// short jobs with short deadlines (seed 000's scenario 1), so it takes one CPU and
/// leaves the others their time slices.
///
/// `release` is used up (it becomes the instances' release times) and `free` is working
/// space: both are buffers kept from one decision to the next.
fn must_start_now(
    critical: &mut [Critical],
    instances: usize,
    now: Time,
    period: f64,
    release: &mut Vec<f64>,
    free: &mut Vec<f64>,
) -> usize {
    if critical.is_empty() || instances == 0 {
        return 0;
    }
    critical.sort_unstable_by(|a, b| {
        a.deadline.total_cmp(&b.deadline).then(b.running.cmp(&a.running)).then(a.job.cmp(&b.job))
    });
    // When each instance is free for these jobs, earliest first.
    let released = release;
    for at in released.iter_mut() {
        *at = at.clamp(0.0, period);
    }
    released.sort_unstable_by(f64::total_cmp);
    released.truncate(instances);
    released.resize(instances, period);
    // List scheduling in deadline order: each job takes the instance free first.
    // Returns how many jobs start at once, or None if a deadline is missed.
    let schedule = |free: &mut Vec<f64>, margin: f64| -> Option<usize> {
        let mut started_now = 0;
        for c in critical.iter() {
            // The instance free first (the first of equals), as a plain loop: `min_by` over
            // an enumeration carries the pair through every step.
            let mut at = *free.first()?;
            let mut slot = 0;
            for (index, &t) in free.iter().enumerate().skip(1) {
                if t.total_cmp(&at).is_lt() {
                    (slot, at) = (index, t);
                }
            }
            if at <= 0.0 {
                started_now += 1;
            }
            free[slot] = at + c.wall;
            // Rounding must not make an exact fit look like a miss.
            if now + free[slot] + margin > c.deadline + 1e-6 * c.deadline.abs().max(1.0) {
                return None;
            }
        }
        Some(started_now)
    };
    free.clone_from(released);
    if schedule(free, WAIT_MARGIN).is_some() {
        return 0;
    }
    (1..=instances)
        .find(|&k| {
            // Take the k instances released last: they are the ones waiting costs most.
            free.clone_from(released);
            for at in free.iter_mut().rev().take(k) {
                *at = 0.0;
            }
            schedule(free, 0.0).is_some()
        })
        .unwrap_or(instances)
        .min(critical.len())
}

/// One project's candidates for a pass, taken smallest key first. A list sorted once
/// rather than a heap: the jobs are gathered in index order, which is nearly always key
/// order already (jobs are received, and get their deadlines, in that order), so the
/// sort is mostly just the check that they are in order; and the lists are short (a
/// project's runnable jobs of one resource) and kept from one decision to the next.
/// Where the order is broken anyway, the stable sort merges the runs in order between
/// them rather than sorting from scratch (keys are distinct: the order is the same as
/// an unstable sort's). A queue is sorted when it is first taken from: the debt pass
/// fills the processors from a few projects' queues, and most are never taken from.
#[derive(Debug, Default)]
struct Queue {
    ranked: Vec<Ranked>,
    /// The gathered jobs ranked after the first rank (not running), until [`Queue::sort`]
    /// puts them behind the others: gathered apart, each list is nearly always in order
    /// already, where running jobs scattered among the others would make every queue
    /// with both need a sort.
    later: Vec<Ranked>,
    /// How many were taken from the front.
    taken: usize,
    /// Put in key order since the last job was gathered.
    sorted: bool,
}

impl Queue {
    fn push(&mut self, ranked: Ranked) {
        if ranked.rank == 0 { self.ranked.push(ranked) } else { self.later.push(ranked) }
    }

    /// Puts the gathered jobs in key order (once).
    fn sort(&mut self) {
        if self.sorted {
            return;
        }
        self.sorted = true;
        if !in_key_order(&self.ranked) {
            self.ranked.sort();
        }
        if !self.later.is_empty() {
            if !in_key_order(&self.later) {
                self.later.sort();
            }
            self.ranked.extend_from_slice(&self.later);
            self.later.clear();
        }
    }

    /// The next job; the queue must be sorted.
    fn peek(&self) -> Option<&Ranked> {
        debug_assert!(self.sorted, "a queue looked into before it was sorted");
        self.ranked.get(self.taken)
    }

    /// Takes the next job, sorting the queue first if it was not yet.
    fn pop(&mut self) -> Option<Ranked> {
        self.sort();
        let next = self.peek().copied()?;
        self.taken += 1;
        Some(next)
    }

    /// Whether every job was taken (sorted or not: `later` is empty once sorted).
    fn is_empty(&self) -> bool {
        self.taken >= self.ranked.len() && self.later.is_empty()
    }

    /// Empties the queue, keeping its buffer.
    fn clear(&mut self) {
        self.ranked.clear();
        self.later.clear();
        self.taken = 0;
        self.sorted = false;
    }
}

/// Whether `list` is in key order: `is_sorted`, with the common cases (same rank, and
/// an earlier time or the same one) answered without the full comparison. An earlier
/// time by `<` is an earlier time by `total_cmp` too (neither is NaN, and they are not
/// two zeros); the same bits are the same time by either. Jobs received together share
/// their time, and their tie goes to the lower job index without comparing: a queue's
/// jobs are gathered in index order.
fn in_key_order(list: &[Ranked]) -> bool {
    debug_assert!(list.is_sorted_by_key(|r| r.job), "a queue gathered out of index order");
    list.windows(2).all(|pair| {
        let [a, b] = pair else { return true };
        let earlier = a.time < b.time || a.time.to_bits() == b.time.to_bits();
        (a.rank == b.rank && earlier) || a <= b
    })
}

/// The candidate jobs of each pass, per resource, gathered in one pass over the jobs.
#[derive(Debug, Default)]
struct Candidates {
    /// Per project with deadline misses on the resource (indexed by project id): its
    /// jobs, earliest deadline first, ties to the lowest job index (seed 000 step 2).
    edf: ResourceMap<Vec<Queue>>,
    /// Whether some job is in the resource's `edf` queues.
    edf_jobs: ResourceMap<bool>,
    /// Running jobs still inside their scheduling period, by job index.
    slice: ResourceMap<Vec<JobId>>,
    /// Running jobs that could not wait one scheduling period and still make their
    /// deadline, earliest deadline first once sorted.
    critical: ResourceMap<Vec<Critical>>,
    /// Per resource, for each instance held by a job inside its time slice, seconds
    /// until it is released anyway.
    release: ResourceMap<Vec<f64>>,
    /// Per project (indexed by project id), in the order the project would pick them:
    /// running first, then the earliest received (seed 000 step 7), or for `legacy`
    /// running, preempted, new, each earliest deadline first (seed 001).
    by_project: ResourceMap<Vec<Queue>>,
    /// Per app version, what the gather needs of it and its project.
    versions: Vec<VersionFacts>,
    /// Per project: `None` if its jobs may not run at all, else whether the project is
    /// non-CPU-intensive.
    projects: Vec<Option<bool>>,
}

/// An app version's facts for the gather, looked up once per decision rather than per job.
#[derive(Debug, Clone, Copy)]
struct VersionFacts {
    resource: ResourceType,
    /// Whether its main resource is usable.
    usable: bool,
    /// Whether its app is non-CPU-intensive.
    non_cpu_intensive_app: bool,
    project: ProjectId,
    /// For the jobs of `project` (nearly all that use the version): `None` if they may
    /// not run at all (resource unusable, project not running jobs), else whether they
    /// are non-CPU-intensive (app or project). One table look up per job, not two.
    own_project: Option<bool>,
}

impl Candidates {
    /// Gathers the candidates into the lists (the last decision's are emptied first).
    fn gather(
        &mut self,
        state: &ClientState,
        rr: &RrSimOutput,
        facts: &[ProjectFacts],
        policy: Policy,
        now: Time,
        scheduler: &mut Scheduler,
    ) {
        let nprojects = state.projects.len();
        // Candidates are collected first and sorted once, after. The lists keep their
        // buffers from one decision to the next, which hold a project's runnable jobs
        // after the first few decisions: reserving room at each one would cost more than
        // the few times a list grows.
        // `filled`: the resources whose lists may hold jobs (the others are empty already).
        let emptied = |lists: &mut ResourceMap<Vec<Queue>>, filled: ResourceMap<bool>| {
            for (r, per_project) in ResourceType::ALL.into_iter().zip(lists.0.iter_mut()) {
                // A GPU type the host lacks has no jobs that may run: no lists to sort
                // and empty again at each decision.
                if r.is_gpu() && state.instances(r) == 0 {
                    per_project.clear();
                    continue;
                }
                per_project.resize_with(nprojects, Queue::default);
                if filled[r] {
                    for list in per_project.iter_mut() {
                        list.clear();
                    }
                }
            }
        };
        let Candidates { edf, edf_jobs, slice, critical, release, by_project, versions, projects } =
            self;
        emptied(edf, *edf_jobs);
        *edf_jobs = ResourceMap::default();
        emptied(by_project, ResourceMap([true; ResourceType::ALL.len()]));
        for list in slice.0.iter_mut() {
            list.clear();
        }
        for list in critical.0.iter_mut() {
            list.clear();
        }
        for list in release.0.iter_mut() {
            list.clear();
        }
        let period = state.prefs.scheduling_period();
        // The test of `job_may_run`, with what it depends on looked up once per app
        // version and project rather than once per job (there are thousands of jobs and
        // few of the others).
        let computing = state.run_mode != RunMode::Never;
        let available = ResourceMap::from_fn(|r| state.time_stats.available_frac(r));
        let gpus_usable = state.gpu_mode != RunMode::Never;
        // Whether a project's jobs may run at all (its suspension is `job_runnable`'s).
        projects.clear();
        projects.extend(state.projects.iter().enumerate().map(|(p, project)| {
            let may_run =
                computing && !project.suspended && facts.get(p).is_none_or(ProjectFacts::runnable);
            may_run.then_some(project.non_cpu_intensive)
        }));
        // A job's placement from its version's facts and its project's.
        let placement = |v: &VersionFacts, project: Option<bool>| {
            project.filter(|_| v.usable).map(|p| p || v.non_cpu_intensive_app)
        };
        versions.clear();
        versions.extend(state.app_versions.iter().map(|v| {
            let resource = v.usage.main_resource();
            let usable = !resource.is_gpu() || (gpus_usable && state.instances(resource) > 0);
            let non_cpu_intensive_app =
                state.apps.get(v.app.index()).is_some_and(|a| a.non_cpu_intensive);
            let mut facts = VersionFacts {
                resource,
                usable,
                non_cpu_intensive_app,
                project: v.project,
                own_project: None,
            };
            facts.own_project =
                placement(&facts, projects.get(v.project.index()).copied().flatten());
            facts
        }));
        // Deadline misses are seldom projected: one look down the rr_sim's projects
        // spares nearly every decision a look up per job.
        // (Counts are unsigned: a project misses none when its counts are all zero, one
        // comparison of the whole map.)
        let some_misses =
            rr.projects.iter().any(|p| p.deadlines_missed.0 != [0; ResourceType::ALL.len()]);
        for (index, job) in state.jobs.iter().enumerate() {
            let id = JobId::from_index(index);
            let project = job.project.index();
            let Some(version) = job.app_version.and_then(|v| versions.get(v.index())) else {
                continue;
            };
            let resource = version.resource;
            let own = if version.project == job.project {
                version.own_project
            } else {
                placement(version, projects.get(project).copied().flatten())
            };
            // `job_runnable`, less what the tables above already tested (the app version,
            // the resource, the project's suspension).
            let Some(non_cpu_intensive) = own else {
                continue;
            };
            if job.suspended || job.state != JobState::FilesDownloaded {
                continue;
            }
            if non_cpu_intensive {
                scheduler.schedule_non_cpu_intensive(id);
                continue;
            }
            let running = job.is_running();
            if policy != Policy::Legacy {
                let misses =
                    || rr.projects.get(project).map_or(0, |p| p.deadlines_missed[resource]);
                if some_misses && misses() > 0 {
                    let ranked = Ranked { rank: 0, time: job.report_deadline, job: id };
                    edf[resource][project].push(ranked);
                    edf_jobs[resource] = true;
                }
                let remaining = rr.jobs.get(index).map_or(0.0, |j| j.remaining_duration);
                let wall = remaining / available[resource];
                if let Some(task) =
                    job.task.as_ref().filter(|t| running && now - t.run_start_time < period)
                {
                    slice[resource].push(id);
                    let released = (task.run_start_time + period - now).min(wall);
                    // Whole instances it holds (a fraction of a GPU still blocks one),
                    // never more than the resource has.
                    let instances = state.instances(resource) as usize;
                    let held = job_usage(state, id).map_or(1, |u| {
                        u.main_usage().ceil().max(1.0).min(instances as f64) as usize
                    });
                    release[resource].extend(std::iter::repeat_n(released, held));
                } else if job.report_deadline - now - wall < period {
                    // The rr_sim's verdict assumes the job gets its share of the resource
                    // at once; a job with less than a scheduling period of slack may not
                    // be able to wait for the time slices of the jobs running now. (A job
                    // inside its own slice keeps its instance and counts as its release.)
                    critical[resource].push(Critical {
                        deadline: job.report_deadline,
                        wall,
                        running,
                        job: id,
                    });
                }
            }
            let ranked = match policy {
                Policy::Legacy => {
                    let rank = match &job.task {
                        _ if running => 0,
                        Some(_) => 1,
                        None => 2,
                    };
                    Ranked { rank, time: job.report_deadline, job: id }
                }
                Policy::Seed | Policy::Rec => {
                    Ranked { rank: u8::from(!running), time: job.received_time, job: id }
                }
            };
            by_project[resource][project].push(ranked);
        }
        // The debt pass's queues are sorted as they are first taken from; the EDF pass
        // compares the queues' first jobs before it takes any.
        for (queues, _) in edf.0.iter_mut().zip(edf_jobs.0).filter(|(_, jobs)| *jobs) {
            for queue in queues {
                queue.sort();
            }
        }
    }
}

/// REC priorities as they change while the list is built.
struct RecTracker {
    rec: Vec<f64>,
    /// The Σrec the priorities are relative to (see [`Scheduler::new`]).
    rec_scale: f64,
    share: Vec<f64>,
    share_sum: f64,
    priority: Vec<f64>,
}

impl RecTracker {
    fn charge(&mut self, project: usize, flops_seconds: f64) {
        self.rec[project] += flops_seconds;
        self.priority[project] =
            priority_from(self.rec[project], self.rec_scale, self.share[project], self.share_sum);
    }
}

/// The list under construction and what it has taken so far.
struct Scheduler<'a> {
    state: &'a ClientState,
    period: f64,
    ncpus: f64,
    /// The host's, per resource: looked up once rather than at every job scheduled.
    relative_speed: ResourceMap<f64>,
    instance_flops: ResourceMap<f64>,
    pool: InstancePool,
    chosen: Vec<bool>,
    app_running: Vec<u32>,
    anticipated_debt: Vec<f64>,
    rec: Option<RecTracker>,
    entries: Vec<RunListEntry>,
    multithread: Option<MultithreadNote>,
}

impl<'a> Scheduler<'a> {
    /// A scheduler with its per-job and per-app tables in `scratch`'s buffers
    /// ([`Scheduler::finish`] hands them back).
    fn new(state: &'a ClientState, policy: Policy, scratch: &mut RunListScratch) -> Self {
        let period = state.prefs.scheduling_period();
        let rec = (policy == Policy::Rec).then(|| {
            let counted = |p: &crate::model::Project| !p.suspended;
            let rec: Vec<f64> = state.projects.iter().map(|p| p.rec.max(0.0)).collect();
            let rec_sum: f64 =
                state.projects.iter().filter(|p| counted(p)).map(|p| p.rec.max(0.0)).sum();
            let share: Vec<f64> = state
                .projects
                .iter()
                .map(|p| if counted(p) { p.resource_share.max(0.0) } else { 0.0 })
                .collect();
            let share_sum = share.iter().sum();
            // With no REC yet, priorities are all 0 (as `rec_priority` says) and the
            // charges need a scale: what the whole host earns in one scheduling period.
            let rec_scale = if rec_sum > 0.0 {
                rec_sum
            } else {
                let host: f64 = ResourceType::ALL
                    .into_iter()
                    .map(|r| f64::from(state.instances(r)) * state.host.instance_flops(r))
                    .sum();
                if host > 0.0 { host * period } else { 1.0 }
            };
            let priority = (0..rec.len())
                .map(|p| priority_from(rec[p], rec_scale, share[p], share_sum))
                .collect();
            RecTracker { rec, rec_scale, share, share_sum, priority }
        });
        let mut chosen = std::mem::take(&mut scratch.chosen);
        chosen.clear();
        chosen.resize(state.jobs.len(), false);
        let mut app_running = std::mem::take(&mut scratch.app_running);
        app_running.clear();
        app_running.resize(state.apps.len(), 0);
        let mut anticipated_debt = std::mem::take(&mut scratch.spare_debt);
        anticipated_debt.clear();
        anticipated_debt.extend(state.projects.iter().map(|p| p.short_term_debt));
        let mut entries = std::mem::take(&mut scratch.spare_entries);
        entries.clear();
        Scheduler {
            state,
            period,
            ncpus: f64::from(state.ncpus()),
            relative_speed: ResourceMap::from_fn(|r| state.host.relative_speed(r)),
            instance_flops: ResourceMap::from_fn(|r| state.host.instance_flops(r)),
            pool: InstancePool::new(state),
            chosen,
            app_running,
            anticipated_debt,
            rec,
            entries,
            multithread: None,
        }
    }

    /// Seed 000's expected payoff of running a job for a scheduling period.
    fn payoff(&self, usage: &ResourceUsage) -> f64 {
        let weight: f64 = ResourceType::ALL
            .into_iter()
            .map(|r| usage.usage_of(r).max(0.0) * self.relative_speed[r])
            .sum();
        self.period * weight / self.ncpus
    }

    /// Under the REC policy, charges `project` with what a job of `usage` is expected to
    /// earn over a scheduling period (its peak flops times the period, in REC units),
    /// `sign` −1 to take a charge back.
    fn charge_rec(&mut self, project: usize, usage: &ResourceUsage, sign: f64) {
        let Scheduler { rec, instance_flops, period, .. } = self;
        if let Some(rec) = rec {
            let peak: f64 = ResourceType::ALL
                .into_iter()
                .map(|r| usage.usage_of(r).max(0.0) * instance_flops[r])
                .sum();
            rec.charge(project, sign * (peak * *period));
        }
    }

    fn schedule_non_cpu_intensive(&mut self, id: JobId) {
        let Some(usage) = job_usage(self.state, id) else { return };
        self.chosen[id.index()] = true;
        self.entries.push(RunListEntry {
            job: id,
            resource: usage.main_resource(),
            reason: RunReason::NonCpuIntensive,
            gpu_instances: Vec::new(),
        });
    }

    /// Schedules the job if it isn't yet, its app is under max_concurrent and it fits.
    ///
    /// Inlined: the time-slice and debt passes try a few dozen jobs per decision each,
    /// and the call cost about a tenth of the try.
    #[inline(always)]
    fn try_schedule(&mut self, id: JobId, reason: RunReason) -> bool {
        if self.chosen[id.index()] {
            return false;
        }
        let state = self.state;
        let job = state.job(id);
        let Some(usage) = job_usage(state, id) else { return false };
        let app = job.app_version.map(|v| state.app_version(v).app.index());
        let limit = app.and_then(|a| state.apps.get(a)).and_then(|a| a.max_concurrent);
        if let (Some(app), Some(limit)) = (app, limit)
            && self.app_running[app] >= limit
        {
            return false;
        }
        if let Some(limit) = AppConfig::project_limit(state, job.project)
            && project_running(state, job.project, &self.app_running) >= limit
        {
            return false;
        }
        let preferred = match &job.task {
            Some(task) if task.is_running() => task.gpu_instances.as_slice(),
            _ => &[],
        };
        let Some(gpu_instances) = self.pool.try_place(usage, preferred) else { return false };
        self.chosen[id.index()] = true;
        if let Some(app) = app
            && let Some(count) = self.app_running.get_mut(app)
        {
            *count += 1;
        }
        let project = job.project.index();
        self.anticipated_debt[project] -= self.payoff(usage);
        self.charge_rec(project, usage, 1.0);
        self.entries.push(RunListEntry {
            job: id,
            resource: usage.main_resource(),
            reason,
            gpu_instances,
        });
        true
    }

    /// Seed 000 steps 2–4 on one resource.
    /// `active` and `misses` are working space.
    fn earliest_deadline_first(
        &mut self,
        resource: ResourceType,
        queues: &mut [Queue],
        rr: &RrSimOutput,
        active: &mut Vec<usize>,
        misses: &mut Vec<u32>,
    ) {
        misses.clear();
        misses.extend(
            (0..queues.len())
                .map(|p| rr.projects.get(p).map_or(0, |s| s.deadlines_missed[resource])),
        );
        active.clear();
        active.extend((0..queues.len()).filter(|&p| misses[p] > 0 && !queues[p].is_empty()));
        while self.pool.has_room(resource) {
            // The project with the earliest-deadline job among those still missing.
            // Ties go to the least job index (seed 000 step 2), which the key ends with.
            let Some(best) = (0..active.len()).min_by_key(|&k| queues[active[k]].peek()) else {
                break;
            };
            let project = active[best];
            // Only a job the rr_sim saw missing its deadline counts against the project's
            // misses: an earlier-deadline job that would have made it anyway (say, one
            // about to finish) must not use up the place of the one that is endangered.
            if let Some(next) = queues[project].pop()
                && self.try_schedule(next.job, RunReason::Edf)
                && rr.jobs.get(next.job.index()).is_some_and(|j| j.deadline_missed)
            {
                misses[project] -= 1;
            }
            if misses[project] == 0 || queues[project].is_empty() {
                active.swap_remove(best);
            }
        }
    }

    /// The ordering key of a project in the debt or priority pass.
    fn project_key(&self, project: usize) -> f64 {
        match &self.rec {
            Some(rec) => rec.priority[project],
            None => self.anticipated_debt[project],
        }
    }

    /// Seed 000 steps 7–9 (or the REC-priority order) on one resource.
    /// `active` is working space.
    fn by_project_order(
        &mut self,
        resource: ResourceType,
        queues: &mut [Queue],
        reason: RunReason,
        rr: &RrSimOutput,
        active: &mut Vec<usize>,
    ) {
        active.clear();
        active.extend(queues.iter().enumerate().filter(|(_, q)| !q.is_empty()).map(|(p, _)| p));
        let first_of_pass = self.entries.len();
        // The first (best-ranked) multithread CPU job that found no room, and whether it
        // was the first job the pass tried: its project's turn had come.
        let mut blocked_multithread: Option<(JobId, bool)> = None;
        while self.pool.has_room(resource) && !active.is_empty() {
            let mut best = 0;
            for k in 1..active.len() {
                let (p, b) = (active[k], active[best]);
                let ordering = self.project_key(p).total_cmp(&self.project_key(b));
                if ordering == Ordering::Greater || (ordering == Ordering::Equal && p < b) {
                    best = k;
                }
            }
            let project = active[best];
            // A job that doesn't fit now never will in this pass (the pool only fills),
            // so it can be dropped from the queue.
            while let Some(next) = queues[project].pop() {
                if self.try_schedule(next.job, reason) {
                    break;
                }
                if blocked_multithread.is_none() && self.is_multithread_cpu_job(next.job) {
                    blocked_multithread = Some((next.job, self.entries.len() == first_of_pass));
                }
            }
            if queues[project].is_empty() {
                active.swap_remove(best);
            }
        }
        if resource == ResourceType::Cpu
            && let Some((job, its_turn)) = blocked_multithread
        {
            self.make_room_for_multithread(job, its_turn, first_of_pass, reason, rr);
        }
    }

    fn is_multithread_cpu_job(&self, id: JobId) -> bool {
        job_usage(self.state, id).is_some_and(|u| u.coprocessor.is_none() && u.avg_ncpus > 1.0)
    }

    /// The pass is over and a multithread job did not fit beside the jobs ranked above
    /// it (it may overcommit by one CPU only). It takes the places of jobs that can each
    /// lose a time slice and still finish well before their deadlines, lowest-ranked
    /// first, in two cases:
    ///
    /// - whole CPUs are idle and giving it the places of the lowest-ranked jobs this
    ///   pass chose leaves fewer idle: two single-thread jobs on a 4-CPU host would
    ///   otherwise leave half the host idle for a whole time slice while a 4-thread job
    ///   waits, a waste BOINC users know well; the job ranked first keeps its place, so
    ///   the order of the projects still decides who runs;
    /// - its project's turn has come (it was the first job the pass tried) and the CPUs
    ///   it needs are held by jobs inside their time slice: it also takes theirs.
    ///   Waiting for those slices (or jobs) to end frees the CPUs one by one, and each
    ///   one freed would idle until the last one is (a job that would start in it
    ///   would only hold the multithread job back again). Preempted at their next
    ///   checkpoint, they free the CPUs together, and run again at their project's turn.
    ///
    /// Jobs placed for a deadline (EDF, or too little slack to wait) are never displaced.
    fn make_room_for_multithread(
        &mut self,
        job: JobId,
        its_turn: bool,
        first_of_pass: usize,
        reason: RunReason,
        rr: &RrSimOutput,
    ) {
        let Some(usage) = job_usage(self.state, job).copied() else { return };
        let idle_before = (self.ncpus - self.pool.cpu_used()).floor();
        let waits_for = rr.jobs.get(job.index()).map_or(0.0, |j| j.remaining_duration);
        // Taking time-slice places holds every other project's CPU jobs back until the
        // multithread job is done: only if each of them can wait that long.
        let others_cannot_wait = its_turn && !self.others_can_wait(job, waits_for, rr);
        let its_turn = its_turn && !others_cannot_wait;
        let mut held_by_deadlines = others_cannot_wait;
        let note = |outcome| Some(MultithreadNote { job, outcome });
        if idle_before < 1.0 && !its_turn {
            self.multithread = note(if held_by_deadlines {
                MultithreadOutcome::WaitsForDeadlines
            } else {
                MultithreadOutcome::WaitsItsTurn
            });
            return;
        }
        // Whose places it may take, lowest-ranked (latest in the list) first: this pass's
        // jobs but the first, and with its project's turn also time-slice holders.
        let keep_first = usize::from(!its_turn);
        let mut displaced = Vec::new();
        let mut index = self.entries.len();
        while self.pool.find(&usage, &[]).is_none() && index > 0 {
            index -= 1;
            let entry = &self.entries[index];
            let displaceable = if index >= first_of_pass + keep_first {
                true
            } else {
                its_turn && entry.reason == RunReason::Slice
            };
            // A time-slice holder waits for the multithread job to finish, not a slice.
            let wait = if index < first_of_pass { waits_for } else { 0.0 };
            if !displaceable || !self.can_lose_a_slice(entry.job, rr, wait) {
                held_by_deadlines |= displaceable;
                if index >= first_of_pass {
                    continue;
                }
                break;
            }
            let entry = self.entries.remove(index);
            self.unschedule(&entry);
            displaced.push((index, entry));
        }
        let fits = self.pool.find(&usage, &[]).is_some();
        let better = fits && {
            let ncpus = usage.avg_ncpus.max(0.0).min(self.ncpus);
            its_turn || (self.ncpus - self.pool.cpu_used() - ncpus).max(0.0).floor() < idle_before
        };
        if better && self.try_schedule(job, reason) {
            let inside_time_slices = displaced.iter().any(|(_, e)| e.reason == RunReason::Slice);
            self.multithread = note(MultithreadOutcome::TakesPlaces {
                displaced: displaced.len(),
                inside_time_slices,
            });
            return;
        }
        self.multithread = note(if held_by_deadlines {
            MultithreadOutcome::WaitsForDeadlines
        } else {
            MultithreadOutcome::WaitsItsTurn
        });
        // No gain: put the list back as it was, each job in its place (the last one
        // displaced was the highest-ranked).
        while let Some((index, entry)) = displaced.pop() {
            if self.try_schedule(entry.job, entry.reason)
                && let Some(restored) = self.entries.pop()
            {
                self.entries.insert(index, restored);
            }
        }
    }

    /// Whether every CPU job of the other projects can wait `wait` processing seconds (a
    /// multithread job holding all the CPUs) on top of what the rr_sim projects for it,
    /// and still finish a scheduling period before its deadline, stretched by the time
    /// the host may not compute, and the late-report margin of a host often out of reach
    /// before that.
    fn others_can_wait(&self, job: JobId, wait: f64, rr: &RrSimOutput) -> bool {
        let state = self.state;
        let project = state.job(job).project;
        let available = state.time_stats.available_frac(ResourceType::Cpu).max(0.01);
        let delay = (wait + self.period) / available + state.time_stats.late_report_margin();
        state.job_ids().all(|id| {
            let other = state.job(id);
            let Some(sim) = rr.jobs.get(id.index()).filter(|j| j.simulated) else { return true };
            other.project == project
                || job_usage(state, id).is_none_or(|u| u.coprocessor.is_some())
                || sim.projected_completion + delay <= other.report_deadline
        })
    }

    /// Whether a job can wait a time slice, and `wait` processing seconds more, and still
    /// make its deadline with room to spare: the rr_sim finishes it twice its remaining
    /// run (or two scheduling periods, if longer) plus the wait before the deadline,
    /// stretched by the time the host may not compute. Twice one period is enough: the
    /// job loses one slice, and a second covers the rotation after the wait.
    fn can_lose_a_slice(&self, id: JobId, rr: &RrSimOutput, wait: f64) -> bool {
        let Some(sim) = rr.jobs.get(id.index()).filter(|j| j.simulated) else { return false };
        let available = self.state.time_stats.available_frac(ResourceType::Cpu).max(0.01);
        let margin = (2.0 * sim.remaining_duration.max(self.period) + wait) / available;
        sim.projected_completion + margin <= self.state.job(id).report_deadline
    }

    /// Takes a job this pass scheduled back off the list: what [`Scheduler::try_schedule`]
    /// charged is given back.
    fn unschedule(&mut self, entry: &RunListEntry) {
        let state = self.state;
        let Some(usage) = job_usage(state, entry.job) else { return };
        self.chosen[entry.job.index()] = false;
        self.pool.release(usage, &entry.gpu_instances);
        let job = state.job(entry.job);
        if let Some(app) = job.app_version.map(|v| state.app_version(v).app.index())
            && let Some(count) = self.app_running.get_mut(app)
        {
            *count = count.saturating_sub(1);
        }
        let project = job.project.index();
        self.anticipated_debt[project] += self.payoff(usage);
        self.charge_rec(project, usage, -1.0);
    }

    /// The list, with the tables' buffers handed back to `scratch`.
    fn finish(self, scratch: &mut RunListScratch) -> RunList {
        scratch.chosen = self.chosen;
        scratch.app_running = self.app_running;
        RunList {
            entries: self.entries,
            anticipated_debt: self.anticipated_debt,
            rec_priority: self.rec.map(|r| r.priority).unwrap_or_default(),
            multithread: self.multithread,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu_sched::InstancePool;
    use crate::cpu_sched::test_support::{
        StateBuilder, cpu, gpu, mark_deadline_missed, quiet_rr, random_scenario,
    };
    use crate::model::{RunMode, SchedulerState};
    use proptest::prelude::*;

    const NOW: Time = 100_000.0;

    fn run_list(state: &ClientState, rr: &RrSimOutput, policy: Policy) -> RunList {
        make_run_list(state, rr, &ProjectFacts::gather(state), policy, NOW)
    }

    fn scheduled(list: &RunList) -> Vec<(JobId, RunReason)> {
        list.entries.iter().map(|e| (e.job, e.reason)).collect()
    }

    #[test]
    fn short_deadline_jobs_take_as_few_instances_as_their_deadlines_need() {
        let c = |deadline: f64, wall: f64, job: u32| Critical {
            deadline,
            wall,
            running: false,
            job: JobId(job),
        };
        // Five 6-minute jobs due within the hour: one instance meets every deadline.
        let mut p1: Vec<Critical> =
            (0..5).map(|i| c(NOW + 3600.0 + f64::from(i) * 360.0, 360.0, i)).collect();
        let period = 3600.0;
        let must_start_now = |critical: &mut [Critical], release: &[f64]| {
            let n =
                must_start_now(critical, 2, NOW, period, &mut release.to_vec(), &mut Vec::new());
            critical[..n].iter().map(|c| c.job).collect::<Vec<_>>()
        };
        assert_eq!(must_start_now(&mut p1, &[]), vec![JobId(0)], "nothing frees");
        // An instance held by a time slice frees in 10 minutes: they can wait for it.
        assert!(must_start_now(&mut p1, &[600.0]).is_empty());
        // Two hour-long jobs due in 70 minutes: with nothing released sooner they need
        // both instances now; if a slice ends in 10 minutes, the second waits for it.
        let mut tight = vec![c(NOW + 4200.0, 3600.0, 7), c(NOW + 4200.0, 3600.0, 3)];
        assert_eq!(must_start_now(&mut tight, &[]), vec![JobId(3), JobId(7)]);
        assert_eq!(must_start_now(&mut tight, &[600.0]), vec![JobId(3)]);
        // A long job with little slack waits for one slice while the short ones wait for
        // the other: nobody is preempted.
        let mut mixed = vec![c(NOW + 1500.0, 360.0, 1), c(NOW + 4800.0, 3600.0, 2)];
        assert!(must_start_now(&mut mixed, &[600.0, 900.0]).is_empty());

        // More than the host can do: every instance, earliest deadlines first.
        let mut hopeless: Vec<Critical> = (0..4).map(|i| c(NOW + 100.0, 3600.0, i)).collect();
        assert_eq!(must_start_now(&mut hopeless, &[]), vec![JobId(0), JobId(1)]);
        assert!(must_start_now(&mut [], &[]).is_empty());
    }

    #[test]
    fn edf_keeps_going_until_the_flagged_job_is_placed() {
        // T's three jobs share one deadline; only the last is flagged. Scheduling the
        // first two must not use up T's miss: both CPUs go to T, none to the richer L.
        let mut b = StateBuilder::new(2);
        let t = b.project("T", 100.0);
        let l = b.project("L", 100.0);
        let vt = b.app_version(t, cpu(1.0));
        let vl = b.app_version(l, cpu(1.0));
        let first = b.job(t, vt, 0.0, NOW + 7000.0);
        let second = b.job(t, vt, 1.0, NOW + 7000.0);
        let flagged = b.job(t, vt, 2.0, NOW + 7000.0);
        b.job(l, vl, 0.0, NOW + 1e6);
        b.state.projects[l.index()].short_term_debt = 50_000.0;
        let state = b.build();
        let mut rr = quiet_rr(&state);
        mark_deadline_missed(&state, &mut rr, &[flagged]);
        let list = run_list(&state, &rr, Policy::Seed);
        assert_eq!(scheduled(&list), vec![(first, RunReason::Edf), (second, RunReason::Edf)]);
    }

    #[test]
    fn a_job_without_a_period_of_slack_starts_now() {
        let mut b = StateBuilder::new(1);
        let tight = b.project("tight", 100.0);
        let rich = b.project("rich", 100.0);
        let vt = b.app_version(tight, cpu(1.0));
        let vr = b.app_version(rich, cpu(1.0));
        // One hour of work left, due in 4000 s: it can't wait a 3600 s period.
        let running = b.job(tight, vt, 0.0, NOW + 4000.0);
        b.task(running, SchedulerState::Running, NOW - 7200.0, 0.0, 0.0, NOW - 60.0);
        b.job(rich, vr, 0.0, NOW + 1e6);
        b.state.projects[rich.index()].short_term_debt = 50_000.0;
        let state = b.build();
        let mut rr = quiet_rr(&state);
        rr.jobs[running.index()].remaining_duration = 3600.0;
        let list = run_list(&state, &rr, Policy::Seed);
        assert_eq!(scheduled(&list), vec![(running, RunReason::Edf)]);
        // With days of slack, debt decides as usual.
        let mut relaxed = state.clone();
        relaxed.jobs[running.index()].report_deadline = NOW + 1e6;
        let list = run_list(&relaxed, &rr, Policy::Seed);
        assert_eq!(state.job(list.entries[0].job).project, rich);
        assert_eq!(list.entries[0].reason, RunReason::Debt);
    }

    #[test]
    fn edf_picks_the_endangered_job_over_high_debt() {
        let mut b = StateBuilder::new(1);
        let rich = b.project("rich", 100.0);
        let late = b.project("late", 100.0);
        let vr = b.app_version(rich, cpu(1.0));
        let vl = b.app_version(late, cpu(1.0));
        b.job(rich, vr, 0.0, NOW + 1e5);
        let relaxed = b.job(late, vl, 0.0, NOW + 9e4);
        let urgent = b.job(late, vl, 10.0, NOW + 5e3);
        b.state.projects[rich.index()].short_term_debt = 50_000.0;
        let state = b.build();
        let mut rr = quiet_rr(&state);
        mark_deadline_missed(&state, &mut rr, &[relaxed]);
        let list = run_list(&state, &rr, Policy::Seed);
        // The project's earliest-deadline job, not necessarily the one rr_sim flagged.
        assert_eq!(scheduled(&list), vec![(urgent, RunReason::Edf)]);
        assert!((list.anticipated_debt[late.index()] + 3600.0).abs() < 1e-9);
        // Without the deadline miss, debt decides.
        let list = run_list(&state, &quiet_rr(&state), Policy::Seed);
        assert_eq!(list.entries[0].reason, RunReason::Debt);
        assert_eq!(state.job(list.entries[0].job).project, rich);
    }

    #[test]
    fn edf_serves_the_project_with_the_earliest_deadline_first() {
        // Both projects miss deadlines, and one CPU can take one job: seed 000 step 2
        // gives it to the project whose runnable job is due first, whichever project
        // comes first in the list and whatever their debts.
        for soon_first in [true, false] {
            let mut b = StateBuilder::new(1);
            let (soon, later) = if soon_first {
                let soon = b.project("soon", 100.0);
                (soon, b.project("later", 100.0))
            } else {
                let later = b.project("later", 100.0);
                (b.project("soon", 100.0), later)
            };
            let vs = b.app_version(soon, cpu(1.0));
            let vl = b.app_version(later, cpu(1.0));
            let due_soon = b.job(soon, vs, 0.0, NOW + 4e3);
            let due_later = b.job(later, vl, 0.0, NOW + 8e3);
            b.state.projects[later.index()].short_term_debt = 50_000.0;
            let state = b.build();
            let mut rr = quiet_rr(&state);
            mark_deadline_missed(&state, &mut rr, &[due_soon, due_later]);
            let list = run_list(&state, &rr, Policy::Seed);
            assert_eq!(scheduled(&list), vec![(due_soon, RunReason::Edf)], "{soon_first}");
        }
    }

    /// Seed 000 scenario 1: P1(0.1, 1, .5) P2(1, 24, .25) P3(1, 24, .25), two CPUs, a
    /// one-hour period.
    fn scenario_1(p2_running_for: f64) -> (ClientState, [JobId; 3]) {
        let mut b = StateBuilder::new(2);
        let p1 = b.project("P1", 50.0);
        let p2 = b.project("P2", 25.0);
        let p3 = b.project("P3", 25.0);
        let v1 = b.app_version(p1, cpu(1.0));
        let v2 = b.app_version(p2, cpu(1.0));
        let v3 = b.app_version(p3, cpu(1.0));
        let j1 = b.job(p1, v1, 0.0, NOW + 3600.0);
        let j2 = b.job(p2, v2, 0.0, NOW + 86_400.0);
        let j3 = b.job(p3, v3, 0.0, NOW + 86_400.0);
        b.task(j2, SchedulerState::Running, NOW - p2_running_for, p2_running_for, 0.0, 0.0);
        b.state.projects[p1.index()].short_term_debt = 3000.0;
        b.state.projects[p3.index()].short_term_debt = 2000.0;
        (b.build(), [j1, j2, j3])
    }

    #[test]
    fn step_6_keeps_a_job_inside_its_scheduling_period() {
        let (state, [j1, j2, _]) = scenario_1(20.0 * 60.0);
        let list = run_list(&state, &quiet_rr(&state), Policy::Seed);
        assert_eq!(scheduled(&list), vec![(j2, RunReason::Slice), (j1, RunReason::Debt)]);
    }

    #[test]
    fn after_its_period_the_job_competes_by_debt() {
        let (state, [j1, _, j3]) = scenario_1(70.0 * 60.0);
        let list = run_list(&state, &quiet_rr(&state), Policy::Seed);
        assert_eq!(scheduled(&list), vec![(j1, RunReason::Debt), (j3, RunReason::Debt)]);
    }

    #[test]
    fn debt_order_charges_the_payoff_and_prefers_running_then_earliest_received() {
        let mut b = StateBuilder::new(2);
        let a = b.project("a", 100.0);
        let c = b.project("c", 100.0);
        let va = b.app_version(a, cpu(1.0));
        let vc = b.app_version(c, cpu(1.0));
        let a_late = b.job(a, va, 50.0, NOW + 1e5);
        let a_early = b.job(a, va, 10.0, NOW + 2e5);
        let c_new = b.job(c, vc, 5.0, NOW + 1e5);
        let c_running = b.job(c, vc, 20.0, NOW + 1e5);
        b.task(c_running, SchedulerState::Running, NOW - 7200.0, 7200.0, 0.0, 0.0);
        b.state.projects[a.index()].short_term_debt = 1000.0;
        b.state.projects[c.index()].short_term_debt = 900.0;
        let state = b.build();
        let list = run_list(&state, &quiet_rr(&state), Policy::Seed);
        assert_eq!(
            scheduled(&list),
            vec![(a_early, RunReason::Debt), (c_running, RunReason::Debt)]
        );
        // Payoff of a one-CPU job: period / ncpus = 1800 s.
        assert!((list.anticipated_debt[a.index()] - (1000.0 - 1800.0)).abs() < 1e-9);
        assert!((list.anticipated_debt[c.index()] - (900.0 - 1800.0)).abs() < 1e-9);
        let _ = (a_late, c_new);
    }

    #[test]
    fn debt_order_rotates_when_the_payoff_drops_the_leader() {
        let mut b = StateBuilder::new(3);
        let a = b.project("a", 100.0);
        let c = b.project("c", 100.0);
        let va = b.app_version(a, cpu(1.0));
        let vc = b.app_version(c, cpu(1.0));
        let jobs_a: Vec<_> = (0..3).map(|i| b.job(a, va, f64::from(i), NOW + 1e5)).collect();
        let jobs_c: Vec<_> = (0..3).map(|i| b.job(c, vc, f64::from(i), NOW + 1e5)).collect();
        b.state.projects[a.index()].short_term_debt = 1000.0;
        let state = b.build();
        let list = run_list(&state, &quiet_rr(&state), Policy::Seed);
        // Payoff 1200: a 1000 → −200, then c (0 → −1200), then a again (−200 → −1400).
        let order: Vec<_> = list.entries.iter().map(|e| e.job).collect();
        assert_eq!(order, vec![jobs_a[0], jobs_c[0], jobs_a[1]]);
    }

    #[test]
    fn gpu_jobs_are_placed_first_and_half_gpu_jobs_pack_two_per_instance() {
        let mut b = StateBuilder::new(2).gpus(ResourceType::Nvidia, 1);
        let cpu_project = b.project("cpu", 100.0);
        let gpu_project = b.project("gpu", 100.0);
        let vc = b.app_version(cpu_project, cpu(1.0));
        let vg = b.app_version(gpu_project, gpu(ResourceType::Nvidia, 0.5, 0.5));
        let c1 = b.job(cpu_project, vc, 0.0, NOW + 1e5);
        let c2 = b.job(cpu_project, vc, 1.0, NOW + 1e5);
        let g: Vec<_> = (0..3).map(|i| b.job(gpu_project, vg, f64::from(i), NOW + 1e5)).collect();
        b.state.projects[cpu_project.index()].short_term_debt = 80_000.0;
        let state = b.build();
        let list = run_list(&state, &quiet_rr(&state), Policy::Seed);
        assert_eq!(list.entries.len(), 3);
        assert_eq!((list.entries[0].job, list.entries[0].gpu_instances.clone()), (g[0], vec![0]));
        assert_eq!((list.entries[1].job, list.entries[1].gpu_instances.clone()), (g[1], vec![0]));
        // The two GPU jobs hold one CPU: one CPU job fits, a second would exceed ncpus.
        assert_eq!(list.entries[2].job, c1);
        assert!(list.entries.iter().all(|e| e.job != c2 && e.job != g[2]));
    }

    #[test]
    fn multithread_job_may_overcommit_by_one_cpu() {
        let mut b = StateBuilder::new(4);
        let a = b.project("a", 100.0);
        let m = b.project("mt", 100.0);
        let va = b.app_version(a, cpu(1.0));
        let vm = b.app_version(m, cpu(2.0));
        let singles: Vec<_> = (0..3).map(|i| b.job(a, va, f64::from(i), NOW + 1e5)).collect();
        let mt = b.job(m, vm, 0.0, NOW + 1e5);
        b.state.projects[a.index()].short_term_debt = 80_000.0;
        let state = b.build();
        let list = run_list(&state, &quiet_rr(&state), Policy::Seed);
        let order: Vec<_> = list.entries.iter().map(|e| e.job).collect();
        // Payoff of a single is 900: a stays ahead for its 3 jobs; 3 + 2 = 5 = ncpus + 1.
        assert_eq!(order, vec![singles[0], singles[1], singles[2], mt]);
    }

    #[test]
    fn multithread_job_that_would_overcommit_by_more_than_one_waits() {
        let mut b = StateBuilder::new(4);
        let a = b.project("a", 100.0);
        let m = b.project("mt", 100.0);
        let va = b.app_version(a, cpu(1.0));
        let vm = b.app_version(m, cpu(4.0));
        let singles: Vec<_> = (0..4).map(|i| b.job(a, va, f64::from(i), NOW + 1e5)).collect();
        b.job(m, vm, 0.0, NOW + 1e5);
        b.state.projects[a.index()].short_term_debt = 900.0;
        let state = b.build();
        let list = run_list(&state, &quiet_rr(&state), Policy::Seed);
        let order: Vec<_> = list.entries.iter().map(|e| e.job).collect();
        // a first (1 CPU), then the MT job can't fit (1 + 4 > 5): the singles fill up.
        assert_eq!(order, singles);
    }

    #[test]
    fn a_waiting_multithread_job_takes_the_place_of_a_job_that_can_wait() {
        let mut b = StateBuilder::new(4);
        let a = b.project("a", 100.0);
        let m = b.project("mt", 100.0);
        let va = b.app_version(a, cpu(1.0));
        let vm = b.app_version(m, cpu(4.0));
        let singles: Vec<_> = (0..2).map(|i| b.job(a, va, f64::from(i), NOW + 1e6)).collect();
        let mt = b.job(m, vm, 0.0, NOW + 1e6);
        b.state.projects[a.index()].short_term_debt = 80_000.0;
        let state = b.build();
        let mut rr = quiet_rr(&state);
        for &id in &singles {
            rr.jobs[id.index()].simulated = true;
            rr.jobs[id.index()].remaining_duration = 3600.0;
            rr.jobs[id.index()].projected_completion = NOW + 3600.0;
        }
        // Both singles (2 CPUs) would leave 2 CPUs idle, the 4-thread job unable to fit
        // beside them: it takes the second single's place (1 + 4 = ncpus + 1).
        let list = run_list(&state, &rr, Policy::Seed);
        let order: Vec<_> = list.entries.iter().map(|e| e.job).collect();
        assert_eq!(order, vec![singles[0], mt]);
        // The same with the singles due before they could wait a slice (twice their hour
        // of work after their projected completion): nothing moves.
        let mut tight = state.clone();
        for &id in &singles {
            tight.jobs[id.index()].report_deadline = NOW + 2.9 * 3600.0;
        }
        let list = run_list(&tight, &rr, Policy::Seed);
        let order: Vec<_> = list.entries.iter().map(|e| e.job).collect();
        assert_eq!(order, singles);
    }

    #[test]
    fn at_its_turn_a_multithread_job_takes_the_cpus_of_jobs_in_their_time_slice() {
        // Three single-thread jobs in their time slices hold three of four CPUs (a fourth
        // has just finished); the 4-thread project is owed most. Waiting for the slices
        // would free the CPUs one by one, each idle until the last: it takes them now.
        let mut b = StateBuilder::new(4);
        let a = b.project("a", 100.0);
        let m = b.project("mt", 100.0);
        let va = b.app_version(a, cpu(1.0));
        let vm = b.app_version(m, cpu(4.0));
        let singles: Vec<_> = (0..3).map(|i| b.job(a, va, f64::from(i), NOW + 1e6)).collect();
        for (k, &id) in singles.iter().enumerate() {
            b.task(id, SchedulerState::Running, NOW - 600.0 * (k as f64 + 1.0), 600.0, 300.0, NOW);
        }
        let mt = b.job(m, vm, 0.0, NOW + 1e6);
        b.state.projects[m.index()].short_term_debt = 80_000.0;
        let state = b.clone().build();
        let mut rr = quiet_rr(&state);
        for &id in singles.iter().chain([&mt]) {
            rr.jobs[id.index()].simulated = true;
            rr.jobs[id.index()].remaining_duration = 3600.0;
            rr.jobs[id.index()].projected_completion = NOW + 3600.0;
        }
        // (It may overcommit by one CPU, so the first-ranked single keeps its place.)
        let list = run_list(&state, &rr, Policy::Seed);
        assert_eq!(scheduled(&list), vec![(singles[0], RunReason::Slice), (mt, RunReason::Debt)]);

        // When a job of the other project could not wait for the multithread job (due
        // within its run), the slices are kept.
        let mut tight = state.clone();
        tight.jobs[singles[2].index()].report_deadline = NOW + 3.0 * 3600.0;
        let list = run_list(&tight, &rr, Policy::Seed);
        let order: Vec<_> = list.entries.iter().map(|e| e.job).collect();
        assert_eq!(order, singles);

        // Nor while the single-thread project is owed more and has a job for the free
        // CPU: its jobs keep their slices, and the free CPU is its.
        let queued = b.job(a, va, 10.0, NOW + 1e6);
        b.state.projects[m.index()].short_term_debt = 0.0;
        b.state.projects[a.index()].short_term_debt = 80_000.0;
        let owed = b.build();
        let mut rr = quiet_rr(&owed);
        for &id in singles.iter().chain([&mt, &queued]) {
            rr.jobs[id.index()].simulated = true;
            rr.jobs[id.index()].remaining_duration = 3600.0;
            rr.jobs[id.index()].projected_completion = NOW + 3600.0;
        }
        let list = run_list(&owed, &rr, Policy::Seed);
        let order: Vec<_> = list.entries.iter().map(|e| e.job).collect();
        assert_eq!(order, [singles.clone(), vec![queued]].concat());
    }

    #[test]
    fn max_concurrent_limits_an_apps_jobs() {
        let mut b = StateBuilder::new(4);
        let a = b.project("a", 100.0);
        let limited = b.app_version(a, cpu(1.0));
        let free = b.app_version(a, cpu(1.0));
        b.max_concurrent(limited, 1);
        let l: Vec<_> = (0..3).map(|i| b.job(a, limited, f64::from(i), NOW + 1e5)).collect();
        let f = b.job(a, free, 10.0, NOW + 1e5);
        let state = b.build();
        let mut rr = quiet_rr(&state);
        // Two misses: EDF takes l[0], can't take l[1] or l[2] (limit 1), then f.
        mark_deadline_missed(&state, &mut rr, &l[1..]);
        let list = run_list(&state, &rr, Policy::Seed);
        assert_eq!(scheduled(&list), vec![(l[0], RunReason::Edf), (f, RunReason::Edf)]);
        let list = run_list(&state, &quiet_rr(&state), Policy::Seed);
        assert_eq!(scheduled(&list), vec![(l[0], RunReason::Debt), (f, RunReason::Debt)]);
    }

    /// app_config's `<project_max_concurrent>`: over all the project's apps; the
    /// other project's jobs take the CPUs left.
    #[test]
    fn a_project_limit_caps_its_jobs_over_all_its_apps() {
        let mut b = StateBuilder::new(4);
        let a = b.project("a", 100.0);
        let other = b.project("other", 100.0);
        let one = b.app_version(a, cpu(1.0));
        let two = b.app_version(a, cpu(1.0));
        let free = b.app_version(other, cpu(1.0));
        for (i, version) in [one, two, one, two].into_iter().enumerate() {
            b.job(a, version, i as f64, NOW + 1e5);
        }
        let o = b.job(other, free, 10.0, NOW + 1e5);
        let mut state = b.build();
        let limit = AppConfig { project_max_concurrent: Some(2), ..AppConfig::default() };
        limit.apply(&mut state, a);
        let list = run_list(&state, &quiet_rr(&state), Policy::Seed);
        let chosen: Vec<JobId> = scheduled(&list).into_iter().map(|(job, _)| job).collect();
        assert_eq!(chosen.iter().filter(|j| state.job(**j).project == a).count(), 2, "{chosen:?}");
        assert!(chosen.contains(&o));
        AppConfig::default().apply(&mut state, a);
        let list = run_list(&state, &quiet_rr(&state), Policy::Seed);
        assert_eq!(list.entries.len(), 4, "the four CPUs without the limit");
    }

    #[test]
    fn suspended_project_and_run_modes_exclude_jobs() {
        let mut b = StateBuilder::new(2).gpus(ResourceType::Nvidia, 1);
        let a = b.project("a", 100.0);
        let s = b.project("suspended", 100.0);
        let va = b.app_version(a, cpu(1.0));
        let vg = b.app_version(a, gpu(ResourceType::Nvidia, 0.1, 1.0));
        let vs = b.app_version(s, cpu(1.0));
        let ja = b.job(a, va, 0.0, NOW + 1e5);
        let jg = b.job(a, vg, 0.0, NOW + 1e5);
        b.job(s, vs, 0.0, NOW + 1e5);
        b.state.projects[s.index()].suspended = true;
        b.state.projects[s.index()].short_term_debt = 80_000.0;
        let mut state = b.build();
        let list = run_list(&state, &quiet_rr(&state), Policy::Seed);
        assert_eq!(list.entries.iter().map(|e| e.job).collect::<Vec<_>>(), vec![jg, ja]);
        state.gpu_mode = RunMode::Never;
        let list = run_list(&state, &quiet_rr(&state), Policy::Seed);
        assert_eq!(list.entries.iter().map(|e| e.job).collect::<Vec<_>>(), vec![ja]);
        state.run_mode = RunMode::Never;
        assert!(run_list(&state, &quiet_rr(&state), Policy::Seed).entries.is_empty());
    }

    #[test]
    fn non_cpu_intensive_jobs_always_run_without_taking_processors() {
        let mut b = StateBuilder::new(1);
        let a = b.project("a", 100.0);
        let n = b.project("monitor", 100.0);
        let va = b.app_version(a, cpu(1.0));
        let vn = b.app_version(n, cpu(1.0));
        let ja = b.job(a, va, 0.0, NOW + 1e5);
        let jn = b.job(n, vn, 0.0, NOW + 1e5);
        b.state.projects[n.index()].non_cpu_intensive = true;
        let state = b.build();
        let list = run_list(&state, &quiet_rr(&state), Policy::Seed);
        assert_eq!(scheduled(&list), vec![(jn, RunReason::NonCpuIntensive), (ja, RunReason::Debt)]);
    }

    #[test]
    fn legacy_prefers_running_then_preempted_then_new_and_ignores_deadlines() {
        let mut b = StateBuilder::new(3);
        let a = b.project("a", 100.0);
        let other = b.project("other", 100.0);
        let va = b.app_version(a, cpu(1.0));
        let vo = b.app_version(other, cpu(1.0));
        let new_late = b.job(a, va, 0.0, NOW + 9e4);
        let new_early = b.job(a, va, 5.0, NOW + 5e4);
        let preempted = b.job(a, va, 9.0, NOW + 1e5);
        let running = b.job(a, va, 9.0, NOW + 2e5);
        let endangered = b.job(other, vo, 0.0, NOW + 10.0);
        b.task(preempted, SchedulerState::Preempted, NOW - 9000.0, 100.0, 50.0, 1.0);
        b.task(running, SchedulerState::Running, NOW - 60.0, 60.0, 0.0, 0.0);
        b.state.projects[a.index()].short_term_debt = 80_000.0;
        let state = b.build();
        let mut rr = quiet_rr(&state);
        mark_deadline_missed(&state, &mut rr, &[endangered]);
        let list = run_list(&state, &rr, Policy::Legacy);
        assert_eq!(
            scheduled(&list),
            vec![
                (running, RunReason::Debt),
                (preempted, RunReason::Debt),
                (new_early, RunReason::Debt)
            ]
        );
        let _ = new_late;
    }

    #[test]
    fn rec_runs_the_project_furthest_below_its_share_and_lowers_its_priority() {
        let mut b = StateBuilder::new(2);
        let ahead = b.project("ahead", 100.0);
        let behind = b.project("behind", 100.0);
        let va = b.app_version(ahead, cpu(1.0));
        let vb = b.app_version(behind, cpu(1.0));
        let a1 = b.job(ahead, va, 0.0, NOW + 1e5);
        let b1 = b.job(behind, vb, 0.0, NOW + 1e5);
        let b2 = b.job(behind, vb, 1.0, NOW + 1e5);
        b.state.projects[ahead.index()].rec = 9.0e12;
        b.state.projects[behind.index()].rec = 7.0e12;
        // Debt would say otherwise.
        b.state.projects[ahead.index()].short_term_debt = 80_000.0;
        let state = b.build();
        let list = run_list(&state, &quiet_rr(&state), Policy::Rec);
        // behind: −0.875 → after one hour of a 1 Gflops CPU (+3.6e12) −1.325 < ahead −1.125.
        assert_eq!(scheduled(&list), vec![(b1, RunReason::Priority), (a1, RunReason::Priority)]);
        assert!(list.rec_priority[behind.index()] < -1.3);
        let _ = b2;
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn run_list_respects_the_processors(
            (state, rr) in random_scenario(),
            policy in prop::sample::select(Policy::ALL.to_vec()),
        ) {
            let list = run_list(&state, &rr, policy);
            let ncpus = f64::from(state.ncpus());
            let mut pool = InstancePool::new(&state);
            let (mut cpu_only, mut gpu_cpu) = (0.0, 0.0);
            let mut seen = vec![false; state.jobs.len()];
            for entry in &list.entries {
                prop_assert!(!seen[entry.job.index()], "job twice");
                seen[entry.job.index()] = true;
                prop_assert!(state.job_runnable(entry.job));
                let usage = job_usage(&state, entry.job).unwrap();
                prop_assert_eq!(entry.resource, usage.main_resource());
                pool.occupy(usage, &entry.gpu_instances);
                if usage.coprocessor.is_some() {
                    gpu_cpu += usage.avg_ncpus.min(ncpus);
                    let needed = (usage.main_usage() - 1e-9).ceil().max(1.0) as usize;
                    prop_assert_eq!(entry.gpu_instances.len(), needed);
                } else {
                    cpu_only += usage.avg_ncpus.min(ncpus);
                }
            }
            // GPU jobs are never refused for CPU, so only they may push past ncpus + 1.
            prop_assert!(cpu_only + gpu_cpu <= (ncpus + 1.0).max(gpu_cpu) + 1e-9);
            for r in ResourceType::GPUS {
                for &free in pool.gpu_free(r) {
                    prop_assert!(free >= -1e-9);
                }
            }
            prop_assert_eq!(list.anticipated_debt.len(), state.projects.len());
        }

        /// Buffers left by a decision on another host (more or fewer projects, other
        /// endangered projects), its run list's among them, change nothing in the next
        /// run list.
        #[test]
        fn reused_buffers_give_the_fresh_run_list(
            (first, first_rr) in random_scenario(),
            (state, rr) in random_scenario(),
            policy in prop::sample::select(Policy::ALL.to_vec()),
        ) {
            let mut scratch = RunListScratch::default();
            let facts = ProjectFacts::gather(&first);
            let earlier =
                make_run_list_with_scratch(&first, &first_rr, &facts, policy, NOW, &mut scratch);
            scratch.recycle_list(earlier);
            let facts = ProjectFacts::gather(&state);
            let reused = make_run_list_with_scratch(&state, &rr, &facts, policy, NOW, &mut scratch);
            prop_assert_eq!(reused, run_list(&state, &rr, policy));
        }
    }
}
