//! SchedulerActor: the client's centre (docs/design.md "Actors"). It holds the authoritative
//! client state and runs the control loop of [`boinc_core::control`]: each [`Tick`]
//! polls the running tasks, completes finished jobs, decides (rr_sim, EDF and debts,
//! enforcement) and sends run and preempt commands to the task actors, then starts the
//! RPC step's operations. Operations never hold the loop up (docs/design.md "Nothing waits"):
//! a master-page fetch or a scheduler RPC is recorded in the core's state as in flight
//! and its result comes back later as the continuation of its future, while ticks,
//! polls, supervision and user actions go on. When it wants the next step is published
//! on a wake-up channel the driver watches.
//!
//! It supervises the actors it started (src/runtime/supervision.rs): one that fails is
//! reported, and rebuilt from the authoritative state after the actor restart policy's
//! backoff, or given up on. Its own state lives in a [`Scheduler`] shared with the
//! driver, so that a scheduler actor whose handler panicked is rebuilt by the driver
//! with the state as the panic left it.

use super::context::ActorContext;
use super::disk::DiskActor;
use super::events::{ClientEvent, SuspendedActivity};
use super::fetch::{FetchActor, ProjectActors};
use super::messages::{
    AllIn, Availability, ChooseWork, Command, DiskMeasure, DiskReply, DiskStep, HostChanged,
    InstanceChange, InstanceChanges, LoanReturn, MasterFetch, Poll, PollBoard, PollTasks,
    RunSession, SettleSession, Shutdown, Snapshot, Startup, StateLoan, StateSnapshot, Stats,
    TaskReport, Tick, User, WorkChoice,
};
use super::occupancy::Occupancy;
use super::project::ProjectActor;
use super::resource::ResourceActor;
use super::supervision::{ActorId, ActorKind, ActorSupervisor};
use super::task::{TaskActor, TaskSupervision};
use super::task_links::{TaskLink, TaskLinks};
use super::time_text::TimeText;
use super::transfers::{TransferRunner, project_name};
use crate::client::ClientError;
use crate::effects::RpcError;
use crate::effects::{FileTransfer, ProcessHost, SchedulerTransport, StatePersistence};
use actix::fut::LocalBoxActorFuture;
use actix::{
    Actor, ActorFutureExt, Addr, AsyncContext, AtomicResponse, Context, Handler, MailboxError,
    WrapFuture,
};
use boinc_core::Time;
use boinc_core::control::{
    ClientControl, ProjectRpcState, RpcCall, RpcGate, TaskCommand, work_reply,
};
use boinc_core::model::{ClientState, JobId, ProjectId, ResourceMap, ResourceType};
use boinc_core::protocol::{SchedulerReply, SchedulerRequest};
use boinc_core::supervise::{EXIT_CHILD_FAILED, RestartDecision, RestartPolicy};
use boinc_core::work_fetch::FetchChoice;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use tokio::sync::watch;

/// A session's answer through the fetch actor: the server's reply or why there is
/// none; an error when the session never reached a project's actor.
type SessionAnswer = Result<Result<Box<SchedulerReply>, RpcError>, String>;

/// What the scheduler needs to start the other actors.
pub struct SchedulerSetup {
    /// The control loop over the client's state.
    pub client: ClientControl,
    /// Shared clock, journal, events, injected faults.
    pub context: ActorContext,
    /// Where task processes run.
    pub process_host: Arc<dyn ProcessHost>,
    /// Where scheduler RPCs go.
    pub transport: Arc<dyn SchedulerTransport>,
    /// The run's seed (each project's random stream derives from it).
    pub seed: u64,
    /// BOINC-compatible availability model.
    pub boinc_compat: bool,
    /// How apps are restarted after a crash.
    pub app_restart_policy: RestartPolicy,
    /// How actors are rebuilt after a failure.
    pub actor_restart_policy: RestartPolicy,
    /// The disk manager's actor, when the client manages disk use.
    pub disk: Option<DiskActor>,
    /// Where files are downloaded and uploaded, when the client moves them itself (a
    /// live client): jobs then wait for their files and report after their uploads.
    /// `None`: the world moves no files (the emulator), they count as present.
    pub file_transfer: Option<Arc<dyn FileTransfer>>,
    /// Where the state is kept (a live client's state file): a task's end is written
    /// there before its slot is cleaned.
    pub persistence: Option<Arc<dyn StatePersistence>>,
}

/// The scheduler's state: the authoritative client state and everything the scheduler
/// keeps about the actors it supervises. It outlives any one scheduler actor.
pub struct Scheduler {
    context: ActorContext,
    client: ClientControl,
    process_host: Arc<dyn ProcessHost>,
    transport: Arc<dyn SchedulerTransport>,
    seed: u64,
    boinc_compat: bool,
    app_restart_policy: RestartPolicy,
    persistence: Option<Arc<dyn StatePersistence>>,
    /// Task actors by slot, with the bells they are polled through.
    tasks: TaskLinks,
    /// The board the task polls answer on, step after step.
    poll_board: Arc<PollBoard>,
    /// The last step's report buffer, for the next (a step allocates none).
    spare_reports: Vec<Option<TaskReport>>,
    /// The last step's list of polled tasks, for the next.
    spare_polled: Vec<(JobId, u32)>,
    /// Where the state comes back to from the disk actor (one loan is out at a time).
    loan_home: LoanReturn,
    /// The last session's request, refilled for the next.
    last_request: Arc<SchedulerRequest<'static>>,
    /// Resource actors (`None` while one is being rebuilt or was given up on).
    resources: Vec<(ResourceType, Option<Addr<ResourceActor>>)>,
    /// Which task holds which resources, and the changes the resource actors are told.
    occupancy: Occupancy,
    /// Project actors by project.
    projects: Vec<Addr<ProjectActor>>,
    fetch: Option<Addr<FetchActor>>,
    disk: Option<Addr<DiskActor>>,
    /// What a rebuilt disk actor is made from (it shares the manager's state).
    disk_manager: Option<DiskActor>,
    last_tick: Option<Time>,
    /// Crashed apps waiting to restart, by slot.
    restarts: BTreeMap<u32, Time>,
    /// Actors waiting to be rebuilt, and when.
    rebuilds: BTreeMap<ActorId, Time>,
    supervisor: ActorSupervisor,
    /// When the scheduler wants its next step.
    wakeup: watch::Sender<Time>,
    /// Why the client cannot go on, once an actor it cannot do without was given up on.
    fatal: Option<String>,
    shutting_down: bool,
    /// Operations started and not yet taken in (a master-page fetch round, a session,
    /// a file transfer attempt).
    operations: u32,
    /// The client's file transfers, when it moves its files itself.
    transfers: Option<TransferRunner>,
}

/// One step's polls: the tasks polled (by position) and the signal that all answers
/// are on the board (or dropped with their actors).
struct StepPolls {
    polled: Vec<(JobId, u32)>,
    all_in: AllIn,
}

/// The central scheduler actor: a shell around the shared [`Scheduler`].
pub struct SchedulerActor {
    inner: Rc<RefCell<Scheduler>>,
}

/// What the driver keeps of a launched scheduler: the shared state (to rebuild the
/// actor) and the wake-up channel.
pub struct SchedulerLink {
    /// The scheduler's state.
    pub inner: Rc<RefCell<Scheduler>>,
    /// When the scheduler wants its next step.
    pub wakeup: watch::Receiver<Time>,
}

