//! One task driven in wall-clock time (issue "Running real apps": `boinc-rs app-test`,
//! the live tests, the overhead measurement): a [`TaskActor`] with a process host, sent
//! the commands and polls the scheduler would send, each stamped with the clock's time.
//! Runs inside an actix system on the current thread.

use actix::{Actor, Addr, MailboxError};
use boinc_core::Time;
use boinc_core::control::{TaskCommand, TaskSpec};
use boinc_core::model::ProjectId;
use boinc_core::supervise::RestartTracker;
use boinc_runtime::effects::{Clock, ProcessHost};
use boinc_runtime::journal::Journal;
use boinc_runtime::runtime::context::ActorContext;
use boinc_runtime::runtime::events::EventBus;
use boinc_runtime::runtime::messages::{Command, Poll, PollBoard, TaskReport};
use boinc_runtime::runtime::task::{TaskActor, TaskSupervision};
use std::sync::Arc;

/// A task actor and the clock its messages are stamped with.
pub struct TaskDriver {
    actor: Addr<TaskActor>,
    clock: Arc<dyn Clock>,
    project: ProjectId,
    job: String,
    slot: u32,
}

impl TaskDriver {
    /// Starts the actor for `spec`'s task (it does not start the app: see
    /// [`TaskDriver::start`]).
    pub fn new(
        host: Arc<dyn ProcessHost>,
        clock: Arc<dyn Clock>,
        spec: &TaskSpec,
        supervision: TaskSupervision,
    ) -> TaskDriver {
        let context = ActorContext {
            clock: Arc::clone(&clock),
            journal: Journal::off(),
            events: EventBus::default(),
            faults: Default::default(),
        };
        let actor = TaskActor::new(
            spec.slot,
            &spec.job,
            context,
            host,
            supervision,
            None,
            RestartTracker::new(),
            None,
        )
        .start();
        TaskDriver { actor, clock, project: spec.project, job: spec.job.clone(), slot: spec.slot }
    }

    /// The clock's time.
    pub fn now(&self) -> Time {
        self.clock.now()
    }

    /// Sends a command to the task.
    pub async fn command(&self, command: TaskCommand) -> Result<(), MailboxError> {
        self.actor.send(Command { command, now: self.now() }).await
    }

    /// Starts (or restarts, from `spec`'s checkpoint) the task's app.
    pub async fn start(&self, spec: &TaskSpec) -> Result<(), MailboxError> {
        self.command(TaskCommand::Start(Box::new(spec.clone()))).await
    }

    /// Suspends the app in memory.
    pub async fn suspend(&self) -> Result<(), MailboxError> {
        self.preempt(false).await
    }

    /// Quits the app (it restarts later from its checkpoint).
    pub async fn quit(&self) -> Result<(), MailboxError> {
        self.preempt(true).await
    }

    async fn preempt(&self, remove_from_memory: bool) -> Result<(), MailboxError> {
        self.command(TaskCommand::Preempt {
            project: self.project,
            job: self.job.clone(),
            slot: self.slot,
            remove_from_memory,
            for_deadline: false,
        })
        .await
    }

    /// Resumes the app.
    pub async fn resume(&self) -> Result<(), MailboxError> {
        self.command(TaskCommand::Resume {
            project: self.project,
            job: self.job.clone(),
            slot: self.slot,
            gpu_instances: Vec::new(),
        })
        .await
    }

    /// Polls the task. After it finished or failed the actor is gone: an error.
    pub async fn poll(&self) -> Result<TaskReport, MailboxError> {
        let board = PollBoard::new();
        board.begin(Vec::with_capacity(1));
        let answer = board.answer();
        board.sent();
        self.actor.send(Poll { now: self.now(), answer: Some(answer) }).await?;
        // The answer was handed in (or dropped) by the time the handler returned.
        board.all_in().await;
        board.take().pop().flatten().ok_or(MailboxError::Closed)
    }
}
