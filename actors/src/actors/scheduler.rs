//! SchedulerActor: the client's centre (DESIGN.md "Actors"). It holds the authoritative
//! client state and runs the control loop of [`boinc_core::control`] on every trigger of
//! seed 000: each [`Tick`] polls the running tasks, completes finished jobs, decides
//! (rr_sim, EDF and debts, enforcement) and sends run and preempt commands to the task
//! actors, then runs the RPC step through the project actors and the fetch actor. It
//! also supervises the actors it started: one that fails is reported, rebuilt from the
//! authoritative state and restarted, with a bounded backoff (src/supervise.rs).

use super::disk::DiskActor;
use super::fetch::{FetchActor, ProjectActors};
use super::project::ProjectActor;
use super::resource::ResourceActor;
use super::task::TaskActor;
use crate::client::ClientError;
use crate::context::ActorContext;
use crate::effects::{ProcessHost, SchedulerTransport};
use crate::events::ClientEvent;
use crate::messages::{
    Command, DiskReply, DiskStep, InstanceAssignment, MasterFetch, Poll, ResourceAvailable,
    RunSession, SessionOutcome, Startup, Stats, TaskReport, Tick, User, UserAction,
};
use actix::AsyncContext as _;
use actix::fut::LocalBoxActorFuture;
use actix::{
    Actor, ActorFutureExt, Addr, AtomicResponse, Context, Handler, MailboxError, WrapFuture,
};
use boinc_core::Time;
use boinc_core::control::{ClientControl, ProjectRpcState, RpcCall, RpcGate, TaskCommand};
use boinc_core::model::{JobId, ProjectId, ResourceType};
use boinc_core::supervise::{RestartDecision, RestartPolicy};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

/// What the scheduler needs to start the other actors.
pub struct SchedulerSetup {
    /// The control loop over the client's state.
    pub client: ClientControl,
    /// Shared clock, journal, events.
    pub context: ActorContext,
    /// Where task processes run.
    pub process_host: Rc<dyn ProcessHost>,
    /// Where scheduler RPCs go.
    pub transport: Rc<dyn SchedulerTransport>,
    /// The run's seed (each project's random stream derives from it).
    pub seed: u64,
    /// BOINC-compatible availability model.
    pub boinc_compat: bool,
    /// Inject a panic into this project's actor at its first session.
    pub panic_project_actor: Option<u32>,
    /// The disk manager's actor, when the client manages disk use.
    pub disk: Option<DiskActor>,
}

/// The central scheduler actor.
pub struct SchedulerActor {
    context: ActorContext,
    client: ClientControl,
    process_host: Rc<dyn ProcessHost>,
    transport: Rc<dyn SchedulerTransport>,
    seed: u64,
    /// Task actors by slot.
    tasks: BTreeMap<u32, Addr<TaskActor>>,
    resources: Vec<(ResourceType, Addr<ResourceActor>)>,
    projects: Vec<Addr<ProjectActor>>,
    fetch: Option<Addr<FetchActor>>,
    disk: Option<Addr<DiskActor>>,
    last_tick: Option<Time>,
    /// Crashed apps waiting to restart, by slot.
    restarts: BTreeMap<u32, Time>,
    /// Consecutive failures of each supervised actor.
    actor_failures: BTreeMap<String, u32>,
}

impl SchedulerActor {
    /// Starts the scheduler and, beside it, a ResourceActor per processing resource, a
    /// ProjectActor per project and the FetchActor.
    pub fn launch(setup: SchedulerSetup) -> (Addr<SchedulerActor>, Vec<Addr<ResourceActor>>) {
        let mut resource_actors = Vec::new();
        let scheduler = SchedulerActor::create(|ctx| {
            let me = ctx.address();
            let state = setup.client.state();
            let resources: Vec<_> = ResourceType::ALL
                .into_iter()
                .filter(|&r| state.instances(r) > 0)
                .map(|r| {
                    let actor = ResourceActor::new(
                        r,
                        state.instances(r),
                        setup.boinc_compat,
                        setup.context.clone(),
                        me.clone(),
                    );
                    (r, actor.start())
                })
                .collect();
            let projects: Vec<_> = state
                .project_ids()
                .map(|p| {
                    ProjectActor::new(
                        p,
                        setup.seed,
                        setup.context.clone(),
                        setup.transport.clone(),
                        setup.panic_project_actor == Some(p.0),
                    )
                    .start()
                })
                .collect();
            let fetch = FetchActor::new(setup.context.clone(), projects.clone()).start();
            resource_actors = resources.iter().map(|(_, a)| a.clone()).collect();
            SchedulerActor {
                context: setup.context,
                client: setup.client,
                process_host: setup.process_host,
                transport: setup.transport,
                seed: setup.seed,
                tasks: BTreeMap::new(),
                resources,
                projects,
                fetch: Some(fetch),
                disk: setup.disk.map(Actor::start),
                last_tick: None,
                restarts: BTreeMap::new(),
                actor_failures: BTreeMap::new(),
            }
        });
        (scheduler, resource_actors)
    }

