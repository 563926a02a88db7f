//! A whole boinc-rs client over HTTP, for tests against `boinc-rs project-server`: the
//! live process host, transport and file transfer in a temp data directory, attached to
//! one project, on a clock the test can move forward (so that a backoff of minutes
//! ends at once), its events gathered as it runs.

#![allow(dead_code)]

use super::wait::poll_for;
use boinc_core::Time;
use boinc_core::control::{ClientIdentity, FETCH_POLL_INTERVAL, HostView, apply_accounts};
use boinc_core::model::{CcConfig, ClientState, Project};
use boinc_core::protocol::Account;
use boinc_runtime::client::ClientBuilder;
use boinc_runtime::effects::{Clock, StatePersistence, SystemClock};
use boinc_runtime::runtime::messages::StateSnapshot;
use boinc_runtime::{Client, ClientEvent, ClientHandle, Effects};
use boinc_service::data_directory::DataDirectory;
use boinc_service::host_discovery::{DiscoverySettings, LiveHostDiscovery};
use boinc_service::http::{HttpSettings, LiveNetwork};
use boinc_service::process::{LiveProcessHost, ProcessHostConfig};
use boinc_service::state_keeper::StateKeeper;
use boinc_service::state_store::StateStore;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The system clock plus an offset the test moves (forward, or back as a user may).
#[derive(Default)]
pub struct MovableClock {
    offset: Mutex<f64>,
}

impl MovableClock {
    /// Moves the clock forward by `seconds`.
    pub fn advance(&self, seconds: f64) {
        *self.offset.lock().unwrap() += seconds.max(0.0);
    }

    /// Sets the clock back by `seconds`, as a user or a time daemon may.
    pub fn set_back(&self, seconds: f64) {
        *self.offset.lock().unwrap() -= seconds.max(0.0);
    }
}

impl Clock for MovableClock {
    fn now(&self) -> Time {
        SystemClock.now() + *self.offset.lock().unwrap()
    }
}

/// A running client attached to one project.
pub struct LiveClient {
    pub handle: ClientHandle,
    pub data: tempfile::TempDir,
    pub clock: Arc<MovableClock>,
    events: crossbeam_channel::Receiver<ClientEvent>,
    seen: Vec<ClientEvent>,
}

/// A fresh client's state attached to the project at `url`.
pub fn attached_state(url: &str) -> ClientState {
    let mut state = ClientState::default();
    state.host.p_ncpus = 1;
    state.host.m_nbytes = 8e9;
    state.host.d_total = 100e9;
    state.host.d_free = 50e9;
    let account = Account {
        master_url: url.to_owned(),
        authenticator: "test_account_key".into(),
        project_name: None,
        project_preferences: None,
    };
    let changes = apply_accounts(&mut state, &[account]);
    assert_eq!(changes.attached.len(), 1);
    state
}

impl LiveClient {
    /// A client attached to the project at `url`, with cc_config `config`.
    pub fn start(url: &str, config: &CcConfig) -> LiveClient {
        let data = tempfile::tempdir().expect("a data directory");
        LiveClient::start_on(data, attached_state(url), config, |builder| builder, false)
    }

    /// A client on `data` starting from `state` (the state file's, when the directory
    /// holds one and `keep_state` is set: then the state is also written there as
    /// `boinc-rs run` writes it), with cc_config `config`; `tune` adds to the builder.
    pub fn start_on(
        data: tempfile::TempDir,
        state: ClientState,
        config: &CcConfig,
        tune: impl FnOnce(ClientBuilder) -> ClientBuilder,
        keep_state: bool,
    ) -> LiveClient {
        let clock = Arc::new(MovableClock::default());
        let process_host = Arc::new(
            LiveProcessHost::new(ProcessHostConfig::new(data.path()), clock.clone())
                .expect("a process host"),
        );
        let settings = HttpSettings::new(config, &ClientIdentity::default());
        let network = LiveNetwork::new(settings, data.path()).expect("the network");
        let mut state = state;
        let persistence: Option<Arc<dyn StatePersistence>> = if keep_state {
            let store = StateStore::open(data.path()).expect("the data directory is free");
            if let Some(loaded) = store.load().expect("the state file reads") {
                state = loaded.state;
            }
            Some(Arc::new(StateKeeper::new(store, Some(&state), clock.now())))
        } else {
            None
        };
        let effects = Effects {
            clock: clock.clone(),
            process_host,
            transport: network.transport.clone(),
            host_discovery: Arc::new(LiveHostDiscovery::new(
                data.path(),
                clock.clone(),
                DiscoverySettings {
                    prefs: super::host_prefs::prefs_without_cpu_busy_check(),
                    ..DiscoverySettings::default()
                },
            )),
            file_transfer: Some(network.file_transfer.clone()),
            file_system: Some(Arc::new(DataDirectory::new(data.path()))),
            persistence,
            tick_interval: Duration::from_millis(100),
        };
        // Subscribed before the start: on a loaded machine the client can fetch, fail a
        // download and give it up before this thread runs again.
        let builder = tune(Client::builder().state(state).effects(effects));
        let events = builder.subscribe_blocking(100_000);
        let handle = builder.start().expect("the client starts");
        LiveClient { handle, data, clock, events, seen: Vec::new() }
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        self.data.path()
    }

