//! The client's event stream: what a host program can watch. Each event goes to every
//! subscriber, async (tokio) or not (crossbeam), through a bounded channel.

use boinc_core::Time;
use boinc_core::control::{SuspendReason, SuspendReasons};
use boinc_core::model::ResourceType;
use boinc_core::protocol::{MessagePriority, RssFeed};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What a [`ClientEvent::Suspension`] stopped or started again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SuspendedActivity {
    /// Every task.
    Computation,
    /// GPU tasks (beyond computation as a whole).
    GpuComputation,
    /// File transfers and scheduler RPCs.
    Network,
}

impl SuspendedActivity {
    /// The activity as BOINC's event log names it.
    pub fn words(self) -> &'static str {
        match self {
            SuspendedActivity::Computation => "computation",
            SuspendedActivity::GpuComputation => "GPU computation",
            SuspendedActivity::Network => "network activity",
        }
    }

    /// What changed between two hosts' suspensions, in this order: computation, GPU
    /// computation, network. A client that uses no GPU (`uses_gpus` false) tells no GPU
    /// suspension, as BOINC 7.20.5, whose event log says nothing of GPU computation on
    /// a host without one.
    pub fn changes(
        before: &SuspendReasons,
        after: &SuspendReasons,
        uses_gpus: bool,
    ) -> Vec<(SuspendedActivity, Option<SuspendReason>)> {
        [
            (SuspendedActivity::Computation, before.cpu, after.cpu),
            (SuspendedActivity::GpuComputation, before.gpu, after.gpu),
            (SuspendedActivity::Network, before.network, after.network),
        ]
        .into_iter()
        .filter(|(activity, _, _)| uses_gpus || *activity != SuspendedActivity::GpuComputation)
        .filter(|(_, was, is)| was != is)
        .map(|(activity, _, is)| (activity, is))
        .collect()
    }
}

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
        /// The user has to act (computing stopped for a full disk): a client notice.
        #[serde(default)]
        alert: bool,
    },
    /// An actor failed and was restarted from the authoritative state.
    ActorRestarted {
        /// When.
        time: Time,
        /// Which actor.
        actor: String,
        /// Consecutive failures.
        failures: u32,
        /// When it is (or was) rebuilt.
        restart_at: Time,
    },
    /// An actor failed too often within the restart window: the client gave up on it
    /// (and on what it stands for: a project is set aside, a task ends in an error).
    ActorGaveUp {
        /// When.
        time: Time,
        /// Which actor.
        actor: String,
    },
    /// An attempt to download or upload a file started.
    TransferStarted {
        /// When.
        time: Time,
        /// Project name.
        project: String,
        /// File name.
        file: String,
        /// An upload (else a download).
        upload: bool,
        /// The URL it uses.
        url: String,
    },
    /// How far a transfer has come (a few times a second while bytes move).
    TransferProgress {
        /// When.
        time: Time,
        /// Project name.
        project: String,
        /// File name.
        file: String,
        /// An upload (else a download).
        upload: bool,
        /// Bytes of the file moved so far.
        bytes: u64,
        /// The file's size, when known.
        total: Option<u64>,
        /// Bytes per second over this attempt.
        rate: f64,
    },
    /// An attempt ended.
    TransferEnded {
        /// When.
        time: Time,
        /// Project name.
        project: String,
        /// File name.
        file: String,
        /// An upload (else a download).
        upload: bool,
        /// The file is in place (downloaded and checked) or taken (uploaded).
        success: bool,
        /// Why not, when it failed.
        message: String,
    },
    /// What the client did about a project's files, for the user: a backoff, a file
    /// given up, an app version rejected.
    TransferNotice {
        /// When.
        time: Time,
        /// Project name.
        project: String,
        /// What happened.
        text: String,
        /// Something went wrong for good.
        error: bool,
    },
    /// A project's scheduler sent the user a message (a reply's `<message>`).
    ProjectMessage {
        /// When.
        time: Time,
        /// Project name.
        project: String,
        /// How prominently the project asked for it to be shown.
        priority: MessagePriority,
        /// The text.
        text: String,
    },
    /// A project's scheduler sent the account's web preferences (`<global_preferences>`,
    /// venues and all): the host service keeps the newest in global_prefs.xml and
    /// applies them.
    WebPreferences {
        /// When.
        time: Time,
        /// Project name.
        project: String,
        /// The project's master URL.
        master_url: String,
        /// The content of `<global_preferences>`, verbatim.
        text: String,
    },
    /// The client tells the volunteer something about a project that needs their
    /// attention (a GPU the project has no app for): a client notice.
    ProjectNotice {
        /// When.
        time: Time,
        /// Project name.
        project: String,
        /// The text.
        text: String,
    },
    /// Computing, GPU computing or network activity was suspended (`reason`) or resumed
    /// (`None`): the host's conditions, the preferences or the user's modes changed.
    Suspension {
        /// When.
        time: Time,
        /// What stopped or started again.
        activity: SuspendedActivity,
        /// Why it is suspended now; `None` once it runs again.
        reason: Option<SuspendReason>,
    },
    /// A project's scheduler named the feeds its notices are on (`<rss_feeds>`): all of
    /// them, an empty list when it has none any more.
    ProjectFeeds {
        /// When.
        time: Time,
        /// Project name.
        project: String,
        /// The project's master URL.
        master_url: String,
        /// The feeds.
        feeds: Vec<RssFeed>,
    },
}