impl SchedulerActor {
    /// Starts the scheduler and, beside it, a ResourceActor per processing resource, a
    /// ProjectActor per project, the FetchActor and the DiskActor.
    pub fn launch(setup: SchedulerSetup) -> (Addr<SchedulerActor>, SchedulerLink) {
        let state = setup.client.state();
        let resources: Vec<(ResourceType, Option<Addr<ResourceActor>>)> = ResourceType::ALL
            .into_iter()
            .filter(|&r| state.instances(r) > 0)
            .map(|r| {
                let actor = ResourceActor::new(
                    r,
                    state.instances(r),
                    setup.boinc_compat,
                    setup.context.clone(),
                );
                (r, Some(actor.start()))
            })
            .collect();
        let projects: Vec<_> = state
            .project_ids()
            .map(|p| {
                ProjectActor::new(p, setup.seed, setup.context.clone(), setup.transport.clone())
                    .start()
            })
            .collect();
        let fetch = FetchActor::new(setup.context.clone(), projects.clone()).start();
        let occupancy = Occupancy::of(state.job_ids().filter_map(|id| {
            let job = state.job(id);
            let (task, version) = (job.task.as_ref()?, job.app_version?);
            let running = setup.client.running().contains(&id);
            Some((task.slot, state.app_version(version).usage, task.gpu_instances.clone(), running))
        }));
        let mut client = setup.client;
        let transfers = setup.file_transfer.map(|transfer| {
            client.enable_file_transfers(setup.context.clock.now());
            TransferRunner::new(transfer, setup.seed, setup.context.clone())
        });
        let start = client.next_wakeup(setup.context.clock.now());
        let (wakeup, receiver) = watch::channel(start);
        let scheduler = Scheduler {
            supervisor: ActorSupervisor::new(setup.actor_restart_policy, setup.seed),
            context: setup.context,
            client,
            process_host: setup.process_host,
            transport: setup.transport,
            seed: setup.seed,
            boinc_compat: setup.boinc_compat,
            app_restart_policy: setup.app_restart_policy,
            persistence: setup.persistence,
            tasks: TaskLinks::default(),
            poll_board: PollBoard::new(),
            spare_reports: Vec::new(),
            spare_polled: Vec::new(),
            loan_home: LoanReturn::default(),
            last_request: Arc::default(),
            resources,
            occupancy,
            projects,
            fetch: Some(fetch),
            disk: setup.disk.clone().map(Actor::start),
            disk_manager: setup.disk,
            last_tick: None,
            restarts: BTreeMap::new(),
            rebuilds: BTreeMap::new(),
            wakeup,
            fatal: None,
            shutting_down: false,
            operations: 0,
            transfers,
        };
        let inner = Rc::new(RefCell::new(scheduler));
        let actor = SchedulerActor { inner: inner.clone() }.start();
        (actor, SchedulerLink { inner, wakeup: receiver })
    }

    /// A new scheduler actor over the state of one that failed.
    pub fn rebuild(inner: Rc<RefCell<Scheduler>>) -> Addr<SchedulerActor> {
        SchedulerActor { inner }.start()
    }
}

impl Scheduler {
    /// The client state.
    pub fn state(&self) -> &ClientState {
        self.client.state()
    }

    /// Why the client cannot go on, if an actor it cannot do without was given up on.
    pub fn fatal(&self) -> Option<&str> {
        self.fatal.as_deref()
    }

    /// The shared surroundings of the actors.
    pub fn context(&self) -> &ActorContext {
        &self.context
    }

    /// Operations (master-page fetch rounds, sessions) started and not yet taken in: a
    /// virtual-time driver lets them finish before it moves time on.
    pub fn operations(&self) -> u32 {
        self.operations
    }

