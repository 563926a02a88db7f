//! The client's event stream (issue "embedding"): what a host program can watch. Each
//! event goes to every subscriber, async (tokio) or not (crossbeam).

use boinc_core::Time;
use boinc_core::model::ResourceType;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

/// Something the client did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ClientEvent {
    /// A task started or resumed.
    TaskStarted {
        /// When.
        time: Time,
        /// Project name.
        project: String,
        /// Job name.
        job: String,
    },
    /// A task was preempted.
    TaskPreempted {
        /// When.
        time: Time,
        /// Project name.
        project: String,
        /// Job name.
        job: String,
        /// Quit (restarts from its checkpoint) rather than suspended.
        removed_from_memory: bool,
    },
    /// A task's app crashed and restarts from its checkpoint.
    TaskRestarting {
        /// When.
        time: Time,
        /// Job name.
        job: String,
        /// When it restarts.
        restart_at: Time,
    },
    /// A task finished (successfully, or in a computation error).
    TaskFinished {
        /// When.
        time: Time,
        /// Project name.
        project: String,
        /// Job name.
        job: String,
        /// It ended in an error.
        error: bool,
    },
    /// Work was requested from a project.
    WorkRequested {
        /// When.
        time: Time,
        /// Project name.
        project: String,
        /// Seconds asked per resource (resources asked for only).
        req_seconds: Vec<(ResourceType, f64)>,
    },
    /// A scheduler RPC ended.
    RpcDone {
        /// When.
        time: Time,
        /// Project name.
        project: String,
        /// It succeeded.
        success: bool,
        /// Jobs received.
        jobs: usize,
    },
    /// A project's fetch for a resource is backed off.
    BackoffSet {
        /// When.
        time: Time,
        /// Project name.
        project: String,
        /// The resource (None: the whole project's RPCs).
        resource: Option<ResourceType>,
        /// Until when.
        until: Time,
    },
    /// The disk manager acted (deleted files, suspended or resumed computing).
    DiskAction {
        /// When.
        time: Time,
        /// What it did.
        action: String,
    },
    /// An actor failed and was restarted from the authoritative state.
    ActorRestarted {
        /// When.
        time: Time,
        /// Which actor.
        actor: String,
        /// Consecutive failures.
        failures: u32,
    },
}

/// The subscribers of one client.
#[derive(Clone, Default)]
pub struct EventBus(Arc<Mutex<Subscribers>>);

#[derive(Default)]
struct Subscribers {
    tokio: Vec<tokio::sync::mpsc::UnboundedSender<ClientEvent>>,
    crossbeam: Vec<crossbeam_channel::Sender<ClientEvent>>,
}

impl EventBus {
    fn subscribers(&self) -> std::sync::MutexGuard<'_, Subscribers> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A new async subscriber.
    pub fn subscribe(&self) -> tokio::sync::mpsc::UnboundedReceiver<ClientEvent> {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        self.subscribers().tokio.push(sender);
        receiver
    }

    /// A new subscriber for a thread that is not async.
    pub fn subscribe_blocking(&self) -> crossbeam_channel::Receiver<ClientEvent> {
        let (sender, receiver) = crossbeam_channel::unbounded();
        self.subscribers().crossbeam.push(sender);
        receiver
    }

    /// Whether anyone listens.
    pub fn has_subscribers(&self) -> bool {
        let s = self.subscribers();
        !s.tokio.is_empty() || !s.crossbeam.is_empty()
    }

    /// Sends an event to every subscriber still listening.
    pub fn emit(&self, event: ClientEvent) {
        let mut s = self.subscribers();
        s.tokio.retain(|sender| sender.send(event.clone()).is_ok());
        s.crossbeam.retain(|sender| sender.send(event.clone()).is_ok());
    }
}