    fn project_name(&self, project: ProjectId) -> String {
        self.client
            .state()
            .projects
            .get(project.index())
            .map_or_else(String::new, |p| p.name.clone())
    }

    fn task_actor(&mut self, slot: u32, job: &str) -> Addr<TaskActor> {
        let context = self.context.clone();
        let host = self.process_host.clone();
        self.tasks
            .entry(slot)
            .or_insert_with(|| TaskActor::new(slot, job, context, host).start())
            .clone()
    }

    /// Sends the decision's commands to the task actors, one after the other (each
    /// carried out before the next is sent, so the processes change in decision order).
    fn send_commands(
        &mut self,
        commands: Vec<TaskCommand>,
        now: Time,
    ) -> LocalBoxActorFuture<Self, ()> {
        let mut deliveries = Vec::with_capacity(commands.len());
        let changed = !commands.is_empty();
        for command in commands {
            let (project, job, slot) = command.target();
            let job = job.to_string();
            match &command {
                TaskCommand::Start(_) | TaskCommand::Resume { .. } => {
                    self.context.events.emit(ClientEvent::TaskStarted {
                        time: now,
                        project: self.project_name(project),
                        job: job.clone(),
                    });
                }
                TaskCommand::Preempt { remove_from_memory, .. } => {
                    self.context.events.emit(ClientEvent::TaskPreempted {
                        time: now,
                        project: self.project_name(project),
                        job: job.clone(),
                        removed_from_memory: *remove_from_memory,
                    });
                }
                TaskCommand::WatchCheckpoint { .. } => {}
            }
            let actor = match &command {
                TaskCommand::Start(_) => Some(self.task_actor(slot, &job)),
                _ => self.tasks.get(&slot).cloned(),
            };
            if let Some(actor) = actor {
                deliveries.push((actor, Command { command, now }));
            }
        }
        if changed {
            self.assign_instances();
        }
        async move {
            for (actor, command) in deliveries {
                // A task actor that died is rebuilt at the next poll.
                let _ = actor.send(command).await;
            }
        }
        .into_actor(self)
        .boxed_local()
    }

    /// Tells each resource actor which tasks occupy its instances now.
    fn assign_instances(&self) {
        let state = self.client.state();
        for (resource, actor) in &self.resources {
            let mut tasks = Vec::new();
            for &id in self.client.running() {
                let job = state.job(id);
                let (Some(av), Some(task)) = (job.app_version, job.task.as_ref()) else { continue };
                let usage = state.app_version(av).usage;
                let used = usage.usage_of(*resource);
                if used > 0.0 {
                    tasks.push((job.name.clone(), used, task.gpu_instances.clone()));
                }
            }
            actor.do_send(InstanceAssignment { tasks });
        }
    }

    fn schedule(&mut self, now: Time) -> LocalBoxActorFuture<Self, ()> {
        let commands = self.client.schedule(now);
        self.send_commands(commands, now)
    }

    /// Records an actor's failure; whether to restart it.
    /// Records an actor's failure: the restart decision for it.
    fn actor_failed(&mut self, actor: String, now: Time) -> RestartDecision {
        let failures = self.actor_failures.entry(actor.clone()).or_insert(0);
        *failures += 1;
        let failures = *failures;
        tracing::error!(actor = %actor, failures, "actor failed; rebuilding it from the client state");
        self.context.events.emit(ClientEvent::ActorRestarted { time: now, actor, failures });
        RestartPolicy::ACTOR.after_failure(failures)
    }

