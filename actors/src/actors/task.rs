//! TaskActor: one per active task. It owns the task's process through the process host
//! (start, suspend, resume, quit, kill), reads its state when polled, and restarts a
//! crashed app from its checkpoint with backoff (src/supervise.rs), giving up after
//! repeated crashes.

use crate::context::ActorContext;
use crate::effects::{ProcessFailure, ProcessHost, ProcessReport};
use crate::messages::{Command, Poll, TaskReport};
use actix::ActorContext as _;
use actix::{Actor, Context, Handler};
use boinc_core::Time;
use boinc_core::control::{ProcessStatus, TaskCommand, TaskSpec};
use boinc_core::supervise::{RestartDecision, RestartPolicy};
use std::rc::Rc;

/// The actor of one active task.
pub struct TaskActor {
    id: String,
    slot: u32,
    context: ActorContext,
    host: Rc<dyn ProcessHost>,
    /// How the task was last started, for restarts.
    spec: Option<TaskSpec>,
    /// Its app crashed: restart at this time from `spec` rolled back to the checkpoint.
    restart_at: Option<Time>,
    crashes: u32,
}

impl TaskActor {
    /// The actor of the task in `slot` running job `job`.
    pub fn new(slot: u32, job: &str, context: ActorContext, host: Rc<dyn ProcessHost>) -> Self {
        TaskActor {
            id: format!("task:{slot}:{job}"),
            slot,
            context,
            host,
            spec: None,
            restart_at: None,
            crashes: 0,
        }
    }

    /// The actor's journal name.
    pub fn name(&self) -> &str {
        &self.id
    }
}

impl Actor for TaskActor {
    type Context = Context<Self>;
}

impl Handler<Command> for TaskActor {
    type Result = ();

    fn handle(&mut self, message: Command, _: &mut Context<Self>) {
        self.context.delivered(&self.id, "Command", &message);
        match &message.command {
            TaskCommand::Start(spec) => {
                self.spec = Some(spec.clone());
                self.restart_at = None;
            }
            TaskCommand::Preempt { remove_from_memory: true, .. } => {
                // A quit task restarts from its checkpoint when it is started again.
                self.restart_at = None;
            }
            TaskCommand::Resume { gpu_instances, .. } => {
                if let Some(spec) = self.spec.as_mut() {
                    spec.gpu_instances.clone_from(gpu_instances);
                }
            }
            _ => {}
        }
        self.host.command(&message.command);
    }
}

impl Handler<Poll> for TaskActor {
    type Result = actix::MessageResult<Poll>;

    fn handle(&mut self, message: Poll, ctx: &mut Context<Self>) -> Self::Result {
        self.context.delivered(&self.id, "Poll", &message);
        let now = message.now;
        if let Some(at) = self.restart_at {
            if now < at {
                let checkpoint = self.spec.as_ref().map(|s| s.status).unwrap_or_default();
                return actix::MessageResult(TaskReport::Restarting { checkpoint, restart_at: at });
            }
            self.restart_at = None;
            if let Some(spec) = &self.spec {
                self.host.command(&TaskCommand::Start(spec.clone()));
            }
        }
        let report = self.host.poll(self.slot);
        self.context.input(&self.id, "ProcessReport", &report);
        let reply = match report {
            ProcessReport::Status(status) if status.finished => {
                self.host.reap(self.slot);
                ctx.stop();
                TaskReport::Finished(status)
            }
            ProcessReport::Status(status) => TaskReport::Running(status),
            ProcessReport::Gone => TaskReport::Idle,
            ProcessReport::Failed { failure: ProcessFailure::ExitStatus(_), .. } => {
                ctx.stop();
                TaskReport::GaveUp
            }
            ProcessReport::Failed { failure: ProcessFailure::Signal(_), checkpoint } => {
                self.crashes += 1;
                match RestartPolicy::APP.after_failure(self.crashes) {
                    RestartDecision::GiveUp => {
                        ctx.stop();
                        TaskReport::GaveUp
                    }
                    RestartDecision::RestartAfter(delay) => {
                        let restart_at = now + delay;
                        self.restart_at = Some(restart_at);
                        if let Some(spec) = self.spec.as_mut() {
                            spec.status = ProcessStatus { finished: false, ..checkpoint };
                        }
                        TaskReport::Restarting { checkpoint, restart_at }
                    }
                }
            }
        };
        actix::MessageResult(reply)
    }
}
