//! What a live run's journal needs around the actors (docs/actors.md "Live journal and
//! replay"): the clock they read, which moves only when an input is taken in (so every
//! decision between two inputs sees the time the first came), the data directory's
//! answers recorded as they are read, and the setup line replay starts from.

use crate::effects::{Clock, DiskSpace, FileSystem, FileSystemError};
use crate::journal::Journal;
use boinc_core::model::ClientState;
use boinc_core::supervise::RestartPolicy;
use boinc_core::{Policy, Time};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// How a live run was set up: its journal's first line, everything replay needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveSetup {
    /// Policy family.
    pub policy: Policy,
    /// The run's seed (its random streams).
    pub seed: u64,
    /// No server contact.
    pub existing_jobs_only: bool,
    /// How crashed apps were restarted.
    pub app_restart_policy: RestartPolicy,
    /// How failed actors were rebuilt.
    pub actor_restart_policy: RestartPolicy,
    /// Whether the client moved its files itself.
    pub file_transfers: bool,
    /// Whether the client managed the data directory's disk use.
    pub disk_manager: bool,
    /// How often the client looked for results to report between work fetches
    /// (seconds); a journal from before the report poll has none, and replays without.
    #[serde(default)]
    pub report_poll: Option<f64>,
    /// The client's state at the start: its projects, jobs, host, preferences and
    /// configuration.
    pub state: ClientState,
}

/// The time the actors of a live run read: the reading taken when the latest input
/// came in. Outside a live journal the actors read the clock itself.
pub struct LatchedClock {
    /// The clock readings come from (`None`: set by hand, on replay).
    real: Option<Arc<dyn Clock>>,
    at: AtomicU64,
}

impl LatchedClock {
    /// A clock over `real`, reading it now.
    pub fn over(real: Arc<dyn Clock>) -> Self {
        let at = real.now();
        LatchedClock { real: Some(real), at: AtomicU64::new(at.to_bits()) }
    }

    /// A clock set by hand, at `at`.
    pub fn fixed(at: Time) -> Self {
        LatchedClock { real: None, at: AtomicU64::new(at.to_bits()) }
    }

    /// Reads the real clock for an input coming in; that reading holds until the next.
    pub fn latch(&self) -> Time {
        let now = self.real.as_ref().map_or_else(|| self.now(), |real| real.now());
        self.set(now);
        now
    }

    /// Sets the time (replay: the recorded input's).
    pub fn set(&self, at: Time) {
        self.at.store(at.to_bits(), Ordering::SeqCst);
    }
}

impl Clock for LatchedClock {
    fn now(&self) -> Time {
        f64::from_bits(self.at.load(Ordering::SeqCst))
    }
}

/// The data directory with every answer recorded in a live journal (and, on replay,
/// read back from it).
pub struct JournaledFileSystem {
    inner: Arc<dyn FileSystem>,
    journal: Journal,
    clock: Arc<dyn Clock>,
}

impl JournaledFileSystem {
    /// `inner`, its answers recorded in `journal` at `clock`'s time.
    pub fn new(inner: Arc<dyn FileSystem>, journal: Journal, clock: Arc<dyn Clock>) -> Self {
        JournaledFileSystem { inner, journal, clock }
    }

    fn record<T: Serialize + serde::de::DeserializeOwned>(
        &self,
        name: &str,
        path: &str,
        live: impl FnOnce() -> Result<T, FileSystemError>,
    ) -> Result<T, FileSystemError> {
        let answer = self
            .journal
            .exchange(self.clock.now(), "disk", name, || live().map_err(|error| error.to_string()));
        answer.map_err(|reason| FileSystemError::Io {
            operation: "read back",
            path: PathBuf::from(path),
            source: std::io::Error::other(reason),
        })
    }
}

impl FileSystem for JournaledFileSystem {
    fn size(&self, project_url: &str, name: &str) -> Result<Option<f64>, FileSystemError> {
        self.record("FileSize", name, || self.inner.size(project_url, name))
    }

    fn delete(&self, project_url: &str, name: &str) -> Result<bool, FileSystemError> {
        self.record("FileDeleted", name, || self.inner.delete(project_url, name))
    }

    fn disk_space(&self) -> Result<DiskSpace, FileSystemError> {
        self.record("DiskSpace", "", || self.inner.disk_space())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A journal written before the report poll replays without it: its setup line has
    /// no `report_poll`, and the replayed client reports at the work-fetch pace it had.
    #[test]
    fn a_setup_line_without_the_report_poll_replays_without_it() {
        let setup = LiveSetup {
            policy: Policy::Seed,
            seed: 7,
            existing_jobs_only: false,
            app_restart_policy: RestartPolicy::APP,
            actor_restart_policy: RestartPolicy::ACTOR,
            file_transfers: true,
            disk_manager: true,
            report_poll: Some(5.0),
            state: ClientState::default(),
        };
        let mut line = serde_json::to_value(&setup).expect("the setup serialises");
        let read: LiveSetup = serde_json::from_value(line.clone()).expect("it reads back");
        assert_eq!(read.report_poll, Some(5.0));
        line.as_object_mut().expect("an object").remove("report_poll");
        let older: LiveSetup = serde_json::from_value(line).expect("an older line reads");
        assert_eq!(older.report_poll, None);
    }
}
