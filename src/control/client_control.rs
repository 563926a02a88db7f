//! The client's control loop at one instant (seed 000 "CPU scheduling policy": reschedule
//! on job completion, at the end of a time slice, on new runnable jobs; seed 002 "RPC
//! sessions": fetch polling, backoff expiry, reporting): the client-side half of what
//! the emulator and the actor runtime run, with the world left out.
//!
//! A step at time `now`, in this order, is what both drivers do:
//! 1. [`ClientControl::set_host`] for availability changes;
//! 2. [`ClientControl::apply_status`] for each running task's process, in
//!    [`ClientControl::running`] order (or [`ClientControl::apply_statuses`] for all of
//!    them), then [`ClientControl::complete`] for those that finished;
//! 3. [`ClientControl::schedule`]: debts, the decision, enforcement; its commands go to
//!    the processes;
//! 4. the RPC step: [`ClientControl::rpc_gate`], master-page fetches,
//!    [`ClientControl::rpc_call`], [`ClientControl::build_request`], the session itself
//!    (the request goes out, a reply or a failure comes back),
//!    [`ClientControl::finish_rpc`] (the reply into the state), the project's RPC state
//!    ([`ClientControl::set_project_rpc_state`]) and a new schedule when jobs came;
//! 5. [`ClientControl::compact`];
//!
//! and between steps [`ClientControl::accumulate_usage`] for the time that passed.
//!
//! A client that moves its files itself ([`ClientControl::enable_file_transfers`], the
//! live client) also starts transfers ([`ClientControl::start_transfers`]) and takes
//! their ends in ([`ClientControl::finish_transfer`]): jobs wait for their files and
//! report only once their outputs are uploaded. The emulator's world moves no files:
//! without the switch, jobs' files count as present and their outputs as uploaded.

use super::clock_change::clamp_backoffs_to_now;
use super::commands::{HostView, ProcessStatus, TaskCommand, TaskSpec};
use super::reply::{EXIT_ABORTED_BY_PROJECT, ReplyOutcome, apply_reply};
use super::request::{ClientIdentity, RequestScratch, build_request, build_request_with};
use super::rpc_session::ProjectRpcState;
use super::task_program::task_program;
use super::user_action::{UserAction, UserActionError, apply_user_action};
use crate::accounting::fair_share::TargetCache;
use crate::accounting::long_term_debt::update_long_term_debt_with;
use crate::accounting::rec::update_rec;
use crate::accounting::short_term_debt::{update_legacy_debt, update_short_term_debt};
use crate::cpu_sched::RunReason;
use crate::decision::{Decision, DecisionScratch, decide_with_scratch};
use crate::disk::disk_full;
use crate::enforce::{ActionKind, ActionReason, apply_enforcement, assign_missing_gpu_instances};
use crate::estimate::learn_duration_correction;
use crate::model::{
    ActiveTask, ClientState, JobId, JobState, ProjectFacts, ProjectId, ResourceMap, ResourceType,
    RunMode, SchedulerState,
};
use crate::protocol::{SchedulerReply, SchedulerRequest};
use crate::rpc_policy::{
    ReportBatching, ReportScratch, most_urgent_report_with, next_report_time_with,
    report_goes_first,
};
use crate::supervise::{RestartPolicy, RestartTracker};
use crate::transfer::FULL_DISK_RECHECK;
use crate::work_fetch::{
    BatchingScratch, FetchChoice, FetchOutlook, WorkRequest, clear_backoff, piggyback_request,
    report_batching_into, select_work_fetch,
};
use crate::{Policy, Time};
use serde::{Deserialize, Serialize};

mod transfers;

/// The work-fetch poll interval: at most one scheduler RPC per this many seconds (the
/// real client polls at this pace; BOINC's emulator steps 60 s).
pub const FETCH_POLL_INTERVAL: f64 = 60.0;

/// How often a live client looks for results to report between work fetches: BOINC
/// 7.20.5 looks every 5 s, so a result reported immediately (`report_results_immediately`,
/// a deadline near, a user's update) goes seconds after its upload, not at the next
/// minute's work fetch.
pub const REPORT_POLL_INTERVAL: f64 = 5.0;

/// The clock counts as set back when it reads this much earlier than at the previous
/// step (seconds): less is an ordinary correction.
const CLOCK_BACK_TOLERANCE: f64 = 5.0;

/// The periodic CPU-scheduling check, seconds: besides its events (a completion, new
/// jobs, an availability change), the real client reschedules once a minute on a fixed
/// beat, and that is when it notices a time slice has run out. Slice ends are taken at
/// the next beat (multiples of this from time 0) rather than to the second: slices that
/// end within the same minute are handled by one decision, as in the real client.
pub const SCHEDULING_CHECK_INTERVAL: f64 = 60.0;

/// Whether the RPC step may go on now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RpcGate {
    /// Not yet: the poll interval or the fetch plan says later.
    Closed,
    /// The host is off or offline: nothing is sent until that changes.
    Offline,
    /// Go on.
    Open,
}

/// A scheduler RPC the client makes now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcCall {
    /// What is asked for, and of which project.
    pub request: WorkRequest,
    /// Names of the results reported with it.
    pub reported: Vec<String>,
    /// Per resource, seconds until an instance would idle (the latest decision's
    /// saturated time): the request's `estimated_delay`.
    #[serde(default)]
    pub estimated_delay: ResourceMap<f64>,
}

/// [`ClientControl::compact`] waits for more acknowledged jobs than this...
const COMPACT_MIN_ACKED: usize = 8;
/// ... and for them to be more than this fraction (1/n) of the job list. Every pass over
/// the jobs at every decision (the facts, the round-robin simulation, the reports) walks
/// past the acknowledged ones, while a compaction moves the live jobs down once: a
/// sixteenth is where the emulator's scenarios spend least (a quarter, and more than 32,
/// cost big_host 0.4 % and seed_scenario1 2.6 % more).
const COMPACT_ACKED_SHARE: usize = 16;

/// The client's control state beside its [`ClientState`].
#[derive(Debug, Clone)]
pub struct ClientControl {
    state: Box<ClientState>,
    /// What stands in for the state while it is lent out (kept from loan to loan, so
    /// that lending allocates nothing).
    stand_in: Option<Box<ClientState>>,
    identity: ClientIdentity,
    policy: Policy,
    boinc_compat: bool,
    existing_jobs_only: bool,
    host: HostView,
    /// The host's suspension reasons changed since the last decision: the next step
    /// decides at once (tasks stop or start within a step, not at the next beat).
    suspension_changed: bool,
    /// Per resource, whether its tasks may compute (the resource actors' answers to the
    /// host's availability, or [`HostView::resource_may_compute`]'s).
    computing: ResourceMap<bool>,
    /// The last decision held tasks back that would have started, the disk being full.
    new_tasks_wait_for_disk: bool,
    last_schedule_time: Time,
    last_accounting_time: Time,
    /// Instance-seconds used per project and resource since the last accounting.
    usage: Vec<ResourceMap<f64>>,
    /// Jobs whose tasks are running, in the order they started.
    running: Vec<JobId>,
    /// Running jobs that enforcement keeps only until their next checkpoint.
    awaiting_checkpoint: Vec<JobId>,
    next_fetch_check: Time,
    next_rpc_allowed: Time,
    /// How often reports may go between work fetches (a live client); `None`: at the
    /// work-fetch pace only, as in BOINC's emulator, whose steps are a minute apart.
    report_poll: Option<f64>,
    /// The report poll's next look, and when a report falls due (as of the latest plan).
    next_report_allowed: Time,
    next_report_due: Time,
    /// The latest time the RPC step was given (none before the first): a later,
    /// earlier one means the clock was set back.
    clock_seen: Option<Time>,
    /// The latest decision, whose work-fetch choice the RPC step acts on.
    last_decision: Option<Decision>,
    /// How each project's results are reported, as of the latest decision.
    report_batching: Vec<ReportBatching>,
    /// The sums the report batching is worked out in, kept from one decision to the next.
    batching_scratch: BatchingScratch,
    /// The per-project findings the next report time is worked out in.
    report_scratch: ReportScratch,
    decisions: u64,
    rpcs: u64,
    acked_jobs: usize,
    /// The decision's buffers (round-robin simulation, run list), kept from one
    /// decision to the next.
    decision_scratch: DecisionScratch,
    /// The scheduler request's lists, kept from one request to the next.
    request_scratch: RequestScratch,
    /// The long-term debt's target allocation, kept from one accounting to the next.
    debt_targets: TargetCache,
    /// The client moves its files itself (see the module documentation).
    file_transfers: bool,
    /// When the transfer step next has something to do (infinity: nothing waits).
    next_transfer_check: Time,
}

