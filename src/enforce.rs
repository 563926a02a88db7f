//! CPU schedule enforcement (seed 000 "CPU schedule enforcement", 6.4 note 7): turning
//! the run list into starts, resumptions and preemptions. Let X be the scheduled jobs
//! that are not running, Y the running jobs that are not scheduled, and T the time the
//! scheduler last ran:
//!
//! 1. scheduled running jobs keep running;
//! 2. a job of Y that may no longer run at all (it or its project suspended, run mode
//!    "never", its GPU type suspended) is preempted at once; one that has checkpointed since
//!    T is preempted; one that has not keeps running, so its work since the checkpoint
//!    is not lost, until it checkpoints;
//! 3. jobs of X that would miss their deadline (`deadline_missed` in the rr_sim) start
//!    first; where there is no room, jobs of Y still waiting for a checkpoint are
//!    preempted for them, the one with the least time since its checkpoint first;
//! 4. the other jobs of X start in run-list order while they fit; a multithread job
//!    whose CPUs are held only by jobs of Y waiting for a checkpoint starts beside them
//!    (the CPUs shared until they stop) rather than idle the CPUs freed one by one.
//!
//! A job starts only if it fits the processors by the rules of
//! [`crate::cpu_sched::InstancePool`] (the scheduler's own), its app stays within
//! `max_concurrent`, and the working sets of the running jobs (a task's measured working
//! set, else its workunit's memory bound) stay within `ram_max_used_busy_pct` percent of
//! the host's memory (when the host's memory is known; the caller puts the idle user's
//! `ram_max_used_idle_pct` there while the user is idle). A running job that no longer
//! fits beside the jobs counted before it is preempted to wait for memory (BOINC's
//! `too_large`), and says so in its task until it starts again. Jobs of non-CPU-intensive
//! projects and apps take no processors: only the app and memory limits hold them back.
//!
//! A preempted task is removed from memory (quit, to restart from its checkpoint) unless
//! the user leaves apps in memory; GPU tasks are always removed, since a suspended GPU
//! app would keep its device memory. A CPU task that has never checkpointed is always
//! kept in memory (suspended): quitting it would throw all its work away.

use crate::Time;
use crate::cpu_sched::{
    InstancePool, RunList, RunListEntry, RunReason, job_is_non_cpu_intensive, job_may_run,
    job_usage, may_run,
};
use crate::model::{
    ActiveTask, AppConfig, AppVersion, ClientState, Job, JobId, ResourceUsage, SchedulerState,
    is_positive_finite, project_running,
};
use crate::rr_sim::RrSimOutput;
use serde::Serialize;
use std::ops::Range;

/// What to do with one task.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "action")]
pub enum ActionKind {
    /// Start the job's app (first run, or restart from its checkpoint after a quit), on
    /// these GPU instances (empty for a CPU job).
    Start {
        /// GPU instances to run on.
        gpu_instances: Vec<u32>,
    },
    /// Resume a task suspended in memory, on these GPU instances.
    Resume {
        /// GPU instances to run on.
        gpu_instances: Vec<u32>,
    },
    /// Stop the task.
    Preempt {
        /// Quit the app (it restarts from its checkpoint) rather than suspend it.
        remove_from_memory: bool,
    },
    /// Leave the running task alone.
    KeepRunning,
}

/// Why enforcement does what it does to a job, or why a scheduled job does not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionReason {
    /// The job is in the run list.
    Scheduled,
    /// The job would miss its deadline: it starts ahead of the others.
    DeadlineEndangered,
    /// Preempted to make room for a job that would miss its deadline.
    RoomForDeadline,
    /// Not scheduled, but it has not checkpointed since the last scheduling run: it
    /// keeps running so as not to lose work.
    NotCheckpointed,
    /// Not scheduled and it has checkpointed since the last scheduling run.
    Checkpointed,
    /// The job may not run at all now (suspended, finished, run mode "never", or its
    /// GPU unusable).
    NotRunnable,
    /// The running jobs' working sets leave no room for it.
    Memory,
    /// Its app already runs `max_concurrent` jobs.
    MaxConcurrent,
    /// The processors it needs are held by jobs still waiting to checkpoint.
    NoFreeInstance,
    /// A multithread job started beside jobs running on to their checkpoints: their
    /// threads and its share the CPUs for the minutes until those stop, rather than the
    /// CPUs freed one by one idling until the last is.
    BesideCheckpointWaits,
}

/// One decision about one task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskAction {
    /// The job.
    pub job: JobId,
    /// What to do.
    pub kind: ActionKind,
    /// Why.
    pub reason: ActionReason,
}

/// A scheduled job that does not start now, and why.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SkippedJob {
    /// The job.
    pub job: JobId,
    /// Why it waits.
    pub reason: ActionReason,
}

/// The outcome of one enforcement.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Enforcement {
    /// One action per task that runs or stops (every running task gets one).
    pub actions: Vec<TaskAction>,
    /// Scheduled jobs that stay off the processors this time.
    pub skipped: Vec<SkippedJob>,
}

/// Decides which tasks start, resume, stop or keep running to carry out `run_list`,
/// built from `rr`; `last_schedule_time` is T, when the scheduler last ran. The rules
/// compare the tasks' own recorded times with T, so the time of this enforcement,
/// `_now`, does not enter them; it is part of the signature so that every decision
/// function of the core takes the same inputs.
pub fn enforce(
    state: &ClientState,
    run_list: &RunList,
    rr: &RrSimOutput,
    last_schedule_time: Time,
    now: Time,
) -> Enforcement {
    enforce_with_scratch(
        state,
        run_list,
        rr,
        last_schedule_time,
        now,
        &mut EnforceScratch::default(),
    )
}

/// The tables enforcement works in, kept by a caller that enforces again and again:
/// a decision on a host with a few running jobs would otherwise allocate and free half
/// a dozen lists, two of them as long as the job list, to count them.
#[derive(Debug, Default)]
pub struct EnforceScratch {
    /// Per job (by id): its reason in the run list. Only the run list's jobs are set,
    /// and they are unset again once enforced.
    scheduled: Vec<Option<RunReason>>,
    /// Per job (by id): [`Enforcer::holding_index`]. Only the held jobs are set, and
    /// they are unset again once enforced.
    holding_index: Vec<u32>,
    holdings: Vec<Holding>,
    held_instances: Vec<u32>,
    app_running: Vec<u32>,
    waiting_for_checkpoint: Vec<JobId>,
    /// The lists of an enforcement no longer needed, which the next one reuses.
    spare_actions: Vec<TaskAction>,
    spare_skipped: Vec<SkippedJob>,
}

impl EnforceScratch {
    /// Keeps the lists of an enforcement the caller is done with for the next one.
    pub fn recycle(&mut self, enforcement: Enforcement) {
        self.spare_actions = enforcement.actions;
        self.spare_skipped = enforcement.skipped;
    }
}

/// A clone starts with empty tables: what they hold between decisions means nothing.
impl Clone for EnforceScratch {
    fn clone(&self) -> Self {
        EnforceScratch::default()
    }
}

