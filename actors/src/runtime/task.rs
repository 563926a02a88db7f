//! TaskActor: one per active task. It owns the task's process through the process host
//! (start, suspend, resume, quit, abort, kill) and reads its state when polled. When the
//! process ends, the core decides what that means ([`app_fate`]: done, a restart from
//! the checkpoint after the app restart policy's backoff, or an error); this actor
//! carries the decision out, restarting the app when its time comes.

use super::poll_bell::PollBell;
use super::supervision::{ActorId, ActorKind};
use crate::effects::{ProcessError, ProcessHost, ProcessReport};
use crate::runtime::context::ActorContext;
use crate::runtime::messages::{Command, Poll, TaskReport};
use crate::runtime::time_text::TimeText;
use actix::ActorContext as _;
use actix::{Actor, Addr, AsyncContext, Context, Handler, StreamHandler};
use boinc_core::Time;
use boinc_core::control::{ProcessStatus, TaskCommand, TaskSpec};
use boinc_core::supervise::{AppExit, RestartPolicy, RestartTracker, TaskFate, app_fate};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// What a refused process command means to the task: its previous run is still
/// quitting (a start waits), or it failed (why, in the host's words). A live journal
/// records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum CommandRefusal {
    StillEnding,
    Failed(String),
}

/// How often a run asked to quit is looked at until it has exited, and how soon a start
/// waiting for it is tried again.
const ENDING_POLL: Duration = Duration::from_millis(500);

/// The random stream of a task's restart jitter is `TASK_STREAM_BASE + slot` of the
/// run's seed (streams below it belong to the world and the projects).
const TASK_STREAM_BASE: u64 = 1 << 40;

/// How a task actor supervises its app.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TaskSupervision {
    /// The restart policy for its app.
    pub policy: RestartPolicy,
    /// The run's seed (the task's jitter stream derives from it).
    pub seed: u64,
}

/// The actor of one active task.
pub struct TaskActor {
    id: String,
    slot: u32,
    context: ActorContext,
    host: Arc<dyn ProcessHost>,
    /// How the task was last started, for restarts.
    /// (Boxed: the actor's future is allocated for every task run, and a spec inline
    /// would make it an allocation the allocator serves slowly.)
    spec: Option<Box<TaskSpec>>,
    /// Its app ended and restarts at this time from `spec` rolled back to the checkpoint.
    restart_at: Option<Time>,
    /// The wait planned for that restart, seconds.
    restart_wait: f64,
    /// The app could not be started: reported at the next poll.
    pending_exit: Option<AppExit>,
    /// A restart the state file planned (the app crashed before the client restarted):
    /// the first start waits for it.
    deferred_start: Option<Time>,
    /// The slot is cleaned when the task ends (else its owner cleans it, once the end
    /// is on record).
    reap_at_end: bool,
    policy: RestartPolicy,
    tracker: RestartTracker,
    /// The restart jitter's random stream, seeded when the app first ends (most tasks
    /// never need it, and a task actor is started for every task run).
    rng: Option<Box<ChaCha8Rng>>,
    seed: u64,
}