impl ClientControl {
    /// The control loop over `state`, starting at `start` with everything available.
    /// `boinc_compat`: CPU tasks compute while the host is off (BOINC's emulator).
    /// `existing_jobs_only`: never contact a server.
    pub fn new(
        mut state: ClientState,
        policy: Policy,
        boinc_compat: bool,
        existing_jobs_only: bool,
        start: Time,
    ) -> Self {
        assign_missing_gpu_instances(&mut state);
        // The running tasks go on (the startup commands hand them to the processes), but
        // a task the state calls suspended in memory has no process to resume: like a
        // client starting afresh, it starts again from its checkpoint.
        for job in &mut state.jobs {
            if let Some(task) = job.task.as_mut()
                && task.scheduler_state == SchedulerState::Preempted
            {
                task.quit();
            }
        }
        let running = state.job_ids().filter(|&id| state.job(id).is_running()).collect();
        let nprojects = state.projects.len();
        ClientControl {
            state: Box::new(state),
            stand_in: None,
            identity: ClientIdentity::default(),
            policy,
            boinc_compat,
            existing_jobs_only,
            host: HostView::UP,
            suspension_changed: false,
            computing: ResourceMap::from_fn(|_| true),
            new_tasks_wait_for_disk: false,
            last_schedule_time: start,
            last_accounting_time: start,
            usage: vec![ResourceMap::default(); nprojects],
            running,
            awaiting_checkpoint: Vec::new(),
            next_fetch_check: start,
            next_rpc_allowed: start,
            report_poll: None,
            next_report_allowed: start,
            next_report_due: f64::INFINITY,
            clock_seen: None,
            last_decision: None,
            report_batching: Vec::new(),
            batching_scratch: BatchingScratch::default(),
            report_scratch: ReportScratch::default(),
            decisions: 0,
            rpcs: 0,
            acked_jobs: 0,
            decision_scratch: DecisionScratch::default(),
            request_scratch: RequestScratch::default(),
            debt_targets: TargetCache::default(),
            file_transfers: false,
            next_transfer_check: f64::INFINITY,
        }
    }

    /// What the client says about itself in scheduler requests.
    pub fn identity(&self) -> &ClientIdentity {
        &self.identity
    }

    /// Sets what the client says about itself in scheduler requests (the live client's
    /// platform; the default is a Linux client).
    pub fn set_identity(&mut self, identity: ClientIdentity) {
        self.identity = identity;
    }

    /// The client state.
    pub fn state(&self) -> &ClientState {
        &self.state
    }

    /// The client state, for user actions (suspend a project, change the run mode).
    pub fn state_mut(&mut self) -> &mut ClientState {
        &mut self.state
    }

    /// Lends the client state out (to a session that must read it while the loop waits
    /// for the session); [`ClientControl::restore_state`] puts it back.
    pub fn take_state(&mut self) -> Box<ClientState> {
        let stand_in = self.stand_in.take().unwrap_or_default();
        std::mem::replace(&mut self.state, stand_in)
    }

    /// Looks for results to report every `seconds` between work fetches, as a live
    /// client does ([`REPORT_POLL_INTERVAL`]); an emulated client reports at the
    /// work-fetch pace, as BOINC's emulator.
    pub fn poll_reports_every(&mut self, seconds: f64) {
        self.report_poll = Some(seconds.max(0.0));
    }

    /// Puts back the state lent by [`ClientControl::take_state`].
    pub fn restore_state(&mut self, state: Box<ClientState>) {
        let mut stand_in = std::mem::replace(&mut self.state, state);
        // Whatever was done to the stand-in while the state was out is forgotten.
        if stand_in.jobs.len() + stand_in.projects.len() + stand_in.files.len() > 0 {
            *stand_in = ClientState::default();
        }
        self.stand_in = Some(stand_in);
    }

    /// The job with this name in this project, if the client still holds it.
    pub fn find_job(&self, project: ProjectId, name: &str) -> Option<JobId> {
        self.state.job_ids().find(|&id| {
            let job = self.state.job(id);
            job.project == project && job.name == name
        })
    }

    /// Job `id`'s app failed (or kept crashing) with BOINC's `exit_status`: the job ends
    /// in a computation error and is reported as such (its project's session holds the
    /// project's RPCs back, seed 002).
    pub fn fail(&mut self, id: JobId, exit_status: i32, now: Time) {
        let job = &mut self.state.jobs[id.index()];
        job.state = JobState::ComputeError;
        job.ready_to_report = true;
        job.completed_time = now;
        job.end_task();
        job.exit_status = exit_status;
        let (project, elapsed) = (job.project, job.final_elapsed_time);
        let project = &mut self.state.projects[project.index()];
        project.njobs_error += 1;
        project.elapsed_time += elapsed;
        self.running.retain(|&j| j != id);
        self.awaiting_checkpoint.retain(|&j| j != id);
        self.next_fetch_check = now;
    }

    /// Job `id`'s task has ended for good: what its report tells the project about the
    /// app ([`crate::model::Job::report_app_output`]).
    pub fn report_app_output(&mut self, id: JobId, message: Option<&str>, stderr: Option<&str>) {
        if let Some(job) = self.state.jobs.get_mut(id.index()) {
            job.report_app_output(message, stderr);
        }
    }

    /// Job `id`'s project aborted it while its task ran (the caller has stopped the task):
    /// the job ends aborted and is reported as such.
    pub fn abort(&mut self, id: JobId, now: Time) {
        self.fail(id, EXIT_ABORTED_BY_PROJECT, now);
        self.state.jobs[id.index()].state = JobState::Aborted;
    }

    /// Asks the loop to look at fetching again at once (a user action changed things).
    pub fn wake_fetch(&mut self, now: Time) {
        self.next_fetch_check = self.next_fetch_check.min(now);
    }

    /// Jobs whose tasks are running, in start order.
    pub fn running(&self) -> &[JobId] {
        &self.running
    }

    /// Whether the disk was full at its latest measurement, for a client that moves its
    /// own files (one that does not writes none: its disk is never full to it).
    pub fn disk_full(&self) -> bool {
        self.file_transfers && disk_full(&self.state)
    }

    /// Whether the last decision kept tasks waiting that need a start, the disk being
    /// full (their slots' files could not be written).
    pub fn new_tasks_wait_for_disk(&self) -> bool {
        self.new_tasks_wait_for_disk
    }

    /// Decisions made so far.
    pub fn decisions(&self) -> u64 {
        self.decisions
    }

    /// Scheduler RPCs attempted so far.
    pub fn rpcs(&self) -> u64 {
        self.rpcs
    }

    /// The host's availability as the client last heard it.
    pub fn host(&self) -> HostView {
        self.host
    }

    /// The latest decision, if the client decided since it was last off.
    pub fn last_decision(&self) -> Option<&Decision> {
        self.last_decision.as_ref()
    }

    /// Where each task that is already running when the loop starts stands: its process
    /// is adopted as it is.
    pub fn startup_commands(&self) -> Vec<TaskCommand> {
        self.running.iter().filter_map(|&id| self.start_command(id)).collect()
    }

    fn start_command(&self, id: JobId) -> Option<TaskCommand> {
        self.task_spec(id).map(|spec| TaskCommand::Start(Box::new(spec)))
    }

    /// How job `id`'s task would be started now (its program, and its status as the
    /// state last heard it): what a rebuilt task actor takes over. `None` when the job
    /// has no task.
    pub fn task_spec(&self, id: JobId) -> Option<TaskSpec> {
        let job = self.state.job(id);
        let task = job.task.as_ref()?;
        let usage = self.state.app_version(job.app_version?).usage;
        let status = ProcessStatus {
            elapsed_time: task.elapsed_time,
            current_cpu_time: task.current_cpu_time,
            fraction_done: task.fraction_done,
            checkpoint_elapsed_time: task.checkpoint_elapsed_time,
            checkpoint_cpu_time: task.checkpoint_cpu_time,
            checkpoint_wall_time: task.checkpoint_wall_time,
            finished: false,
            peaks: task.peaks,
            process: task.process,
        };
        Some(TaskSpec {
            project: job.project,
            job: job.name.clone(),
            slot: task.slot,
            usage,
            gpu_instances: task.gpu_instances.clone(),
            status,
            program: task_program(&self.state, id, task.slot).unwrap_or_default(),
        })
    }

    /// The host's availability changed: each resource computes as the availability
    /// rule says ([`HostView::resource_may_compute`]).
    pub fn set_host(&mut self, host: HostView) {
        let compat = self.boinc_compat;
        let computing = ResourceMap::from_fn(|r| host.resource_may_compute(r, compat));
        self.set_host_with(host, computing);
    }

    /// The host's availability changed, and `computing` says per resource whether its
    /// tasks may compute now (what each resource's owner answered).
    pub fn set_host_with(&mut self, host: HostView, computing: ResourceMap<bool>) {
        if self.file_transfers && host != self.host {
            // The network may be back: the transfer step looks at once.
            self.next_transfer_check = f64::NEG_INFINITY;
        }
        // The user coming or going changes the memory the apps may use, too.
        if host.suspend != self.host.suspend || host.user_active != self.host.user_active {
            self.suspension_changed = true;
        }
        self.host = host;
        self.computing = computing;
    }