/// [`enforce`] with its tables in `scratch`'s buffers.
pub fn enforce_with_scratch(
    state: &ClientState,
    run_list: &RunList,
    rr: &RrSimOutput,
    last_schedule_time: Time,
    _now: Time,
    scratch: &mut EnforceScratch,
) -> Enforcement {
    let mut enforcer = Enforcer::new(state, scratch);
    // Nearly every job counted, and every job acted on, is in the list (running or
    // starting); the others are the few running on to a checkpoint or preempted.
    enforcer.holdings.reserve(run_list.entries.len());
    enforcer.actions.reserve(run_list.entries.len());
    let scheduled = &mut scratch.scheduled;
    scheduled.resize(state.jobs.len(), None);
    for entry in &run_list.entries {
        if let Some(slot) = scheduled.get_mut(entry.job.index()) {
            *slot = Some(entry.reason);
        }
    }

    // Running jobs: scheduled ones stay; unscheduled ones stay until they checkpoint.
    let mut waiting_for_checkpoint = std::mem::take(&mut scratch.waiting_for_checkpoint);
    waiting_for_checkpoint.clear();
    for (index, job) in state.jobs.iter().enumerate() {
        let Some(task) = job.task.as_ref().filter(|t| t.is_running()) else { continue };
        // A finished job's task is wound up by whoever saw it finish.
        if job.state.computing_done() {
            continue;
        }
        let id = JobId::from_index(index);
        if !may_run(state, job) {
            enforcer.preempt(id, ActionReason::NotRunnable);
        } else if let Some(reason) = scheduled[index] {
            let non_cpu_intensive = reason == RunReason::NonCpuIntensive;
            if enforcer.memory_used + working_set_of(state, job) > enforcer.memory_limit {
                // The running apps outgrew the memory left to them (a task grew, or the
                // user came back and the smaller busy limit holds): this one waits.
                enforcer.preempt(id, ActionReason::Memory);
                continue;
            }
            enforcer.hold_running(id, job, &task.gpu_instances, non_cpu_intensive);
            enforcer.act(id, ActionKind::KeepRunning, ActionReason::Scheduled);
        } else if task.checkpoint_wall_time > last_schedule_time {
            enforcer.preempt(id, ActionReason::Checkpointed);
        } else {
            let non_cpu_intensive = job_is_non_cpu_intensive(state, id);
            enforcer.hold_running(id, job, &task.gpu_instances, non_cpu_intensive);
            waiting_for_checkpoint.push(id);
        }
    }
    for entry in &run_list.entries {
        if let Some(slot) = scheduled.get_mut(entry.job.index()) {
            *slot = None;
        }
    }
    // Least time since checkpoint first: the cheapest to preempt for a deadline.
    waiting_for_checkpoint.sort_by(|&a, &b| {
        let lost =
            |id: JobId| state.job(id).task.as_ref().map_or(0.0, ActiveTask::time_since_checkpoint);
        lost(a).total_cmp(&lost(b)).then(a.cmp(&b))
    });

    let not_running = |id: JobId| {
        let job = state.job(id);
        !job.is_running() && !job.state.computing_done()
    };
    // Non-CPU-intensive jobs take no processors, so they never need room made for them.
    let endangered = |e: &&RunListEntry| {
        e.reason != RunReason::NonCpuIntensive
            && rr.jobs.get(e.job.index()).is_some_and(|j| j.deadline_missed)
    };
    for entry in run_list.entries.iter().filter(|e| not_running(e.job) && endangered(e)) {
        enforcer.start_endangered(entry.job, &entry.gpu_instances, &mut waiting_for_checkpoint);
    }
    for entry in run_list.entries.iter().filter(|e| not_running(e.job) && !endangered(e)) {
        let non_cpu_intensive = entry.reason == RunReason::NonCpuIntensive;
        match enforcer.try_start(entry.job, &entry.gpu_instances, non_cpu_intensive) {
            Ok(()) => enforcer.start(entry.job, ActionReason::Scheduled),
            Err(ActionReason::NoFreeInstance)
                if enforcer.start_beside_checkpoint_waits(entry.job, &waiting_for_checkpoint) =>
            {
                enforcer.start(entry.job, ActionReason::BesideCheckpointWaits);
            }
            Err(reason) => enforcer.skipped.push(SkippedJob { job: entry.job, reason }),
        }
    }
    for &id in &waiting_for_checkpoint {
        enforcer.act(id, ActionKind::KeepRunning, ActionReason::NotCheckpointed);
    }
    scratch.waiting_for_checkpoint = waiting_for_checkpoint;
    enforcer.finish(scratch)
}

/// A task's memory: its measured working set, else its workunit's memory bound.
fn working_set(state: &ClientState, id: JobId) -> f64 {
    working_set_of(state, state.job(id))
}

/// [`working_set`] of a job record at hand.
fn working_set_of(state: &ClientState, job: &Job) -> f64 {
    let measured = job.task.as_ref().map_or(0.0, |t| t.working_set_size);
    let bytes = if measured > 0.0 {
        measured
    } else {
        state.workunits.get(job.workunit.index()).map_or(0.0, |w| w.rsc_memory_bound)
    };
    // A negative, infinite or unknown size counts as none.
    if is_positive_finite(bytes) { bytes } else { 0.0 }
}

/// Whether a preempted task is quit rather than suspended (see the module comment).
fn remove_from_memory(state: &ClientState, id: JobId, usage: Option<&ResourceUsage>) -> bool {
    let is_gpu = usage.is_some_and(|u| u.coprocessor.is_some());
    if is_gpu {
        return true;
    }
    let never_checkpointed = state
        .job(id)
        .task
        .as_ref()
        .is_some_and(|t| t.checkpoint_elapsed_time <= 0.0 && t.elapsed_time > 0.0);
    !state.prefs.leave_apps_in_memory && !never_checkpointed
}

/// What enforcement has handed out so far.
struct Enforcer<'a> {
    state: &'a ClientState,
    pool: InstancePool,
    memory_limit: f64,
    memory_used: f64,
    app_running: Vec<u32>,
    /// The jobs counted by [`Enforcer::hold`], each once: a list of the few jobs that run
    /// rather than a record per job of the host's, which would be built and dropped whole
    /// at every decision.
    holdings: Vec<Holding>,
    /// Per job (by id), its place in `holdings` ([`NOT_HELD`] if none): a lookup costs
    /// the same on a host running a thousand jobs as on one running two.
    holding_index: Vec<u32>,
    /// The GPU instances of all the holdings, each holding's in one run: one list rather
    /// than a list per GPU job, allocated and freed at every decision.
    held_instances: Vec<u32>,
    actions: Vec<TaskAction>,
    skipped: Vec<SkippedJob>,
}

/// `Enforcer::holding_index` of a job not counted.
const NOT_HELD: u32 = u32::MAX;

