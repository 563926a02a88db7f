//! The live client's [`StatePersistence`]: client_state.xml in the data directory,
//! written through the [`StateStore`] when the core's [`SaveSchedule`] says so (at
//! once for what must not be forgotten, progress at most every few seconds, failed
//! writes retried after a doubling delay, or at once when a full disk has room again).

use super::state_store::StateStore;
use boinc_core::Time;
use boinc_core::control::{SavePolicy, SaveSchedule};
use boinc_core::model::ClientState;
use boinc_runtime::effects::StatePersistence;
use std::sync::Mutex;

/// The state store and its schedule.
pub struct StateKeeper {
    store: StateStore,
    saving: Mutex<Saving>,
}

/// The schedule, and the room the disk had when a write last failed.
struct Saving {
    schedule: SaveSchedule,
    free_at_failure: Option<u64>,
}

/// The bytes free to this user on the file system holding `dir`, if it says.
fn free_bytes(dir: &std::path::Path) -> Option<u64> {
    let stats = nix::sys::statvfs::statvfs(dir).ok()?;
    Some(stats.blocks_available().saturating_mul(stats.fragment_size()))
}

/// How much more room than at the failure counts as the disk having room again: a few
/// states' worth, so that a write that failed for another reason (a directory made
/// read-only) is not retried at every poll.
fn room_needed(dir: &std::path::Path) -> u64 {
    let state_bytes = std::fs::metadata(dir.join("client_state.xml")).map_or(0, |m| m.len());
    state_bytes.saturating_mul(2).max(1 << 20)
}

impl StateKeeper {
    /// Keeps states in `store`; `loaded` is the state just read from it (at `now`),
    /// which need not be written back until it changes.
    pub fn new(store: StateStore, loaded: Option<&ClientState>, now: Time) -> Self {
        let mut schedule = SaveSchedule::new(SavePolicy::default());
        if let Some(state) = loaded {
            schedule.loaded(state, now);
        }
        StateKeeper { store, saving: Mutex::new(Saving { schedule, free_at_failure: None }) }
    }

    /// The store (its directory and lock).
    pub fn store(&self) -> &StateStore {
        &self.store
    }
}

impl StatePersistence for StateKeeper {
    fn stepped(&self, state: &ClientState, now: Time) {
        let mut saving = self.saving.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Saving { schedule, free_at_failure } = &mut *saving;
        schedule.note_progress();
        // A full disk that has room again: what the client must not forget (a report's
        // acknowledgement, say) is written now, not after the retry's delay (up to a
        // minute), in which a crash would lose it.
        let dir = self.store.dir();
        if let Some(before) = *free_at_failure
            && free_bytes(dir).is_some_and(|free| free >= before.saturating_add(room_needed(dir)))
        {
            schedule.retry_now();
        }
        match self.store.save_if_due(schedule, state, now) {
            Ok(_) => {
                if schedule.failures() == 0 {
                    *free_at_failure = None;
                }
            }
            Err(error) => {
                *free_at_failure = free_bytes(dir);
                tracing::error!(
                    %error,
                    failures = schedule.failures(),
                    "the client state could not be written; retrying"
                );
            }
        }
    }

    fn stopping(&self, state: &ClientState, now: Time) {
        let mut saving = self.saving.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let schedule = &mut saving.schedule;
        match self.store.save(state) {
            Ok(()) => {
                schedule.saved(boinc_core::control::durable_digest(state), now);
                tracing::info!(dir = %self.store.dir().display(), "state written");
            }
            Err(error) => {
                tracing::error!(%error, "the client state could not be written at shutdown")
            }
        }
    }
}
