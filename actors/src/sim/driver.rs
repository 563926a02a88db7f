//! The virtual-time driver (docs/design.md "Time, effects, determinism"): moves the paused
//! tokio clock from one instant to the next that the emulated world or the scheduler
//! asked for, feeding availability changes and ticks to the actors. Operations the
//! scheduler started (RPCs, fetches) complete at their own pace; the driver listens on
//! the scheduler's wake-up channel, so a step the scheduler wants sooner after one of
//! them is not missed. It also supervises the scheduler itself.

use crate::client::ClientError;
use crate::client::handle::{HandleShared, RunReport};
use crate::journal::Journal;
use crate::runtime::events::ClientEvent;
use crate::runtime::messages::{HostChanged, Shutdown, Startup, Stats, Tick};
use crate::runtime::scheduler::{SchedulerActor, SchedulerLink};
use crate::runtime::supervision::{ActorId, ActorKind, ActorSupervisor};
use crate::sim::effects::{SharedWorld, VirtualClock, lock};
use actix::{Handler, Message};
use boinc_core::Time;
use boinc_core::supervise::RestartDecision;
use boinc_emulator::engine::next_step_time;
use std::sync::Arc;
use tokio::time::Instant;

/// How many times the driver lets the actors run, at most, for the operations started
/// in a step to finish before time moves on.
const SETTLE_ROUNDS: u32 = 10_000;

/// Moves virtual time for one simulated client.
pub(crate) struct VirtualDriver {
    pub(crate) link: SchedulerLink,
    pub(crate) handle: Arc<HandleShared>,
    pub(crate) supervisor: ActorSupervisor,
    pub(crate) world: SharedWorld,
    pub(crate) clock: VirtualClock,
    pub(crate) journal: Journal,
    pub(crate) period: f64,
    pub(crate) start: Time,
    /// Virtual seconds per second of tokio's clock: 1 on a paused clock (where tokio's
    /// time jumps anyway); a paced run's realtime factor on the wall clock.
    pub(crate) speed: f64,
    /// Tokio's clock is paused (a runtime this crate made for the run): with nothing
    /// in flight, the driver moves it straight to the next step.
    pub(crate) paused_clock: bool,
    pub(crate) progress: Option<Box<dyn FnMut(f64) + Send>>,
}

impl VirtualDriver {
    /// Sends `message` to the scheduler, rebuilding it (after the actor restart policy's
    /// backoff, in virtual time) when it has failed; gives up when it failed too often.
    async fn call<M>(&mut self, message: M, now: &mut Time) -> Result<M::Result, ClientError>
    where
        M: Message + Send + Clone + 'static,
        M::Result: Send,
        SchedulerActor: Handler<M>,
    {
        let actor = ActorId::single(ActorKind::Scheduler);
        loop {
            match self.handle.send_to_scheduler(message.clone()).await {
                Ok(result) => {
                    self.supervisor.healthy(actor, *now);
                    return Ok(result);
                }
                Err(_) => {
                    let (decision, failures) = self.supervisor.failed(actor, *now);
                    let events = &self.link.inner.borrow().context().events.clone();
                    let RestartDecision::RestartAt(at) = decision else {
                        events.emit(ClientEvent::ActorGaveUp {
                            time: *now,
                            actor: actor.to_string(),
                        });
                        return Err(ClientError::GaveUp(
                            "the scheduler kept failing; its state is as its last step left it"
                                .to_string(),
                        ));
                    };
                    tracing::error!(
                        failures,
                        restart_at = at,
                        "the scheduler failed; rebuilding it"
                    );
                    events.emit(ClientEvent::ActorRestarted {
                        time: *now,
                        actor: actor.to_string(),
                        failures,
                        restart_at: at,
                    });
                    self.sleep_until(at).await;
                    self.advance(now, at);
                    self.handle.set_scheduler(SchedulerActor::rebuild(self.link.inner.clone()));
                    self.supervisor.started(actor, at);
                }
            }
        }
    }

    /// Lets the operations the scheduler started finish before time moves on: in
    /// virtual time an RPC to an emulated server takes no time, only a few message
    /// hops. An operation still pending after many rounds waits on a timer of its own
    /// (a test's slow server) and ends in its own time.
    async fn settle(&self) {
        let mut rounds = 0;
        while rounds < SETTLE_ROUNDS && self.link.inner.borrow().operations() > 0 {
            tokio::task::yield_now().await;
            rounds += 1;
        }
    }