    /// Whether tasks on `resource` may compute now.
    pub fn resource_computes(&self, resource: ResourceType) -> bool {
        self.computing[resource]
    }

    /// Whether job `id`'s task may compute now.
    pub fn may_compute(&self, id: JobId) -> bool {
        let job = &self.state.jobs[id.index()];
        job.app_version.is_some_and(|av| {
            self.computing[self.state.app_versions[av.index()].usage.main_resource()]
        })
    }

    /// Adds the instance-seconds the running tasks used over `dt` seconds to the
    /// per-project usage that the next accounting charges.
    pub fn accumulate_usage(&mut self, dt: f64) {
        if dt <= 0.0 {
            return;
        }
        let host = self.host;
        let totals = &mut self.state.time_stats.totals;
        totals.advance(dt, host.on && host.active, host.on && host.gpu_active);
        // CPU jobs asking for more CPUs than the host has between them (a multithread
        // job started beside jobs running on to their checkpoints) share the CPUs: each
        // is charged its share of what the host has, not what it asked for, or the
        // projects would be charged for CPUs that don't exist.
        let ncpus = f64::from(self.state.ncpus());
        let cpu_demand: f64 = self
            .running
            .iter()
            .filter(|&&id| self.may_compute(id))
            .filter_map(|&id| self.state.jobs[id.index()].app_version)
            .map(|av| self.state.app_versions[av.index()].usage)
            .filter(|usage| usage.coprocessor.is_none())
            .map(|usage| usage.avg_ncpus.clamp(0.0, ncpus))
            .sum();
        let cpu_scale = if cpu_demand > ncpus && ncpus > 0.0 { ncpus / cpu_demand } else { 1.0 };
        for &id in &self.running {
            if !self.may_compute(id) {
                continue;
            }
            let job = &self.state.jobs[id.index()];
            let Some(av) = job.app_version else { continue };
            let usage = self.state.app_versions[av.index()].usage;
            let project_usage = &mut self.usage[job.project.index()];
            let scale = if usage.coprocessor.is_none() { cpu_scale } else { 1.0 };
            project_usage[ResourceType::Cpu] += usage.avg_ncpus * scale * dt;
            if let Some((r, n)) = usage.coprocessor {
                project_usage[r] += n * dt;
            }
        }
    }

    /// What the process of running job `id` reports.
    pub fn apply_status(&mut self, id: JobId, status: &ProcessStatus) {
        if let Some(task) = self.state.jobs.get_mut(id.index()).and_then(|j| j.task.as_mut()) {
            take_status(task, status);
        }
    }

    /// The app of job `id`'s task crashed (its restart supervision now stands at
    /// `crashes`) and is restarted at `restart_at`: kept in the task, so that the state
    /// file carries the restart limit's count over a restart of the client.
    pub fn note_crash(&mut self, id: JobId, crashes: &RestartTracker, restart_at: Time) {
        if let Some(task) = self.state.jobs.get_mut(id.index()).and_then(|j| j.task.as_mut()) {
            task.crashes.clone_from(crashes);
            task.restart_at = Some(restart_at);
        }
    }

    /// The app of job `id`'s task runs at `now`: a planned restart is behind it, and
    /// once it has run healthily for `policy`'s healthy period the crash streak starts
    /// over (as its task's own supervision does).
    pub fn note_app_running(&mut self, id: JobId, policy: &RestartPolicy, now: Time) {
        if let Some(task) = self.state.jobs.get_mut(id.index()).and_then(|j| j.task.as_mut()) {
            task.restart_at = None;
            if task.crashes.streak() > 0 {
                task.crashes.running(policy, now);
            }
        }
    }

    /// The crash supervision and planned restart that job `name`'s task in `slot`
    /// carries (from the state file, after a restart of the client).
    pub fn task_crashes(&self, name: &str, slot: u32) -> Option<(RestartTracker, Option<Time>)> {
        self.state.jobs.iter().find_map(|job| {
            let task = job.task.as_ref().filter(|t| t.slot == slot && job.name == name)?;
            Some((task.crashes.clone(), task.restart_at))
        })
    }

    /// [`ClientControl::apply_status`] for every running job, in
    /// [`ClientControl::running`] order, with what `status` says the process in each
    /// task's slot reports (`None`: no process there); the jobs whose processes finished
    /// are added to `finished` with their slots. One pass, each job looked up once, for a
    /// driver that hears every process at every step.
    pub fn apply_statuses(
        &mut self,
        status: impl Fn(u32) -> Option<ProcessStatus>,
        finished: &mut Vec<(JobId, u32)>,
    ) {
        for &id in &self.running {
            let Some(task) = self.state.jobs.get_mut(id.index()).and_then(|j| j.task.as_mut())
            else {
                continue;
            };
            let Some(status) = status(task.slot) else { continue };
            take_status(task, &status);
            if status.finished {
                finished.push((id, task.slot));
            }
        }
    }

    /// Job `id`'s app finished at `now`: the duration correction factor learns from it,
    /// the result is ready to report (once its outputs are uploaded, for a client that
    /// moves its files), and fetching is looked at again.
    pub fn complete(&mut self, id: JobId, now: Time) {
        let elapsed = self.state.job(id).elapsed_time();
        learn_duration_correction(&mut self.state, id, elapsed);
        let uploads = self.file_transfers && self.outputs_to_upload(id, now);
        let job = &mut self.state.jobs[id.index()];
        // Outputs the project wants back go up first; the job is reported after.
        job.state = if uploads { JobState::FilesUploading } else { JobState::FilesUploaded };
        job.ready_to_report = !uploads;
        job.completed_time = now;
        job.end_task();
        let (project, app_version) = (job.project, job.app_version);
        let counts = &mut self.state.projects[project.index()];
        counts.njobs_success += 1;
        counts.elapsed_time += elapsed;
        // A project that limits the jobs a host may hold answers "no work" while the
        // host is at the limit; a job done makes room, so its backoff for the job's
        // resource ends here rather than minutes later (as BOINC's client does).
        if let Some(av) = app_version {
            let resource = match self.state.app_versions[av.index()].usage.coprocessor {
                Some((coprocessor, _)) => coprocessor,
                None => ResourceType::Cpu,
            };
            clear_backoff(&mut self.state.projects[project.index()].resources[resource]);
        }
        self.running.retain(|&j| j != id);
        self.awaiting_checkpoint.retain(|&j| j != id);
        // A completion frees resources and changes the buffer.
        self.next_fetch_check = now;
    }

    /// Brings the debts up to date with the usage since the last accounting.
    fn account(&mut self, facts: &[ProjectFacts], now: Time) {
        let dt = now - self.last_accounting_time;
        if dt <= 0.0 {
            return;
        }
        match self.policy {
            Policy::Legacy => update_legacy_debt(&mut self.state, facts, &self.usage, dt),
            _ => update_short_term_debt(&mut self.state, facts, &self.usage, dt),
        }
        update_long_term_debt_with(
            &mut self.state,
            facts,
            &self.usage,
            dt,
            now,
            &mut self.debt_targets,
        );
        update_rec(&mut self.state, &self.usage, now);
        for usage in &mut self.usage {
            *usage = ResourceMap::default();
        }
        self.last_accounting_time = now;
    }