    /// Decisions made and RPCs started so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.client.decisions(), self.client.rpcs())
    }

    fn project_name(&self, project: ProjectId) -> String {
        self.client
            .state()
            .projects
            .get(project.index())
            .map_or_else(String::new, |p| p.name.clone())
    }

    fn task_actor(&mut self, slot: u32, job: &str, id: Option<JobId>) -> Addr<TaskActor> {
        if let Some(link) = self.tasks.get(slot) {
            return link.actor.clone();
        }
        let supervision = TaskSupervision { policy: self.app_restart_policy, seed: self.seed };
        // A rebuilt actor takes over the running task's spec from the authoritative state.
        let spec = id.and_then(|id| self.client.task_spec(id));
        // The app's crashes so far come from the state (a restarted client's file).
        let (crashes, restart_at) = self.client.task_crashes(job, slot).unwrap_or_default();
        let actor = TaskActor::new(
            slot,
            job,
            self.context.clone(),
            self.process_host.clone(),
            supervision,
            spec,
            crashes,
            restart_at,
        )
        .leaving_the_slot();
        let (actor, bell) = actor.start_with_bell();
        self.tasks.insert(slot, TaskLink { actor: actor.clone(), bell });
        actor
    }

    /// Charges the running tasks' usage from the last charge up to `now`.
    fn catch_up_usage(&mut self, now: Time) {
        if let Some(last) = self.last_tick {
            self.client.accumulate_usage(now - last);
        }
        self.last_tick = Some(now);
    }

    /// Publishes when the scheduler wants its next step: the control loop's wish, a
    /// crashed app's restart, an actor's rebuild.
    fn publish_wakeup(&self, now: Time) {
        let restart =
            self.restarts.values().copied().filter(|&t| t > now).fold(f64::INFINITY, f64::min);
        let rebuild = self.rebuilds.values().copied().fold(f64::INFINITY, f64::min);
        let next = self.client.next_wakeup(now).min(restart).min(rebuild.max(now));
        // The driver reads the wish at each step; it is woken only when the wish moves.
        self.wakeup.send_if_modified(|wish| {
            let moved = wish.to_bits() != next.to_bits();
            *wish = next;
            moved
        });
    }

    /// Records an actor's failure: the restart decision, reported as an event.
    fn actor_failed(&mut self, actor: ActorId, now: Time) -> RestartDecision {
        let (decision, failures) = self.supervisor.failed(actor, now);
        match decision {
            RestartDecision::RestartAt(restart_at) => {
                tracing::error!(%actor, failures, restart_at = %TimeText(restart_at), "actor failed; rebuilding it from the client state");
                self.context.events.emit(ClientEvent::ActorRestarted {
                    time: now,
                    actor: actor.to_string(),
                    failures,
                    restart_at,
                });
            }
            RestartDecision::GiveUp => {
                tracing::error!(%actor, failures, "actor failed too often; giving up on it");
                self.context
                    .events
                    .emit(ClientEvent::ActorGaveUp { time: now, actor: actor.to_string() });
            }
        }
        decision
    }

    /// Takes in the wall clock at `now` (see [`ClientControl::follow_clock`]); an
    /// actor's rebuild planned before the clock went back moves back with it. Returns
    /// whether the clock went back.
    fn follow_clock(&mut self, now: Time) -> bool {
        let Some(back) = self.client.follow_clock(now) else { return false };
        tracing::warn!(seconds = back, "the wall clock went back; the waits move back with it");
        for at in self.rebuilds.values_mut() {
            *at -= back;
        }
        true
    }

    /// Rebuilds the actors whose backoff ended by `now`.
    fn rebuild_due_actors(&mut self, now: Time) {
        let due: Vec<ActorId> =
            self.rebuilds.iter().filter(|(_, at)| **at <= now).map(|(a, _)| *a).collect();
        for actor in due {
            self.rebuilds.remove(&actor);
            self.supervisor.started(actor, now);
            match actor.kind {
                ActorKind::Task => {
                    let slot = actor.index;
                    let id = self.client.running().iter().copied().find(|&j| {
                        self.client.state().job(j).task.as_ref().is_some_and(|t| t.slot == slot)
                    });
                    if let Some(id) = id {
                        let job = self.client.state().job(id).name.clone();
                        self.task_actor(slot, &job, Some(id));
                    }
                }
                ActorKind::Resource => {
                    let state = self.client.state();
                    let found =
                        self.resources.iter().position(|(r, _)| r.index() as u32 == actor.index);
                    if let Some(position) = found {
                        let resource = self.resources[position].0;
                        let rebuilt = ResourceActor::new(
                            resource,
                            state.instances(resource),
                            self.boinc_compat,
                            self.context.clone(),
                        )
                        .start();
                        rebuilt.do_send(InstanceChanges { changes: self.occupants(resource) });
                        self.resources[position].1 = Some(rebuilt);
                    }
                }
                ActorKind::Fetch => {
                    let fetch = FetchActor::new(self.context.clone(), self.projects.clone());
                    self.fetch = Some(fetch.start());
                }
                ActorKind::Disk => self.disk = self.disk_manager.clone().map(Actor::start),
                ActorKind::Scheduler | ActorKind::Project => {}
            }
        }
    }

    /// Asks every running task's actor for its report at `now`. The polls are all sent
    /// before any answer is awaited, and every answer comes back on one board: the
    /// step waits once for all of them rather than once per task. Returns the polled
    /// tasks in order and the signal that their answers are in. A poll rung to an actor
    /// that failed is dropped with its end of the bell, and counts as unanswered.
    fn polls(&mut self, now: Time) -> StepPolls {
        let board = Arc::clone(&self.poll_board);
        board.begin(std::mem::take(&mut self.spare_reports));
        let mut polled = std::mem::take(&mut self.spare_polled);
        polled.clear();
        for index in 0..self.client.running().len() {
            let id = self.client.running()[index];
            let Some(slot) = self.client.state().job(id).task.as_ref().map(|t| t.slot) else {
                continue;
            };
            if !self.rebuilds.is_empty()
                && self.rebuilds.contains_key(&ActorId { kind: ActorKind::Task, index: slot })
            {
                continue;
            }
            if self.tasks.get(slot).is_none() {
                let name = self.client.state().job(id).name.clone();
                self.task_actor(slot, &name, Some(id));
            }
            if self.tasks.get(slot).is_some() {
                polled.push((id, slot));
            }
        }
        // The board makes room for every answer at once, then each bell is rung.
        for ((_, slot), answer) in polled.iter().zip(board.answers(polled.len())) {
            if let Some(link) = self.tasks.get(*slot) {
                // An actor already gone drops the poll at once: unanswered, it counts as
                // failed.
                link.bell.ring(Poll { now, answer: Some(answer) });
            }
        }
        board.sent();
        StepPolls { polled, all_in: board.all_in() }
    }

    /// Applies the task reports, the polled tasks' in the same order (`None`: the poll
    /// went down with its actor); returns the jobs that finished successfully.
    fn apply_reports(
        &mut self,
        mut polled: Vec<(JobId, u32)>,
        mut reports: Vec<Option<TaskReport>>,
        now: Time,
    ) -> Vec<JobId> {
        let mut finished = Vec::new();
        for (&(id, slot), place) in polled.iter().zip(reports.iter_mut()) {
            let actor = ActorId { kind: ActorKind::Task, index: slot };
            if place.is_some() {
                self.supervisor.healthy(actor, now);
            }
            // The common report, a running task's state, is read where it lies.
            if let Some(TaskReport::Running(status)) = place {
                if !self.restarts.is_empty() {
                    self.restarts.remove(&slot);
                }
                self.client.apply_status(id, status);
                self.client.note_app_running(id, &self.app_restart_policy, now);
                continue;
            }
            match place.take() {
                Some(TaskReport::Running(_)) => {}
                Some(TaskReport::Finished(status)) => {
                    self.client.apply_status(id, &status);
                    self.task_ended(slot);
                    finished.push((id, slot, None, None));
                }
                Some(TaskReport::Restarting { checkpoint, restart_at, crashes }) => {
                    self.client.apply_status(id, &checkpoint);
                    self.client.note_crash(id, &crashes, restart_at);
                    if self.restarts.insert(slot, restart_at) != Some(restart_at) {
                        self.context.events.emit(ClientEvent::TaskRestarting {
                            time: now,
                            job: self.client.state().job(id).name.clone(),
                            restart_at,
                        });
                    }
                }
                Some(TaskReport::Failed { exit_status, message }) => {
                    tracing::warn!(job = %self.client.state().job(id).name, exit_status, %message, "task failed");
                    self.task_ended(slot);
                    finished.push((id, slot, Some(exit_status), Some(message)));
                }
                Some(TaskReport::Idle) => {}
                None => {
                    self.tasks.remove(slot);
                    match self.actor_failed(actor, now) {
                        // The process lives on; a new actor takes it over then.
                        RestartDecision::RestartAt(at) => {
                            self.rebuilds.insert(actor, at);
                        }
                        RestartDecision::GiveUp => {
                            if let Err(error) = self.process_host.kill(slot) {
                                tracing::warn!(slot, %error, "cannot kill the task's process");
                            }
                            self.task_ended(slot);
                            finished.push((id, slot, Some(EXIT_CHILD_FAILED), None));
                        }
                    }
                }
            }
        }
        reports.clear();
        self.spare_reports = reports;
        polled.clear();
        self.spare_polled = polled;
        let mut completed = Vec::new();
        let mut ended_slots = Vec::with_capacity(finished.len());
        for (id, slot, error, message) in finished {
            ended_slots.push(slot);
            // The app's standard error and why it failed go to the project with the
            // result, as BOINC reports them.
            let name = &self.client.state().job(id).name;
            let stderr = self
                .context
                .exchange("scheduler", "Stderr", || self.process_host.take_stderr(name));
            self.client.report_app_output(id, message.as_deref(), stderr.as_deref());
            let job = self.client.state().job(id);
            let event = self.context.events.has_subscribers().then(|| ClientEvent::TaskFinished {
                time: now,
                project: self.project_name(job.project),
                job: job.name.clone(),
                error: error.is_some(),
            });
            if let Some(exit_status) = error {
                self.client.fail(id, exit_status, now);
            } else {
                self.client.complete(id, now);
                completed.push(id);
            }
            if let Some(event) = event {
                self.context.events.emit(event);
            }
        }
        self.clean_ended_slots(&ended_slots, now);
        completed
    }

    /// Cleans the slots of tasks that ended (their outputs go to the project), once the
    /// state that says they ended is written: a client killed before that write finds
    /// the run's end still in the slot when it restarts, and does not run the task again.
    fn clean_ended_slots(&self, slots: &[u32], now: Time) {
        if slots.is_empty() {
            return;
        }
        if let Some(persistence) = &self.persistence {
            persistence.stepped(self.client.state(), now);
        }
        for &slot in slots {
            if let Err(error) = self.process_host.reap(slot) {
                tracing::warn!(slot, %error, "cannot clean up after the task");
            }
        }
    }

    fn task_ended(&mut self, slot: u32) {
        self.occupancy.ended(slot);
        self.tasks.remove(slot);
        self.restarts.remove(&slot);
        self.supervisor.forget(ActorId { kind: ActorKind::Task, index: slot });
    }

    /// The decision's commands, addressed: events emitted, task actors made for new
    /// tasks, resource actors told their assignment.
    fn address_commands(
        &mut self,
        commands: Vec<TaskCommand>,
        now: Time,
    ) -> Vec<(Addr<TaskActor>, Command)> {
        let mut deliveries = Vec::with_capacity(commands.len());
        for command in commands {
            let (project, job, slot) = command.target();
            match &command {
                TaskCommand::Start(_) | TaskCommand::Resume { .. } => {
                    self.context.events.emit_with(|| ClientEvent::TaskStarted {
                        time: now,
                        project: self.project_name(project),
                        job: job.to_string(),
                    });
                }
                TaskCommand::Preempt { remove_from_memory, .. } => {
                    self.context.events.emit_with(|| ClientEvent::TaskPreempted {
                        time: now,
                        project: self.project_name(project),
                        job: job.to_string(),
                        removed_from_memory: *remove_from_memory,
                    });
                }
                TaskCommand::WatchCheckpoint { .. } | TaskCommand::Abort { .. } => {}
            }
            tracing::debug!(command = command.name(), job = %job, slot, "task command");
            let client = &self.client;
            self.occupancy.command(&command, || {
                let id = client.find_job(project, job)?;
                Some(client.state().app_version(client.state().job(id).app_version?).usage)
            });
            let actor = match &command {
                TaskCommand::Start(_) => Some(self.task_actor(slot, job, None)),
                _ => self.tasks.get(slot).map(|link| link.actor.clone()),
            };
            if matches!(command, TaskCommand::Abort { .. }) {
                self.task_ended(slot);
            }
            match actor {
                Some(actor) => deliveries.push((actor, Command { command, now })),
                // An aborted task whose actor is being rebuilt: its process goes now.
                None if matches!(command, TaskCommand::Abort { .. }) => {
                    if let Err(error) = self.process_host.kill(slot) {
                        tracing::warn!(slot, %error, "cannot kill an aborted task's process");
                    }
                }
                None => {}
            }
        }
        if self.occupancy.has_changes() {
            self.tell_resources();
        }
        deliveries
    }

    /// Tells each resource actor how its occupancy changed (a resource with no change is
    /// told nothing).
    fn tell_resources(&mut self) {
        for (resource, actor) in &self.resources {
            let changes = self.occupancy.take_changes(*resource);
            if let (false, Some(actor)) = (changes.is_empty(), actor) {
                actor.do_send(InstanceChanges { changes });
            }
        }
    }

    /// Every running task on `resource`, as occupying it: what a rebuilt resource
    /// actor is told first.
    fn occupants(&self, resource: ResourceType) -> Vec<InstanceChange> {
        let state = self.client.state();
        let mut changes = Vec::new();
        for &id in self.client.running() {
            let job = state.job(id);
            let (Some(av), Some(task)) = (job.app_version, job.task.as_ref()) else { continue };
            let used = state.app_version(av).usage.usage_of(resource);
            if used > 0.0 {
                let gpus = if resource.is_gpu() { task.gpu_instances.clone() } else { Vec::new() };
                changes.push(InstanceChange::Occupied { slot: task.slot, used, gpus });
            }
        }
        changes
    }

    /// A project's actor failed: a new one is built from the authoritative state, and
    /// the project is not contacted again before the restart backoff has passed (or is
    /// set aside, after too many failures).
    /// Projects attached since the actors were started get theirs, and the fetch actor
    /// learns of them.
    fn start_new_project_actors(&mut self) {
        let known = self.projects.len();
        let attached = self.client.state().projects.len();
        if attached <= known {
            return;
        }
        for index in known..attached {
            let project = ProjectId::from_index(index);
            tracing::info!(project = %self.client.state().project(project).master_url, "attached");
            let actor =
                ProjectActor::new(project, self.seed, self.context.clone(), self.transport.clone())
                    .start();
            self.projects.push(actor);
        }
        if let Some(fetch) = &self.fetch {
            fetch.do_send(ProjectActors(self.projects.clone()));
        }
    }

    fn restart_project_actor(&mut self, project: ProjectId, now: Time) {
        let decision =
            self.actor_failed(ActorId { kind: ActorKind::Project, index: project.0 }, now);
        if let Some(p) = self.client.state_mut().projects.get_mut(project.index()) {
            match decision {
                RestartDecision::RestartAt(at) => p.min_rpc_time = p.min_rpc_time.max(at),
                RestartDecision::GiveUp => {
                    // Broken beyond repair: the project is set aside until the user acts.
                    p.suspended = true;
                    p.dont_request_more_work = true;
                }
            }
        }
        let actor =
            ProjectActor::new(project, self.seed, self.context.clone(), self.transport.clone())
                .start();
        if let Some(slot) = self.projects.get_mut(project.index()) {
            *slot = actor;
        }
        if let Some(fetch) = &self.fetch {
            fetch.do_send(ProjectActors(self.projects.clone()));
        }
    }

    /// The fetch actor failed: rebuilt after the backoff; without it no session starts.
    fn fetch_failed(&mut self, now: Time) {
        self.fetch = None;
        let actor = ActorId::single(ActorKind::Fetch);
        match self.actor_failed(actor, now) {
            RestartDecision::RestartAt(at) => {
                self.rebuilds.insert(actor, at);
            }
            RestartDecision::GiveUp => {
                self.fatal = Some(
                    "the fetch actor kept failing: the client can no longer contact projects"
                        .to_string(),
                );
            }
        }
    }

    /// The disk actor failed: rebuilt after the backoff (with the manager's state as it
    /// was); meanwhile, and for good after too many failures, disk steps are skipped.
    fn disk_failed(&mut self, now: Time) {
        self.disk = None;
        let actor = ActorId::single(ActorKind::Disk);
        match self.actor_failed(actor, now) {
            RestartDecision::RestartAt(at) => {
                self.rebuilds.insert(actor, at);
            }
            RestartDecision::GiveUp => {
                tracing::error!("the disk manager keeps failing: disk management stops");
            }
        }
    }

    /// The disk actor's step ended (`delivered`: it answered): the lent state is taken
    /// back; an actor that failed is rebuilt.
    /// Lends the state to the disk actor in the message `lend` makes of the loan;
    /// `None` (and nothing lent) when there is no disk actor. The message is sent
    /// through the scheduler's own address of the actor, not a copy of it.
    fn lend_to_disk<M>(
        &mut self,
        lend: impl FnOnce(StateLoan) -> M,
    ) -> Option<(actix::dev::Request<DiskActor, M>, LoanReturn)>
    where
        M: actix::Message + Send + 'static,
        M::Result: Send,
        DiskActor: Handler<M>,
    {
        let disk = self.disk.as_ref()?;
        let state = self.loan_home.lend(self.client.take_state());
        Some((disk.send(lend(state)), self.loan_home.clone()))
    }

    fn disk_returned(&mut self, home: &LoanReturn, delivered: bool, now: Time) {
        match home.take() {
            Some(state) => self.client.restore_state(state),
            None => {
                // A loan comes back when it is dropped, which happens before its
                // sender hears of the step's end either way.
                tracing::error!("the disk actor did not give the client state back");
                self.fatal = Some("the client state was lost in the disk manager".to_string());
            }
        }
        if delivered {
            self.supervisor.healthy(ActorId::single(ActorKind::Disk), now);
        } else {
            self.disk_failed(now);
        }
    }

    /// A resource actor (at `position` among them) failed: rebuilt after the backoff.
    fn resource_failed(&mut self, position: usize, now: Time) {
        let Some(entry) = self.resources.get_mut(position) else { return };
        entry.1 = None;
        let actor = ActorId { kind: ActorKind::Resource, index: entry.0.index() as u32 };
        if let RestartDecision::RestartAt(at) = self.actor_failed(actor, now) {
            self.rebuilds.insert(actor, at);
        }
    }

    /// Operations the RPC step starts now: master-page fetches first (a session waits
    /// for them, as it would have to ask their projects again), else a session.
    fn rpc_gate_open(&mut self, now: Time) -> bool {
        !self.shutting_down && self.client.rpc_gate(now) == RpcGate::Open
    }

    fn master_fetches(&mut self, now: Time) -> Vec<(ProjectId, Addr<ProjectActor>, MasterFetch)> {
        let due = self.client.master_fetches_due(now);
        let mut fetches = Vec::with_capacity(due.len());
        for p in due {
            let Some(actor) = self.projects.get(p.index()).cloned() else { continue };
            self.client.begin_master_fetch(p);
            let project = self.client.state().project(p).clone();
            tracing::debug!(project = %project.name, "master page fetch starts");
            fetches.push((p, actor, MasterFetch { now, project }));
        }
        fetches
    }

    /// A master-page fetch ended; whether the page was read.
    fn master_fetched(
        &mut self,
        project: ProjectId,
        result: Result<ProjectRpcState, MailboxError>,
        now: Time,
    ) -> bool {
        match result {
            Ok(state) => {
                self.supervisor
                    .healthy(ActorId { kind: ActorKind::Project, index: project.0 }, now);
                let read = !state.master_fetch_pending;
                self.client.end_master_fetch(project, &state);
                read
            }
            Err(_) => {
                let before = ProjectRpcState::of(self.client.state().project(project));
                self.client.end_master_fetch(project, &before);
                self.restart_project_actor(project, now);
                false
            }
        }
    }

    /// The session to start now, if the policies want one, given the fetch actor's
    /// work-fetch `choice` (`ClientControl::rpc_call_for`: its work request, else a
    /// report that is due), as the core engine makes it.
    fn session(
        &mut self,
        choice: FetchChoice,
        now: Time,
    ) -> Option<(RpcCall, actix::dev::Request<FetchActor, RunSession>)> {
        self.fetch.as_ref()?;
        let call = self.client.rpc_call_for(choice, now)?;
        let project = call.request.project;
        tracing::debug!(
            project = %self.project_name(project),
            reported = call.reported.len(),
            "scheduler RPC starts"
        );
        self.context.events.emit_with(|| ClientEvent::WorkRequested {
            time: now,
            project: self.project_name(project),
            req_seconds: ResourceType::ALL
                .into_iter()
                .filter(|&r| call.request.requests(r))
                .map(|r| (r, call.request.resources[r].req_seconds))
                .collect(),
        });
        // The request describes the state as of now (with the free-space figures of seed
        // 004); the loop goes on meanwhile.
        // The request the last session sent is rewritten in place once its project's
        // actor has let go of it (it has, unless that session is still starting).
        let request = match Arc::get_mut(&mut self.last_request) {
            Some(kept) => {
                self.client.refill_owned_request(&call, now, kept);
                Arc::clone(&self.last_request)
            }
            None => {
                self.last_request = Arc::new(self.client.build_owned_request(&call, now));
                Arc::clone(&self.last_request)
            }
        };
        let record = self.client.state().project(project);
        // An emulated project's scheduler answers at its master URL.
        let url = record.scheduler_urls.first().unwrap_or(&record.master_url).clone();
        let project = Some(Box::new(record.clone()));
        let message = RunSession { now, call: call.clone(), url, request, project };
        let sent = self.fetch.as_ref()?.send(message);
        Some((call, sent))
    }

    /// Sends the session's project actor what it must settle once the reply is taken
    /// in: the work the reply brought (seen before the reply is applied, as the
    /// project's RPC policy reads it), or `None` for a failed RPC; returns the wait for
    /// its answer. `None` overall (nothing sent) when the session never reached the
    /// project's actor, or it failed in it.
    fn settlement(
        &self,
        call: &RpcCall,
        outcome: &Result<SessionAnswer, MailboxError>,
        now: Time,
    ) -> Option<actix::dev::Request<ProjectActor, SettleSession>> {
        let project = call.request.project;
        let Ok(Ok(reply)) = outcome else { return None };
        let actor = self.projects.get(project.index())?;
        let work = reply.as_ref().ok().map(|reply| work_reply(self.client.state(), project, reply));
        Some(actor.send(SettleSession { now, work }))
    }

    /// A session ended at `now`: its outcome goes into the state, with the protocol
    /// state its project's actor settled (`settled`; `None` when it was not asked).
    /// Returns whether jobs came, and the new jobs (for the disk manager).
    fn session_ended(
        &mut self,
        call: &RpcCall,
        outcome: Result<SessionAnswer, MailboxError>,
        settled: Option<Result<ProjectRpcState, MailboxError>>,
        now: Time,
    ) -> (bool, Vec<JobId>) {
        let project = call.request.project;
        let before = ProjectRpcState::of(self.client.state().project(project));
        let (reply, rpc_state) = match (outcome, settled) {
            (Ok(Ok(reply)), Some(Ok(rpc_state))) => {
                self.supervisor.healthy(ActorId::single(ActorKind::Fetch), now);
                self.supervisor
                    .healthy(ActorId { kind: ActorKind::Project, index: project.0 }, now);
                let reply = match reply {
                    Ok(reply) => Some(*reply),
                    Err(error) => {
                        let name = self.project_name(project);
                        tracing::warn!(
                            project = %name,
                            %error,
                            next_rpc = %TimeText(rpc_state.min_rpc_time),
                            "scheduler RPC failed"
                        );
                        None
                    }
                };
                (reply, rpc_state)
            }
            (Ok(Ok(_)), _) => {
                // The project's actor died before it settled: the RPC counts as not made.
                tracing::warn!("the project's actor failed settling its session");
                self.restart_project_actor(project, now);
                (None, before.clone())
            }
            (Ok(Err(error)), _) => {
                // The project's actor died in the session: the RPC counts as not made.
                tracing::warn!(%error, "session failed in its project actor");
                self.restart_project_actor(project, now);
                (None, before.clone())
            }
            (Err(_), _) => {
                self.fetch_failed(now);
                (None, before.clone())
            }
        };
        if let Some(reply) = &reply {
            tracing::info!(
                project = %self.project_name(project),
                reported = call.reported.len(),
                jobs = reply.results.len(),
                "scheduler RPC done"
            );
        }
        // The events' project name is made only for someone who listens.
        let listening = self.context.events.has_subscribers();
        let name = if listening { self.project_name(project) } else { String::new() };
        self.context.events.emit_with(|| ClientEvent::RpcDone {
            time: now,
            project: name.clone(),
            success: reply.is_some(),
            jobs: reply.as_ref().map_or(0, |r| r.results.len()),
        });
        if listening && rpc_state.min_rpc_time > before.min_rpc_time && rpc_state.min_rpc_time > now
        {
            self.context.events.emit(ClientEvent::BackoffSet {
                time: now,
                project: name.clone(),
                resource: None,
                until: rpc_state.min_rpc_time,
            });
        }
        for r in ResourceType::ALL {
            let until = rpc_state.resources[r].backoff_time;
            if listening && until > before.resources[r].backoff_time && until > now {
                self.context.events.emit(ClientEvent::BackoffSet {
                    time: now,
                    project: name.clone(),
                    resource: Some(r),
                    until,
                });
            }
        }
        let mut outcome = self.client.finish_rpc(call, reply, now);
        self.client.set_project_rpc_state(project, &rpc_state);
        if let Some(outcome) = &mut outcome {
            // The reply may have named the project anew.
            let name = self.project_name(project);
            for message in std::mem::take(&mut outcome.messages) {
                self.context.events.emit(ClientEvent::ProjectMessage {
                    time: now,
                    project: name.clone(),
                    priority: message.priority,
                    text: message.text,
                });
            }
            for text in std::mem::take(&mut outcome.client_notices) {
                self.context.events.emit(ClientEvent::ProjectNotice {
                    time: now,
                    project: name.clone(),
                    text,
                });
            }
            if let Some(text) = outcome.global_preferences.take() {
                let master_url = self.client.state().project(project).master_url.clone();
                self.context.events.emit(ClientEvent::WebPreferences {
                    time: now,
                    project: name.clone(),
                    master_url,
                    text,
                });
            }
            if let Some(feeds) = outcome.rss_feeds.take() {
                let master_url = self.client.state().project(project).master_url.clone();
                self.context.events.emit(ClientEvent::ProjectFeeds {
                    time: now,
                    project: name,
                    master_url,
                    feeds,
                });
            }
        }
        let new_jobs = outcome.map(|o| o.new_jobs).unwrap_or_default();
        (!new_jobs.is_empty(), new_jobs)
    }

    /// Brings the state to a shutdown: every running task is asked to quit (it restarts
    /// from its checkpoint next time), or aborted with every unfinished job where
    /// cc_config says `<abort_jobs_on_exit>`, and no operation starts any more.
    fn shutdown_commands(&mut self, now: Time) -> Vec<(Addr<TaskActor>, Command)> {
        self.shutting_down = true;
        let aborts = self.client.abort_jobs_on_exit(now);
        let mut deliveries = self.address_commands(aborts, now);
        for &id in self.client.running() {
            let job = self.client.state().job(id);
            let Some(task) = job.task.as_ref() else { continue };
            if let Some(link) = self.tasks.get(task.slot) {
                let command = TaskCommand::Preempt {
                    project: job.project,
                    job: job.name.clone(),
                    slot: task.slot,
                    remove_from_memory: true,
                    for_deadline: false,
                };
                deliveries.push((link.actor.clone(), Command { command, now }));
            }
        }
        deliveries
    }
}

