//! A simulated client served over GUI RPC on loopback (port 0), for the tests that
//! talk to it: the shipped cpu_only scenario paced in wall-clock time, the server on a
//! runtime of the test's own, a temporary data directory with a known password, and
//! bounded waits everywhere. Dropping it stops the client and the server.

#![allow(dead_code)] // Each test binary uses a different subset.

use crate::support::wait::wait_for;
use boinc_core::Policy;
use boinc_emulator::engine::SimConfig;
use boinc_gui_rpc::{GuiRpcConfig, GuiRpcServer, Limits, PASSWORD_FILE, ServerMonitor};
use boinc_runtime::runtime::messages::StateSnapshot;
use boinc_runtime::state_files::load_state_dir;
use boinc_runtime::{Client, ClientHandle};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// The password every served client uses.
pub const PASSWORD: &str = "served-test-password";

/// The longest any single wait in these tests lasts.
pub const WAIT: Duration = Duration::from_secs(30);

/// A served simulated client.
pub struct Served {
    pub client: ClientHandle,
    pub address: SocketAddr,
    pub monitor: ServerMonitor,
    pub dir: tempfile::TempDir,
    runtime: Option<tokio::runtime::Runtime>,
}

/// The repository's shipped scenario directory `name`.
pub fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios").join(name)
}

impl Served {
    /// cpu_only, running its own jobs only (no server contact: every change comes from
    /// the tests), at 10 simulated seconds per second, with default limits.
    pub fn start() -> Served {
        Served::start_with(Limits::default())
    }

    /// The same with other server limits.
    pub fn start_with(limits: Limits) -> Served {
        let state = load_state_dir(&shipped("cpu_only")).expect("cpu_only loads");
        let config = SimConfig {
            scenario: "cpu_only".into(),
            policy: Policy::Seed,
            seed: 1,
            duration: 30.0 * 86_400.0,
            boinc_compat: false,
            existing_jobs_only: true,
            trace: false,
        };
        let client = Client::builder()
            .state(state)
            .config(config)
            .realtime_factor(10.0)
            .start()
            .expect("the client starts");
        let dir = tempfile::tempdir().expect("a temporary data directory");
        std::fs::write(dir.path().join(PASSWORD_FILE), PASSWORD).expect("password file");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let mut config = GuiRpcConfig::new(dir.path()).port(0);
        config.limits = limits;
        let server = runtime
            .block_on(GuiRpcServer::bind(config, client.clone()))
            .expect("the server binds a free port");
        let address = server.local_addr();
        let monitor = server.monitor();
        runtime.spawn(server.serve());
        let served = Served { client, address, monitor, dir, runtime: Some(runtime) };
        served.wait_for("a task running", |s| !s.running.is_empty());
        served
    }

    /// `host:port` for boinccmd's `--host`.
    pub fn host(&self) -> String {
        self.address.to_string()
    }

    /// The client's state now.
    pub fn snapshot(&self) -> StateSnapshot {
        self.client.snapshot_blocking().expect("the client answers")
    }

    /// Waits (at most [`WAIT`]) until the client's state satisfies `done`.
    pub fn wait_for(&self, what: &str, done: impl Fn(&StateSnapshot) -> bool) -> StateSnapshot {
        wait_for(what, WAIT, || Some(self.snapshot()).filter(|snapshot| done(snapshot)))
    }

    /// Runs an async block on the test's runtime.
    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.as_ref().expect("running").block_on(future)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.client.shutdown();
        let _ = self.client.join();
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(5));
        }
    }
}

/// Runs a command to its end within `limit`, its output collected; a command that
/// overruns is killed and the test fails.
pub fn run_bounded(command: &mut Command, limit: Duration) -> Output {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    let pid = child.id();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(child.wait_with_output());
    });
    match receiver.recv_timeout(limit) {
        Ok(output) => output.expect("the command's output"),
        Err(_) => {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            panic!("{command:?} did not finish within {limit:?}");
        }
    }
}

/// boinccmd against the served client with the right password.
pub fn boinccmd(served: &Served, args: &[&str]) -> String {
    boinccmd_with(served, PASSWORD, args, true)
}

/// boinccmd with `password`; `succeed`: whether it must exit 0. Returns stdout and
/// stderr together.
pub fn boinccmd_with(served: &Served, password: &str, args: &[&str], succeed: bool) -> String {
    boinccmd_at(&served.host(), password, args, succeed)
}

/// boinccmd against the GUI RPC server at `host` (any client, served or a service),
/// within a bounded wait; `succeed`: whether it must exit 0. Returns stdout and stderr
/// together.
pub fn boinccmd_at(host: &str, password: &str, args: &[&str], succeed: bool) -> String {
    let output = run_bounded(
        Command::new("boinccmd").args(["--host", host, "--passwd", password]).args(args),
        WAIT,
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if succeed {
        assert!(output.status.success(), "boinccmd {args:?} failed: {text}");
    }
    text
}

/// The values of `key: value` lines in boinccmd's output, in order.
pub fn values<'a>(output: &'a str, key: &str) -> Vec<&'a str> {
    output
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix(key)?.strip_prefix(':'))
        .map(str::trim)
        .collect()
}