/// What one job was counted as holding.
#[derive(Debug)]
struct Holding {
    job: JobId,
    /// GPU instances it holds or was given: its run in `Enforcer::held_instances`.
    gpu_instances: Range<usize>,
    /// Its processors are not counted (non-CPU-intensive).
    uncounted: bool,
}

impl<'a> Enforcer<'a> {
    /// An enforcer with its tables in `scratch`'s buffers ([`Enforcer::finish`] hands
    /// them back).
    fn new(state: &'a ClientState, scratch: &mut EnforceScratch) -> Self {
        let memory_limit = if state.host.m_nbytes > 0.0 {
            state.prefs.ram_max_used_busy_pct.max(0.0) / 100.0 * state.host.m_nbytes
        } else {
            f64::INFINITY
        };
        let mut app_running = std::mem::take(&mut scratch.app_running);
        app_running.clear();
        app_running.resize(state.apps.len(), 0);
        let mut holdings = std::mem::take(&mut scratch.holdings);
        holdings.clear();
        let mut held_instances = std::mem::take(&mut scratch.held_instances);
        held_instances.clear();
        // Every entry is NOT_HELD already (`finish` unsets those it set): only a longer
        // job list needs new ones.
        let mut holding_index = std::mem::take(&mut scratch.holding_index);
        holding_index.resize(state.jobs.len(), NOT_HELD);
        let mut actions = std::mem::take(&mut scratch.spare_actions);
        actions.clear();
        let mut skipped = std::mem::take(&mut scratch.spare_skipped);
        skipped.clear();
        Enforcer {
            state,
            pool: InstancePool::new(state),
            memory_limit,
            memory_used: 0.0,
            app_running,
            holdings,
            holding_index,
            held_instances,
            actions,
            skipped,
        }
    }

    /// The enforcement, with the tables' buffers handed back to `scratch` (the per-job
    /// index unset where it was set).
    fn finish(mut self, scratch: &mut EnforceScratch) -> Enforcement {
        for holding in &self.holdings {
            if let Some(index) = self.holding_index.get_mut(holding.job.index()) {
                *index = NOT_HELD;
            }
        }
        self.holdings.clear();
        scratch.holdings = self.holdings;
        scratch.held_instances = self.held_instances;
        scratch.holding_index = self.holding_index;
        scratch.app_running = self.app_running;
        Enforcement { actions: self.actions, skipped: self.skipped }
    }

    fn act(&mut self, job: JobId, kind: ActionKind, reason: ActionReason) {
        self.actions.push(TaskAction { job, kind, reason });
    }

    fn holding(&self, id: JobId) -> Option<&Holding> {
        let index = *self.holding_index.get(id.index())?;
        self.holdings.get(index as usize)
    }

    fn record_holding(&mut self, holding: Holding) {
        if let Some(index) = self.holding_index.get_mut(holding.job.index()) {
            *index = self.holdings.len() as u32;
        }
        self.holdings.push(holding);
    }

    /// GPU instances the job holds or was given (none if it holds nothing).
    fn held(&self, id: JobId) -> &[u32] {
        self.holding(id).map_or(&[], |h| &self.held_instances[h.gpu_instances.clone()])
    }

    /// Whether the job's processors are not counted (non-CPU-intensive).
    fn uncounted(&self, id: JobId) -> bool {
        self.holding(id).is_some_and(|h| h.uncounted)
    }

