//! The project's records in memory and on disk. Requests change the records under a
//! lock; a writer thread saves them (atomically: [`super::atomic_file`]) and every
//! request whose change must outlive a crash waits until a save covering it is done
//! before it answers. Requests that arrive while a save is under way are saved together
//! by the next one (group commit), so the disk is written once per batch, not once per
//! request.

use super::atomic_file::write_atomically;
use super::error::ProjectServerError;
use super::records::{ProjectRecords, RECORDS_FORMAT};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::watch;

/// The records' file in the project directory.
pub(crate) const RECORDS_FILE: &str = "project.json";

/// How long a request waits for its change to be saved before it gives up.
const SAVE_WAIT: Duration = Duration::from_secs(30);

/// A change that will be durable once saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "wait for the change to be saved before answering"]
pub(crate) struct Change(u64);

struct Versioned {
    records: ProjectRecords,
    /// Bumped by each change.
    version: u64,
    stopping: bool,
}

struct Shared {
    path: PathBuf,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
    state: Mutex<Versioned>,
    changed: Condvar,
    saved: watch::Sender<u64>,
}

/// The records, shared by the server's workers.
#[derive(Clone)]
pub(crate) struct Store {
    shared: Arc<Shared>,
}

impl Store {
    /// Opens the records in `dir` (new ones when there are none) and starts the writer.
    pub(crate) fn open(dir: &Path) -> Result<Store, ProjectServerError> {
        let path = dir.join(RECORDS_FILE);
        let records = match std::fs::read(&path) {
            Ok(bytes) => {
                let records: ProjectRecords = serde_json::from_slice(&bytes).map_err(|e| {
                    ProjectServerError::DamagedRecords { path: path.clone(), reason: e.to_string() }
                })?;
                if records.format > RECORDS_FORMAT {
                    return Err(ProjectServerError::DamagedRecords {
                        path,
                        reason: format!(
                            "written by a newer boinc-rs (format {} > {RECORDS_FORMAT})",
                            records.format
                        ),
                    });
                }
                records
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => ProjectRecords::default(),
            Err(e) => return Err(ProjectServerError::io(&path)(e)),
        };
        let (saved, _) = watch::channel(0);
        let shared = Arc::new(Shared {
            path,
            writer: Mutex::new(None),
            state: Mutex::new(Versioned { records, version: 0, stopping: false }),
            changed: Condvar::new(),
            saved,
        });
        let writer = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name("project-records".into())
            .spawn(move || write_loop(&writer))
            .map_err(ProjectServerError::io(dir))?;
        *shared.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(handle);
        Ok(Store { shared })
    }

    fn lock(&self) -> MutexGuard<'_, Versioned> {
        // A panic while holding the lock leaves consistent records (every change is
        // made in full before the lock is released), so a poisoned lock is used as is.
        self.shared.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Reads the records.
    pub(crate) fn read<R>(&self, read: impl FnOnce(&ProjectRecords) -> R) -> R {
        read(&self.lock().records)
    }

    /// Changes the records; `change` says whether it changed anything that must be
    /// saved. Returns its result and, when something changed, the change to wait for.
    pub(crate) fn update<R>(
        &self,
        change: impl FnOnce(&mut ProjectRecords) -> (R, bool),
    ) -> (R, Option<Change>) {
        let mut state = self.lock();
        let (result, changed) = change(&mut state.records);
        if !changed {
            return (result, None);
        }
        state.version += 1;
        let version = state.version;
        drop(state);
        self.shared.changed.notify_one();
        (result, Some(Change(version)))
    }

    /// Waits until `change` is on disk.
    pub(crate) async fn saved(&self, change: Option<Change>) -> Result<(), ProjectServerError> {
        let Some(Change(version)) = change else { return Ok(()) };
        let mut saved = self.shared.saved.subscribe();
        match tokio::time::timeout(SAVE_WAIT, saved.wait_for(|&v| v >= version)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(_)) => Err(ProjectServerError::NotSaved("the writer stopped".into())),
            Err(_) => Err(ProjectServerError::NotSaved(format!(
                "no save within {} s",
                SAVE_WAIT.as_secs()
            ))),
        }
    }

    /// Saves what is pending, stops the writer and waits for it.
    pub(crate) fn stop(&self) {
        self.lock().stopping = true;
        self.shared.changed.notify_one();
        let writer =
            self.shared.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        if let Some(writer) = writer {
            let _ = writer.join();
        }
    }
}

fn write_loop(shared: &Shared) {
    let mut saved_version = 0;
    loop {
        let (bytes, version) = {
            let mut state = shared.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            while state.version == saved_version && !state.stopping {
                state =
                    shared.changed.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            if state.version == saved_version {
                return;
            }
            match serde_json::to_vec(&state.records) {
                Ok(bytes) => (bytes, state.version),
                Err(error) => {
                    tracing::error!(%error, "cannot serialise the project's records");
                    return;
                }
            }
        };
        // Retried until it works: requests wait for it (up to their own limit).
        loop {
            match write_atomically(&shared.path, &bytes, 0o644) {
                Ok(()) => break,
                Err(error) => {
                    tracing::error!(path = %shared.path.display(), %error,
                        "cannot save the project's records; retrying in a second");
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
        }
        saved_version = version;
        shared.saved.send_replace(version);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn changes_are_on_disk_once_saved_and_read_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::open(dir.path()).expect("opens");
        let ((), change) = store.update(|r| {
            r.next_job = 7;
            ((), true)
        });
        store.saved(change).await.expect("saved");
        let ((), none) = store.update(|_| ((), false));
        assert_eq!(none, None);
        store.stop();
        let reopened = Store::open(dir.path()).expect("reopens");
        assert_eq!(reopened.read(|r| r.next_job), 7);
        reopened.stop();
    }

    #[test]
    fn damaged_records_are_an_error_not_a_fresh_start() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join(RECORDS_FILE), b"{\"format\": 1, \"jobs\": [").expect("w");
        match Store::open(dir.path()) {
            Err(ProjectServerError::DamagedRecords { .. }) => {}
            Err(other) => panic!("unexpected error {other}"),
            Ok(_) => panic!("damaged records must not open"),
        }
    }
}