impl TaskActor {
    /// The actor of the task in `slot` running job `job`; `spec` is how it was started,
    /// when the actor is rebuilt for a task that is already running; `crashes` and
    /// `restart_at` are the app's crashes and planned restart as the state kept them.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        slot: u32,
        job: &str,
        context: ActorContext,
        host: Arc<dyn ProcessHost>,
        supervision: TaskSupervision,
        spec: Option<TaskSpec>,
        crashes: RestartTracker,
        restart_at: Option<Time>,
    ) -> Self {
        TaskActor {
            id: format!("task:{slot}:{job}"),
            slot,
            context,
            host,
            spec: spec.map(Box::new),
            restart_at: None,
            restart_wait: 0.0,
            pending_exit: None,
            deferred_start: restart_at,
            reap_at_end: true,
            policy: supervision.policy,
            tracker: crashes,
            rng: None,
            seed: supervision.seed,
        }
    }

    /// An actor whose slot is left as it is when the task ends: its owner cleans it once
    /// the end is on record (a client killed in between finds the finished run in the
    /// slot, instead of running the task again from nothing).
    pub fn leaving_the_slot(mut self) -> Self {
        self.reap_at_end = false;
        self
    }

    /// The actor's journal name.
    pub fn name(&self) -> &str {
        &self.id
    }

    /// Starts the app from the task's spec; a failure to start is an exit like any
    /// other. A previous run still quitting is waited for: the start is tried again
    /// shortly, and the wait counts as no run of the app.
    fn start(&mut self, now: Time) -> Option<AppExit> {
        let spec = self.spec.take()?;
        // The spec goes to the process host inside the command and comes back: a start
        // copies none of it.
        let command = TaskCommand::Start(spec);
        let result = self.command(&command);
        if let TaskCommand::Start(spec) = command {
            self.spec = Some(spec);
        }
        match result {
            Ok(()) => {
                self.tracker.started(now);
                None
            }
            Err(CommandRefusal::StillEnding) => {
                tracing::debug!(task = %self.id, "the previous run is still quitting");
                self.restart_at = Some(now + ENDING_POLL.as_secs_f64());
                self.restart_wait = ENDING_POLL.as_secs_f64();
                None
            }
            Err(CommandRefusal::Failed(error)) => {
                self.tracker.started(now);
                tracing::warn!(task = %self.id, %error, "cannot start the app");
                Some(AppExit::StartFailed(error))
            }
        }
    }

    /// Has the process host carry a command out; its answer is an input a live
    /// journal records.
    fn command(&self, command: &TaskCommand) -> Result<(), CommandRefusal> {
        self.context.exchange(&self.id, "CommandDone", || {
            self.host.command(command).map_err(|error| match error {
                ProcessError::StillEnding { .. } => CommandRefusal::StillEnding,
                error => CommandRefusal::Failed(error.to_string()),
            })
        })
    }

    /// Looks after a run the client asked to quit until it is gone: nothing else polls
    /// a task that is not running, and an exit nobody waits for leaves a zombie (and a
    /// run that ignores the request is killed only when looked at).
    fn follow_ending(&mut self, ctx: &mut Context<Self>) {
        match self.host.tend(self.slot) {
            Ok(true) => {
                ctx.run_later(ENDING_POLL, |actor, ctx| actor.follow_ending(ctx));
            }
            Ok(false) => {}
            Err(error) => {
                tracing::warn!(task = %self.id, %error, "cannot look after the quitting app")
            }
        }
    }

    /// Looks after an aborted run until it is gone, then empties its slot: nothing
    /// polls an aborted task, and its slot files would otherwise stay for good.
    fn follow_abort(&mut self, job: String, ctx: &mut Context<Self>) {
        match self.host.tend(self.slot) {
            Ok(true) => {
                ctx.run_later(ENDING_POLL, move |actor, ctx| actor.follow_abort(job, ctx));
            }
            Ok(false) => {
                if let Err(error) = self.host.discard(self.slot, &job) {
                    tracing::warn!(task = %self.id, %error, "cannot clean up after the aborted task");
                }
                ctx.stop();
            }
            Err(error) => {
                tracing::warn!(task = %self.id, %error, "cannot look after the aborted app")
            }
        }
    }

    /// The app ended with `exit`: the core's decision, carried out.
    fn ended(
        &mut self,
        exit: &AppExit,
        status: ProcessStatus,
        now: Time,
        ctx: &mut Context<Self>,
    ) -> TaskReport {
        let (slot, seed) = (self.slot, self.seed);
        let rng = self.rng.get_or_insert_with(|| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(TASK_STREAM_BASE + u64::from(slot));
            Box::new(rng)
        });
        match app_fate(exit, &mut self.tracker, &self.policy, now, rng) {
            TaskFate::Finished => {
                self.reap();
                ctx.stop();
                TaskReport::Finished(status)
            }
            TaskFate::RestartAt { at, reason } => {
                tracing::info!(task = %self.id, %reason, restart_at = %TimeText(at), "app ended; restarting later");
                self.restart_at = Some(at);
                self.restart_wait = (at - now).max(0.0);
                if let Some(spec) = self.spec.as_mut() {
                    spec.status = ProcessStatus { finished: false, ..status };
                }
                TaskReport::Restarting {
                    checkpoint: status,
                    restart_at: at,
                    crashes: self.tracker.clone(),
                }
            }
            TaskFate::Error { exit_status, message } => {
                tracing::warn!(task = %self.id, exit_status, %message, "task ends in an error");
                self.reap();
                ctx.stop();
                TaskReport::Failed { exit_status, message }
            }
        }
    }

    fn reap(&self) {
        if !self.reap_at_end {
            return;
        }
        if let Err(error) = self.host.reap(self.slot) {
            tracing::warn!(task = %self.id, %error, "cannot clean up after the task");
        }
    }
}

impl Actor for TaskActor {
    type Context = Context<Self>;
}

impl Handler<Command> for TaskActor {
    type Result = ();