impl SchedulerActor {
    /// Delivers commands to the task actors one after the other (each carried out before
    /// the next is sent, so the processes change in decision order).
    fn deliver(
        &self,
        deliveries: Vec<(Addr<TaskActor>, Command)>,
    ) -> LocalBoxActorFuture<Self, ()> {
        // Every command is in its actor's mailbox before any is waited for: the actors
        // take them in the order they were sent (each its own in mailbox order), and
        // the step goes on once all were handled, waking once per command rather than
        // twice.
        let sent: Vec<_> =
            deliveries.into_iter().map(|(actor, command)| actor.send(command)).collect();
        async move {
            for handled in sent {
                // A task actor that died is noticed (and rebuilt) at the next poll.
                let _ = handled.await;
            }
        }
        .into_actor(self)
        .boxed_local()
    }

    /// One decision and its commands.
    fn schedule(&self, now: Time) -> LocalBoxActorFuture<Self, ()> {
        let _span = tracing::debug_span!("scheduler", now).entered();
        let deliveries = {
            let mut s = self.inner.borrow_mut();
            if s.shutting_down {
                Vec::new()
            } else {
                let waited = s.client.new_tasks_wait_for_disk();
                let commands = s.client.schedule(now);
                let waits = s.client.new_tasks_wait_for_disk();
                if waits != waited {
                    // Tasks held back by a full disk ask the user to act: a notice.
                    let action = if waits {
                        "disk full: new tasks wait for room (running ones go on); free some \
                         space or allow BOINC more in the disk preferences"
                    } else {
                        "the disk has room again: new tasks start"
                    };
                    s.context.events.emit(ClientEvent::DiskAction {
                        time: now,
                        action: action.into(),
                        alert: waits,
                    });
                }
                tracing::debug!(
                    decisions = s.client.decisions(),
                    commands = commands.len(),
                    "decision"
                );
                s.address_commands(commands, now)
            }
        };
        self.deliver(deliveries)
    }

