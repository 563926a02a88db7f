//! The handle of a running client: `Send + Sync + Clone`, usable from any tokio runtime
//! (multi-threaded too) or from plain threads. It sends user actions, queries a
//! snapshot of the state, subscribes to events, and shuts the client down.

use super::error::ClientError;
use crate::runtime::events::{ClientEvent, DEFAULT_EVENT_CAPACITY, EventBus};
use crate::runtime::messages::{Snapshot, StateSnapshot, User, UserAction};
use crate::runtime::scheduler::SchedulerActor;
use crate::sim::SimResult;
use actix::{Addr, Handler, Message};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::watch;

/// How a client's run ended.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// Scheduling decisions made.
    pub decisions: u64,
    /// Scheduler RPCs started.
    pub rpcs: u64,
    /// A simulated run's figures of merit and trace.
    pub simulation: Option<SimResult>,
}

/// What the handle's clones share with the client's driver.
pub(crate) struct HandleShared {
    /// The scheduler's current address (a rebuilt scheduler has a new one).
    scheduler: RwLock<Addr<SchedulerActor>>,
    events: EventBus,
    /// The arbiter the client runs on, for calls from threads that are not async.
    arbiter: actix_rt::ArbiterHandle,
    /// Set once a shutdown is asked for.
    stop: watch::Sender<bool>,
    /// How the run ended, once it has.
    done: watch::Sender<Option<Result<RunReport, ClientError>>>,
    /// The thread the client runs on, when it has its own.
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// The tokio instant virtual time is measured from.
    base: tokio::time::Instant,
    /// Where user actions go when the driver takes them in (a live journal's run, whose
    /// inputs come in one at a time); `None`: straight to the scheduler.
    actions: Mutex<Option<tokio::sync::mpsc::UnboundedSender<UserCall>>>,
}

/// A user action on its way to the driver, and where its outcome goes.
pub(crate) type UserCall = (UserAction, tokio::sync::oneshot::Sender<Result<(), ClientError>>);

impl HandleShared {
    pub(crate) fn new(
        scheduler: Addr<SchedulerActor>,
        events: EventBus,
        arbiter: actix_rt::ArbiterHandle,
        base: tokio::time::Instant,
    ) -> Arc<Self> {
        Arc::new(HandleShared {
            scheduler: RwLock::new(scheduler),
            events,
            arbiter,
            stop: watch::channel(false).0,
            done: watch::channel(None).0,
            thread: Mutex::new(None),
            base,
            actions: Mutex::new(None),
        })
    }

    /// From now on user actions go to the driver, through the channel returned.
    pub(crate) fn actions_through_driver(&self) -> tokio::sync::mpsc::UnboundedReceiver<UserCall> {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        *self.actions.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(sender);
        receiver
    }

    /// Sends `action` to the driver when it takes them in; the action back otherwise.
    fn route(
        &self,
        action: UserAction,
    ) -> Result<tokio::sync::oneshot::Receiver<Result<(), ClientError>>, UserAction> {
        let actions = self.actions.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(sender) = actions.as_ref() else { return Err(action) };
        let (answer, receiver) = tokio::sync::oneshot::channel();
        // A driver gone drops the answer: the caller hears the client stopped.
        let _ = sender.send((action, answer));
        Ok(receiver)
    }