    /// The job's app version, looked up once for everything counted from it.
    fn version_of(&self, id: JobId) -> Option<&'a AppVersion> {
        self.version_of_job(self.state.job(id))
    }

    fn version_of_job(&self, job: &Job) -> Option<&'a AppVersion> {
        self.state.app_versions.get(job.app_version?.index())
    }

    fn app_of(&self, id: JobId) -> Option<usize> {
        self.version_of(id).map(|v| v.app.index())
    }

    /// Counts a running job as holding its processors, memory and app slot. A running
    /// task stays on its instances; one without a valid record of them is counted where
    /// it would fit.
    ///
    /// Inlined (as is [`Enforcer::hold_version`] into it): it runs for every running
    /// job at every decision, and the calls cost about as much as the counting.
    #[inline(always)]
    fn hold_running(&mut self, id: JobId, job: &Job, recorded: &[u32], non_cpu_intensive: bool) {
        let version = self.version_of_job(job);
        let from = self.held_instances.len();
        match version.map(|v| &v.usage) {
            // A CPU job fits or not, but either way it holds no instances: nothing to find
            // unless some are recorded.
            Some(usage) if usage.coprocessor.is_none() && recorded.is_empty() => {}
            Some(usage) if !non_cpu_intensive => {
                let found = self.pool.find_into(usage, recorded, &mut self.held_instances);
                if !found {
                    self.held_instances.extend_from_slice(recorded);
                }
            }
            _ => {}
        }
        self.hold_version(id, job, version, from, non_cpu_intensive);
    }

    /// Counts a job as holding its processors (on the instances added to `held_instances`
    /// from `from` on), memory and app slot. A job is counted once: it runs, or it starts
    /// (after every other way to start it failed).
    fn hold(&mut self, id: JobId, from: usize, non_cpu_intensive: bool) {
        let job = self.state.job(id);
        self.hold_version(id, job, self.version_of_job(job), from, non_cpu_intensive);
    }

    /// [`Enforcer::hold`] with the job's record and app version already looked up.
    #[inline(always)]
    fn hold_version(
        &mut self,
        id: JobId,
        job: &Job,
        version: Option<&AppVersion>,
        from: usize,
        non_cpu_intensive: bool,
    ) {
        debug_assert!(self.holding(id).is_none(), "{id:?} counted twice");
        self.memory_used += working_set_of(self.state, job);
        if let Some(count) = version.and_then(|v| self.app_running.get_mut(v.app.index())) {
            *count += 1;
        }
        if non_cpu_intensive {
            self.held_instances.truncate(from);
            self.record_holding(Holding { job: id, gpu_instances: from..from, uncounted: true });
            return;
        }
        let Some(version) = version else {
            self.held_instances.truncate(from);
            return;
        };
        self.pool.occupy(&version.usage, &self.held_instances[from..]);
        let instances = from..self.held_instances.len();
        self.record_holding(Holding { job: id, gpu_instances: instances, uncounted: false });
    }

    /// Gives back what [`Enforcer::hold`] counted.
    fn release(&mut self, id: JobId) {
        let state = self.state;
        self.memory_used = (self.memory_used - working_set(state, id)).max(0.0);
        if let Some(app) = self.app_of(id)
            && let Some(count) = self.app_running.get_mut(app)
        {
            *count = count.saturating_sub(1);
        }
        let index = self.holding_index.get(id.index()).map_or(NOT_HELD, |&i| i);
        let (instances, uncounted) = match self.holdings.get_mut(index as usize) {
            Some(h) => (std::mem::take(&mut h.gpu_instances), h.uncounted),
            None => (0..0, false),
        };
        if !uncounted && let Some(usage) = job_usage(state, id) {
            self.pool.release(usage, &self.held_instances[instances]);
        }
    }

    fn preempt(&mut self, id: JobId, reason: ActionReason) {
        let remove = remove_from_memory(self.state, id, job_usage(self.state, id));
        self.act(id, ActionKind::Preempt { remove_from_memory: remove }, reason);
    }

    /// Checks everything but the processors: runnable, max_concurrent, memory.
    fn admissible(&self, id: JobId) -> Result<(), ActionReason> {
        if !job_may_run(self.state, id) {
            return Err(ActionReason::NotRunnable);
        }
        let limit = self.app_of(id).and_then(|a| {
            Some((self.app_running.get(a).copied()?, self.state.apps.get(a)?.max_concurrent?))
        });
        if let Some((running, max)) = limit
            && running >= max
        {
            return Err(ActionReason::MaxConcurrent);
        }
        let project = self.state.job(id).project;
        if let Some(limit) = AppConfig::project_limit(self.state, project)
            && project_running(self.state, project, &self.app_running) >= limit
        {
            return Err(ActionReason::MaxConcurrent);
        }
        if self.memory_used + working_set(self.state, id) > self.memory_limit {
            return Err(ActionReason::Memory);
        }
        Ok(())
    }

    /// Takes the processors for a job if it may start now.
    fn try_start(
        &mut self,
        id: JobId,
        preferred: &[u32],
        non_cpu_intensive: bool,
    ) -> Result<(), ActionReason> {
        self.admissible(id)?;
        let from = self.held_instances.len();
        if !non_cpu_intensive {
            let usage = job_usage(self.state, id).ok_or(ActionReason::NotRunnable)?;
            if !self.pool.find_into(usage, preferred, &mut self.held_instances) {
                return Err(ActionReason::NoFreeInstance);
            }
        }
        self.hold(id, from, non_cpu_intensive);
        Ok(())
    }

    /// Emits the start or resume of a job already counted by [`Enforcer::hold`].
    fn start(&mut self, id: JobId, reason: ActionReason) {
        let gpu_instances = self.held(id).to_vec();
        let kind = match self.state.job(id).task.as_ref().map(|t| t.scheduler_state) {
            Some(SchedulerState::Preempted) => ActionKind::Resume { gpu_instances },
            _ => ActionKind::Start { gpu_instances },
        };
        self.act(id, kind, reason);
    }

    /// Rule 4 for a multithread CPU job the run list placed (it took the places of jobs
    /// now preempted) whose CPUs are still held only by jobs running on to their
    /// checkpoints: it takes them now, overcommitting the CPUs until those stop. The
    /// jobs reach their checkpoints at different moments, and waiting for the last
    /// would leave each CPU freed before it idle; sharing the CPUs loses no work and
    /// idles none. Returns whether it was taken (counted by [`Enforcer::hold`]).
    fn start_beside_checkpoint_waits(&mut self, id: JobId, waiting: &[JobId]) -> bool {
        let state = self.state;
        let Some(usage) = job_usage(state, id).filter(|u| u.coprocessor.is_none()) else {
            return false;
        };
        if usage.avg_ncpus <= 1.0 || self.admissible(id).is_err() {
            return false;
        }
        let mut trial = self.pool.clone();
        for &other in waiting {
            if let Some(other_usage) = job_usage(state, other)
                && other_usage.coprocessor.is_none()
                && !self.uncounted(other)
            {
                trial.release(other_usage, self.held(other));
            }
        }
        if trial.find(usage, &[]).is_none() {
            return false;
        }
        self.hold(id, self.held_instances.len(), false);
        true
    }

    /// Seed 000 enforcement rule 1 for one endangered job.
    fn start_endangered(&mut self, id: JobId, preferred: &[u32], waiting: &mut Vec<JobId>) {
        match self.try_start(id, preferred, false) {
            Ok(()) => return self.start(id, ActionReason::DeadlineEndangered),
            Err(ActionReason::NoFreeInstance) => {}
            Err(reason) => return self.skipped.push(SkippedJob { job: id, reason }),
        }
        let state = self.state;
        let Some(usage) = job_usage(state, id) else { return };
        let resource = usage.main_resource();
        // Only jobs on the same processing resource free what this job needs: a GPU
        // job's share of a CPU is not worth preempting it for a CPU job.
        let mut trial = self.pool.clone();
        let mut victims = Vec::new();
        for &victim in waiting.iter() {
            if trial.find(usage, preferred).is_some() {
                break;
            }
            let Some(victim_usage) = job_usage(state, victim) else { continue };
            if victim_usage.main_resource() != resource || self.uncounted(victim) {
                continue;
            }
            trial.release(victim_usage, self.held(victim));
            victims.push(victim);
        }
        if trial.find(usage, preferred).is_none() {
            return self.skipped.push(SkippedJob { job: id, reason: ActionReason::NoFreeInstance });
        }
        for &victim in &victims {
            self.release(victim);
            self.preempt(victim, ActionReason::RoomForDeadline);
        }
        waiting.retain(|w| !victims.contains(w));
        match self.try_start(id, preferred, false) {
            Ok(()) => self.start(id, ActionReason::DeadlineEndangered),
            Err(reason) => self.skipped.push(SkippedJob { job: id, reason }),
        }
    }
}

/// Carries out an enforcement on the state: started and resumed tasks run from `now`
/// on their GPU instances (a job starting for the first time gets an active task in the
/// lowest free slot), preempted ones are suspended (`Preempted`) or quit
/// (`Uninitialized`, rolled back to their checkpoint, which is where the app restarts).
pub fn apply_enforcement(state: &mut ClientState, enforcement: &Enforcement, now: Time) {
    // The slots in use, listed when the first job without a task starts: about half
    // the enforcements start none on a busy host, and the list takes a pass over every
    // job. Nothing done before that changes which slots are in use (a preempted task
    // keeps its slot).
    let mut slots_in_use: Option<Vec<u32>> = None;
    for action in &enforcement.actions {
        let index = action.job.index();
        match &action.kind {
            // Nearly every action: looked at first, and without touching the job.
            ActionKind::KeepRunning => {}
            ActionKind::Start { gpu_instances } | ActionKind::Resume { gpu_instances } => {
                let Some(job) = state.jobs.get(index) else { continue };
                if job.task.is_none() && slots_in_use.is_none() {
                    let mut slots: Vec<u32> =
                        state.jobs.iter().filter_map(|j| j.task.as_ref().map(|t| t.slot)).collect();
                    slots.sort_unstable();
                    slots_in_use = Some(slots);
                }
                let job = &mut state.jobs[index];
                let task = job.task.get_or_insert_with(|| {
                    // Listed above, as this job had no task.
                    let slots_in_use = slots_in_use.get_or_insert_with(Vec::new);
                    let slot = lowest_free_slot(slots_in_use);
                    let at = slots_in_use.partition_point(|&s| s < slot);
                    slots_in_use.insert(at, slot);
                    ActiveTask::new(slot)
                });
                task.scheduler_state = SchedulerState::Running;
                task.run_start_time = now;
                task.too_large = false;
                task.gpu_instances.clone_from(gpu_instances);
                if action.reason == ActionReason::DeadlineEndangered {
                    task.once_ran_edf = true;
                }
            }
            ActionKind::Preempt { remove_from_memory } => {
                let Some(task) = state.jobs.get_mut(index).and_then(|j| j.task.as_mut()) else {
                    continue;
                };
                task.gpu_instances.clear();
                task.too_large = action.reason == ActionReason::Memory;
                if *remove_from_memory {
                    task.quit();
                } else {
                    task.scheduler_state = SchedulerState::Preempted;
                }
            }
        }
    }
    // A task that waits for memory says so until it starts again.
    for skipped in enforcement.skipped.iter().filter(|s| s.reason == ActionReason::Memory) {
        if let Some(task) = state.jobs.get_mut(skipped.job.index()).and_then(|j| j.task.as_mut()) {
            task.too_large = true;
        }
    }
}