    /// The disk manager's step (seed 004's poll), with the state lent to it: no copy is
    /// made, and the state comes back even when the disk actor fails holding it.
    fn disk_step(&self, finished: Vec<JobId>, now: Time) -> LocalBoxActorFuture<Self, ()> {
        let lent = self.inner.borrow_mut().lend_to_disk(|state| DiskStep { now, finished, state });
        let Some((sent, home)) = lent else {
            return actix::fut::ready(()).boxed_local();
        };
        sent.into_actor(self)
            .map(move |done, act, _| act.inner.borrow_mut().disk_returned(&home, done.is_ok(), now))
            .boxed_local()
    }

    /// Starts the RPC step's operations: master-page fetches, then (when they are done,
    /// or at once when there are none) a session. Nothing here is waited on.
    fn start_operations(&self, now: Time, ctx: &mut Context<Self>) {
        let fetches = {
            let mut s = self.inner.borrow_mut();
            if !s.rpc_gate_open(now) {
                return;
            }
            s.master_fetches(now)
        };
        if fetches.is_empty() {
            self.start_session(now, ctx);
            return;
        }
        self.inner.borrow_mut().operations += 1;
        let fetched = async move {
            let mut results = Vec::with_capacity(fetches.len());
            for (p, actor, message) in fetches {
                results.push((p, actor.send(message).await));
            }
            results
        };
        ctx.spawn(fetched.into_actor(self).map(move |results, act, ctx| {
            let now = act.inner.borrow().context.clock.now();
            let mut read = false;
            for (p, result) in results {
                read |= act.inner.borrow_mut().master_fetched(p, result, now);
            }
            // Master pages read: look again with those projects askable, then ask.
            let next = if read { act.schedule(now) } else { actix::fut::ready(()).boxed_local() };
            ctx.wait(next.map(move |(), act, ctx| {
                act.start_session(now, ctx);
                let mut s = act.inner.borrow_mut();
                s.operations -= 1;
                s.publish_wakeup(now);
            }));
        }));
    }