/// How many events a subscriber's channel holds unless it asks for another capacity.
pub const DEFAULT_EVENT_CAPACITY: usize = 4096;

/// The subscribers of one client. Each has a bounded channel: a subscriber that does not
/// keep up loses events (counted, see [`EventBus::dropped`]) rather than the client
/// growing its memory or waiting for it.
#[derive(Clone, Default)]
pub struct EventBus(Arc<Mutex<Subscribers>>, Arc<AtomicU64>);

#[derive(Default)]
struct Subscribers {
    tokio: Vec<tokio::sync::mpsc::Sender<ClientEvent>>,
    crossbeam: Vec<crossbeam_channel::Sender<ClientEvent>>,
}

impl EventBus {
    fn subscribers(&self) -> std::sync::MutexGuard<'_, Subscribers> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A new async subscriber whose channel holds `capacity` events.
    pub fn subscribe(&self, capacity: usize) -> tokio::sync::mpsc::Receiver<ClientEvent> {
        let (sender, receiver) = tokio::sync::mpsc::channel(capacity.max(1));
        self.subscribers().tokio.push(sender);
        receiver
    }

    /// A new subscriber for a thread that is not async, whose channel holds `capacity`
    /// events.
    pub fn subscribe_blocking(&self, capacity: usize) -> crossbeam_channel::Receiver<ClientEvent> {
        let (sender, receiver) = crossbeam_channel::bounded(capacity.max(1));
        self.subscribers().crossbeam.push(sender);
        receiver
    }

    /// Whether anyone listens.
    pub fn has_subscribers(&self) -> bool {
        let s = self.subscribers();
        !s.tokio.is_empty() || !s.crossbeam.is_empty()
    }

    /// Events dropped because a subscriber's channel was full, over all subscribers.
    pub fn dropped(&self) -> u64 {
        self.1.load(Ordering::Relaxed)
    }

    /// Sends the event `make` makes to every subscriber still listening, making it only
    /// when someone listens (an emulated run with nobody listening makes none of the
    /// names and texts its events carry).
    pub fn emit_with(&self, make: impl FnOnce() -> ClientEvent) {
        if self.has_subscribers() {
            self.emit(make());
        }
    }

    /// Sends an event to every subscriber still listening; a full channel loses it.
    pub fn emit(&self, event: ClientEvent) {
        let mut s = self.subscribers();
        let mut dropped = 0;
        s.tokio.retain(|sender| match sender.try_send(event.clone()) {
            Ok(()) => true,
            Err(tokio::sync::mpsc::error::TrySendError::Full(_)) => {
                dropped += 1;
                true
            }
            Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => false,
        });
        s.crossbeam.retain(|sender| match sender.try_send(event.clone()) {
            Ok(()) => true,
            Err(crossbeam_channel::TrySendError::Full(_)) => {
                dropped += 1;
                true
            }
            Err(crossbeam_channel::TrySendError::Disconnected(_)) => false,
        });
        if dropped > 0 {
            self.1.fetch_add(dropped, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The user at the keyboard suspends computation; GPU computation too, as the
    /// preferences say, but a client without a GPU tells only the first.
    #[test]
    fn a_client_without_gpus_tells_no_gpu_suspension() {
        let before = SuspendReasons::NONE;
        let after = SuspendReasons {
            cpu: Some(SuspendReason::UserActive),
            gpu: Some(SuspendReason::UserActive),
            network: None,
        };
        let told = |uses_gpus| -> Vec<SuspendedActivity> {
            SuspendedActivity::changes(&before, &after, uses_gpus)
                .into_iter()
                .map(|(activity, _)| activity)
                .collect()
        };
        assert_eq!(told(true), [SuspendedActivity::Computation, SuspendedActivity::GpuComputation]);
        assert_eq!(told(false), [SuspendedActivity::Computation]);
    }
}