    /// The client's state now.
    pub fn snapshot(&self) -> StateSnapshot {
        self.handle.snapshot_blocking().expect("a snapshot")
    }

    /// The (one) project now.
    pub fn project(&self) -> Project {
        self.snapshot().state.projects[0].clone()
    }

    /// The events so far.
    pub fn events(&mut self) -> &[ClientEvent] {
        while let Ok(event) = self.events.try_recv() {
            self.seen.push(event);
        }
        &self.seen
    }

    /// Waits until `done` holds of a snapshot, at most `timeout`. Whenever the client
    /// is idle (no RPC or transfer under way, no task running) it is waiting for a
    /// backoff or the next fetch check: the clock is moved past it, at most once a
    /// second. Returns the snapshot that satisfied `done`, or `None`.
    pub fn wait_for(
        &mut self,
        timeout: Duration,
        done: impl FnMut(&StateSnapshot) -> bool,
    ) -> Option<StateSnapshot> {
        self.watch(timeout, true, done)
    }

    /// Waits until `done` holds of a snapshot, at most `timeout`, without moving the
    /// clock.
    pub fn poll_until(
        &mut self,
        timeout: Duration,
        done: impl FnMut(&StateSnapshot) -> bool,
    ) -> Option<StateSnapshot> {
        self.watch(timeout, false, done)
    }

    fn watch(
        &mut self,
        timeout: Duration,
        move_clock: bool,
        mut done: impl FnMut(&StateSnapshot) -> bool,
    ) -> Option<StateSnapshot> {
        let mut last_move = Instant::now();
        poll_for(timeout, || {
            self.events();
            let snapshot = self.snapshot();
            if done(&snapshot) {
                return Some(snapshot);
            }
            let idle = snapshot.in_flight.is_empty()
                && snapshot.running.is_empty()
                && snapshot.state.files.iter().all(|f| !f.transfer.in_flight);
            if move_clock && idle && last_move.elapsed() >= Duration::from_secs(1) {
                self.advance_to_next_rpc();
                last_move = Instant::now();
            }
            None
        })
    }

    /// Moves the clock to just past the project's next RPC time, and past the minute
    /// the client leaves between RPCs ([`FETCH_POLL_INTERVAL`]).
    pub fn advance_to_next_rpc(&self) {
        let snapshot = self.snapshot();
        let waits = snapshot.state.projects[0].min_rpc_time - snapshot.time;
        self.clock.advance(waits.max(FETCH_POLL_INTERVAL) + 0.5);
    }

    /// Stops the client.
    pub fn stop(self) -> (Vec<ClientEvent>, tempfile::TempDir) {
        let mut this = self;
        this.events();
        this.handle.shutdown();
        let _ = this.handle.join();
        while let Ok(event) = this.events.try_recv() {
            this.seen.push(event);
        }
        (this.seen, this.data)
    }
}

/// Every log line of this test process (the client's, whichever thread it runs on),
/// gathered once a test asked for them.
pub fn captured_log() -> &'static Mutex<Vec<u8>> {
    static LOG: std::sync::OnceLock<&'static Mutex<Vec<u8>>> = std::sync::OnceLock::new();
    LOG.get_or_init(|| {
        let log: &'static Mutex<Vec<u8>> = Box::leak(Box::new(Mutex::new(Vec::new())));
        let _ = tracing_subscriber::fmt()
            .with_env_filter(std::env::var("TEST_LOG").unwrap_or_else(|_| "info".into()))
            .with_ansi(false)
            .with_writer(move || LogWriter(log))
            .try_init();
        log
    })
}

/// The captured log lines containing every one of `words`.
pub fn log_lines_with(words: &[&str]) -> Vec<String> {
    let log = captured_log().lock().unwrap();
    String::from_utf8_lossy(&log)
        .lines()
        .filter(|line| words.iter().all(|word| line.contains(word)))
        .map(str::to_owned)
        .collect()
}

struct LogWriter(&'static Mutex<Vec<u8>>);

impl std::io::Write for LogWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
