//! The wall-clock driver (docs/design.md "The drivers"): ticks the scheduler at least once
//! per tick interval (task polls, as BOINC polls its apps once a second) and whenever
//! the scheduler asks for a step sooner, tells it when host discovery reports a change
//! of availability, supervises it, and shuts it down when asked.

use crate::client::ClientError;
use crate::client::Effects;
use crate::client::handle::{HandleShared, RunReport};
use crate::journal::Journal;
use crate::runtime::events::ClientEvent;
use crate::runtime::messages::{HostChanged, PollTasks, Shutdown, Startup, Stats, Tick};
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
}

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
            match self.handle.scheduler().send(message.clone()).await {
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

    /// Runs the client until it is shut down.
    pub(crate) async fn run(mut self) -> Result<RunReport, ClientError> {
        let mut stop = self.handle.stop_requests();
        let mut view = self.effects.host_discovery.availability();
        self.call(HostChanged { view }).await?;
        self.call(Startup { now: self.effects.clock.now() }).await?;
        loop {
            let now: Time = self.effects.clock.now();
            let current = self.effects.host_discovery.availability();
            if current != view {
                view = current;
                self.call(HostChanged { view }).await?;
            }
            // Tasks are polled every tick; the control loop's step comes when the
            // scheduler asked for it (a scheduling check, a fetch, a backoff's end).
            let wish = *self.link.wakeup.borrow();
            if now >= wish {
                self.call(Tick { now }).await?;
            } else {
                self.call(PollTasks { now }).await?;
            }
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
            tokio::select! {
                () = tokio::time::sleep(Duration::from_secs_f64(wait)) => {}
                _ = self.link.wakeup.changed() => {}
                _ = stop.changed() => {}
            }
        }
        self.call(Shutdown { now: self.effects.clock.now() }).await?;
        self.persist(true);
        let (decisions, rpcs) = self.call(Stats).await?;
        self.journal.finish().map_err(|e| ClientError::Journal(e.to_string()))?;
        Ok(RunReport { decisions, rpcs, simulation: None })
    }
}
