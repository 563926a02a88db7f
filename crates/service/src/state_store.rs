//! The client's state on disk (docs/design.md "State"; issue "The host service"):
//! client_state.xml in BOINC's format, written so that a crash at any moment leaves a
//! whole state behind, read back on start with the copies kept for damage.
//!
//! A write goes to `client_state_next.xml`, which is flushed to the disk; then the
//! current `client_state.xml` becomes `client_state_prev.xml` and the new file takes its
//! name (the real client's sequence). Reading takes the first of `client_state.xml`,
//! `client_state_next.xml` (whole whenever the main file is missing: a crash between the
//! two renames) and `client_state_prev.xml` that parses, and says why it passed over the
//! others. When to write is the core's [`SaveSchedule`]; [`StateStore::save_if_due`]
//! carries it out.
//!
//! Each project's credit history is kept beside the state, as BOINC keeps it, in
//! `statistics_<project>.xml`: written with the state when it changed, read back into
//! the projects' accounts with it.
//!
//! Each finished job gets a line in its project's job log ([`super::job_log`]) when a
//! save finds it, and a project detached since the last save has its files removed.
//!
//! The store holds the data directory's lock ([`DataDirLock`]) for as long as it lives:
//! only one client writes a directory's state.

use super::account_files::remove_project_files;
use super::atomic_file::{AtomicWriteError, write_atomically};
use super::data_dir_lock::{DataDirLock, LockError};
use super::job_log::JobLog;
use boinc_core::Time;
use boinc_core::control::{PROTOCOL_VERSION, SaveDue, SaveSchedule};
use boinc_core::model::ClientState;
use boinc_core::protocol::data_dir::{
    CLIENT_STATE, CLIENT_STATE_NEXT, CLIENT_STATE_PREV, account_file_name, statistics_file_name,
};
use boinc_core::protocol::{
    DAILY_TRANSFER_FILE, StateFileOrigin, parse_client_state, read_daily_transfer_file,
    read_statistics_file, write_client_state, write_daily_transfer_file, write_statistics_file,
};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// The largest state file read, bytes: a client holding the most jobs it may
/// (`boinc_core::control::MAX_JOBS_HELD`) writes a few hundred megabytes. A larger file
/// is passed over like a damaged copy, never read into memory.
const MAX_STATE_FILE: u64 = 1 << 30;

/// The largest statistics file read, bytes: ten years of days take a few megabytes.
const MAX_STATISTICS_FILE: u64 = 8 << 20;

/// The bytes of the file at `path`; `None` when it is larger than `max` bytes.
fn read_bounded(path: &Path, max: u64) -> std::io::Result<Option<Vec<u8>>> {
    let file = std::fs::File::open(path)?;
    if file.metadata()?.len() > max {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= max).then_some(bytes))
}

/// Why the state could not be stored or loaded.
#[derive(Debug, thiserror::Error)]
pub enum StateStoreError {
    /// The data directory is another client's, or cannot be locked.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The state could not be written.
    #[error(
        "cannot save the client's state: {0}; check that the disk has space and the data \
         directory is writable (the client keeps trying)"
    )]
    Write(#[source] AtomicWriteError),
    /// A state file exists but cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Every copy of the state is damaged.
    #[error(
        "no usable state in {dir}: {}; restore a backup of client_state.xml, or move the \
         state files away to start afresh (projects are attached again from their account \
         files, but their jobs are lost)",
        .problems.join("; ")
    )]
    Damaged {
        /// The directory.
        dir: PathBuf,
        /// What is wrong with each copy.
        problems: Vec<String>,
    },
}

/// A state read from disk.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedState {
    /// The state.
    pub state: ClientState,
    /// The file it came from.
    pub file: &'static str,
    /// Why the newer copies before it were passed over (empty when the main file was
    /// used): the caller logs them.
    pub passed_over: Vec<String>,
}

