//! A live run's journal (docs/actors.md "Live journal and replay"): the inputs that
//! arrive on their own (a scheduler reply, a master page, a file transfer's end) are
//! taken in one at a time, only where the driver lets them, when the actors have
//! done all they do without one. The order of a live run's deliveries is then a
//! function of its inputs, as a simulated run's is, and replay can feed them back at
//! the same points. The answers of the synchronous effects (disk readings, a
//! process command's outcome, an app's standard error, a download put in place) are
//! recorded where they are asked for.

use super::record::{EntryKind, Journal};
use crate::effects::Clock;
use boinc_core::Time;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, oneshot};

/// How many times the actors are let run before the journal is looked at again.
pub(crate) const SETTLE_ROUNDS: usize = 16;

/// At most this many looks before the actors count as settled whatever they do (each
/// look that found them busy journaled something, so this bounds a runaway loop only).
const SETTLE_LOOKS: usize = 100_000;

/// Inputs waiting for their turn, in the order they arrived.
#[derive(Default)]
pub(crate) struct Gate {
    waiting: Mutex<VecDeque<(String, oneshot::Sender<()>)>>,
    arrived: Notify,
}

impl Gate {
    fn queue(&self) -> std::sync::MutexGuard<'_, VecDeque<(String, oneshot::Sender<()>)>> {
        self.waiting.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers an input of `who` waiting to be taken in; resolves when it is let in.
    fn wait_turn(&self, who: String) -> oneshot::Receiver<()> {
        let (sender, receiver) = oneshot::channel();
        self.queue().push_back((who, sender));
        self.arrived.notify_one();
        receiver
    }

    /// Lets the input that arrived first in (a live run); who it was.
    pub(crate) fn admit_next(&self) -> Option<String> {
        let (who, turn) = self.queue().pop_front()?;
        let _ = turn.send(());
        Some(who)
    }

    /// Lets the waiting input of `who` in (a replay); whether one was waiting.
    pub(crate) fn admit(&self, who: &str) -> bool {
        let mut queue = self.queue();
        let Some(position) = queue.iter().position(|(w, _)| w == who) else { return false };
        let Some((_, turn)) = queue.remove(position) else { return false };
        turn.send(()).is_ok()
    }

    /// Whether an input waits.
    pub(crate) fn is_waiting(&self) -> bool {
        !self.queue().is_empty()
    }

    /// Resolves when an input arrives (at once if one arrived since the last call).
    pub(crate) async fn arrived(&self) {
        self.arrived.notified().await;
    }
}

impl Journal {
    /// A synchronous effect's answer, recorded in a live journal (and read back from
    /// it on replay, where `live` asks an effect that does nothing). Anything else:
    /// `live()`, and nothing more.
    pub fn exchange<T: Serialize + DeserializeOwned>(
        &self,
        time: Time,
        actor: &str,
        name: &str,
        live: impl FnOnce() -> T,
    ) -> T {
        if !self.is_gated() {
            return live();
        }
        let value = match self.is_replay() {
            true => self.recorded_input::<T>(name).unwrap_or_else(live),
            false => live(),
        };
        self.append(time, actor, EntryKind::Input, name, &value);
        value
    }

    /// An input that arrives on its own (`arrival`, the effect's future), recorded as
    /// `actor`'s `name`. In a live journal it waits for the driver to let it in, and on
    /// replay the journal's value stands for the effect's; otherwise it is recorded as
    /// it comes.
    pub fn admit<T, F>(
        &self,
        clock: Arc<dyn Clock>,
        actor: String,
        name: &'static str,
        arrival: F,
    ) -> impl Future<Output = T> + 'static
    where
        T: Serialize + DeserializeOwned + 'static,
        F: Future<Output = T> + 'static,
    {
        let journal = self.clone();
        async move {
            let value = arrival.await;
            if !journal.is_on() {
                return value;
            }
            let value = if journal.is_gated() {
                if journal.gate().wait_turn(actor.clone()).await.is_err() {
                    // Never let in (the run ended first): it never arrived.
                    std::future::pending::<()>().await;
                }
                match journal.is_replay() {
                    true => journal.recorded_input::<T>(name).unwrap_or(value),
                    false => value,
                }
            } else {
                value
            };
            journal.append(clock.now(), &actor, EntryKind::Input, name, &value);
            value
        }
    }

    /// Lets the actors run until they have done all they do without a new input (the
    /// journal stops growing).
    pub async fn settle(&self) {
        for _ in 0..SETTLE_LOOKS {
            let before = self.len();
            for _ in 0..SETTLE_ROUNDS {
                tokio::task::yield_now().await;
            }
            if self.len() == before {
                return;
            }
        }
    }
}