    /// Asks the fetch actor for its work-fetch choice over the latest decision's outlook
    /// (lent to it, not copied), then starts the session that follows from it. The
    /// scheduler takes nothing else in meanwhile: the choice belongs to this step.
    fn start_session(&self, now: Time, ctx: &mut Context<Self>) {
        let asked = {
            let mut s = self.inner.borrow_mut();
            let s = &mut *s;
            let Some(fetch) = s.fetch.as_ref() else { return };
            let Some(outlook) = s.client.lend_fetch_outlook() else { return };
            s.operations += 1;
            fetch.send(ChooseWork { now, outlook })
        };
        ctx.wait(asked.into_actor(self).map(move |answer, act, ctx| {
            let session = {
                let mut s = act.inner.borrow_mut();
                s.operations -= 1;
                let session = match answer {
                    Ok(WorkChoice { choice, outlook }) => {
                        s.client.return_fetch_outlook(outlook);
                        s.session(choice, now)
                    }
                    // The outlook went down with the actor; the next decision makes another.
                    Err(_) => {
                        s.fetch_failed(now);
                        None
                    }
                };
                // No session may have planned the next look for work.
                s.publish_wakeup(now);
                session
            };
            if let Some(session) = session {
                act.run_session(session, ctx);
            }
        }));
    }

