//! [`BoincApp`]: what a Rust science app calls to run under a BOINC client (boinc-rs or
//! BOINC's own), the counterpart of BOINC's `boinc_init` / `boinc_fraction_done` /
//! `boinc_time_to_checkpoint` / `boinc_checkpoint_completed` / `boinc_finish`.
//!
//! ```no_run
//! use boinc_app_api::{AppControl, BoincApp};
//! let app = BoincApp::init().expect("the slot is set up");
//! let input = std::fs::read(app.resolve_filename("in")).expect("input");
//! let mut done = 0;
//! while done < 100 {
//!     match app.poll() {
//!         AppControl::Continue => {}
//!         stop => app.exit_for(stop),
//!     }
//!     done += 1; // ... a slice of real work ...
//!     app.fraction_done(done as f64 / 100.0);
//!     if app.time_to_checkpoint() {
//!         // ... write the checkpoint ...
//!         app.checkpoint_completed();
//!     }
//! }
//! std::fs::write(app.resolve_filename("out"), &input).expect("output");
//! app.finish(0);
//! ```
//!
//! The app runs in its slot directory. Without an `init_data.xml` there it runs
//! standalone (no client: nothing is reported, nothing suspends it).

use super::control_thread::{ControlThread, SharedState, process_cpu_seconds, send_status};
use super::error::AppApiError;
use super::mapping::SharedMapping;
use boinc_core::protocol::app_api::{
    FINISH_FILE, FinishFile, INIT_DATA_FILE, InitData, LOCK_FILE, MMAP_FILE_NAME,
    TEMPORARY_EXIT_FILE, TemporaryExit, parse_soft_link,
};
use nix::fcntl::{Flock, FlockArg};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How long a starting app waits for the slot's lock: an instance left running by a
/// client that died quits once it has missed its heartbeats for 30 s, as BOINC's apps do,
/// so a new instance started by the next client gets the slot after at most that long.
const SLOT_LOCK_WAIT: Duration = Duration::from_secs(35);

/// Takes the slot's lock, waiting (bounded) for an instance from a previous client's
/// life to go.
fn lock_slot(file: File) -> Result<Flock<File>, AppApiError> {
    let deadline = Instant::now() + SLOT_LOCK_WAIT;
    let mut file = file;
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => return Ok(lock),
            Err((_, _)) if Instant::now() >= deadline => return Err(AppApiError::SlotLocked),
            Err((back, _)) => {
                file = back;
                std::thread::sleep(Duration::from_millis(250));
            }
        }
    }
}

/// BOINC's exit status for an app that stopped because its client asked it to abort.
pub const EXIT_ABORTED_BY_CLIENT: i32 = 194;

/// What the client wants of the app now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppControl {
    /// Go on computing.
    Continue,
    /// Exit now with status 0 (after a checkpoint, if one is cheap): the client restarts
    /// the app later from its last checkpoint.
    Quit,
    /// Exit now with [`EXIT_ABORTED_BY_CLIENT`]: the job is over.
    Abort,
}

/// The connection to the client while the app is attached to one.
struct Attached {
    mapping: Arc<SharedMapping>,
    state: Arc<SharedState>,
    /// The API thread, until it is stopped.
    thread: std::sync::Mutex<Option<std::thread::JoinHandle<()>>>,
    _lock: Flock<File>,
}

/// An app's side of BOINC's API.
pub struct BoincApp {
    slot_dir: PathBuf,
    init_data: InitData,
    attached: Option<Attached>,
    /// Standalone: fraction done and checkpoint CPU time kept here.
    state: Arc<SharedState>,
    last_checkpoint: std::sync::Mutex<Instant>,
}

impl BoincApp {
    /// Attaches to the client that started the app in the current directory.
    pub fn init() -> Result<BoincApp, AppApiError> {
        BoincApp::init_in(Path::new("."))
    }

    /// An app that runs without a client, in `slot_dir` (an app run by hand, or one run
    /// by a client without BOINC's API).
    pub fn standalone(slot_dir: &Path) -> BoincApp {
        BoincApp {
            slot_dir: slot_dir.to_path_buf(),
            init_data: InitData::default(),
            attached: None,
            state: Arc::new(SharedState::new(0.0)),
            last_checkpoint: std::sync::Mutex::new(Instant::now()),
        }
    }

