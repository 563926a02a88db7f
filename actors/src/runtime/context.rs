//! What every actor of one client shares: the clock, the journal, the event bus, and
//! the faults injected for tests.

use super::events::EventBus;
use super::supervision::{ActorId, PanicInjector};
use crate::effects::Clock;
use crate::journal::{EntryKind, Journal};
use boinc_core::Time;
use serde::Serialize;
use std::sync::Arc;

/// The shared surroundings of the actors of one client.
#[derive(Clone)]
pub struct ActorContext {
    /// Where time comes from.
    pub clock: Arc<dyn Clock>,
    /// Where deliveries are recorded.
    pub journal: Journal,
    /// Where events go.
    pub events: EventBus,
    /// Panics to inject into handlers (tests of supervision; empty otherwise).
    pub faults: PanicInjector,
}

impl ActorContext {
    /// Records a message delivered to `actor`.
    pub fn delivered<T: Serialize + ?Sized>(&self, actor: &str, name: &str, message: &T) {
        if self.journal.is_on() {
            self.journal.append(self.clock.now(), actor, EntryKind::Message, name, message);
        }
    }

    /// Records an input from the outside world delivered to `actor`.
    pub fn input<T: Serialize + ?Sized>(&self, actor: &str, name: &str, input: &T) {
        if self.journal.is_on() {
            self.journal.append(self.clock.now(), actor, EntryKind::Input, name, input);
        }
    }

    /// A synchronous effect's answer, recorded in a live journal (see
    /// [`Journal::exchange`]); otherwise just `live()`.
    pub fn exchange<T: Serialize + serde::de::DeserializeOwned>(
        &self,
        actor: &str,
        name: &str,
        live: impl FnOnce() -> T,
    ) -> T {
        if !self.journal.is_gated() {
            return live();
        }
        self.journal.exchange(self.clock.now(), actor, name, live)
    }

    /// An effect's answer that arrives on its own, recorded as `actor`'s input `name`
    /// (see [`Journal::admit`]).
    pub fn admit<T, F>(
        &self,
        actor: String,
        name: &'static str,
        arrival: F,
    ) -> impl std::future::Future<Output = T> + 'static
    where
        T: Serialize + serde::de::DeserializeOwned + 'static,
        F: std::future::Future<Output = T> + 'static,
    {
        self.journal.admit(self.clock.clone(), actor, name, arrival)
    }

    /// Panics if the tests injected a panic for `actor` now.
    pub fn maybe_panic(&self, actor: ActorId, now: Time) {
        self.faults.maybe_panic(actor, now);
    }
}