    /// A project's actor failed: a new one is built from the authoritative state, and
    /// the project is not contacted again before the restart backoff has passed.
    fn restart_project_actor(&mut self, project: ProjectId, now: Time) {
        let decision = self.actor_failed(format!("project:{}", project.0), now);
        if let Some(p) = self.client.state_mut().projects.get_mut(project.index()) {
            match decision {
                RestartDecision::RestartAfter(delay) => {
                    p.min_rpc_time = p.min_rpc_time.max(now + delay);
                }
                RestartDecision::GiveUp => {
                    // Broken beyond repair: the project is set aside until the user acts.
                    p.suspended = true;
                    p.dont_request_more_work = true;
                }
            }
        }
        let actor = ProjectActor::new(
            project,
            self.seed,
            self.context.clone(),
            self.transport.clone(),
            false,
        )
        .start();
        if let Some(slot) = self.projects.get_mut(project.index()) {
            *slot = actor;
        }
        if let Some(fetch) = &self.fetch {
            fetch.do_send(ProjectActors(self.projects.clone()));
        }
    }

    /// Applies the task reports; returns the jobs that finished successfully.
    fn apply_reports(
        &mut self,
        reports: Vec<(JobId, u32, Result<TaskReport, MailboxError>)>,
        now: Time,
    ) -> Vec<JobId> {
        let mut finished = Vec::new();
        for (id, slot, report) in reports {
            match report {
                Ok(TaskReport::Running(status)) => {
                    self.restarts.remove(&slot);
                    self.client.apply_status(id, &status);
                }
                Ok(TaskReport::Finished(status)) => {
                    self.client.apply_status(id, &status);
                    self.tasks.remove(&slot);
                    self.restarts.remove(&slot);
                    finished.push((id, false));
                }
                Ok(TaskReport::Restarting { checkpoint, restart_at }) => {
                    self.client.apply_status(id, &checkpoint);
                    if self.restarts.insert(slot, restart_at) != Some(restart_at) {
                        self.context.events.emit(ClientEvent::TaskRestarting {
                            time: now,
                            job: self.client.state().job(id).name.clone(),
                            restart_at,
                        });
                    }
                }
                Ok(TaskReport::GaveUp) => {
                    self.tasks.remove(&slot);
                    self.restarts.remove(&slot);
                    finished.push((id, true));
                }
                Ok(TaskReport::Idle) => {}
                Err(_) => {
                    let job = self.client.state().job(id).name.clone();
                    self.tasks.remove(&slot);
                    let decision = self.actor_failed(format!("task:{slot}:{job}"), now);
                    if decision != RestartDecision::GiveUp {
                        // The process lives on; a new actor takes it over.
                        self.task_actor(slot, &job);
                    } else {
                        self.process_host.kill(slot);
                        finished.push((id, true));
                    }
                }
            }
        }
        let mut completed = Vec::new();
        for (id, error) in finished {
            let job = self.client.state().job(id);
            let event = ClientEvent::TaskFinished {
                time: now,
                project: self.project_name(job.project),
                job: job.name.clone(),
                error,
            };
            if error {
                self.client.fail(id, now);
            } else {
                self.client.complete(id, now);
                completed.push(id);
            }
            self.context.events.emit(event);
        }
        completed
    }

    /// The disk manager's step (seed 004's poll), with the state lent to it.
    fn disk_step(&mut self, finished: Vec<JobId>, now: Time) -> LocalBoxActorFuture<Self, ()> {
        let Some(disk) = self.disk.clone() else {
            return actix::fut::ready(()).boxed_local();
        };
        let state = Box::new(self.client.take_state());
        async move { disk.send(DiskStep { now, finished, state }).await }
            .into_actor(self)
            .map(|state, act, _| match state {
                Ok(state) => act.client.restore_state(*state),
                Err(_) => panic!("the disk actor failed holding the client state"),
            })
            .boxed_local()
    }

    fn rpc_step(&mut self, now: Time) -> LocalBoxActorFuture<Self, ()> {
        if self.client.rpc_gate(now) != RpcGate::Open {
            return actix::fut::ready(()).boxed_local();
        }
        let fetches: Vec<_> = self
            .client
            .master_fetches_due(now)
            .into_iter()
            .filter_map(|p| {
                let actor = self.projects.get(p.index())?.clone();
                Some((p, actor, self.client.state().project(p).clone()))
            })
            .collect();
        async move {
            let mut results = Vec::with_capacity(fetches.len());
            for (p, actor, project) in fetches {
                results.push((p, actor.send(MasterFetch { now, project }).await));
            }
            results
        }
        .into_actor(self)
        .then(move |results, act, _| {
            let mut read = false;
            for (p, result) in results {
                match result {
                    Ok(state) => {
                        read |= !state.master_fetch_pending;
                        act.client.set_project_rpc_state(p, &state);
                    }
                    Err(_) => act.restart_project_actor(p, now),
                }
            }
            if read {
                // Master pages read: look again with those projects askable.
                act.schedule(now)
            } else {
                actix::fut::ready(()).boxed_local()
            }
        })
        .then(move |(), act, _| act.session(now))
        .boxed_local()
    }