    /// One decision and its enforcement at `now`; returns what the processes must do,
    /// in order. Nothing is decided while the host is off (unless in BOINC-compatible
    /// mode, where CPU work goes on).
    pub fn schedule(&mut self, now: Time) -> Vec<TaskCommand> {
        self.suspension_changed = false;
        if !self.host.on && !self.boinc_compat {
            self.last_decision = None;
            return Vec::new();
        }
        let facts = self.decision_scratch.gather_facts(&self.state);
        self.account(&facts, now);
        // What the host's conditions suspend (BOINC's suspend reasons: a time-of-day
        // window, an exclusive app, ...) is decided as the user's "never" would be for
        // computing or the GPUs: the same run list, the same preemptions; the user's own
        // modes are back once the decision is made.
        let modes = (self.state.run_mode, self.state.gpu_mode);
        if self.host.suspend.cpu.is_some() {
            self.state.run_mode = RunMode::Never;
        } else if self.host.suspend.gpu.is_some() {
            self.state.gpu_mode = RunMode::Never;
        }
        // Enforcement holds the apps to the busy memory limit; an idle user's is the
        // idle one (BOINC's ram_max_used_idle_pct), in force for this decision only.
        let busy_memory = self.state.prefs.ram_max_used_busy_pct;
        if !self.host.user_active {
            self.state.prefs.ram_max_used_busy_pct = self.state.prefs.ram_max_used_idle_pct;
        }
        // On a full disk a task cannot start (its slot's files could not be written, and
        // it would end at once as an error): the tasks that would need a start wait,
        // for this decision, as if suspended; those with a process run on.
        let held = if self.file_transfers && disk_full(&self.state) {
            hold_starts(&mut self.state)
        } else {
            Vec::new()
        };
        // Accounting changes debts, not the jobs the facts describe: they still hold.
        let mut decision = decide_with_scratch(
            &self.state,
            facts,
            self.policy,
            self.last_schedule_time,
            now,
            &mut self.decision_scratch,
        );
        (self.state.run_mode, self.state.gpu_mode) = modes;
        self.state.prefs.ram_max_used_busy_pct = busy_memory;
        for &id in &held {
            self.state.jobs[id.index()].suspended = false;
        }
        self.new_tasks_wait_for_disk = !held.is_empty();
        self.decisions += 1;
        let starts_edf_job = decision.enforcement.actions.iter().any(|a| {
            matches!(a.kind, ActionKind::Start { .. } | ActionKind::Resume { .. })
                && decision
                    .run_list
                    .entries
                    .iter()
                    .any(|e| e.job == a.job && e.reason == RunReason::Edf)
        });
        apply_enforcement(&mut self.state, &decision.enforcement, now);
        self.last_schedule_time = now;
        let mut commands = Vec::new();
        // A task watched again in this decision keeps only its last watch command (see
        // `dedup_watches`): the command to stop watching it is not made at all, which
        // spares a copy of its name at every decision it waits for its checkpoint.
        // The slots are sorted once, so that a host with many tasks waiting for their
        // checkpoints pays a search per task rather than a pass over every action.
        let mut watched_again: Vec<u32> = Vec::new();
        if !self.awaiting_checkpoint.is_empty() {
            watched_again.extend(
                decision
                    .enforcement
                    .actions
                    .iter()
                    .filter(|action| {
                        matches!(action.kind, ActionKind::KeepRunning)
                            && action.reason == ActionReason::NotCheckpointed
                    })
                    .map(|action| slot_of(self.state.job(action.job))),
            );
            watched_again.sort_unstable();
        }
        for &id in &self.awaiting_checkpoint {
            let job = self.state.job(id);
            if watched_again.binary_search(&slot_of(job)).is_ok() {
                continue;
            }
            commands.push(TaskCommand::WatchCheckpoint {
                project: job.project,
                job: job.name.clone(),
                slot: slot_of(job),
                watch: false,
            });
        }
        self.awaiting_checkpoint.clear();
        for action in &decision.enforcement.actions {
            let job = self.state.job(action.job);
            match &action.kind {
                ActionKind::Start { .. } => {
                    if !self.running.contains(&action.job) {
                        self.running.push(action.job);
                    }
                    commands.extend(self.start_command(action.job));
                }
                ActionKind::Resume { gpu_instances } => {
                    if !self.running.contains(&action.job) {
                        self.running.push(action.job);
                    }
                    commands.push(TaskCommand::Resume {
                        project: job.project,
                        job: job.name.clone(),
                        slot: slot_of(job),
                        gpu_instances: gpu_instances.clone(),
                    });
                }
                ActionKind::Preempt { remove_from_memory } => {
                    self.running.retain(|&j| j != action.job);
                    commands.push(TaskCommand::Preempt {
                        project: job.project,
                        job: job.name.clone(),
                        slot: slot_of(job),
                        remove_from_memory: *remove_from_memory,
                        for_deadline: starts_edf_job,
                    });
                }
                ActionKind::KeepRunning => {
                    if action.reason == ActionReason::NotCheckpointed {
                        self.awaiting_checkpoint.push(action.job);
                        commands.push(TaskCommand::WatchCheckpoint {
                            project: job.project,
                            job: job.name.clone(),
                            slot: slot_of(job),
                            watch: true,
                        });
                    }
                }
            }
        }
        // A watch that is cleared and set again in one decision is no change: keep only
        // the last word for each task.
        dedup_watches(&mut commands);
        report_batching_into(
            &self.state,
            &decision.facts,
            &decision.rr_sim,
            &mut self.report_batching,
            &mut self.batching_scratch,
        );
        // Whether the choice over this outlook asks for work decides when the RPC step
        // looks next; the step makes the same choice from the same outlook.
        let wanted = select_work_fetch(&mut decision.fetch).request.is_some();
        self.plan_fetch_check(&decision, wanted, true, now);
        if let Some(previous) = self.last_decision.replace(decision) {
            self.decision_scratch.recycle(previous);
        }
        commands
    }

    /// When the fetch decision could next change without any other event: a resource's
    /// buffer reaching its low-water mark, a backoff expiring, a report falling due.
    /// `fetch_wanted`: the decision's outlook may ask for work, so the RPC step looks
    /// now. `fresh`: the decision was just made on this state (its facts still hold).
    fn plan_fetch_check(
        &mut self,
        decision: &Decision,
        fetch_wanted: bool,
        fresh: bool,
        now: Time,
    ) {
        if fetch_wanted {
            self.next_fetch_check = now;
            if self.report_poll.is_some() {
                let waiting =
                    fresh.then(|| decision.facts.iter().map(|f| f.ready_to_report as usize).sum());
                let (batching, scratch) = (&self.report_batching, &mut self.report_scratch);
                self.next_report_due =
                    next_report_time_with(&self.state, now, batching, waiting, scratch)
                        .unwrap_or(f64::INFINITY);
            }
            return;
        }
        let low_water = self.state.prefs.work_buf_min();
        let mut next = f64::INFINITY;
        for (r, sim) in decision.rr_sim.resources.iter() {
            if sim.instances > 0.0 && self.state.instances(r) > 0 {
                // The prediction is made afresh at every check and can keep landing just
                // short of the low-water mark; like the real client, look again no sooner
                // than a poll interval unless an event (a completion, new jobs) asks.
                let when = now + sim.saturated_time - low_water;
                if when > now {
                    next = next.min(when.max(now + FETCH_POLL_INTERVAL));
                }
            }
        }
        for project in &self.state.projects {
            for t in [project.min_rpc_time, project.latency_limited_until.unwrap_or(0.0)] {
                if t > now {
                    next = next.min(t);
                }
            }
            for (_, resource) in project.resources.iter() {
                if resource.backoff_time > now {
                    next = next.min(resource.backoff_time);
                }
            }
        }
        // A fresh decision's facts count the results waiting to be reported: nothing
        // since has completed or reported a job.
        let waiting =
            fresh.then(|| decision.facts.iter().map(|f| f.ready_to_report as usize).sum());
        let batching = &self.report_batching;
        let scratch = &mut self.report_scratch;
        let due = next_report_time_with(&self.state, now, batching, waiting, scratch);
        if let Some(due) = due {
            next = next.min(due);
        }
        self.next_report_due = due.unwrap_or(f64::INFINITY);
        self.next_fetch_check = next;
    }

    /// Whether the RPC step goes on at `now`.
    pub fn rpc_gate(&mut self, now: Time) -> RpcGate {
        self.follow_clock(now);
        if self.existing_jobs_only || now < self.next_fetch_check {
            return RpcGate::Closed;
        }
        if now < self.next_rpc_allowed {
            // Within the work-fetch minute only a report that is due goes, and the report
            // poll looks no more often than its interval, whatever it finds.
            let Some(poll) = self.report_poll else { return RpcGate::Closed };
            if now < self.next_report_allowed || now < self.next_report_due {
                return RpcGate::Closed;
            }
            self.next_report_allowed = now + poll;
        }
        if !self.host.on || !self.host.connected {
            // The availability change that brings the host back triggers a new decision
            // and a new plan.
            self.next_fetch_check = f64::INFINITY;
            return RpcGate::Offline;
        }
        RpcGate::Open
    }

    /// Takes in the wall clock at `now`: the service calls this at every poll, so that
    /// a clock set back is noticed at once and not only at the next control step, which
    /// was planned in the old clock and would be that much further away. Returns by how
    /// much the clock went back since it was last seen, when it did.
    ///
    /// A wall clock set back leaves no wait hours long: the backoffs in the state are
    /// brought within their longest waits after `now` ([`clamp_backoffs_to_now`]), the
    /// loop's poll interval moves back with the clock and its next check is due now.
    /// The backoffs are looked at on the first call (the clock may have gone back while
    /// the client was down) and after each step back, not at every call: with the clock
    /// going forward nothing would move, and this is the emulator's hot path.
    pub fn follow_clock(&mut self, now: Time) -> Option<f64> {
        let set_back = self
            .clock_seen
            .filter(|&seen| now + CLOCK_BACK_TOLERANCE < seen)
            .map(|seen| seen - now);
        if let Some(back) = set_back {
            // The poll interval keeps what was left of it; the next check is due now.
            self.next_rpc_allowed -= back;
            self.next_report_allowed -= back;
            self.next_fetch_check = self.next_fetch_check.min(now);
        }
        if set_back.is_some() || self.clock_seen.is_none() {
            clamp_backoffs_to_now(&mut self.state, now);
        }
        if self.clock_seen.is_none() {
            // The first look at the clock starts the client's session.
            self.state.time_stats.totals.start_session(now);
        }
        self.clock_seen = Some(now);
        set_back
    }

