//! The virtual-time driver (DESIGN.md "Time, effects, determinism"): moves the paused
//! tokio clock from one instant to the next that the emulated world or the scheduler
//! asked for, feeding availability changes and ticks to the actors.

use crate::client::ClientError;
use crate::journal::Journal;
use crate::runtime::ResourceActor;
use crate::runtime::messages::{HostChanged, Startup, Stats, Tick};
use crate::runtime::scheduler::SchedulerActor;
use crate::sim::effects::{SimWorld, VirtualClock, lock};
use actix::Addr;
use boinc_core::Time;
use boinc_core::emulator::engine::{SimResult, next_step_time};
use std::time::Duration;

/// Moves virtual time: at each instant, the world's availability changes go to the
/// resource actors and a [`Tick`] to the scheduler; then the paused tokio clock sleeps
/// to the next instant the world or the scheduler asked for.
pub(crate) struct Driver {
    pub(crate) scheduler: Addr<SchedulerActor>,
    pub(crate) resources: Vec<Addr<ResourceActor>>,
    pub(crate) sim: SimWorld,
    pub(crate) clock: VirtualClock,
    pub(crate) journal: Journal,
    pub(crate) period: f64,
    pub(crate) start: Time,
    pub(crate) progress: Option<Box<dyn FnMut(f64)>>,
}

pub(crate) fn stopped(error: actix::MailboxError) -> ClientError {
    ClientError::Stopped(error.to_string())
}

impl Driver {
    pub(crate) async fn run(mut self) -> Result<SimResult, ClientError> {
        let world = self.sim.world().clone();
        let end = lock(&world).end();
        let span = (end - self.start).max(1.0);
        let mut next_progress = 0.0;
        let mut now = self.start;
        self.scheduler.send(Startup { now }).await.map_err(stopped)?;
        loop {
            self.clock.set(now);
            let changed = lock(&world).pop_availability_changes();
            if changed {
                let view = lock(&world).host_view();
                for resource in &self.resources {
                    resource.send(HostChanged { view }).await.map_err(stopped)?;
                }
            }
            let wake = self.scheduler.send(Tick { now }).await.map_err(stopped)?;
            let next = next_step_time(lock(&world).next_change(), wake, now, self.period);
            if next >= end {
                lock(&world).advance_to(end);
                break;
            }
            tokio::time::sleep(Duration::from_secs_f64(next - now)).await;
            lock(&world).advance_to(next);
            now = next;
            let done = (now - self.start) / span;
            if let Some(progress) = self.progress.as_mut()
                && done >= next_progress
            {
                progress(done.min(1.0));
                next_progress = done + 0.01;
            }
        }
        self.clock.set(end);
        let (decisions, rpcs) = self.scheduler.send(Stats).await.map_err(stopped)?;
        self.journal.finish().map_err(|e| ClientError::Journal(e.to_string()))?;
        if let Some(progress) = self.progress.as_mut() {
            progress(1.0);
        }
        let (figures, trace) = lock(&world).finish();
        Ok(SimResult { figures, trace, decisions, rpcs })
    }
}