    /// Attaches to the client through the slot directory `slot_dir`.
    pub fn init_in(slot_dir: &Path) -> Result<BoincApp, AppApiError> {
        let init_path = slot_dir.join(INIT_DATA_FILE);
        let text = match std::fs::read_to_string(&init_path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(BoincApp::standalone(slot_dir));
            }
            Err(error) => {
                return Err(AppApiError::InitData { path: init_path, reason: error.to_string() });
            }
        };
        let init_data = InitData::parse(&text).map_err(|e| AppApiError::InitData {
            path: init_path.clone(),
            reason: e.to_string(),
        })?;
        let lock_file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(slot_dir.join(LOCK_FILE))
            .map_err(|e| AppApiError::SharedMemory { path: slot_dir.join(LOCK_FILE), source: e })?;
        let lock = lock_slot(lock_file)?;
        let mmap_path = slot_dir.join(MMAP_FILE_NAME);
        let mapping = Arc::new(
            SharedMapping::open(&mmap_path)
                .map_err(|source| AppApiError::SharedMemory { path: mmap_path, source })?,
        );
        let state = Arc::new(SharedState::new(init_data.wu_cpu_time));
        let control = ControlThread {
            mapping: Arc::clone(&mapping),
            state: Arc::clone(&state),
            wu_cpu_time: init_data.wu_cpu_time,
            client_pid: init_data.client_pid,
        };
        let thread = std::thread::Builder::new()
            .name("boinc-api".into())
            .stack_size(64 * 1024)
            .spawn(move || control.run())
            .map_err(AppApiError::Thread)?;
        Ok(BoincApp {
            slot_dir: slot_dir.to_path_buf(),
            init_data,
            attached: Some(Attached {
                mapping,
                state: Arc::clone(&state),
                thread: std::sync::Mutex::new(Some(thread)),
                _lock: lock,
            }),
            state,
            last_checkpoint: std::sync::Mutex::new(Instant::now()),
        })
    }

    /// Whether the app runs without a client.
    pub fn is_standalone(&self) -> bool {
        self.attached.is_none()
    }

    /// What the client said in `init_data.xml` (defaults when standalone).
    pub fn init_data(&self) -> &InitData {
        &self.init_data
    }

    /// The path of the file the app knows as `open_name`: the target of its link file,
    /// or the file itself.
    pub fn resolve_filename(&self, open_name: &str) -> PathBuf {
        let path = self.slot_dir.join(open_name);
        let mut text = String::new();
        let read = File::open(&path).and_then(|f| f.take(4096).read_to_string(&mut text));
        match read.ok().and_then(|_| parse_soft_link(&text)) {
            Some(target) => self.slot_dir.join(target),
            None => path,
        }
    }

    /// Says how far the job is, 0–1.
    pub fn fraction_done(&self, fraction: f64) {
        self.state.set_fraction_done(fraction);
    }

    /// CPU seconds of the job: its earlier runs' (up to their last checkpoint) and this
    /// run's.
    pub fn cpu_time(&self) -> f64 {
        self.init_data.wu_cpu_time + process_cpu_seconds()
    }

    /// Whether the checkpoint period has passed since the last checkpoint (or start).
    pub fn time_to_checkpoint(&self) -> bool {
        let period = Duration::from_secs_f64(self.init_data.checkpoint_period.max(0.0));
        self.last_checkpoint.lock().map_or(true, |at| at.elapsed() >= period)
    }

    /// The app wrote a checkpoint: the client learns its CPU time.
    pub fn checkpoint_completed(&self) {
        self.state.set_checkpoint_cpu_time(self.cpu_time());
        if let Ok(mut at) = self.last_checkpoint.lock() {
            *at = Instant::now();
        }
    }

    /// What the client wants now. While the client has the app suspended this blocks
    /// until it resumes (or asks it to quit or abort). Call it often: how soon a
    /// suspension takes effect depends on it.
    pub fn poll(&self) -> AppControl {
        if self.attached.is_none() {
            return AppControl::Continue;
        }
        self.state.wait_while_suspended();
        if self.state.abort.load(Ordering::SeqCst) {
            AppControl::Abort
        } else if self.state.quit.load(Ordering::SeqCst) {
            AppControl::Quit
        } else {
            AppControl::Continue
        }
    }

    /// Exits as the client asked: status 0 for a quit, [`EXIT_ABORTED_BY_CLIENT`] for an
    /// abort (and 0 for `Continue`, which asks nothing). The client first gets a last
    /// status report, so that it knows the app's latest checkpoint.
    pub fn exit_for(&self, control: AppControl) -> ! {
        self.detach();
        std::process::exit(match control {
            AppControl::Abort => EXIT_ABORTED_BY_CLIENT,
            AppControl::Quit | AppControl::Continue => 0,
        })
    }

    /// Stops the API thread, then makes a last status report (waiting up to a second for
    /// the client to read the previous one).
    fn detach(&self) {
        let Some(attached) = &self.attached else { return };
        attached.state.stop();
        let thread = attached.thread.lock().ok().and_then(|mut t| t.take());
        if let Some(thread) = thread {
            let _ = thread.join();
        }
        let deadline = Instant::now() + Duration::from_secs(1);
        while !send_status(&attached.mapping, &attached.state, self.init_data.wu_cpu_time)
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The job is done (`status` 0) or failed (non-zero): tells the client and exits
    /// with `status`.
    pub fn finish(self, status: i32) -> ! {
        self.fraction_done(1.0);
        self.detach();
        let file = FinishFile { status, message: None, is_notice: false };
        let _ = std::fs::write(self.slot_dir.join(FINISH_FILE), file.to_text());
        std::process::exit(status)
    }

    /// Asks the client to restart the app after `delay` seconds, for `reason`, and exits.
    pub fn temporary_exit(self, delay: f64, reason: &str) -> ! {
        self.detach();
        let request = TemporaryExit { delay, reason: reason.to_owned(), is_notice: false };
        let _ = std::fs::write(self.slot_dir.join(TEMPORARY_EXIT_FILE), request.to_text());
        std::process::exit(0)
    }

    /// Damages the app's shared memory on purpose (for the client's bad-app tests):
    /// every byte becomes `fill(offset)`. Returns whether there was shared memory.
    #[doc(hidden)]
    pub fn damage_shared_memory(&self, fill: impl Fn(usize) -> u8) -> bool {
        self.attached.as_ref().map(|a| a.mapping.overwrite(fill)).is_some()
    }
}