    /// Projects whose master page must be read before anything else (seed 002), now
    /// (none of them with a fetch or RPC already under way). A project the user
    /// detached is never contacted again.
    pub fn master_fetches_due(&self, now: Time) -> Vec<ProjectId> {
        self.state
            .project_ids()
            .filter(|&p| {
                let project = self.state.project(p);
                project.master_fetch_pending
                    && !project.detached
                    && project.min_rpc_time <= now
                    && !project.rpc_in_flight
            })
            .collect()
    }

    /// A master-page fetch of `project` starts: nothing else goes to the project until
    /// [`ClientControl::end_master_fetch`].
    pub fn begin_master_fetch(&mut self, project: ProjectId) {
        if let Some(p) = self.state.projects.get_mut(project.index()) {
            p.rpc_in_flight = true;
        }
    }

    /// A master-page fetch of `project` ended, leaving the project's protocol state
    /// `rpc_state`.
    pub fn end_master_fetch(&mut self, project: ProjectId, rpc_state: &ProjectRpcState) {
        self.set_project_rpc_state(project, rpc_state);
        if let Some(p) = self.state.projects.get_mut(project.index()) {
            p.rpc_in_flight = false;
        }
    }

    /// Operations under way: projects with a scheduler RPC or master-page fetch in flight.
    pub fn in_flight(&self) -> impl Iterator<Item = ProjectId> + '_ {
        self.state.project_ids().filter(|&p| self.state.project(p).rpc_in_flight)
    }

    /// A project's RPC session changed its protocol state.
    pub fn set_project_rpc_state(&mut self, project: ProjectId, rpc_state: &ProjectRpcState) {
        if let Some(p) = self.state.projects.get_mut(project.index()) {
            rpc_state.write_to(p);
        }
    }

    /// The scheduler RPC to make now: the work-fetch choice over the latest decision's
    /// outlook ([`select_work_fetch`]), then [`ClientControl::rpc_call_for`]. `None` when
    /// nothing is wanted; the next look is planned then.
    pub fn rpc_call(&mut self, now: Time) -> Option<RpcCall> {
        let decision = self.last_decision.as_mut()?;
        let choice = select_work_fetch(&mut decision.fetch);
        self.rpc_call_for(choice, now)
    }

    /// The outlook the work-fetch choice is made from: the latest decision's. A caller
    /// that makes the choice itself hands it to [`ClientControl::rpc_call_for`].
    pub fn fetch_outlook(&self) -> Option<&FetchOutlook> {
        self.last_decision.as_ref().map(|d| &d.fetch)
    }

    /// Lends the latest decision's outlook to a caller that makes the work-fetch choice
    /// elsewhere (the actors' fetch actor), without copying it; `None` before the first
    /// decision. The borrower gives it back with [`ClientControl::return_fetch_outlook`]
    /// before the decision is used again (`explain` reads the scores the choice wrote).
    pub fn lend_fetch_outlook(&mut self) -> Option<FetchOutlook> {
        self.last_decision.as_mut().map(|d| std::mem::take(&mut d.fetch))
    }

    /// Takes back an outlook lent by [`ClientControl::lend_fetch_outlook`], with what the
    /// choice wrote into it. An outlook from before a newer decision is dropped: the
    /// newer one's stays.
    pub fn return_fetch_outlook(&mut self, outlook: FetchOutlook) {
        if let Some(decision) = self.last_decision.as_mut()
            && decision.fetch == FetchOutlook::default()
        {
            decision.fetch = outlook;
        }
    }

    /// The scheduler RPC to make now, given the work-fetch choice made over the latest
    /// decision's outlook: its work request, else a report that is due (asking for the
    /// project's share of any shortfall on the way; a batched project whose queue has
    /// drained to its refill point asks for its whole uncovered share, see
    /// [`piggyback_request`]). A well-stocked project's short-deadline results wait
    /// ([`report_batching`](crate::work_fetch::report_batching)). `None` when nothing is
    /// wanted; the next look is planned then.
    pub fn rpc_call_for(&mut self, choice: FetchChoice, now: Time) -> Option<RpcCall> {
        let decision = self.last_decision.as_ref()?;
        // Work fetched onto a full disk could not be downloaded: only reports go.
        let full = self.file_transfers && disk_full(&self.state);
        // Within the work-fetch minute (the report poll opened the step) only reports go,
        // with what work they may piggyback.
        let fetch = choice.request.filter(|_| !full && now >= self.next_rpc_allowed);
        // Reports are looked at when nothing is fetched, or when one may have to go first.
        let batching = &self.report_batching;
        let due_report = if fetch.is_none() || self.state.time_stats.late_report_margin() > 0.0 {
            let may_contact = |p| {
                let project = self.state.project(p);
                project.min_rpc_time <= now && !project.rpc_in_flight
            };
            let scratch = &mut self.report_scratch;
            most_urgent_report_with(&self.state, now, batching, may_contact, scratch)
        } else {
            None
        };
        let report_first = due_report.filter(|&(project, reason)| {
            fetch
                .is_none_or(|f| f.project != project && report_goes_first(&self.state, reason, now))
        });
        let request = match (report_first, fetch) {
            // Ahead of a work request to another project: the reports alone, so that the
            // report's turn doesn't also buy the project work the fetch policy did not
            // choose (more jobs due soon held by a host that may drop out of reach).
            (Some((project, _)), Some(_)) => {
                WorkRequest { project, resources: Default::default(), work_req_seconds: 0.0 }
            }
            (Some((project, _)), None) if full => {
                WorkRequest { project, resources: Default::default(), work_req_seconds: 0.0 }
            }
            (Some((project, _)), None) => {
                let batching = batching.get(project.index()).copied().unwrap_or_default();
                let (rr, facts) = (&decision.rr_sim, &decision.facts);
                piggyback_request(&self.state, rr, facts, project, batching, now)
            }
            (None, Some(request)) => request,
            (None, None) => {
                if let Some(decision) = self.last_decision.take() {
                    self.plan_fetch_check(&decision, false, false, now);
                    self.last_decision = Some(decision);
                }
                return None;
            }
        };
        if self.state.project(request.project).rpc_in_flight {
            // The decision was made before the project's RPC started: the next one picks
            // another project.
            return None;
        }
        let estimated_delay = self
            .last_decision
            .as_ref()
            .map(|d| d.rr_sim.resources.map(|_, r| r.saturated_time))
            .unwrap_or_default();
        self.rpcs += 1;
        self.state.projects[request.project.index()].rpc_in_flight = true;
        self.next_rpc_allowed = now + FETCH_POLL_INTERVAL;
        if let Some(poll) = self.report_poll {
            self.next_report_allowed = now + poll;
        }
        self.next_fetch_check = now;
        let reported = self
            .state
            .jobs
            .iter()
            .filter(|j| j.project == request.project && j.ready_to_report && !j.got_server_ack)
            .map(|j| j.name.clone())
            .collect();
        Some(RpcCall { request, reported, estimated_delay })
    }

    /// The scheduler request for `call` at `now` ([`super::build_request`] with this
    /// client's identity).
    pub fn build_request(&self, call: &RpcCall, now: Time) -> SchedulerRequest<'_> {
        build_request(&self.state, call, &self.identity, now)
    }

    /// The scheduler request for `call` at `now`, owning everything (for a session
    /// that outlives this borrow of the state), made in the buffers kept from one
    /// request to the next.
    pub fn build_owned_request(&mut self, call: &RpcCall, now: Time) -> SchedulerRequest<'static> {
        let mut scratch = std::mem::take(&mut self.request_scratch);
        let request =
            build_request_with(&self.state, call, &self.identity, now, &mut scratch).into_owned();
        self.request_scratch = scratch;
        request
    }

    /// [`ClientControl::build_owned_request`] into `target`, a request kept from an
    /// earlier session: its text and lists are rewritten in the room they have
    /// ([`SchedulerRequest::refill`]), and the buffers the request was built in are kept
    /// for the next.
    pub fn refill_owned_request(
        &mut self,
        call: &RpcCall,
        now: Time,
        target: &mut SchedulerRequest<'static>,
    ) {
        let mut scratch = std::mem::take(&mut self.request_scratch);
        let mut request = build_request_with(&self.state, call, &self.identity, now, &mut scratch);
        target.refill(&mut request);
        scratch.recycle(request);
        self.request_scratch = scratch;
    }

    /// Sends the scheduler request for `call` at `now` with `send` (which answers at
    /// once, as the emulated world does) and returns `send`'s answer. The request is
    /// [`super::build_request_with`]'s, in buffers kept from one request to the next.
    pub fn send_request<R>(
        &mut self,
        call: &RpcCall,
        now: Time,
        send: impl FnOnce(&SchedulerRequest<'_>) -> R,
    ) -> R {
        let mut scratch = std::mem::take(&mut self.request_scratch);
        let request = build_request_with(&self.state, call, &self.identity, now, &mut scratch);
        let answer = send(&request);
        scratch.recycle(request);
        self.request_scratch = scratch;
        answer
    }

    /// The RPC `call` ended at `now`: `reply` is the server's answer (`None`: it failed).
    /// The request was sent either way, so the project's RPC sequence number moves on;
    /// a reply is taken into the state ([`super::apply_reply`]: new jobs queued, reported
    /// results acknowledged; the reply is used up). Returns what the reply meant; its `work` is what the
    /// project's RPC session settles backoff with ([`super::apply_rpc_outcome`]), after
    /// which [`ClientControl::set_project_rpc_state`] records it.
    pub fn finish_rpc(
        &mut self,
        call: &RpcCall,
        reply: Option<SchedulerReply>,
        now: Time,
    ) -> Option<ReplyOutcome> {
        let project = call.request.project;
        if let Some(record) = self.state.projects.get_mut(project.index()) {
            record.rpc_in_flight = false;
            record.rpc_seqno += 1;
        }
        let outcome = apply_reply(&mut self.state, project, reply?, now);
        self.acked_jobs += outcome.acknowledged;
        self.transfers_after_reply(&outcome, now);
        self.detach_if_done(project, now);
        Some(outcome)
    }

    /// A project the user asked to leave once its work is done (`detach_when_done`) is
    /// detached once every job it sent was reported and acknowledged, as BOINC's client
    /// does after the RPC that reports its last result.
    fn detach_if_done(&mut self, project: ProjectId, now: Time) {
        let Some(record) = self.state.projects.get(project.index()) else { return };
        if !record.detach_when_done || record.detached {
            return;
        }
        let working = self.state.jobs.iter().any(|j| j.project == project && !j.got_server_ack);
        if working {
            return;
        }
        let action = UserAction::Detach(record.master_url.clone());
        // The project has no job left: the detach has nothing to stop or forget.
        if apply_user_action(&mut self.state, &action, now).is_ok() {
            self.state.projects[project.index()].detach_when_done = false;
        }
    }

    /// The earliest moment the client itself wants to look again: the first scheduling
    /// check ([`SCHEDULING_CHECK_INTERVAL`]) at or after the end of a running task's time
    /// slice, the fetch plan, and at least once a scheduling period.
    pub fn next_wakeup(&self, now: Time) -> Time {
        let period = self.state.prefs.scheduling_period();
        let mut next = if self.suspension_changed { now } else { now + period };
        // Tasks held back by a full disk start as soon as a look at the disk finds room.
        if self.new_tasks_wait_for_disk {
            next = next.min(now + FULL_DISK_RECHECK);
        }
        // The beat after a slice's end never comes earlier for a later end, so the first
        // slice to end gives the first beat: the beat is worked out once, not per task.
        let first_slice_end = self
            .running
            .iter()
            .filter_map(|&id| self.state.jobs[id.index()].task.as_ref())
            .map(|task| task.run_start_time + period)
            .filter(|&slice_end| slice_end > now)
            .fold(f64::INFINITY, f64::min);
        if first_slice_end < f64::INFINITY {
            let check =
                (first_slice_end / SCHEDULING_CHECK_INTERVAL).ceil() * SCHEDULING_CHECK_INTERVAL;
            next = next.min(check.max(first_slice_end));
        }
        if !self.existing_jobs_only {
            next = next.min(self.next_fetch_check.max(self.next_rpc_allowed));
            if self.report_poll.is_some() {
                next = next.min(self.next_report_due.max(self.next_report_allowed));
            }
        }
        if self.file_transfers {
            next = next.min(self.next_transfer_check.max(now));
        }
        next
    }

    /// Forgets acknowledged jobs (and workunits no job needs) once there are more than
    /// 8 of them and they are more than a sixteenth of the list, so that every decision
    /// costs what the live queue costs, not what the whole run has seen. Returns whether
    /// anything was forgotten.
    pub fn compact(&mut self) -> bool {
        if self.acked_jobs <= COMPACT_MIN_ACKED
            || self.acked_jobs * COMPACT_ACKED_SHARE <= self.state.jobs.len()
        {
            return false;
        }
        let keep: Vec<bool> = self.state.jobs.iter().map(|j| !j.got_server_ack).collect();
        self.retain_jobs(&keep);
        self.acked_jobs = 0;
        true
    }

    /// Keeps the jobs whose entry in `keep` is true (and the workunits they need),
    /// renumbering what refers to them.
    fn retain_jobs(&mut self, keep: &[bool]) {
        let mut new_index = vec![u32::MAX; keep.len()];
        let mut next = 0u32;
        for (index, &k) in keep.iter().enumerate() {
            if k {
                new_index[index] = next;
                next += 1;
            }
        }
        let mut workunit_used = vec![false; self.state.workunits.len()];
        for (job, &k) in self.state.jobs.iter().zip(keep) {
            if k {
                workunit_used[job.workunit.index()] = true;
            }
        }
        let mut workunit_index = vec![u32::MAX; workunit_used.len()];
        let mut next_wu = 0u32;
        for (index, &used) in workunit_used.iter().enumerate() {
            if used {
                workunit_index[index] = next_wu;
                next_wu += 1;
            }
        }
        let mut position = 0;
        self.state.workunits.retain(|_| {
            let used = workunit_used[position];
            position += 1;
            used
        });
        let mut position = 0;
        self.state.jobs.retain(|_| {
            let k = keep[position];
            position += 1;
            k
        });
        for job in &mut self.state.jobs {
            job.workunit = crate::model::WorkunitId(workunit_index[job.workunit.index()]);
        }
        self.running.retain(|id| keep[id.index()]);
        self.awaiting_checkpoint.retain(|id| keep[id.index()]);
        let remap = |id: &mut JobId| *id = JobId(new_index[id.index()]);
        self.running.iter_mut().for_each(remap);
        self.awaiting_checkpoint.iter_mut().for_each(remap);
        // The latest decision still names jobs by their old indices; the RPC step only
        // reads its project-level request, and the next step decides afresh.
    }

    /// cc_config's `<abort_jobs_on_exit>` at the client's exit: every job not done
    /// computing is aborted (it is reported as aborted at the next scheduler RPC);
    /// returns the commands that end the tasks of those that have one. Without the
    /// option, nothing.
    pub fn abort_jobs_on_exit(&mut self, now: Time) -> Vec<TaskCommand> {
        if !self.state.config.abort_jobs_on_exit {
            return Vec::new();
        }
        let unfinished: Vec<String> = self
            .state
            .jobs
            .iter()
            .filter(|job| !job.state.computing_done())
            .map(|job| job.name.clone())
            .collect();
        let mut commands = Vec::new();
        for name in unfinished {
            // Not through `user_action`: that schedules again, and would start the
            // next job. Two projects' jobs of one name: the first is aborted under it,
            // the other is then not found and stays (BOINC names results uniquely).
            if let Ok(effect) =
                apply_user_action(&mut self.state, &UserAction::AbortTask(name), now)
            {
                self.end_aborted_tasks(&effect.abort, &mut commands);
            }
        }
        commands
    }

    /// Ends the tasks of the jobs a user action aborted: their processes are told to
    /// abort, and the jobs leave the running lists.
    fn end_aborted_tasks(&mut self, aborted: &[JobId], commands: &mut Vec<TaskCommand>) {
        for &id in aborted {
            let job = self.state.job(id);
            if let Some(task) = job.task.as_ref() {
                commands.push(TaskCommand::Abort {
                    project: job.project,
                    job: job.name.clone(),
                    slot: task.slot,
                });
            }
            self.state.jobs[id.index()].end_task();
            self.running.retain(|&j| j != id);
            self.awaiting_checkpoint.retain(|&j| j != id);
        }
    }

    /// Applies a user's action at `now` and schedules again at once, so that its effect
    /// on the processes follows in the same instant: returns what the processes must do.
    /// The caller charges the usage up to `now` first.
    pub fn user_action(
        &mut self,
        action: &UserAction,
        now: Time,
    ) -> Result<Vec<TaskCommand>, UserActionError> {
        let effect = apply_user_action(&mut self.state, action, now)?;
        if let UserAction::UpdateProject(_) = action {
            // The user waits for an answer: the RPC goes at the next step, not at the
            // end of the loop's own minute between RPCs.
            self.next_rpc_allowed = self.next_rpc_allowed.min(now);
        }
        // An attach may have added a project.
        self.usage.resize(self.state.projects.len(), ResourceMap::default());
        let mut commands = Vec::new();
        self.end_aborted_tasks(&effect.abort, &mut commands);
        if !effect.forget.is_empty() {
            let mut keep = vec![true; self.state.jobs.len()];
            for id in &effect.forget {
                keep[id.index()] = false;
            }
            self.acked_jobs -= effect
                .forget
                .iter()
                .filter(|id| self.state.job(**id).got_server_ack)
                .count()
                .min(self.acked_jobs);
            self.retain_jobs(&keep);
        }
        self.next_fetch_check = self.next_fetch_check.min(now);
        if self.file_transfers {
            // The network mode or a project's suspension may have changed.
            self.next_transfer_check = self.next_transfer_check.min(now);
        }
        commands.extend(self.schedule(now));
        Ok(commands)
    }
}