    fn session(&mut self, now: Time) -> LocalBoxActorFuture<Self, ()> {
        let Some(call) = self.client.rpc_call(now) else {
            return actix::fut::ready(()).boxed_local();
        };
        let Some(fetch) = self.fetch.clone() else {
            return actix::fut::ready(()).boxed_local();
        };
        let project = call.request.project;
        self.context.events.emit(ClientEvent::WorkRequested {
            time: now,
            project: self.project_name(project),
            req_seconds: ResourceType::ALL
                .into_iter()
                .filter(|&r| call.request.requests(r))
                .map(|r| (r, call.request.resources[r].req_seconds))
                .collect(),
        });
        let request = Arc::new(self.client.build_request(&call, now).into_owned());
        // The session reads the state the request describes while the loop waits.
        let state = Arc::new(self.client.take_state());
        let message = RunSession { now, call: call.clone(), request, state: Arc::clone(&state) };
        async move { fetch.send(message).await }
            .into_actor(self)
            .then(move |outcome, act, _| {
                let state = Arc::try_unwrap(state).unwrap_or_else(|shared| (*shared).clone());
                act.client.restore_state(state);
                act.finish_session(&call, outcome, now)
            })
            .boxed_local()
    }

    fn finish_session(
        &mut self,
        call: &RpcCall,
        outcome: Result<Result<SessionOutcome, String>, MailboxError>,
        now: Time,
    ) -> LocalBoxActorFuture<Self, ()> {
        let project = call.request.project;
        let before = ProjectRpcState::of(self.client.state().project(project));
        let (reply, rpc_state) = match outcome {
            Ok(Ok(outcome)) => (outcome.reply, outcome.rpc_state),
            _ => {
                // The project's actor died in the session: the RPC counts as not made.
                self.restart_project_actor(project, now);
                (None, before.clone())
            }
        };
        let name = self.project_name(project);
        self.context.events.emit(ClientEvent::RpcDone {
            time: now,
            project: name.clone(),
            success: reply.is_some(),
            jobs: reply.as_ref().map_or(0, |r| r.results.len()),
        });
        if rpc_state.min_rpc_time > before.min_rpc_time && rpc_state.min_rpc_time > now {
            self.context.events.emit(ClientEvent::BackoffSet {
                time: now,
                project: name.clone(),
                resource: None,
                until: rpc_state.min_rpc_time,
            });
        }
        for r in ResourceType::ALL {
            let until = rpc_state.resources[r].backoff_time;
            if until > before.resources[r].backoff_time && until > now {
                self.context.events.emit(ClientEvent::BackoffSet {
                    time: now,
                    project: name.clone(),
                    resource: Some(r),
                    until,
                });
            }
        }
        let outcome = self.client.finish_rpc(call, reply.as_ref(), now);
        self.client.set_project_rpc_state(project, &rpc_state);
        let new_jobs = outcome.map(|o| o.new_jobs).unwrap_or_default();
        let brought = !new_jobs.is_empty();
        let Some(disk) = self.disk.clone() else {
            return if brought { self.schedule(now) } else { actix::fut::ready(()).boxed_local() };
        };
        let state = Box::new(self.client.take_state());
        async move { disk.send(DiskReply { now, new_jobs, state }).await }
            .into_actor(self)
            .then(move |state, act, _| {
                match state {
                    Ok(state) => act.client.restore_state(*state),
                    Err(_) => panic!("the disk actor failed holding the client state"),
                }
                if brought { act.schedule(now) } else { actix::fut::ready(()).boxed_local() }
            })
            .boxed_local()
    }

    /// Charges the running tasks' usage from the last charge up to `now`.
    fn catch_up_usage(&mut self, now: Time) {
        if let Some(last) = self.last_tick {
            self.client.accumulate_usage(now - last);
        }
        self.last_tick = Some(now);
    }