/// The state files of one data directory, locked for this client.
#[derive(Debug)]
pub struct StateStore {
    dir: PathBuf,
    platform: String,
    /// The directory's lock; `None` for a client that shares the directory with
    /// another (cc_config's `<allow_multiple_clients>`).
    lock: Option<DataDirLock>,
    /// The statistics files and the daily transfer history as last written or read, by
    /// file name: only a changed history is written again.
    statistics: Mutex<HashMap<String, String>>,
    /// The jobs whose end the job logs already hold.
    job_log: Mutex<JobLog>,
}

impl StateStore {
    /// Takes the data directory `dir` for this client: refused if another client has it.
    pub fn open(dir: &Path) -> Result<StateStore, StateStoreError> {
        Self::with_lock(dir, Some(DataDirLock::acquire(dir)?))
    }

    /// Takes the data directory `dir` even where another client has it, as cc_config's
    /// `<allow_multiple_clients>` asks: the lock is taken when it is free, and the
    /// client goes on without it when another holds it (the user accepted that the two
    /// share the directory's files).
    pub fn open_allowing_others(dir: &Path) -> Result<StateStore, StateStoreError> {
        let lock = match DataDirLock::acquire(dir) {
            Ok(lock) => Some(lock),
            Err(LockError::Held { holder, .. }) => {
                tracing::warn!(
                    dir = %dir.display(),
                    %holder,
                    "another client runs in this data directory; allow_multiple_clients lets this one run beside it"
                );
                None
            }
            Err(error) => return Err(error.into()),
        };
        Self::with_lock(dir, lock)
    }