/// Marks suspended every runnable job whose task would need a start (none yet, or
/// quit): the jobs held back while the disk is full. Returns them, to be released.
fn hold_starts(state: &mut ClientState) -> Vec<JobId> {
    let mut held = Vec::new();
    for (index, job) in state.jobs.iter_mut().enumerate() {
        let needs_start =
            job.task.as_ref().is_none_or(|t| t.scheduler_state == SchedulerState::Uninitialized);
        if needs_start && !job.suspended && job.state == JobState::FilesDownloaded {
            job.suspended = true;
            held.push(JobId::from_index(index));
        }
    }
    held
}

/// The slot of a job's task (enforcement gives every started job one).
fn slot_of(job: &crate::model::Job) -> u32 {
    job.task.as_ref().map_or(u32::MAX, |t| t.slot)
}

/// A task takes in what its process reports.
fn take_status(task: &mut ActiveTask, status: &ProcessStatus) {
    task.elapsed_time = status.elapsed_time;
    task.current_cpu_time = status.current_cpu_time;
    task.fraction_done = status.fraction_done;
    task.checkpoint_elapsed_time = status.checkpoint_elapsed_time;
    task.checkpoint_cpu_time = status.checkpoint_cpu_time;
    task.checkpoint_wall_time = status.checkpoint_wall_time;
    task.peaks = task.peaks.max(status.peaks);
    task.process = status.process;
    if status.process.pid != 0 {
        task.working_set_size = status.process.working_set_size_smoothed;
    }
}