/// Gives every running GPU task that has no GPU instances recorded (state files don't
/// say which device a task ran on) instances that fit beside the tasks that do, so
/// enforcement and accounting see each GPU's real occupancy from the start.
pub fn assign_missing_gpu_instances(state: &mut ClientState) {
    let mut pool = InstancePool::new(state);
    let mut missing = Vec::new();
    for id in state.job_ids() {
        let job = state.job(id);
        let (Some(task), Some(av)) = (job.task.as_ref(), job.app_version) else { continue };
        if !task.is_running() {
            continue;
        }
        let usage = state.app_version(av).usage;
        if usage.coprocessor.is_some() && task.gpu_instances.is_empty() {
            missing.push((id, usage));
        } else {
            pool.occupy(&usage, &task.gpu_instances);
        }
    }
    for (id, usage) in missing {
        if let Some(instances) = pool.try_place(&usage, &[])
            && let Some(task) = state.jobs[id.index()].task.as_mut()
        {
            task.gpu_instances = instances;
        }
    }
}

/// The lowest slot number not in the sorted list.
fn lowest_free_slot(sorted_slots: &[u32]) -> u32 {
    let mut candidate = 0;
    for &slot in sorted_slots {
        match slot.cmp(&candidate) {
            std::cmp::Ordering::Less => {}
            std::cmp::Ordering::Equal => candidate += 1,
            std::cmp::Ordering::Greater => break,
        }
    }
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Policy;
    use crate::cpu_sched::make_run_list;
    use crate::cpu_sched::test_support::{
        StateBuilder, cpu, gpu, mark_deadline_missed, quiet_rr, random_scenario,
    };
    use crate::model::{ProjectFacts, ResourceType};
    use proptest::prelude::*;

    const NOW: Time = 100_000.0;
    const LAST: Time = NOW - 60.0;

    fn list(state: &ClientState, jobs: &[JobId]) -> RunList {
        RunList {
            entries: jobs
                .iter()
                .map(|&job| RunListEntry {
                    job,
                    resource: job_usage(state, job).unwrap().main_resource(),
                    reason: RunReason::Debt,
                    gpu_instances: Vec::new(),
                })
                .collect(),
            ..Default::default()
        }
    }

    fn action(e: &Enforcement, job: JobId) -> Option<(ActionKind, ActionReason)> {
        e.actions.iter().find(|a| a.job == job).map(|a| (a.kind.clone(), a.reason))
    }

    fn skipped(e: &Enforcement, job: JobId) -> Option<ActionReason> {
        e.skipped.iter().find(|s| s.job == job).map(|s| s.reason)
    }

    /// One CPU project with `n` jobs on a host with `ncpus` CPUs.
    fn one_project(ncpus: u32, n: usize) -> (StateBuilder, Vec<JobId>) {
        let mut b = StateBuilder::new(ncpus);
        let p = b.project("p", 100.0);
        let v = b.app_version(p, cpu(1.0));
        let jobs = (0..n).map(|i| b.job(p, v, i as f64, NOW + 1e5)).collect();
        (b, jobs)
    }

    #[test]
    fn running_gpu_tasks_without_instances_get_free_ones() {
        let mut b = StateBuilder::new(2).gpus(ResourceType::Nvidia, 2);
        let p = b.project("p", 100.0);
        let v = b.app_version(p, gpu(ResourceType::Nvidia, 0.1, 1.0));
        let placed = b.job(p, v, 0.0, NOW + 1e5);
        let unplaced = b.job(p, v, 0.0, NOW + 1e5);
        b.task(placed, SchedulerState::Running, NOW - 60.0, 60.0, 0.0, 0.0).gpu_instances = vec![0];
        b.task(unplaced, SchedulerState::Running, NOW - 60.0, 60.0, 0.0, 0.0);
        let mut state = b.build();
        assign_missing_gpu_instances(&mut state);
        let instances = |j: JobId| state.job(j).task.as_ref().map(|t| t.gpu_instances.clone());
        assert_eq!(instances(placed), Some(vec![0]));
        assert_eq!(instances(unplaced), Some(vec![1]));
    }

    #[test]
    fn scheduled_jobs_keep_running_start_and_resume() {
        let (mut b, j) = one_project(3, 3);
        b.task(j[0], SchedulerState::Running, NOW - 100.0, 100.0, 50.0, NOW - 10.0);
        b.task(j[1], SchedulerState::Preempted, 0.0, 100.0, 50.0, 10.0);
        let state = b.build();
        let e = enforce(&state, &list(&state, &j), &quiet_rr(&state), LAST, NOW);
        assert_eq!(action(&e, j[0]), Some((ActionKind::KeepRunning, ActionReason::Scheduled)));
        let resume = ActionKind::Resume { gpu_instances: vec![] };
        assert_eq!(action(&e, j[1]), Some((resume, ActionReason::Scheduled)));
        let start = ActionKind::Start { gpu_instances: vec![] };
        assert_eq!(action(&e, j[2]), Some((start, ActionReason::Scheduled)));
    }

    #[test]
    fn unscheduled_job_runs_on_until_it_checkpoints() {
        let (mut b, j) = one_project(1, 2);
        b.task(j[0], SchedulerState::Running, NOW - 9000.0, 9000.0, 8000.0, LAST - 5.0);
        let state = b.build();
        let run_list = list(&state, &[j[1]]);
        let e = enforce(&state, &run_list, &quiet_rr(&state), LAST, NOW);
        assert_eq!(
            action(&e, j[0]),
            Some((ActionKind::KeepRunning, ActionReason::NotCheckpointed))
        );
        assert_eq!(action(&e, j[1]), None);
        assert_eq!(skipped(&e, j[1]), Some(ActionReason::NoFreeInstance));

        // Once it has checkpointed after T it leaves, and the scheduled job starts.
        let mut state = state;
        state.jobs[j[0].index()].task.as_mut().unwrap().checkpoint_wall_time = LAST + 5.0;
        let e = enforce(&state, &run_list, &quiet_rr(&state), LAST, NOW);
        let quit = ActionKind::Preempt { remove_from_memory: true };
        assert_eq!(action(&e, j[0]), Some((quit, ActionReason::Checkpointed)));
        let start = ActionKind::Start { gpu_instances: vec![] };
        assert_eq!(action(&e, j[1]), Some((start, ActionReason::Scheduled)));
    }

    /// Four CPUs, `singles` single-thread jobs and a 4-thread job (received last); the
    /// first `running` single-thread jobs run and have not checkpointed since T.
    fn singles_beside_a_multithread_job(
        singles: usize,
        running: usize,
    ) -> (ClientState, Vec<JobId>, JobId) {
        let mut b = StateBuilder::new(4);
        let p = b.project("p", 100.0);
        let single = b.app_version(p, cpu(1.0));
        let multi = b.app_version(p, cpu(4.0));
        let jobs: Vec<_> = (0..singles).map(|i| b.job(p, single, i as f64, NOW + 1e5)).collect();
        let mt = b.job(p, multi, singles as f64, NOW + 1e5);
        for &j in &jobs[..running] {
            b.task(j, SchedulerState::Running, 0.0, 5000.0, 4000.0, LAST - 100.0);
        }
        (b.build(), jobs, mt)
    }

    #[test]
    fn a_multithread_job_starts_beside_jobs_running_on_to_their_checkpoints() {
        // Three single-thread jobs, unscheduled, have not checkpointed since T; the run
        // list holds the 4-thread job and a fourth single-thread job.
        let (state, singles, mt) = singles_beside_a_multithread_job(4, 3);
        let next_single = singles[3];
        let e = enforce(&state, &list(&state, &[mt, next_single]), &quiet_rr(&state), LAST, NOW);
        // The freed CPU does not idle until the last of them checkpoints: the 4-thread
        // job starts now and shares the CPUs with them until they stop.
        let start = ActionKind::Start { gpu_instances: vec![] };
        assert_eq!(action(&e, mt), Some((start.clone(), ActionReason::BesideCheckpointWaits)));
        for &j in &singles[..3] {
            assert_eq!(
                action(&e, j),
                Some((ActionKind::KeepRunning, ActionReason::NotCheckpointed))
            );
        }
        // A single-thread job gains nothing by it: it waits for a free CPU.
        assert_eq!(skipped(&e, next_single), Some(ActionReason::NoFreeInstance));
        let e = enforce(&state, &list(&state, &[next_single]), &quiet_rr(&state), LAST, NOW);
        assert_eq!(action(&e, next_single), Some((start, ActionReason::Scheduled)));
    }

    #[test]
    fn a_multithread_job_that_would_not_fit_beside_the_scheduled_jobs_waits() {
        // Two scheduled jobs keep two of the four CPUs: even once the other two have
        // checkpointed, the 4-thread job would not fit beside them (2 + 4 > ncpus + 1).
        let (state, running, mt) = singles_beside_a_multithread_job(4, 4);
        let run_list = list(&state, &[running[0], running[1], mt]);
        let e = enforce(&state, &run_list, &quiet_rr(&state), LAST, NOW);
        assert_eq!(skipped(&e, mt), Some(ActionReason::NoFreeInstance));
        assert_eq!(
            action(&e, running[3]),
            Some((ActionKind::KeepRunning, ActionReason::NotCheckpointed))
        );
    }

    #[test]
    fn endangered_job_preempts_the_job_with_least_time_since_checkpoint() {
        let (mut b, j) = one_project(2, 3);
        // Both unscheduled and not checkpointed since T; j[1] would lose less.
        b.task(j[0], SchedulerState::Running, 0.0, 5000.0, 1000.0, LAST - 100.0);
        b.task(j[1], SchedulerState::Running, 0.0, 5000.0, 4900.0, LAST - 100.0);
        let state = b.build();
        let mut rr = quiet_rr(&state);
        mark_deadline_missed(&state, &mut rr, &[j[2]]);
        let e = enforce(&state, &list(&state, &[j[2]]), &rr, LAST, NOW);
        let quit = ActionKind::Preempt { remove_from_memory: true };
        assert_eq!(action(&e, j[1]), Some((quit, ActionReason::RoomForDeadline)));
        assert_eq!(
            action(&e, j[0]),
            Some((ActionKind::KeepRunning, ActionReason::NotCheckpointed))
        );
        let start = ActionKind::Start { gpu_instances: vec![] };
        assert_eq!(action(&e, j[2]), Some((start, ActionReason::DeadlineEndangered)));
    }

    #[test]
    fn endangered_gpu_job_preempts_only_gpu_jobs() {
        let mut b = StateBuilder::new(1).gpus(ResourceType::Nvidia, 1);
        let p = b.project("p", 100.0);
        let vc = b.app_version(p, cpu(1.0));
        let vg = b.app_version(p, gpu(ResourceType::Nvidia, 0.5, 1.0));
        let c = b.job(p, vc, 0.0, NOW + 1e5);
        let g_old = b.job(p, vg, 0.0, NOW + 1e5);
        let g_new = b.job(p, vg, 0.0, NOW + 100.0);
        b.task(c, SchedulerState::Running, 0.0, 500.0, 500.0, LAST - 100.0);
        b.task(g_old, SchedulerState::Running, 0.0, 900.0, 100.0, LAST - 100.0).gpu_instances =
            vec![0];
        let state = b.build();
        let mut rr = quiet_rr(&state);
        mark_deadline_missed(&state, &mut rr, &[g_new]);
        let e = enforce(&state, &list(&state, &[g_new]), &rr, LAST, NOW);
        assert_eq!(action(&e, c), Some((ActionKind::KeepRunning, ActionReason::NotCheckpointed)));
        let quit = ActionKind::Preempt { remove_from_memory: true };
        assert_eq!(action(&e, g_old), Some((quit, ActionReason::RoomForDeadline)));
        let start = ActionKind::Start { gpu_instances: vec![0] };
        assert_eq!(action(&e, g_new), Some((start, ActionReason::DeadlineEndangered)));
    }

    #[test]
    fn job_that_exceeds_the_memory_limit_is_skipped() {
        let (mut b, j) = one_project(4, 3);
        b.state.host.m_nbytes = 1e9;
        b.state.prefs.ram_max_used_busy_pct = 50.0;
        b.task(j[0], SchedulerState::Running, NOW - 10.0, 10.0, 0.0, 0.0).working_set_size = 3e8;
        // j[1] uses its workunit's bound (1e8); j[2] is measured big.
        b.task(j[2], SchedulerState::Preempted, 0.0, 10.0, 10.0, 1.0).working_set_size = 2e8;
        let state = b.build();
        let e = enforce(&state, &list(&state, &j), &quiet_rr(&state), LAST, NOW);
        assert!(matches!(action(&e, j[1]), Some((ActionKind::Start { .. }, _))));
        assert_eq!(action(&e, j[2]), None);
        assert_eq!(skipped(&e, j[2]), Some(ActionReason::Memory));
    }

    #[test]
    fn a_running_job_that_outgrew_the_memory_limit_waits_for_memory() {
        let (mut b, j) = one_project(4, 2);
        b.state.host.m_nbytes = 1e9;
        b.state.prefs.ram_max_used_busy_pct = 50.0;
        b.task(j[0], SchedulerState::Running, NOW - 10.0, 10.0, 5.0, LAST - 1.0).working_set_size =
            3e8;
        b.task(j[1], SchedulerState::Running, NOW - 10.0, 10.0, 5.0, LAST - 1.0).working_set_size =
            3e8;
        let mut state = b.build();
        let e = enforce(&state, &list(&state, &j), &quiet_rr(&state), LAST, NOW);
        assert_eq!(action(&e, j[0]), Some((ActionKind::KeepRunning, ActionReason::Scheduled)));
        let Some((ActionKind::Preempt { .. }, ActionReason::Memory)) = action(&e, j[1]) else {
            panic!("not preempted for memory: {:?}", action(&e, j[1]));
        };
        apply_enforcement(&mut state, &e, NOW);
        assert!(state.jobs[j[1].index()].task.as_ref().is_some_and(|t| t.too_large));
        // Still too large at the next decision: skipped, and still waiting for memory.
        let e = enforce(&state, &list(&state, &j), &quiet_rr(&state), NOW, NOW + 60.0);
        assert_eq!(skipped(&e, j[1]), Some(ActionReason::Memory));
        apply_enforcement(&mut state, &e, NOW + 60.0);
        assert!(state.jobs[j[1].index()].task.as_ref().is_some_and(|t| t.too_large));
        // With the idle user's larger limit it fits again.
        state.prefs.ram_max_used_busy_pct = 90.0;
        let e = enforce(&state, &list(&state, &j), &quiet_rr(&state), NOW, NOW + 120.0);
        apply_enforcement(&mut state, &e, NOW + 120.0);
        assert!(state.jobs[j[1].index()].task.as_ref().is_some_and(|t| !t.too_large));
    }

    #[test]
    fn max_concurrent_counts_running_jobs() {
        let (mut b, j) = one_project(4, 3);
        let version = b.state.job(j[0]).app_version.unwrap();
        b.max_concurrent(version, 2);
        // An unscheduled running job still counts against its app.
        b.task(j[0], SchedulerState::Running, NOW - 10.0, 10.0, 0.0, 0.0);
        let state = b.build();
        let e = enforce(&state, &list(&state, &j[1..]), &quiet_rr(&state), LAST, NOW);
        assert!(matches!(action(&e, j[1]), Some((ActionKind::Start { .. }, _))));
        assert_eq!(skipped(&e, j[2]), Some(ActionReason::MaxConcurrent));
    }

    /// `<project_max_concurrent>` 1: a running job of the project's counts, so a job
    /// of its other app does not start beside it.
    #[test]
    fn a_project_limit_counts_running_jobs_of_all_its_apps() {
        let (mut b, j) = one_project(4, 2);
        let project = b.state.job(j[0]).project;
        let other = b.app_version(project, cpu(1.0));
        let k = b.job(project, other, 0.0, NOW + 1e5);
        b.task(j[0], SchedulerState::Running, NOW - 10.0, 10.0, 0.0, 0.0);
        let mut state = b.build();
        let limit = AppConfig { project_max_concurrent: Some(1), ..AppConfig::default() };
        limit.apply(&mut state, project);
        let e = enforce(&state, &list(&state, &[j[1], k]), &quiet_rr(&state), LAST, NOW);
        assert_eq!(skipped(&e, j[1]), Some(ActionReason::MaxConcurrent));
        assert_eq!(skipped(&e, k), Some(ActionReason::MaxConcurrent));
        let limit = AppConfig { project_max_concurrent: Some(3), ..AppConfig::default() };
        limit.apply(&mut state, project);
        let e = enforce(&state, &list(&state, &[j[1], k]), &quiet_rr(&state), LAST, NOW);
        assert!(matches!(action(&e, k), Some((ActionKind::Start { .. }, _))));
    }

    #[test]
    fn preemption_keeps_in_memory_what_would_otherwise_be_lost() {
        let mut b = StateBuilder::new(4).gpus(ResourceType::Nvidia, 1);
        let p = b.project("p", 100.0);
        let vc = b.app_version(p, cpu(1.0));
        let vg = b.app_version(p, gpu(ResourceType::Nvidia, 0.5, 1.0));
        let checkpointed = b.job(p, vc, 0.0, NOW + 1e5);
        let never = b.job(p, vc, 0.0, NOW + 1e5);
        let on_gpu = b.job(p, vg, 0.0, NOW + 1e5);
        b.task(checkpointed, SchedulerState::Running, 0.0, 100.0, 90.0, NOW - 1.0);
        b.task(never, SchedulerState::Running, 0.0, 100.0, 0.0, 0.0);
        b.task(on_gpu, SchedulerState::Running, 0.0, 100.0, 90.0, NOW - 1.0).gpu_instances =
            vec![0];
        let mut state = b.build();
        // "never" is suspended by the user: it must stop though it never checkpointed.
        state.jobs[never.index()].suspended = true;
        let removed = |state: &ClientState| {
            let e = enforce(state, &RunList::default(), &quiet_rr(state), LAST, NOW);
            [checkpointed, never, on_gpu].map(|j| match action(&e, j) {
                Some((ActionKind::Preempt { remove_from_memory }, _)) => remove_from_memory,
                other => panic!("expected a preemption, got {other:?}"),
            })
        };
        assert_eq!(removed(&state), [true, false, true]);
        state.prefs.leave_apps_in_memory = true;
        assert_eq!(removed(&state), [false, false, true]);
        let e = enforce(&state, &RunList::default(), &quiet_rr(&state), LAST, NOW);
        assert_eq!(action(&e, never).unwrap().1, ActionReason::NotRunnable);
    }

    #[test]
    fn apply_starts_in_the_lowest_free_slot_and_quits_to_the_checkpoint() {
        let (mut b, j) = one_project(2, 3);
        b.task(j[0], SchedulerState::Running, 0.0, 100.0, 60.0, NOW - 1.0).fraction_done = 0.5;
        b.state.jobs[j[0].index()].task.as_mut().unwrap().slot = 1;
        let mut state = b.build();
        let e = enforce(&state, &list(&state, &j[1..]), &quiet_rr(&state), LAST, NOW);
        apply_enforcement(&mut state, &e, NOW);
        let t0 = state.job(j[0]).task.as_ref().unwrap();
        assert_eq!(t0.scheduler_state, SchedulerState::Uninitialized);
        assert_eq!(t0.elapsed_time, 60.0);
        assert!((t0.fraction_done - 0.3).abs() < 1e-12);
        let t1 = state.job(j[1]).task.as_ref().unwrap();
        let t2 = state.job(j[2]).task.as_ref().unwrap();
        assert_eq!((t1.slot, t2.slot), (0, 2));
        assert!(t1.is_running() && t2.is_running());
        assert_eq!(t1.run_start_time, NOW);
    }

    #[test]
    fn apply_records_gpu_instances_and_edf_runs() {
        let mut b = StateBuilder::new(2).gpus(ResourceType::Nvidia, 2);
        let p = b.project("p", 100.0);
        let v = b.app_version(p, gpu(ResourceType::Nvidia, 0.5, 1.0));
        let j0 = b.job(p, v, 0.0, NOW + 1e5);
        let j1 = b.job(p, v, 0.0, NOW + 100.0);
        let mut state = b.build();
        let mut rr = quiet_rr(&state);
        mark_deadline_missed(&state, &mut rr, &[j1]);
        let run_list = make_run_list(&state, &rr, &ProjectFacts::gather(&state), Policy::Seed, NOW);
        let e = enforce(&state, &run_list, &rr, LAST, NOW);
        apply_enforcement(&mut state, &e, NOW);
        let t0 = state.job(j0).task.as_ref().unwrap();
        let t1 = state.job(j1).task.as_ref().unwrap();
        assert_eq!((t1.gpu_instances.clone(), t0.gpu_instances.clone()), (vec![0], vec![1]));
        assert!(t1.once_ran_edf && !t0.once_ran_edf);
    }

    #[test]
    fn actions_serialise_with_snake_case_tags() {
        let action = TaskAction {
            job: JobId(3),
            kind: ActionKind::Preempt { remove_from_memory: true },
            reason: ActionReason::RoomForDeadline,
        };
        assert_eq!(
            serde_json::to_value(&action).unwrap(),
            serde_json::json!({
                "job": 3,
                "kind": {"action": "preempt", "remove_from_memory": true},
                "reason": "room_for_deadline"
            })
        );
        let keep = serde_json::to_value(ActionKind::KeepRunning).unwrap();
        assert_eq!(keep, serde_json::json!({"action": "keep_running"}));
        let reason = serde_json::to_value(RunReason::NonCpuIntensive).unwrap();
        assert_eq!(reason, serde_json::json!("non_cpu_intensive"));
        assert_eq!(serde_json::to_value(RunReason::Slice).unwrap(), serde_json::json!("slice"));
    }

    #[test]
    fn lowest_free_slot_fills_gaps() {
        assert_eq!(lowest_free_slot(&[]), 0);
        assert_eq!(lowest_free_slot(&[0, 1, 3]), 2);
        assert_eq!(lowest_free_slot(&[0, 0, 1]), 2);
        assert_eq!(lowest_free_slot(&[2, 3]), 0);
    }

    /// Checks the running tasks against the processors after enforcement `e`. The CPU
    /// jobs it keeps or starts never take more than `ncpus + 1` CPUs, not counting jobs
    /// running on to their checkpoints (only a multithread job starts beside those);
    /// when nothing ran before (`fresh`), GPU jobs' CPUs come first and the total stays
    /// within `ncpus + 1` unless GPU jobs alone exceed it. Later, a GPU job may start
    /// beside CPU jobs still waiting for a checkpoint: GPUs are never left idle for want
    /// of a CPU, so only then may the total go further.
    fn check_running(
        state: &ClientState,
        e: &Enforcement,
        fresh: bool,
    ) -> Result<(), TestCaseError> {
        let ncpus = f64::from(state.ncpus());
        let (mut cpu_only, mut gpu_cpu) = (0.0, 0.0);
        let mut per_instance = vec![0.0; state.instances(ResourceType::Nvidia) as usize];
        let to_checkpoint = |id: JobId| {
            e.actions.iter().any(|a| a.job == id && a.reason == ActionReason::NotCheckpointed)
        };
        for a in e.actions.iter().filter(|a| a.reason == ActionReason::BesideCheckpointWaits) {
            let usage = job_usage(state, a.job).unwrap();
            prop_assert!(usage.coprocessor.is_none() && usage.avg_ncpus > 1.0);
        }
        for id in state.job_ids() {
            let job = state.job(id);
            if !job.is_running() || to_checkpoint(id) {
                continue;
            }
            let usage = job_usage(state, id).unwrap();
            let task = job.task.as_ref().unwrap();
            match usage.coprocessor {
                Some((_, amount)) => {
                    gpu_cpu += usage.avg_ncpus.min(ncpus);
                    prop_assert!(!task.gpu_instances.is_empty());
                    for &i in &task.gpu_instances {
                        per_instance[i as usize] += amount.min(1.0);
                    }
                }
                None => cpu_only += usage.avg_ncpus.min(ncpus),
            }
        }
        prop_assert!(cpu_only <= ncpus + 1.0 + 1e-9);
        if fresh {
            prop_assert!(cpu_only + gpu_cpu <= (ncpus + 1.0).max(gpu_cpu) + 1e-9);
        }
        for used in per_instance {
            prop_assert!(used <= 1.0 + 1e-9);
        }
        Ok(())
    }

    fn check_actions(e: &Enforcement, jobs: usize) -> Result<(), TestCaseError> {
        let mut seen = vec![false; jobs];
        for a in &e.actions {
            prop_assert!(!seen[a.job.index()], "two actions for one job");
            seen[a.job.index()] = true;
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn enforcement_respects_the_processors_over_two_rounds(
            (mut state, rr) in random_scenario(),
            policy in prop::sample::select(Policy::ALL.to_vec()),
            checkpoints in proptest::collection::vec(0.0f64..200.0, 40),
            debts in proptest::collection::vec(0.0f64..1e5, 5),
            missed in proptest::collection::vec(any::<bool>(), 40),
        ) {
            let facts = ProjectFacts::gather(&state);
            let run_list = make_run_list(&state, &rr, &facts, policy, NOW);
            let e = enforce(&state, &run_list, &rr, LAST, NOW);
            check_actions(&e, state.jobs.len())?;
            apply_enforcement(&mut state, &e, NOW);
            check_running(&state, &e, true)?;

            // An hour later: some tasks checkpointed, debts moved, new deadline misses.
            let later = NOW + 3600.0;
            for (i, job) in state.jobs.iter_mut().enumerate() {
                if let Some(task) = job.task.as_mut().filter(|t| t.is_running()) {
                    task.elapsed_time += 3600.0;
                    task.checkpoint_wall_time = NOW + checkpoints[i % checkpoints.len()] * 18.0;
                    task.checkpoint_elapsed_time = task.elapsed_time - 100.0;
                }
            }
            for (i, project) in state.projects.iter_mut().enumerate() {
                project.short_term_debt = debts[i % debts.len()];
            }
            let mut rr = quiet_rr(&state);
            let endangered: Vec<_> =
                state.job_ids().filter(|j| missed[j.index() % missed.len()]).collect();
            mark_deadline_missed(&state, &mut rr, &endangered);
            let facts = ProjectFacts::gather(&state);
            let run_list = make_run_list(&state, &rr, &facts, policy, later);
            let e = enforce(&state, &run_list, &rr, NOW + 1800.0, later);
            check_actions(&e, state.jobs.len())?;
            apply_enforcement(&mut state, &e, later);
            check_running(&state, &e, false)?;
        }
    }
}