    /// When the scheduler wants the next step: the control loop's wish, or a crashed
    /// app's restart.
    fn wakeup(&self, now: Time) -> Time {
        let restart =
            self.restarts.values().copied().filter(|&t| t > now).fold(f64::INFINITY, f64::min);
        self.client.next_wakeup(now).min(restart)
    }
}

impl Actor for SchedulerActor {
    type Context = Context<Self>;
}

impl Handler<Startup> for SchedulerActor {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, message: Startup, _: &mut Context<Self>) -> Self::Result {
        self.context.input("scheduler", "Startup", &message);
        let commands = self.client.startup_commands();
        AtomicResponse::new(self.send_commands(commands, message.now))
    }
}

impl Handler<ResourceAvailable> for SchedulerActor {
    type Result = ();

    fn handle(&mut self, message: ResourceAvailable, _: &mut Context<Self>) {
        self.context.delivered("scheduler", "ResourceAvailable", &message);
        // The time up to now was spent in the old availability.
        self.catch_up_usage(self.context.clock.now());
        self.client.set_host(message.host);
    }
}

impl Handler<Tick> for SchedulerActor {
    type Result = AtomicResponse<Self, Time>;

    fn handle(&mut self, tick: Tick, _: &mut Context<Self>) -> Self::Result {
        self.context.input("scheduler", "Tick", &tick);
        let now = tick.now;
        self.catch_up_usage(now);
        let mut polls = Vec::with_capacity(self.client.running().len());
        for index in 0..self.client.running().len() {
            let id = self.client.running()[index];
            let job = self.client.state().job(id);
            let Some(slot) = job.task.as_ref().map(|t| t.slot) else { continue };
            let name = job.name.clone();
            let actor = self.task_actor(slot, &name);
            polls.push((id, slot, actor));
        }
        let polled = async move {
            let mut reports = Vec::with_capacity(polls.len());
            for (id, slot, actor) in polls {
                reports.push((id, slot, actor.send(Poll { now }).await));
            }
            reports
        };
        AtomicResponse::new(Box::pin(
            polled
                .into_actor(self)
                .then(move |reports, act, _| {
                    let finished = act.apply_reports(reports, now);
                    act.disk_step(finished, now)
                })
                .then(move |(), act, _| act.schedule(now))
                .then(move |(), act, _| act.rpc_step(now))
                .map(move |(), act, _| {
                    act.client.compact();
                    act.wakeup(now)
                }),
        ))
    }
}

impl Handler<Stats> for SchedulerActor {
    type Result = actix::MessageResult<Stats>;

    fn handle(&mut self, _: Stats, _: &mut Context<Self>) -> Self::Result {
        actix::MessageResult((self.client.decisions(), self.client.rpcs()))
    }
}

impl Handler<User> for SchedulerActor {
    type Result = Result<(), ClientError>;

    fn handle(&mut self, message: User, _: &mut Context<Self>) -> Self::Result {
        self.context.input("scheduler", "User", &message);
        let now = self.context.clock.now();
        let state = self.client.state_mut();
        let project_named = |state: &boinc_core::model::ClientState, name: &str| {
            state
                .projects
                .iter()
                .position(|p| p.name == name || p.master_url == name)
                .ok_or_else(|| ClientError::UnknownProject(name.to_string()))
        };
        let job_named = |state: &boinc_core::model::ClientState, name: &str| {
            state
                .jobs
                .iter()
                .position(|j| j.name == name)
                .ok_or_else(|| ClientError::UnknownTask(name.to_string()))
        };
        match &message.action {
            UserAction::SuspendProject(name) => {
                let p = project_named(state, name)?;
                state.projects[p].suspended = true;
            }
            UserAction::ResumeProject(name) => {
                let p = project_named(state, name)?;
                state.projects[p].suspended = false;
            }
            UserAction::SuspendTask(name) => {
                let j = job_named(state, name)?;
                state.jobs[j].suspended = true;
            }
            UserAction::ResumeTask(name) => {
                let j = job_named(state, name)?;
                state.jobs[j].suspended = false;
            }
            UserAction::SetRunMode(mode) => state.run_mode = *mode,
            UserAction::Detach(name) => {
                let p = project_named(state, name)?;
                state.projects[p].suspended = true;
                state.projects[p].dont_request_more_work = true;
            }
            UserAction::Attach(url) => {
                let p = project_named(state, url)?;
                state.projects[p].suspended = false;
                state.projects[p].dont_request_more_work = false;
            }
        }
        self.client.wake_fetch(now);
        Ok(())
    }
}
