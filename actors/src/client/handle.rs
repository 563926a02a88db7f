//! The handle of a running client: events, user actions, the end of the run.

use super::error::ClientError;
use crate::runtime::events::{ClientEvent, EventBus};
use crate::runtime::messages::{User, UserAction};
use crate::runtime::scheduler::SchedulerActor;
use crate::sim::driver::stopped;
use actix::Addr;
use boinc_core::emulator::engine::SimResult;

/// A running client.
pub struct ClientHandle {
    pub(crate) scheduler: Addr<SchedulerActor>,
    pub(crate) events: EventBus,
    pub(crate) done: tokio::sync::oneshot::Receiver<Result<SimResult, ClientError>>,
}

impl ClientHandle {
    /// A stream of the client's events for an async host.
    pub fn events(&self) -> tokio::sync::mpsc::UnboundedReceiver<ClientEvent> {
        self.events.subscribe()
    }

    /// The client's events for a host thread that is not async.
    pub fn events_blocking(&self) -> crossbeam_channel::Receiver<ClientEvent> {
        self.events.subscribe_blocking()
    }

    /// Does what a user asks (suspend or resume a project or task, set the run mode,
    /// detach, attach); it takes effect at the client's next scheduling step.
    pub async fn act(&self, action: UserAction) -> Result<(), ClientError> {
        self.scheduler.send(User { action }).await.map_err(stopped)?
    }

    /// Waits for the run to end; its figures of merit and trace.
    pub async fn finished(self) -> Result<SimResult, ClientError> {
        self.done.await.map_err(|_| ClientError::Stopped("the driver was dropped".into()))?
    }
}
