//! The wall-clock driver (docs/design.md "The drivers"): ticks the scheduler at least once
//! per tick interval (task polls, as BOINC polls its apps once a second) and whenever
//! the scheduler asks for a step sooner, tells it when host discovery reports a change
//! of availability, supervises it, and shuts it down when asked.

use crate::client::ClientError;
use crate::client::Effects;
use crate::client::handle::{HandleShared, RunReport, UserCall};
use crate::journal::{Journal, LatchedClock};
use crate::runtime::events::ClientEvent;
use crate::runtime::messages::{HostChanged, PollTasks, Shutdown, Startup, Stats, Tick, User};
use crate::runtime::scheduler::{SchedulerActor, SchedulerLink};
use crate::runtime::supervision::{ActorId, ActorKind, ActorSupervisor};
use crate::runtime::time_text::TimeText;
use actix::{Handler, Message};
use boinc_core::Time;
use boinc_core::supervise::RestartDecision;
use std::sync::Arc;
use std::time::Duration;

/// Drives one client in wall-clock time over real (or the host's own) effects.
pub(crate) struct WallClockDriver {
    pub(crate) link: SchedulerLink,
    pub(crate) handle: Arc<HandleShared>,
    pub(crate) supervisor: ActorSupervisor,
    pub(crate) effects: Effects,
    pub(crate) journal: Journal,
    /// A live journal's: the actors' clock, moved as each input comes in, and the
    /// user actions, taken in between the driver's own inputs.
    pub(crate) live: Option<LiveInputs>,
}

/// How a live journal's run takes its inputs in: one at a time, when the actors have
/// done all they do without one (docs/actors.md "Live journal and replay").
pub(crate) struct LiveInputs {
    pub(crate) clock: Arc<LatchedClock>,
    pub(crate) actions: tokio::sync::mpsc::UnboundedReceiver<UserCall>,
}

/// At most this many inputs (arrivals and user actions) are taken in between two
/// ticks of a live journal's run; the rest wait for the next tick.
const INPUTS_PER_TICK: usize = 64;

impl WallClockDriver {
    async fn call<M>(&mut self, message: M) -> Result<M::Result, ClientError>
    where
        M: Message + Send + Clone + 'static,
        M::Result: Send,
        SchedulerActor: Handler<M>,
    {
        let actor = ActorId::single(ActorKind::Scheduler);
        loop {
            let now = self.effects.clock.now();
            match self.handle.send_to_scheduler(message.clone()).await {
                Ok(result) => {
                    self.supervisor.healthy(actor, now);
                    return Ok(result);
                }
                Err(_) => {
                    let (decision, failures) = self.supervisor.failed(actor, now);
                    let events = self.link.inner.borrow().context().events.clone();
                    let RestartDecision::RestartAt(at) = decision else {
                        events
                            .emit(ClientEvent::ActorGaveUp { time: now, actor: actor.to_string() });
                        return Err(ClientError::GaveUp("the scheduler kept failing".into()));
                    };
                    tracing::error!(
                        failures,
                        restart_at = %TimeText(at),
                        "the scheduler failed; rebuilding it"
                    );
                    events.emit(ClientEvent::ActorRestarted {
                        time: now,
                        actor: actor.to_string(),
                        failures,
                        restart_at: at,
                    });
                    tokio::time::sleep(Duration::from_secs_f64((at - now).max(0.0))).await;
                    self.handle.set_scheduler(SchedulerActor::rebuild(self.link.inner.clone()));
                    self.supervisor.started(actor, self.effects.clock.now());
                }
            }
        }
    }

    /// Hands the state to the persistence effect, between steps (never while a step
    /// has it lent out).
    fn persist(&self, stopping: bool) {
        let Some(persistence) = &self.effects.persistence else { return };
        let now = self.effects.clock.now();
        let scheduler = self.link.inner.borrow();
        if stopping {
            persistence.stopping(scheduler.state(), now);
        } else {
            persistence.stepped(scheduler.state(), now);
        }
    }