    fn handle(&mut self, message: Command, ctx: &mut Context<Self>) {
        self.context.delivered(&self.id, "Command", &message);
        let _span = tracing::debug_span!("task", slot = self.slot).entered();
        tracing::debug!(
            command = message.command.name(),
            job = message.command.target().1,
            "process command"
        );
        let Command { command, now } = message;
        let command = match command {
            TaskCommand::Start(spec) => {
                self.spec = Some(spec);
                self.restart_at = None;
                // The app crashed before the client restarted: its restart waits out
                // the backoff the crash was given.
                if let Some(at) = self.deferred_start.take().filter(|&at| at > now) {
                    tracing::info!(task = %self.id, restart_at = %TimeText(at), "the app restarts after its crash backoff");
                    self.restart_at = Some(at);
                    self.restart_wait = at - now;
                    return;
                }
                // A failure to start shows as an exit at the next poll.
                if let Some(exit) = self.start(now) {
                    self.pending_exit = Some(exit);
                }
                return;
            }
            command @ TaskCommand::Preempt { .. } => {
                // A quit task restarts from its checkpoint when it is started again.
                self.restart_at = None;
                self.tracker.stopped(&self.policy, now);
                command
            }
            TaskCommand::Resume { project, job, slot, gpu_instances } => {
                if let Some(spec) = self.spec.as_mut() {
                    spec.gpu_instances.clone_from(&gpu_instances);
                }
                self.tracker.started(now);
                TaskCommand::Resume { project, job, slot, gpu_instances }
            }
            command @ TaskCommand::Abort { .. } => {
                self.restart_at = None;
                command
            }
            command @ TaskCommand::WatchCheckpoint { .. } => command,
        };
        if let Err(refusal) = self.command(&command) {
            tracing::warn!(task = %self.id, error = ?refusal, "process command failed");
        }
        match &command {
            TaskCommand::Preempt { remove_from_memory: true, .. } => self.follow_ending(ctx),
            TaskCommand::Abort { job, .. } => self.follow_abort(job.clone(), ctx),
            _ => {}
        }
    }
}

impl Handler<Poll> for TaskActor {
    type Result = ();

    fn handle(&mut self, message: Poll, ctx: &mut Context<Self>) -> Self::Result {
        self.answer_poll(message, ctx);
    }
}

/// Polls rung on the actor's [`PollBell`] (the scheduler's every step).
impl StreamHandler<Poll> for TaskActor {
    fn handle(&mut self, message: Poll, ctx: &mut Context<Self>) {
        self.answer_poll(message, ctx);
    }

    /// The scheduler let go of the bell: the actor stops once nothing else holds it
    /// (a run it asked to quit is still looked after until it is gone).
    fn finished(&mut self, _: &mut Context<Self>) {}
}

impl TaskActor {
    /// Starts the actor with a doorbell the scheduler polls it through.
    pub fn start_with_bell(self) -> (Addr<TaskActor>, PollBell) {
        let (bell, requests) = PollBell::pair();
        let actor = TaskActor::create(|ctx| {
            ctx.add_stream(requests);
            self
        });
        (actor, bell)
    }

    fn answer_poll(&mut self, mut message: Poll, ctx: &mut Context<Self>) {
        self.context.delivered(&self.id, "Poll", &message);
        let answer = message.answer.take();
        let report = self.poll(message, ctx);
        if let Some(answer) = answer {
            answer.send(report);
        }
    }
}

impl TaskActor {
    /// The task's report at the poll's time: an exit waiting to be told, a restart
    /// waiting out its backoff (or due now), else the process's state.
    fn poll(&mut self, message: Poll, ctx: &mut Context<Self>) -> TaskReport {
        let now = message.now;
        self.context.maybe_panic(ActorId { kind: ActorKind::Task, index: self.slot }, now);
        if let Some(exit) = self.pending_exit.take() {
            let status = self.spec.as_ref().map(|s| s.status).unwrap_or_default();
            return self.ended(&exit, status, now, ctx);
        }
        if let Some(at) = self.restart_at {
            // A wall clock set back since the restart was planned would put it hours
            // away: never wait longer than the wait planned.
            let at = at.min(now + self.restart_wait);
            self.restart_at = Some(at);
            let checkpoint = self.spec.as_ref().map(|s| s.status).unwrap_or_default();
            if now < at {
                return TaskReport::Restarting {
                    checkpoint,
                    restart_at: at,
                    crashes: self.tracker.clone(),
                };
            }
            self.restart_at = None;
            if let Some(exit) = self.start(now) {
                return self.ended(&exit, checkpoint, now, ctx);
            }
            if let Some(restart_at) = self.restart_at {
                // The previous run is still quitting: the start waits a little longer.
                return TaskReport::Restarting {
                    checkpoint,
                    restart_at,
                    crashes: self.tracker.clone(),
                };
            }
        }
        let report = self.host.poll(self.slot).map_err(|e| e.to_string());
        self.context.input(&self.id, "ProcessReport", &report);
        match report {
            Ok(ProcessReport::Running(status)) => {
                self.tracker.running(&self.policy, now);
                TaskReport::Running(status)
            }
            Ok(ProcessReport::Exited { exit, status }) => self.ended(&exit, status, now, ctx),
            Ok(ProcessReport::Gone) => TaskReport::Idle,
            Err(error) => {
                // The host could not read the process this time; the next poll tries again.
                tracing::warn!(task = %self.id, %error, "cannot read the task's process");
                match self.spec.as_ref() {
                    Some(spec) => TaskReport::Running(spec.status),
                    None => TaskReport::Idle,
                }
            }
        }
    }
}