    fn with_lock(dir: &Path, lock: Option<DataDirLock>) -> Result<StateStore, StateStoreError> {
        Ok(StateStore {
            dir: dir.to_path_buf(),
            platform: boinc_core::protocol::platform::boinc_platform(),
            lock,
            statistics: Mutex::new(HashMap::new()),
            job_log: Mutex::new(JobLog::default()),
        })
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The lock file this store holds (`None`: it shares the directory unlocked).
    pub fn lock_file(&self) -> Option<&Path> {
        self.lock.as_ref().map(DataDirLock::path)
    }

    /// Reads the newest whole state; `None` in a directory that has none yet.
    pub fn load(&self) -> Result<Option<LoadedState>, StateStoreError> {
        let mut passed_over = Vec::new();
        let mut found_any = false;
        for name in [CLIENT_STATE, CLIENT_STATE_NEXT, CLIENT_STATE_PREV] {
            let path = self.dir.join(name);
            let bytes = match read_bounded(&path, MAX_STATE_FILE) {
                Ok(Some(bytes)) => bytes,
                Ok(None) => {
                    found_any = true;
                    passed_over
                        .push(format!("{name}: larger than {MAX_STATE_FILE} bytes, not read"));
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => return Err(StateStoreError::Read { path, source }),
            };
            found_any = true;
            // A stray invalid byte must not cost the user the whole state.
            let text = String::from_utf8_lossy(&bytes);
            match parse_client_state(&text, name) {
                Ok(mut state) => {
                    self.load_statistics(&mut state);
                    self.load_daily_transfers(&mut state);
                    *self.job_log.lock().unwrap_or_else(PoisonError::into_inner) =
                        JobLog::new(Some(&state));
                    return Ok(Some(LoadedState { state, file: name, passed_over }));
                }
                Err(error) => passed_over.push(error.to_string()),
            }
        }
        if found_any {
            Err(StateStoreError::Damaged { dir: self.dir.clone(), problems: passed_over })
        } else {
            Ok(None)
        }
    }

    /// Writes `state` now, keeping the copy it replaces as client_state_prev.xml.
    pub fn save(&self, state: &ClientState) -> Result<(), StateStoreError> {
        let origin = StateFileOrigin { platform: &self.platform, version: PROTOCOL_VERSION };
        let text = write_client_state(state, &origin);
        write_atomically(
            &self.dir,
            CLIENT_STATE,
            CLIENT_STATE_NEXT,
            Some(CLIENT_STATE_PREV),
            text.as_bytes(),
        )
        .map_err(StateStoreError::Write)?;
        self.save_statistics(state)?;
        self.save_daily_transfers(state)?;
        self.follow_the_state(state);
        Ok(())
    }

    /// The files that follow the state written: a line in its project's job log for each
    /// job that finished, and the files of a project that was detached (by
    /// `detach_when_done`, an account manager or the user) removed, so that no account
    /// file attaches it again at the next start. Failures are logged: the state itself
    /// is safe.
    fn follow_the_state(&self, state: &ClientState) {
        let appended = self
            .job_log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .append_finished(&self.dir, state);
        if let Err(error) = appended {
            tracing::warn!(%error, "the job log could not be written");
        }
        for project in state.projects.iter().filter(|p| p.detached) {
            if !self.dir.join(account_file_name(&project.master_url)).exists() {
                continue;
            }
            match remove_project_files(&self.dir, &project.master_url) {
                Ok(removed) => tracing::info!(
                    project = %project.master_url,
                    files = removed.len(),
                    "detached: files removed"
                ),
                Err(error) => tracing::warn!(%error, "a detached project's files stay"),
            }
        }
    }

    fn written_statistics(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.statistics.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Writes the credit history of each project whose history changed.
    fn save_statistics(&self, state: &ClientState) -> Result<(), StateStoreError> {
        for project in state.projects.iter().filter(|p| !p.detached) {
            if project.account.statistics.is_empty() {
                continue;
            }
            let name = statistics_file_name(&project.master_url);
            let text = write_statistics_file(&project.master_url, &project.account.statistics);
            if self.written_statistics().get(&name) == Some(&text) {
                continue;
            }
            let temp = format!("{name}.tmp");
            write_atomically(&self.dir, &name, &temp, None, text.as_bytes())
                .map_err(StateStoreError::Write)?;
            self.written_statistics().insert(name, text);
        }
        Ok(())
    }

    /// Writes daily_xfer_history.xml when the history changed.
    fn save_daily_transfers(&self, state: &ClientState) -> Result<(), StateStoreError> {
        if state.daily_transfers.is_empty() {
            return Ok(());
        }
        let text = write_daily_transfer_file(&state.daily_transfers);
        if self.written_statistics().get(DAILY_TRANSFER_FILE) == Some(&text) {
            return Ok(());
        }
        let temp = format!("{DAILY_TRANSFER_FILE}.tmp");
        write_atomically(&self.dir, DAILY_TRANSFER_FILE, &temp, None, text.as_bytes())
            .map_err(StateStoreError::Write)?;
        self.written_statistics().insert(DAILY_TRANSFER_FILE.to_string(), text);
        Ok(())
    }

    /// Reads the daily transfer history; a damaged or oversized file is passed over with
    /// a warning (the history starts again).
    fn load_daily_transfers(&self, state: &mut ClientState) {
        let path = self.dir.join(DAILY_TRANSFER_FILE);
        let bytes = match read_bounded(&path, MAX_STATISTICS_FILE) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                tracing::warn!(file = %path.display(), "too large: the transfer history starts again");
                return;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(error) => {
                tracing::warn!(file = %path.display(), %error, "the transfer history is not read");
                return;
            }
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        match read_daily_transfer_file(&text) {
            Ok(days) => {
                state.daily_transfers = days;
                self.written_statistics().insert(DAILY_TRANSFER_FILE.to_string(), text);
            }
            Err(error) => {
                tracing::warn!(file = %path.display(), %error, "a damaged transfer history is passed over")
            }
        }
    }

    /// Reads each project's credit history into its account. A damaged, oversized or
    /// foreign file (another project's URL) is passed over with a warning: the history
    /// starts again from the next reply.
    fn load_statistics(&self, state: &mut ClientState) {
        for project in &mut state.projects {
            let name = statistics_file_name(&project.master_url);
            let path = self.dir.join(&name);
            let bytes = match read_bounded(&path, MAX_STATISTICS_FILE) {
                Ok(Some(bytes)) => bytes,
                Ok(None) => {
                    tracing::warn!(file = %name, "credit history too large; not read");
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(error) => {
                    tracing::warn!(file = %name, %error, "credit history unreadable");
                    continue;
                }
            };
            let text = String::from_utf8_lossy(&bytes).into_owned();
            match read_statistics_file(&text) {
                Ok((url, days)) if url == project.master_url => {
                    project.account.statistics = days;
                    self.written_statistics().insert(name, text);
                }
                Ok((url, _)) => {
                    tracing::warn!(file = %name, %url, "credit history of another project")
                }
                Err(error) => tracing::warn!(file = %name, %error, "credit history damaged"),
            }
        }
    }

    /// Writes `state` if `schedule` says it is due at `now`, and tells the schedule how
    /// it went. Returns what the schedule says next (after a write: nothing until the
    /// state changes). A failed write is retried when the schedule says.
    pub fn save_if_due(
        &self,
        schedule: &mut SaveSchedule,
        state: &ClientState,
        now: Time,
    ) -> Result<SaveDue, StateStoreError> {
        match schedule.due(state, now) {
            SaveDue::Now { digest, .. } => match self.save(state) {
                Ok(()) => {
                    schedule.saved(digest, now);
                    Ok(SaveDue::Nothing)
                }
                Err(error) => {
                    schedule.failed(now);
                    Err(error)
                }
            },
            waiting => Ok(waiting),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use boinc_core::control::SavePolicy;
    use boinc_core::model::{Project, SyntheticHost, synthetic_host};
    use std::fs;

    /// A state with projects, apps, workunits and jobs, one of them running.
    fn busy_state() -> ClientState {
        synthetic_host(SyntheticHost { ncpus: 2, njobs: 6, running_prefix: 1, seed: 9, now: 100.0 })
    }

    /// A state with only projects: what any change of the tests is checked against.
    fn projects(names: &[&str]) -> ClientState {
        let mut state = ClientState::default();
        for name in names {
            state.projects.push(Project::new(*name, format!("http://{name}/"), 100.0));
        }
        state
    }

    #[test]
    fn a_fresh_directory_has_no_state() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = StateStore::open(dir.path()).expect("open");
        assert_eq!(store.load().expect("loads"), None);
    }

    #[test]
    fn saves_read_back_and_keep_the_previous_copy() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = StateStore::open(dir.path()).expect("open");
        let first = busy_state();
        store.save(&first).expect("first save");
        let second = projects(&["a", "b"]);
        store.save(&second).expect("second save");
        let loaded = store.load().expect("loads").expect("a state");
        assert_eq!((loaded.file, loaded.state.projects.len()), (CLIENT_STATE, 2));
        assert!(loaded.passed_over.is_empty());
        let previous = fs::read_to_string(dir.path().join(CLIENT_STATE_PREV)).expect("prev");
        let previous = parse_client_state(&previous, CLIENT_STATE_PREV).expect("parses");
        assert_eq!(previous.jobs.len(), first.jobs.len());
        assert!(!dir.path().join(CLIENT_STATE_NEXT).exists());
    }

    #[test]
    fn credit_history_is_kept_beside_the_state() {
        use boinc_core::control::{ReportedCredit, take_credit};
        let dir = tempfile::tempdir().expect("temp dir");
        let mut state = projects(&["a", "b"]);
        let credit = ReportedCredit { user_total: Some(1234.5), ..ReportedCredit::default() };
        take_credit(&mut state.projects[0], credit, 86_400.0 * 3.5);
        {
            let store = StateStore::open(dir.path()).expect("open");
            store.save(&state).expect("save");
        }
        let file = dir.path().join(statistics_file_name("http://a/"));
        assert!(file.exists(), "statistics_a.xml written");
        assert!(!dir.path().join(statistics_file_name("http://b/")).exists(), "no history");
        let store = StateStore::open(dir.path()).expect("open again");
        let loaded = store.load().expect("loads").expect("a state").state;
        assert_eq!(loaded.projects[0].account.user_total_credit, 1234.5);
        assert_eq!(loaded.projects[0].account.statistics, state.projects[0].account.statistics);
        // A damaged history is passed over, not fatal.
        fs::write(&file, "<project_statistics><day>").expect("damage");
        let loaded = store.load().expect("loads").expect("a state").state;
        assert!(loaded.projects[0].account.statistics.is_empty());
    }

    /// The bytes moved each day survive a restart, in BOINC's daily_xfer_history.xml; a
    /// damaged file is passed over.
    #[test]
    fn the_daily_transfer_history_is_kept_beside_the_state() {
        use boinc_core::model::record_transfer;
        let dir = tempfile::tempdir().expect("temp dir");
        let mut state = projects(&["a"]);
        record_transfer(&mut state.daily_transfers, 86_400.0 * 20_000.5, 4096.0, false);
        {
            let store = StateStore::open(dir.path()).expect("open");
            store.save(&state).expect("save");
        }
        let store = StateStore::open(dir.path()).expect("open again");
        let loaded = store.load().expect("loads").expect("a state").state;
        assert_eq!(loaded.daily_transfers, state.daily_transfers);
        fs::write(dir.path().join(DAILY_TRANSFER_FILE), "<daily_xfers><dx>").expect("damage");
        let loaded = store.load().expect("loads").expect("a state").state;
        assert!(loaded.daily_transfers.is_empty());
    }

    /// A project detached inside the client (detach_when_done, an account manager) has
    /// its files removed when the state saying so is written: no account file attaches
    /// it again at the next start. An attached project's files stay.
    #[test]
    fn a_detached_projects_files_go_with_the_state_that_detaches_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut state = projects(&["a", "b"]);
        for url in ["http://a/", "http://b/"] {
            fs::write(dir.path().join(account_file_name(url)), "<account/>").expect("account");
        }
        let store = StateStore::open(dir.path()).expect("open");
        store.save(&state).expect("save");
        assert!(dir.path().join(account_file_name("http://a/")).exists());
        state.projects[0].detached = true;
        store.save(&state).expect("save");
        assert!(!dir.path().join(account_file_name("http://a/")).exists(), "a's file removed");
        assert!(dir.path().join(account_file_name("http://b/")).exists(), "b still attached");
    }

    /// A kind of damage and what it makes of a good file's text.
    type Damage = (&'static str, fn(&str) -> Vec<u8>);

    /// Damage to the main file, each kind in turn: the previous copy is loaded and the
    /// damage is reported.
    /// A store in a fresh directory that saved one project, then two.
    fn saved_twice() -> (tempfile::TempDir, StateStore) {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = StateStore::open(dir.path()).expect("open");
        store.save(&projects(&["older"])).expect("first save");
        store.save(&projects(&["older", "newer"])).expect("second save");
        (dir, store)
    }

    #[test]
    fn a_damaged_state_falls_back_to_the_previous_copy() {
        let damage: [Damage; 4] = [
            ("truncated", |text| text.as_bytes()[..text.len() / 2].to_vec()),
            ("garbage", |_| b"\x00\x01garbage<<>>not xml at all".to_vec()),
            ("empty", |_| Vec::new()),
            ("another file", |_| b"<cc_config><options/></cc_config>".to_vec()),
        ];
        for (kind, damaged) in damage {
            let (dir, store) = saved_twice();
            let main = dir.path().join(CLIENT_STATE);
            let text = fs::read_to_string(&main).expect("main");
            fs::write(&main, damaged(&text)).expect("damage");
            let loaded = store.load().expect("loads").unwrap_or_else(|| panic!("{kind}: state"));
            assert_eq!(loaded.file, CLIENT_STATE_PREV, "{kind}");
            assert_eq!(loaded.state.projects.len(), 1, "{kind}: the previous copy");
            assert_eq!(loaded.passed_over.len(), 1, "{kind}");
            assert!(loaded.passed_over[0].starts_with(CLIENT_STATE), "{kind}: names the file");
        }
    }

    /// A state file grown past the bound (sparse here: nothing is written) is passed
    /// over unread, and the previous copy is taken.
    #[test]
    fn a_huge_state_file_is_passed_over_unread() {
        let (dir, store) = saved_twice();
        let main = fs::OpenOptions::new().write(true).open(dir.path().join(CLIENT_STATE));
        main.expect("main").set_len(MAX_STATE_FILE + 1).expect("grown");
        let loaded = store.load().expect("loads").expect("a state");
        assert_eq!((loaded.file, loaded.state.projects.len()), (CLIENT_STATE_PREV, 1));
        assert!(loaded.passed_over[0].contains("larger than"), "{:?}", loaded.passed_over);
    }

    /// A crash between the two renames leaves no client_state.xml but a whole
    /// client_state_next.xml: it is the newest state.
    #[test]
    fn a_crash_between_the_renames_loses_nothing() {
        let (dir, store) = saved_twice();
        fs::rename(dir.path().join(CLIENT_STATE), dir.path().join(CLIENT_STATE_NEXT))
            .expect("as if the last rename had not happened");
        let loaded = store.load().expect("loads").expect("a state");
        assert_eq!((loaded.file, loaded.state.projects.len()), (CLIENT_STATE_NEXT, 2));
    }

    #[test]
    fn every_copy_damaged_is_an_error_that_says_what_to_do() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = StateStore::open(dir.path()).expect("open");
        fs::write(dir.path().join(CLIENT_STATE), "<client_state><project>").expect("write");
        fs::write(dir.path().join(CLIENT_STATE_PREV), "garbage").expect("write");
        let error = store.load().expect_err("nothing usable");
        let message = error.to_string();
        assert!(message.contains(CLIENT_STATE) && message.contains(CLIENT_STATE_PREV), "{message}");
        assert!(message.contains("restore a backup"), "{message}");
    }

    #[test]
    fn a_second_store_on_the_same_directory_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let _first = StateStore::open(dir.path()).expect("open");
        let error = StateStore::open(dir.path()).expect_err("second");
        assert!(matches!(error, StateStoreError::Lock(LockError::Held { .. })), "{error}");
        // `<allow_multiple_clients>`: the second runs beside the first, without the lock.
        let second = StateStore::open_allowing_others(dir.path()).expect("allowed");
        assert!(second.lock_file().is_none());
        let alone = tempfile::tempdir().expect("temp dir");
        let store = StateStore::open_allowing_others(alone.path()).expect("alone");
        assert!(store.lock_file().is_some(), "a free lock is taken all the same");
    }

    #[test]
    fn the_schedule_decides_and_failures_are_retried() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = StateStore::open(dir.path()).expect("open");
        let mut schedule = SaveSchedule::new(SavePolicy::default());
        let mut state = projects(&["a"]);
        assert_eq!(
            store.save_if_due(&mut schedule, &state, 10.0).expect("writes"),
            SaveDue::Nothing
        );
        assert!(dir.path().join(CLIENT_STATE).exists());
        schedule.note_progress();
        assert_eq!(
            store.save_if_due(&mut schedule, &state, 11.0).expect("waits"),
            SaveDue::At(70.0)
        );
        // A write that cannot happen (the directory is gone) is retried later.
        state.projects[0].suspended = true;
        let gone = tempfile::tempdir().expect("temp dir");
        let broken = StateStore {
            dir: gone.path().join("absent"),
            ..StateStore::open(gone.path()).expect("open")
        };
        assert!(broken.save_if_due(&mut schedule, &state, 12.0).is_err());
        assert_eq!(schedule.failures(), 1);
        assert_eq!(
            store.save_if_due(&mut schedule, &state, 12.5).expect("waits"),
            SaveDue::At(13.0)
        );
        assert_eq!(
            store.save_if_due(&mut schedule, &state, 13.0).expect("retries"),
            SaveDue::Nothing
        );
        let loaded = store.load().expect("loads").expect("state");
        assert!(loaded.state.projects[0].suspended);
    }
}
