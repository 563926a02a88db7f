//! Supervision of the actors (docs/design.md "Time, effects, determinism": restart policy is
//! ours, driven by the clock). actix never restarts an actor whose handler panicked: its
//! mailbox closes, and whoever sends to it next learns of the failure. The scheduler
//! supervises the actors it started and the driver supervises the scheduler; each keeps
//! a [`RestartTracker`] per actor and asks the core's restart policy when to rebuild it
//! (from the authoritative state) or to give up on it.
//!
//! For tests, panics can be injected into any actor's handlers ([`PanicInjector`]).

use boinc_core::Time;
use boinc_core::supervise::{RestartDecision, RestartPolicy, RestartTracker};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The random stream of actor-restart jitter, of the run's seed (streams below belong
/// to the world and the projects, streams above to the tasks).
const ACTOR_RESTART_STREAM: u64 = (1 << 40) - 1;

/// The kinds of actor of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActorKind {
    /// The scheduler (supervised by the driver).
    Scheduler,
    /// A task's actor.
    Task,
    /// A project's actor.
    Project,
    /// A processing resource's actor.
    Resource,
    /// The fetch actor.
    Fetch,
    /// The disk manager's actor.
    Disk,
}

impl ActorKind {
    /// Every kind.
    pub const ALL: [ActorKind; 6] = [
        ActorKind::Scheduler,
        ActorKind::Task,
        ActorKind::Project,
        ActorKind::Resource,
        ActorKind::Fetch,
        ActorKind::Disk,
    ];

    /// The kind's name in events and logs.
    pub fn name(self) -> &'static str {
        match self {
            ActorKind::Scheduler => "scheduler",
            ActorKind::Task => "task",
            ActorKind::Project => "project",
            ActorKind::Resource => "resource",
            ActorKind::Fetch => "fetch",
            ActorKind::Disk => "disk",
        }
    }
}

/// One actor: its kind and its index among actors of that kind (a task's slot, a
/// project's id, a resource's position; 0 for the single ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ActorId {
    /// The kind.
    pub kind: ActorKind,
    /// The index.
    pub index: u32,
}

impl ActorId {
    /// The single actor of a kind.
    pub fn single(kind: ActorKind) -> Self {
        ActorId { kind, index: 0 }
    }
}

impl std::fmt::Display for ActorId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.kind.name(), self.index)
    }
}

/// Restart bookkeeping for a set of actors: their trackers, the jitter's random stream
/// and the policy.
#[derive(Debug, Clone)]
pub struct ActorSupervisor {
    policy: RestartPolicy,
    trackers: BTreeMap<ActorId, RestartTracker>,
    rng: ChaCha8Rng,
}

impl ActorSupervisor {
    /// A supervisor restarting by `policy`, its jitter drawn from the run's `seed`.
    pub fn new(policy: RestartPolicy, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(ACTOR_RESTART_STREAM);
        ActorSupervisor { policy, trackers: BTreeMap::new(), rng }
    }

    /// The restart policy.
    pub fn policy(&self) -> &RestartPolicy {
        &self.policy
    }

    /// `actor` failed at `now`: when to rebuild it, or give up. Returns the decision and
    /// the failures in a row so far.
    pub fn failed(&mut self, actor: ActorId, now: Time) -> (RestartDecision, u32) {
        let tracker = self.trackers.entry(actor).or_default();
        let decision = tracker.failed(&self.policy, now, &mut self.rng);
        (decision, tracker.streak())
    }

    /// `actor` was (re)built at `now`.
    pub fn started(&mut self, actor: ActorId, now: Time) {
        if let Some(tracker) = self.trackers.get_mut(&actor) {
            tracker.started(now);
        }
    }

    /// `actor` handled a message at `now`: after the healthy period its backoff starts
    /// over. Actors that never failed cost nothing here.
    pub fn healthy(&mut self, actor: ActorId, now: Time) {
        if let Some(tracker) = self.trackers.get_mut(&actor) {
            tracker.running(&self.policy, now);
        }
    }

    /// Forgets an actor that is gone for good (its task ended).
    pub fn forget(&mut self, actor: ActorId) {
        self.trackers.remove(&actor);
    }
}

/// Panics to inject into actors' handlers: `count` panics in handlers of actors of
/// `kind` (and `index`, when given), the first at or after virtual time `from`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct InjectedPanic {
    /// Which kind of actor.
    pub kind: ActorKind,
    /// Which one of them (a task's slot, a project's index); any when `None`.
    #[serde(default)]
    pub index: Option<u32>,
    /// Not before this time.
    pub from: Time,
    /// How many times.
    pub count: u32,
}

/// The panics still to inject in a run (none outside tests: then every handler's check
/// is a look at an empty option, no lock).
#[derive(Debug, Clone, Default)]
pub struct PanicInjector(Option<Arc<Mutex<Vec<InjectedPanic>>>>);

impl PanicInjector {
    /// An injector of `panics`.
    pub fn new(panics: &[InjectedPanic]) -> Self {
        PanicInjector((!panics.is_empty()).then(|| Arc::new(Mutex::new(panics.to_vec()))))
    }

    /// Panics if a panic is due for `actor` at `now` (called at the top of the actors'
    /// handlers; inlined, so that a run without injected panics pays one test).
    #[inline]
    pub fn maybe_panic(&self, actor: ActorId, now: Time) {
        if let Some(panics) = &self.0 {
            Self::panic_if_due(panics, actor, now);
        }
    }

    #[inline(never)]
    fn panic_if_due(panics: &Mutex<Vec<InjectedPanic>>, actor: ActorId, now: Time) {
        let due = {
            let mut panics = panics.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if panics.is_empty() {
                return;
            }
            let target = |p: &InjectedPanic| {
                p.kind == actor.kind
                    && p.index.is_none_or(|i| i == actor.index)
                    && p.count > 0
                    && p.from <= now
            };
            match panics.iter_mut().find(|p| target(p)) {
                Some(panic) => {
                    panic.count -= 1;
                    true
                }
                None => false,
            }
        };
        if due {
            panic!("injected fault in actor {actor} at {now}");
        }
    }
}