    /// The time of an input coming in now (a live journal's actors see it until the
    /// next one).
    fn input_time(&self) -> Time {
        match &self.live {
            Some(live) => live.clock.latch(),
            None => self.effects.clock.now(),
        }
    }

    /// Delivers one of the driver's inputs; with a live journal, waits until the actors
    /// have done all they do about it.
    async fn input<M>(&mut self, message: M) -> Result<M::Result, ClientError>
    where
        M: Message + Send + Clone + 'static,
        M::Result: Send,
        SchedulerActor: Handler<M>,
    {
        let result = self.call(message).await?;
        if self.live.is_some() {
            self.journal.settle().await;
        }
        Ok(result)
    }

    /// With a live journal: the replies, pages and transfer ends that arrived, and the
    /// user's actions, taken in one at a time (bounded per tick).
    async fn take_arrivals_in(&mut self) -> Result<(), ClientError> {
        let Some(live) = self.live.as_mut() else { return Ok(()) };
        let mut actions = Vec::new();
        while let Ok(call) = live.actions.try_recv() {
            actions.push(call);
        }
        for (action, answer) in actions {
            self.input_time();
            let outcome = self.input(User { action }).await?;
            let _ = answer.send(outcome);
        }
        for _ in 0..INPUTS_PER_TICK {
            let Some(live) = &self.live else { break };
            if !self.journal.gate().is_waiting() {
                break;
            }
            live.clock.latch();
            self.journal.gate().admit_next();
            self.journal.settle().await;
        }
        Ok(())
    }

    /// Runs the client until it is shut down.
    pub(crate) async fn run(mut self) -> Result<RunReport, ClientError> {
        let mut stop = self.handle.stop_requests();
        let mut view = self.effects.host_discovery.availability();
        self.input_time();
        self.input(HostChanged { view }).await?;
        let now = self.input_time();
        self.input(Startup { now }).await?;
        loop {
            let now: Time = self.input_time();
            let current = self.effects.host_discovery.availability();
            if current != view {
                view = current;
                self.input(HostChanged { view }).await?;
            }
            // Tasks are polled every tick; the control loop's step comes when the
            // scheduler asked for it (a scheduling check, a fetch, a backoff's end).
            let wish = *self.link.wakeup.borrow();
            if now >= wish {
                self.input(Tick { now }).await?;
            } else {
                self.input(PollTasks { now }).await?;
            }
            self.take_arrivals_in().await?;
            self.persist(false);
            if let Some(fatal) = self.link.inner.borrow().fatal() {
                return Err(ClientError::GaveUp(fatal.to_string()));
            }
            if *stop.borrow() {
                break;
            }
            let wish = *self.link.wakeup.borrow_and_update();
            let wait = (wish - self.effects.clock.now())
                .clamp(0.0, self.effects.tick_interval.as_secs_f64());
            let live = self.live.is_some();
            tokio::select! {
                () = tokio::time::sleep(Duration::from_secs_f64(wait)) => {}
                _ = self.link.wakeup.changed() => {}
                _ = stop.changed() => {}
                // A live journal's arrivals are taken in at the next tick, now.
                () = self.journal.gate().arrived(), if live => {}
                Some(call) = next_action(&mut self.live) => {
                    self.input_time();
                    let outcome = self.input(User { action: call.0 }).await?;
                    let _ = call.1.send(outcome);
                }
            }
        }
        let now = self.input_time();
        self.input(Shutdown { now }).await?;
        self.persist(true);
        let (decisions, rpcs) = self.call(Stats).await?;
        self.journal.finish().map_err(|e| ClientError::Journal(e.to_string()))?;
        Ok(RunReport { decisions, rpcs, simulation: None })
    }
}

/// A live journal's next user action (never, without one).
async fn next_action(live: &mut Option<LiveInputs>) -> Option<UserCall> {
    match live {
        Some(live) => live.actions.recv().await,
        None => std::future::pending().await,
    }
}