    fn run_session(
        &self,
        (call, sent): (RpcCall, actix::dev::Request<FetchActor, RunSession>),
        ctx: &mut Context<Self>,
    ) {
        self.inner.borrow_mut().operations += 1;
        ctx.spawn(sent.into_actor(self).map(move |outcome, act, ctx| {
            // The reply arrives when it arrives: it is taken in at that time.
            let now = act.inner.borrow().context.clock.now();
            ctx.wait(act.finish_session(call, outcome, now));
        }));
    }

    fn finish_session(
        &self,
        call: RpcCall,
        outcome: Result<SessionAnswer, MailboxError>,
        now: Time,
    ) -> LocalBoxActorFuture<Self, ()> {
        let settlement = self.inner.borrow().settlement(&call, &outcome, now);
        let settled = async move {
            match settlement {
                Some(settling) => Some(settling.await),
                None => None,
            }
        };
        // The reply waits on the heap: a future holding it by value would be allocated
        // (and moved) at a size that costs the allocator far more, session after session.
        let carried = Box::new((call, outcome));
        settled
            .into_actor(self)
            .then(move |settled, act, _| {
                let (call, outcome) = *carried;
                let (brought, new_jobs) =
                    act.inner.borrow_mut().session_ended(&call, outcome, settled, now);
                act.after_session(brought, new_jobs, now)
            })
            .boxed_local()
    }

    /// What follows a session that brought `new_jobs`: the disk manager's look at their
    /// files, a new decision when jobs came, the transfers they need.
    fn after_session(
        &self,
        brought: bool,
        new_jobs: Vec<JobId>,
        now: Time,
    ) -> LocalBoxActorFuture<Self, ()> {
        let lent = self.inner.borrow_mut().lend_to_disk(|state| DiskReply { now, new_jobs, state });
        let after_disk = match lent {
            None => actix::fut::ready(()).boxed_local(),
            Some((sent, home)) => sent
                .into_actor(self)
                .map(move |done, act, _| {
                    act.inner.borrow_mut().disk_returned(&home, done.is_ok(), now)
                })
                .boxed_local(),
        };
        after_disk
            .then(
                move |(), act, _| {
                    if brought { act.schedule(now) } else { actix::fut::ready(()).boxed_local() }
                },
            )
            .map(move |(), act, ctx| {
                // The jobs the reply brought may have files to fetch.
                act.start_transfers(now, ctx);
                let mut s = act.inner.borrow_mut();
                s.client.compact();
                s.operations -= 1;
                s.publish_wakeup(now);
            })
            .boxed_local()
    }

    /// Starts the file transfers the core wants now (docs/design.md "Nothing waits"): each
    /// attempt runs on its own and its end is taken in when it comes, which may start
    /// the next ones and a new decision.
    fn start_transfers(&self, now: Time, ctx: &mut Context<Self>) {
        let (attempts, taken) = {
            let mut s = self.inner.borrow_mut();
            let s = &mut *s;
            let Some(runner) = s.transfers.as_mut() else { return };
            if s.shutting_down || !s.client.transfers_due(now) {
                return;
            }
            let (orders, taken) = runner.start(&mut s.client, now);
            let attempts: Vec<_> = orders
                .into_iter()
                .map(|order| {
                    let attempt = runner.attempt(&order, project_name(&s.client, order.project));
                    (order, attempt)
                })
                .collect();
            s.operations += attempts.len() as u32;
            (attempts, taken)
        };
        if taken.reschedule {
            ctx.wait(self.schedule(now));
        }
        for (order, attempt) in attempts {
            ctx.spawn(attempt.into_actor(self).map(move |result, act, ctx| {
                let now = act.inner.borrow().context.clock.now();
                let taken = {
                    let mut s = act.inner.borrow_mut();
                    let s = &mut *s;
                    s.operations -= 1;
                    match s.transfers.as_mut() {
                        Some(runner) => runner.finish(&mut s.client, &order, result, now),
                        None => Default::default(),
                    }
                };
                if taken.reschedule {
                    ctx.wait(act.schedule(now));
                }
                act.start_transfers(now, ctx);
                act.inner.borrow().publish_wakeup(now);
            }));
        }
    }
}

impl Actor for SchedulerActor {
    type Context = Context<Self>;

    fn started(&mut self, _: &mut Context<Self>) {
        let s = self.inner.borrow();
        tracing::debug!(projects = s.client.state().projects.len(), "scheduler started");
    }
}

impl Handler<Startup> for SchedulerActor {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, message: Startup, _: &mut Context<Self>) -> Self::Result {
        let deliveries = {
            let mut s = self.inner.borrow_mut();
            s.context.input("scheduler", "Startup", &message);
            let commands = s.client.startup_commands();
            s.address_commands(commands, message.now)
        };
        AtomicResponse::new(self.deliver(deliveries))
    }
}

impl Handler<HostChanged> for SchedulerActor {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, message: HostChanged, _: &mut Context<Self>) -> Self::Result {
        let (now, resources) = {
            let mut s = self.inner.borrow_mut();
            s.context.input("scheduler", "HostChanged", &message);
            let now = s.context.clock.now();
            // The time up to now was spent in the old availability.
            s.catch_up_usage(now);
            let resources: Vec<_> = s
                .resources
                .iter()
                .enumerate()
                .filter_map(|(i, (_, a))| a.clone().map(|a| (i, a)))
                .collect();
            (now, resources)
        };
        let view = message.view;
        AtomicResponse::new(Box::pin(
            async move {
                let mut answers = Vec::with_capacity(resources.len());
                for (index, actor) in resources {
                    answers.push((index, actor.send(Availability { view }).await));
                }
                answers
            }
            .into_actor(self)
            .map(move |answers, act, _| {
                let mut s = act.inner.borrow_mut();
                // Each resource computes as its actor answered. One being rebuilt has
                // no answer: its resource follows the core's availability rule, so
                // that a failed actor neither stops nor frees its resource.
                let compat = s.boinc_compat;
                let mut computing = ResourceMap::from_fn(|r| view.resource_may_compute(r, compat));
                for (position, answer) in answers {
                    match answer {
                        Ok(available) => {
                            let index = available.resource.index() as u32;
                            computing[available.resource] = available.may_compute;
                            s.supervisor.healthy(ActorId { kind: ActorKind::Resource, index }, now)
                        }
                        Err(_) => s.resource_failed(position, now),
                    }
                }
                let before = s.client.host().suspend;
                let uses_gpus = s.client.state().uses_gpus();
                for (activity, reason) in
                    SuspendedActivity::changes(&before, &view.suspend, uses_gpus)
                {
                    s.context.events.emit(ClientEvent::Suspension { time: now, activity, reason });
                }
                s.client.set_host_with(view, computing);
                // A suspension that began or ended is decided on at the next step.
                s.publish_wakeup(now);
            }),
        ))
    }
}

