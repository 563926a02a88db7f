//! The live client's [`StatePersistence`]: client_state.xml in the data directory,
//! written through the [`StateStore`] when the core's [`SaveSchedule`] says so (at
//! once for what must not be forgotten, progress at most every few seconds, failed
//! writes retried after a doubling delay).

use super::state_store::StateStore;
use crate::effects::StatePersistence;
use boinc_core::Time;
use boinc_core::control::{SavePolicy, SaveSchedule};
use boinc_core::model::ClientState;
use std::sync::Mutex;

/// The state store and its schedule.
pub struct StateKeeper {
    store: StateStore,
    schedule: Mutex<SaveSchedule>,
}

impl StateKeeper {
    /// Keeps states in `store`; `loaded` is the state just read from it (at `now`),
    /// which need not be written back until it changes.
    pub fn new(store: StateStore, loaded: Option<&ClientState>, now: Time) -> Self {
        let mut schedule = SaveSchedule::new(SavePolicy::default());
        if let Some(state) = loaded {
            schedule.loaded(state, now);
        }
        StateKeeper { store, schedule: Mutex::new(schedule) }
    }

    /// The store (its directory and lock).
    pub fn store(&self) -> &StateStore {
        &self.store
    }
}

impl StatePersistence for StateKeeper {
    fn stepped(&self, state: &ClientState, now: Time) {
        let mut schedule = self.schedule.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        schedule.note_progress();
        if let Err(error) = self.store.save_if_due(&mut schedule, state, now) {
            tracing::error!(
                %error,
                failures = schedule.failures(),
                "the client state could not be written; retrying"
            );
        }
    }

    fn stopping(&self, state: &ClientState, now: Time) {
        let mut schedule = self.schedule.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match self.store.save(state) {
            Ok(()) => schedule.saved(boinc_core::control::durable_digest(state), now),
            Err(error) => {
                tracing::error!(%error, "the client state could not be written at shutdown")
            }
        }
    }
}