    pub(crate) fn scheduler(&self) -> Addr<SchedulerActor> {
        self.scheduler.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Sends `message` to the scheduler without holding a copy of its address (an
    /// address copy is two allocations: the driver sends at every step).
    pub(crate) fn send_to_scheduler<M>(&self, message: M) -> actix::dev::Request<SchedulerActor, M>
    where
        M: actix::Message + Send + 'static,
        M::Result: Send,
        SchedulerActor: actix::Handler<M>,
    {
        self.scheduler.read().unwrap_or_else(std::sync::PoisonError::into_inner).send(message)
    }

    pub(crate) fn set_scheduler(&self, scheduler: Addr<SchedulerActor>) {
        *self.scheduler.write().unwrap_or_else(std::sync::PoisonError::into_inner) = scheduler;
    }

    pub(crate) fn stop_requests(&self) -> watch::Receiver<bool> {
        self.stop.subscribe()
    }

    pub(crate) fn finish(&self, outcome: Result<RunReport, ClientError>) {
        self.done.send_replace(Some(outcome));
    }

    pub(crate) fn set_thread(&self, thread: std::thread::JoinHandle<()>) {
        *self.thread.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(thread);
    }

    pub(crate) fn base_instant(&self) -> tokio::time::Instant {
        self.base
    }
}

/// A running client.
#[derive(Clone)]
pub struct ClientHandle {
    pub(crate) shared: Arc<HandleShared>,
}

fn stopped(error: actix::MailboxError) -> ClientError {
    ClientError::Stopped(error.to_string())
}

fn driver_gone() -> ClientError {
    ClientError::Stopped("the client stopped before it took the action in".into())
}

/// The longest a blocking call waits for the client's answer.
const BLOCKING_CALL_TIMEOUT: Duration = Duration::from_secs(60);

impl ClientHandle {
    async fn call<M>(&self, message: M) -> Result<M::Result, ClientError>
    where
        M: Message + Send + 'static,
        M::Result: Send,
        SchedulerActor: Handler<M>,
    {
        self.shared.send_to_scheduler(message).await.map_err(stopped)
    }

    /// Sends `message` from a thread that is not async (never from the client's own
    /// thread: that would wait on itself).
    fn call_blocking<M>(&self, message: M) -> Result<M::Result, ClientError>
    where
        M: Message + Send + 'static,
        M::Result: Send,
        SchedulerActor: Handler<M>,
    {
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        let scheduler = self.shared.scheduler();
        let sent = self.shared.arbiter.spawn(async move {
            let _ = sender.send(scheduler.send(message).await.map_err(stopped));
        });
        if !sent {
            return Err(ClientError::Stopped("the client's thread has ended".into()));
        }
        receiver
            .recv_timeout(BLOCKING_CALL_TIMEOUT)
            .map_err(|_| ClientError::Stopped("the client did not answer".into()))?
    }

    /// A stream of the client's events for an async host; the channel holds
    /// [`DEFAULT_EVENT_CAPACITY`] events (see [`ClientHandle::dropped_events`]).
    pub fn events(&self) -> tokio::sync::mpsc::Receiver<ClientEvent> {
        self.shared.events.subscribe(DEFAULT_EVENT_CAPACITY)
    }

    /// The client's events for an async host, in a channel of `capacity` events.
    pub fn events_with_capacity(
        &self,
        capacity: usize,
    ) -> tokio::sync::mpsc::Receiver<ClientEvent> {
        self.shared.events.subscribe(capacity)
    }

    /// The client's events for a host thread that is not async.
    pub fn events_blocking(&self) -> crossbeam_channel::Receiver<ClientEvent> {
        self.shared.events.subscribe_blocking(DEFAULT_EVENT_CAPACITY)
    }

    /// The client's events for a thread that is not async, in a channel of `capacity`.
    pub fn events_blocking_with_capacity(
        &self,
        capacity: usize,
    ) -> crossbeam_channel::Receiver<ClientEvent> {
        self.shared.events.subscribe_blocking(capacity)
    }

    /// Events lost because a subscriber did not keep up with its channel.
    pub fn dropped_events(&self) -> u64 {
        self.shared.events.dropped()
    }

    /// Does what a user asks (suspend or resume a project or task, abort a task, set a
    /// run mode, update, detach, attach). It takes effect at once: the client schedules
    /// again and the processes follow before this returns.
    pub async fn act(&self, action: UserAction) -> Result<(), ClientError> {
        match self.shared.route(action) {
            Ok(answer) => answer.await.map_err(|_| driver_gone())?,
            Err(action) => self.call(User { action }).await?,
        }
    }

    /// [`ClientHandle::act`] for a thread that is not async.
    pub fn act_blocking(&self, action: UserAction) -> Result<(), ClientError> {
        match self.shared.route(action) {
            Ok(answer) => answer.blocking_recv().map_err(|_| driver_gone())?,
            Err(action) => self.call_blocking(User { action })?,
        }
    }

    /// A copy of the client's state now.
    pub async fn snapshot(&self) -> Result<StateSnapshot, ClientError> {
        self.call(Snapshot).await
    }

    /// [`ClientHandle::snapshot`] for a thread that is not async.
    pub fn snapshot_blocking(&self) -> Result<StateSnapshot, ClientError> {
        self.call_blocking(Snapshot)
    }

    /// Asks the client to shut down: running tasks are asked to quit and the run ends.
    /// Returns at once; [`ClientHandle::finished`] says when it is done.
    pub fn shutdown(&self) {
        self.shared.stop.send_replace(true);
    }

    /// Waits for the run to end (its span elapsed, or it was shut down).
    pub async fn finished(&self) -> Result<RunReport, ClientError> {
        let mut done = self.shared.done.subscribe();
        let outcome = done
            .wait_for(Option::is_some)
            .await
            .map_err(|_| ClientError::Stopped("the client's driver was dropped".into()))?;
        outcome.clone().unwrap_or_else(|| Err(ClientError::Stopped("no outcome".into())))
    }

    /// Waits for the run to end from a thread that is not async, and for the client's
    /// own thread (when it has one) to exit.
    pub fn join(&self) -> Result<RunReport, ClientError> {
        let thread =
            self.shared.thread.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        if let Some(thread) = thread {
            thread
                .join()
                .map_err(|_| ClientError::Stopped("the client's thread panicked".into()))?;
        }
        let outcome = self.shared.done.borrow().clone();
        outcome.unwrap_or_else(|| Err(ClientError::Stopped("the client has not finished".into())))
    }
}