/// Keeps, for each task, only its last watch command (commands for other kinds keep
/// their places).
fn dedup_watches(commands: &mut Vec<TaskCommand>) {
    let mut index = commands.len();
    let mut seen: Vec<u32> = Vec::new();
    while index > 0 {
        index -= 1;
        if let TaskCommand::WatchCheckpoint { slot, .. } = &commands[index] {
            let key = *slot;
            if seen.contains(&key) {
                commands.remove(index);
            } else {
                seen.push(key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{SyntheticHost, synthetic_host};
    use crate::rpc_policy::on_rpc_success;

    /// A 2-CPU host with 4 jobs, none running, controlled from `start`.
    fn small_host_control(start: Time) -> ClientControl {
        small_host_control_with(start, false)
    }

    /// [`small_host_control`], fetching no work with `existing_jobs_only`.
    fn small_host_control_with(start: Time, existing_jobs_only: bool) -> ClientControl {
        let state = synthetic_host(SyntheticHost {
            ncpus: 2,
            njobs: 4,
            running_prefix: 0,
            seed: 3,
            now: start,
        });
        ClientControl::new(state, Policy::Seed, false, existing_jobs_only, start)
    }

    /// A finished task's CPU time is what its report carries (projects grant credit
    /// from it) and what the state keeps once the task is gone; a failed one's too.
    #[test]
    fn a_finished_task_reports_the_cpu_time_it_used() {
        let start = 100_000.0;
        let mut control = small_host_control(start);
        control.schedule(start);
        let running = control.running().to_vec();
        assert!(running.len() >= 2, "both CPUs busy");
        for (&id, cpu) in running.iter().zip([600.0, 300.0]) {
            let status = ProcessStatus {
                elapsed_time: 650.0,
                current_cpu_time: cpu,
                fraction_done: 1.0,
                finished: true,
                ..ProcessStatus::default()
            };
            control.apply_status(id, &status);
        }
        let (done, failed) = (running[0], running[1]);
        control.complete(done, start + 650.0);
        control.fail(failed, 1, start + 650.0);
        for (id, cpu) in [(done, 600.0), (failed, 300.0)] {
            let job = control.state().job(id);
            assert!(job.task.is_none());
            assert_eq!((job.final_cpu_time, job.final_elapsed_time), (cpu, 650.0));
        }
        let project = control.state().job(done).project;
        let reported = vec![control.state().job(done).name.clone()];
        let request = WorkRequest { project, resources: Default::default(), work_req_seconds: 0.0 };
        let call = RpcCall { request, reported, estimated_delay: Default::default() };
        let request = control.build_request(&call, start + 700.0);
        assert_eq!(request.results.len(), 1);
        assert_eq!(request.results[0].final_cpu_time, 600.0);
    }

    /// `<abort_jobs_on_exit>`: at the exit every unfinished job is aborted and its
    /// running task told to abort, and nothing new starts; without it, nothing is.
    #[test]
    fn jobs_are_aborted_on_exit_only_when_asked() {
        let start = 100_000.0;
        let mut control = small_host_control_with(start, true);
        control.schedule(start);
        let running = control.running().len();
        assert!(running >= 2);
        assert!(control.abort_jobs_on_exit(start + 1.0).is_empty(), "not asked");
        assert_eq!(control.running().len(), running);
        control.state.config.abort_jobs_on_exit = true;
        let commands = control.abort_jobs_on_exit(start + 2.0);
        let aborts = commands.iter().filter(|c| matches!(c, TaskCommand::Abort { .. })).count();
        assert_eq!((aborts, commands.len()), (running, running), "{commands:?}");
        assert!(control.running().is_empty());
        assert!(control.state().jobs.iter().all(|j| j.state.computing_done()));
    }

    /// What the host's conditions suspend (a time-of-day window here) stops the tasks
    /// at the very next step, and their end lets them run again; the user's own run
    /// mode is left as it was.
    #[test]
    fn a_suspension_stops_the_tasks_at_once_and_its_end_resumes_them() {
        use crate::control::{SuspendReason, SuspendReasons};
        let start = 100_000.0;
        // Its own jobs only: no work fetch makes a step due.
        let mut control = small_host_control_with(start, true);
        control.schedule(start);
        assert!(!control.running().is_empty());
        let later = start + 10.0;
        assert!(control.next_wakeup(later) > later, "nothing due");
        let window = SuspendReasons { cpu: Some(SuspendReason::TimeOfDay), ..SuspendReasons::NONE };
        control.set_host(HostView {
            active: false,
            gpu_active: false,
            suspend: window,
            ..HostView::UP
        });
        assert_eq!(control.next_wakeup(later), later, "a step at once");
        let commands = control.schedule(later);
        assert!(control.running().is_empty(), "{commands:?}");
        assert!(commands.iter().any(|c| matches!(c, TaskCommand::Preempt { .. })));
        assert_eq!(control.state().run_mode, RunMode::Auto, "the user's mode is kept");
        assert!(control.next_wakeup(later) > later, "decided");
        control.set_host(HostView::UP);
        control.schedule(later + 1.0);
        assert!(!control.running().is_empty(), "running again");
    }

    /// Work fetched onto a full disk could not be downloaded: while the disk is full no
    /// work is asked for (reports may still go); with room again, it is.
    #[test]
    fn no_work_is_asked_for_while_the_disk_is_full() {
        let start = 100_000.0;
        let asks = |call: &RpcCall| {
            crate::model::ResourceType::ALL.into_iter().any(|r| call.request.requests(r))
                || call.request.work_req_seconds > 0.0
        };
        let mut full = small_host_control(start);
        full.enable_file_transfers(start);
        full.state_mut().host.d_total = 100e9;
        full.state_mut().host.d_free = 1000.0;
        full.schedule(start);
        let call = full.rpc_call(start);
        assert!(call.as_ref().is_none_or(|c| !asks(c)), "work asked for on a full disk: {call:?}");
        let mut room = small_host_control(start);
        room.enable_file_transfers(start);
        room.state_mut().host.d_total = 100e9;
        room.state_mut().host.d_free = 50e9;
        room.schedule(start);
        let call = room.rpc_call(start).expect("a work request");
        assert!(asks(&call), "{call:?}");
    }

    /// A task started on a full disk fails at once (its slot's files cannot be
    /// written) and is reported as an error: while the disk is full no new task starts,
    /// the tasks running on keep running, and the client says why; with room again,
    /// the waiting tasks start.
    #[test]
    fn no_new_task_starts_while_the_disk_is_full() {
        let start = 100_000.0;
        let mut control = small_host_control(start);
        control.enable_file_transfers(start);
        control.state_mut().host.d_total = 100e9;
        control.state_mut().host.d_free = 50e9;
        let started = |commands: &[TaskCommand]| {
            commands.iter().filter(|c| matches!(c, TaskCommand::Start(_))).count()
        };
        let commands = control.schedule(start);
        assert!(started(&commands) >= 2, "{commands:?}");
        assert!(!control.new_tasks_wait_for_disk());

        // A task ends on a full disk: its CPU is free, and nothing starts on it.
        control.state_mut().host.d_free = 1000.0;
        let done = control.running()[0];
        let others = control.running()[1..].to_vec();
        control.complete(done, start + 60.0);
        let commands = control.schedule(start + 60.0);
        assert_eq!(started(&commands), 0, "a task started on a full disk: {commands:?}");
        assert_eq!(control.running(), others.as_slice(), "the running tasks run on");
        assert!(control.new_tasks_wait_for_disk());
        let suspended = control.state().jobs.iter().filter(|j| j.suspended).count();
        assert_eq!(suspended, 0, "no job is left suspended by the wait");

        // The disk is looked at again soon.
        assert!(control.next_wakeup(start + 90.0) <= start + 90.0 + FULL_DISK_RECHECK);
        control.state_mut().host.d_free = 50e9;
        let commands = control.schedule(start + 120.0);
        assert!(started(&commands) >= 1, "{commands:?}");
        assert!(!control.new_tasks_wait_for_disk());
    }

    /// A project the user detached is not contacted again: not even the master page
    /// its failures had asked to read again.
    #[test]
    fn a_detached_project_is_not_contacted_again() {
        let start = 100_000.0;
        let mut control = small_host_control(start);
        let name = control.state().projects[0].master_url.clone();
        control.state_mut().projects[0].master_fetch_pending = true;
        assert_eq!(control.master_fetches_due(start), [ProjectId(0)]);
        control.user_action(&UserAction::Detach(name), start).expect("detached");
        assert!(control.master_fetches_due(start + 60.0).is_empty());
        control.schedule(start + 60.0);
        let call = control.rpc_call(start + 60.0);
        assert!(call.as_ref().is_none_or(|call| call.request.project != ProjectId(0)), "{call:?}");
    }

    /// A project to leave once its work is done is detached by the RPC whose reply
    /// acknowledges its last result, and not before.
    #[test]
    fn detach_when_done_detaches_once_the_last_result_is_acknowledged() {
        let start = 100_000.0;
        let mut control = small_host_control(start);
        let project = ProjectId(0);
        let url = control.state().projects[0].master_url.clone();
        control.user_action(&UserAction::DetachWhenDone(url, true), start).expect("set");
        assert!(control.state().projects[0].dont_request_more_work, "no more work asked for");
        let names: Vec<String> = control
            .state()
            .jobs
            .iter()
            .filter(|j| j.project == project)
            .map(|j| j.name.clone())
            .collect();
        assert!(names.len() >= 2, "a project with work: {names:?}");
        for job in control.state_mut().jobs.iter_mut().filter(|j| j.project == project) {
            job.state = crate::model::JobState::FilesUploaded;
            job.ready_to_report = true;
        }
        let request = WorkRequest { project, resources: Default::default(), work_req_seconds: 0.0 };
        let call = RpcCall { request, reported: vec![], estimated_delay: Default::default() };
        let acked = |names: &[String]| SchedulerReply {
            result_acks: names.to_vec(),
            ..SchedulerReply::default()
        };
        control.finish_rpc(&call, Some(acked(&names[..1])), start + 10.0);
        assert!(!control.state().projects[0].detached, "work left: still attached");
        control.finish_rpc(&call, Some(acked(&names[1..])), start + 20.0);
        let record = &control.state().projects[0];
        assert!(record.detached && record.suspended && !record.detach_when_done, "detached");
    }

    /// A user's Update is served at once, even seconds after another RPC: the loop's
    /// minute between RPCs does not hold it back.
    #[test]
    fn an_update_goes_at_the_next_step() {
        let start = 100_000.0;
        let mut control = small_host_control(start);
        control.schedule(start);
        let first = control.rpc_call(start).expect("the first RPC");
        control.finish_rpc(&first, None, start + 1.0);
        let url = control.state().projects[1].master_url.clone();
        let now = start + 5.0;
        // Nothing else to ask for: the update is the only reason to contact anyone.
        for project in &mut control.state_mut().projects {
            project.dont_request_more_work = true;
            project.min_rpc_time = now;
        }
        assert_eq!(control.rpc_gate(now), RpcGate::Closed, "within the loop's minute");
        control.user_action(&UserAction::UpdateProject(url), now).expect("an update");
        assert!(control.next_wakeup(now) <= now, "the loop steps again at once");
        assert_eq!(control.rpc_gate(now), RpcGate::Open);
        let call = control.rpc_call(now).expect("the update's RPC");
        assert_eq!(call.request.project, ProjectId(1));
    }

    /// A result to report at once (report_results_immediately) that completes within
    /// the work-fetch minute goes seconds later from a live client, as from BOINC, which
    /// looks for reports every 5 s; an emulated client waits for the minute, as BOINC's
    /// emulator. The report alone goes: the minute still holds the work fetch back.
    #[test]
    fn a_live_client_reports_between_work_fetches() {
        for live in [false, true] {
            let start = 100_000.0;
            let mut control = small_host_control(start);
            if live {
                control.poll_reports_every(REPORT_POLL_INTERVAL);
            }
            control.state_mut().config.report_results_immediately = true;
            control.schedule(start);
            let first = control.rpc_call(start).expect("the first RPC");
            control.finish_rpc(&first, None, start + 1.0);
            for project in &mut control.state_mut().projects {
                project.min_rpc_time = start;
            }
            let done = start + 10.0;
            let job = &mut control.state_mut().jobs[0];
            job.ready_to_report = true;
            job.completed_time = done;
            let project = job.project;
            let name = job.name.clone();
            control.schedule(done);
            let now = done + 1.0;
            let wakeup = control.next_wakeup(done);
            let gate = control.rpc_gate(now);
            if !live {
                assert_eq!(gate, RpcGate::Closed, "an emulated client waits for the minute");
                assert!(wakeup >= start + FETCH_POLL_INTERVAL, "woken at {wakeup}");
                continue;
            }
            assert!(wakeup <= now, "the report poll wakes the loop ({wakeup})");
            assert_eq!(gate, RpcGate::Open, "the report poll opens the step");
            let call = control.rpc_call(now).expect("the report goes");
            assert_eq!(call.request.project, project);
            assert!(call.reported.contains(&name), "{:?} reports {name}", call.reported);
            assert_eq!(
                control.rpc_gate(now + 1.0),
                RpcGate::Closed,
                "no second look within the report poll's interval"
            );
        }
    }

    /// The soak's clock jump (docs/soak.md): a user's update after the wall clock went
    /// back half an hour is served at once, not half an hour later.
    #[test]
    fn a_clock_set_back_does_not_hold_the_next_rpc_for_the_jump() {
        let start = 100_000.0;
        let mut control = small_host_control(start);
        assert_eq!(control.rpc_gate(start), RpcGate::Open);
        control.schedule(start);
        for project in &mut control.state_mut().projects {
            on_rpc_success(project, Some(1.0), start);
            project.sched_rpc_pending = true;
        }
        let now = start - 1800.0;
        assert_eq!(control.rpc_gate(now), RpcGate::Open);
        assert!(control.state().projects.iter().all(|p| p.min_rpc_time <= now + 1.0));
        control.schedule(now);
        assert!(control.rpc_call(now + 1.0).is_some(), "the client sits idle after the jump");
    }

    /// The service's poll takes in the clock: the step back is told, once, and the
    /// backoffs set in the old clock are brought back before any RPC step.
    #[test]
    fn following_the_clock_tells_a_step_back_once() {
        let start = 100_000.0;
        let mut control = small_host_control(start);
        assert_eq!(control.follow_clock(start), None);
        for project in &mut control.state_mut().projects {
            on_rpc_success(project, Some(10.0), start);
        }
        assert_eq!(control.follow_clock(start + 3.0), None, "forward is no news");
        let now = start - 6.0 * 3600.0;
        assert_eq!(control.follow_clock(now), Some(6.0 * 3600.0 + 3.0));
        assert!(control.state().projects.iter().all(|p| p.min_rpc_time <= now + 10.0));
        assert_eq!(control.follow_clock(now + 1.0), None);
        assert!(control.next_wakeup(now + 1.0) <= now + 10.0, "the next step waits hours");
    }

    /// A user's update is served while computing is suspended: the network is not.
    #[test]
    fn an_update_is_served_while_computing_is_suspended() {
        let start = 100_000.0;
        let mut control = small_host_control(start);
        control.schedule(start);
        for project in &mut control.state_mut().projects {
            on_rpc_success(project, Some(1.0), start);
        }
        let now = start + 120.0;
        control
            .user_action(&UserAction::SetRunMode(crate::model::RunMode::Never), now)
            .expect("suspends");
        let url = control.state().projects[0].master_url.clone();
        control.user_action(&UserAction::UpdateProject(url), now).expect("updates");
        assert_eq!(control.rpc_gate(now), RpcGate::Open);
        let call = control.rpc_call(now);
        assert!(call.is_some(), "no RPC for the user's update while suspended");
    }
}