impl SchedulerActor {
    /// A step of the control loop at `now`: the tasks are polled and their reports taken
    /// in; then, for a full step (or when a poll found a task ended), the disk manager's
    /// poll, a decision and its commands, and the RPC step's operations.
    fn step(&mut self, now: Time, full: bool) -> AtomicResponse<Self, ()> {
        let (polls, full) = {
            let mut s = self.inner.borrow_mut();
            s.context.maybe_panic(ActorId::single(ActorKind::Scheduler), now);
            // A wall clock set back makes this a full step: the step planned in the old
            // clock would be as far away as the clock went back.
            let set_back = s.follow_clock(now);
            s.catch_up_usage(now);
            s.rebuild_due_actors(now);
            (s.polls(now), full || set_back)
        };
        let board = Arc::clone(&self.inner.borrow().poll_board);
        let polled = async move {
            let StepPolls { polled, all_in } = polls;
            // Resolves when every poll was answered or dropped with its actor.
            all_in.await;
            (polled, board.take())
        };
        AtomicResponse::new(Box::pin(polled.into_actor(self).then(
            move |(polled, reports), act, _| {
                let (finished, ended, full_disk) = {
                    let mut s = act.inner.borrow_mut();
                    let tasks_before = s.client.running().len();
                    let finished = s.apply_reports(polled, reports, now);
                    let ended = s.client.running().len() != tasks_before;
                    (finished, ended, s.client.disk_full())
                };
                // On a full disk every poll looks at the room: tasks and downloads waiting
                // for it go on within a poll of its return, not at the next full step.
                if !full && !ended && full_disk {
                    act.disk_measure(now)
                        .then(move |room_again, act, _| act.after_polls(finished, room_again, now))
                        .boxed_local()
                } else {
                    act.after_polls(finished, full || ended, now)
                }
            },
        )))
    }

    /// What follows a step's polls: for a full step (or when a task ended, or room came
    /// back on a full disk), the disk manager's poll, a decision and its commands, and
    /// the RPC step's operations.
    fn after_polls(
        &self,
        finished: Vec<JobId>,
        full: bool,
        now: Time,
    ) -> LocalBoxActorFuture<Self, ()> {
        if !full {
            self.inner.borrow().publish_wakeup(now);
            return actix::fut::ready(()).boxed_local();
        }
        self.disk_step(finished, now)
            .then(move |(), act, _| act.schedule(now))
            .map(move |(), act, ctx| {
                act.start_operations(now, ctx);
                act.start_transfers(now, ctx);
                let mut s = act.inner.borrow_mut();
                s.client.compact();
                s.publish_wakeup(now);
            })
            .boxed_local()
    }

    /// Measures the disk's free space alone (its disk was full); whether it has room
    /// now.
    fn disk_measure(&self, now: Time) -> LocalBoxActorFuture<Self, bool> {
        let lent = self.inner.borrow_mut().lend_to_disk(|state| DiskMeasure { now, state });
        let Some((sent, home)) = lent else {
            return actix::fut::ready(false).boxed_local();
        };
        sent.into_actor(self)
            .map(move |done, act, _| {
                let mut s = act.inner.borrow_mut();
                s.disk_returned(&home, done.is_ok(), now);
                let room = !s.client.disk_full();
                if room {
                    tracing::info!("the disk has room again");
                }
                room
            })
            .boxed_local()
    }
}

impl Handler<Tick> for SchedulerActor {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, tick: Tick, _: &mut Context<Self>) -> Self::Result {
        let _span = tracing::debug_span!("scheduler", now = tick.now).entered();
        self.inner.borrow().context.input("scheduler", "Tick", &tick);
        self.step(tick.now, true)
    }
}

impl Handler<PollTasks> for SchedulerActor {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, poll: PollTasks, _: &mut Context<Self>) -> Self::Result {
        let _span = tracing::debug_span!("scheduler", now = poll.now).entered();
        self.inner.borrow().context.input("scheduler", "PollTasks", &poll);
        self.step(poll.now, false)
    }
}

impl Handler<Stats> for SchedulerActor {
    type Result = actix::MessageResult<Stats>;

    fn handle(&mut self, _: Stats, _: &mut Context<Self>) -> Self::Result {
        actix::MessageResult(self.inner.borrow().counts())
    }
}

impl Handler<Snapshot> for SchedulerActor {
    type Result = actix::MessageResult<Snapshot>;

    fn handle(&mut self, _: Snapshot, _: &mut Context<Self>) -> Self::Result {
        let s = self.inner.borrow();
        actix::MessageResult(StateSnapshot {
            time: s.context.clock.now(),
            state: s.client.state().clone(),
            running: s.client.running().to_vec(),
            in_flight: s.client.in_flight().collect(),
            decisions: s.client.decisions(),
            rpcs: s.client.rpcs(),
            host: s.client.host(),
        })
    }
}

impl Handler<User> for SchedulerActor {
    type Result = AtomicResponse<Self, Result<(), ClientError>>;

    fn handle(&mut self, message: User, _: &mut Context<Self>) -> Self::Result {
        let result = {
            let mut s = self.inner.borrow_mut();
            s.context.input("scheduler", "User", &message);
            let now = s.context.clock.now();
            s.catch_up_usage(now);
            tracing::info!(action = ?message.action, "user action");
            match s.client.user_action(&message.action, now) {
                Ok(commands) => {
                    s.start_new_project_actors();
                    let deliveries = s.address_commands(commands, now);
                    s.publish_wakeup(now);
                    Ok(deliveries)
                }
                Err(error) => Err(ClientError::Action(error)),
            }
        };
        match result {
            Ok(deliveries) => {
                AtomicResponse::new(Box::pin(self.deliver(deliveries).map(|(), _, _| Ok(()))))
            }
            Err(error) => AtomicResponse::new(Box::pin(actix::fut::ready(Err(error)))),
        }
    }
}

impl Handler<Shutdown> for SchedulerActor {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, message: Shutdown, _: &mut Context<Self>) -> Self::Result {
        let deliveries = {
            let mut s = self.inner.borrow_mut();
            s.context.input("scheduler", "Shutdown", &message);
            tracing::info!("shutting down: asking the running tasks to quit");
            s.shutdown_commands(message.now)
        };
        AtomicResponse::new(self.deliver(deliveries))
    }
}