    fn base(&self) -> Instant {
        self.handle.base_instant()
    }

    /// The tokio instant at which virtual time reaches `at`.
    fn deadline(&self, at: Time) -> Instant {
        let seconds = ((at - self.start) / self.speed).max(0.0);
        self.base()
            + std::time::Duration::try_from_secs_f64(seconds)
                .unwrap_or(std::time::Duration::MAX / 4)
    }

    async fn sleep_until(&self, at: Time) {
        tokio::time::sleep_until(self.deadline(at)).await;
    }

    fn advance(&self, now: &mut Time, to: Time) {
        lock(&self.world).advance_to(to);
        *now = to;
        self.clock.set(to);
    }

    /// Runs the client to the end of the simulated span, or until it is shut down.
    pub(crate) async fn run(mut self) -> Result<RunReport, ClientError> {
        let world = self.world.clone();
        let end = lock(&world).end();
        let span = (end - self.start).max(1.0);
        let mut next_progress = 0.0;
        let mut now = self.start;
        let mut stop = self.handle.stop_requests();
        self.clock.set(now);
        self.call(Startup { now }, &mut now).await?;
        loop {
            self.clock.set(now);
            let changed = lock(&world).pop_availability_changes();
            if changed {
                let view = lock(&world).host_view();
                self.call(HostChanged { view }, &mut now).await?;
            }
            self.call(Tick { now }, &mut now).await?;
            self.settle().await;
            if let Some(fatal) = self.link.inner.borrow().fatal() {
                return Err(ClientError::GaveUp(fatal.to_string()));
            }
            if *stop.borrow() {
                self.call(Shutdown { now }, &mut now).await?;
                break;
            }
            let idle = self.paused_clock && self.link.inner.borrow().operations() == 0;
            let next = if idle {
                self.jump(now, end, &mut stop).await
            } else {
                self.wait_for_next_step(now, end, &mut stop).await
            };
            if next >= end {
                self.advance(&mut now, end);
                break;
            }
            self.advance(&mut now, next);
            let done = (now - self.start) / span;
            if let Some(progress) = self.progress.as_mut()
                && done >= next_progress
            {
                progress(done.min(1.0));
                next_progress = done + 0.01;
            }
        }
        self.clock.set(now);
        let (decisions, rpcs) = self.call(Stats, &mut now).await?;
        self.journal.finish().map_err(|e| ClientError::Journal(e.to_string()))?;
        if let Some(progress) = self.progress.as_mut() {
            progress(1.0);
        }
        let (figures, trace) = lock(&world).finish();
        Ok(RunReport {
            decisions,
            rpcs,
            simulation: Some(super::SimResult { figures, trace, decisions, rpcs }),
        })
    }

    /// The time of the next step, once tokio's clock is there: the earlier of what the
    /// world and the scheduler want, or sooner when an operation in flight makes the
    /// scheduler want a step sooner, or a stop is asked for.
    async fn wait_for_next_step(
        &mut self,
        now: Time,
        end: Time,
        stop: &mut tokio::sync::watch::Receiver<bool>,
    ) -> Time {
        let world = self.world.clone();
        loop {
            let wish = *self.link.wakeup.borrow_and_update();
            let next = next_step_time(lock(&world).next_change(), wish, now, self.period);
            if next >= end {
                return end;
            }
            let deadline = self.deadline(next);
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => return next,
                changed = self.link.wakeup.changed() => {
                    if changed.is_err() {
                        return next;
                    }
                }
                _ = stop.changed() => return now + 1e-6,
            }
        }
    }

    /// [`VirtualDriver::wait_for_next_step`] on a paused clock with nothing in flight:
    /// no operation can make the scheduler want an earlier step, and no timer of the
    /// run's is set, so the next step's time is known now and the clock is moved
    /// straight there, without a timer to wait on.
    async fn jump(
        &mut self,
        now: Time,
        end: Time,
        stop: &mut tokio::sync::watch::Receiver<bool>,
    ) -> Time {
        // A stop asked for is taken at the loop's next look, a moment from now.
        if *stop.borrow() {
            return now + 1e-6;
        }
        let wish = *self.link.wakeup.borrow_and_update();
        let next = next_step_time(lock(&self.world).next_change(), wish, now, self.period);
        if next >= end {
            return end;
        }
        let wait = self.deadline(next).saturating_duration_since(Instant::now());
        if !wait.is_zero() {
            tokio::time::advance(wait).await;
        }
        next
    }
}
