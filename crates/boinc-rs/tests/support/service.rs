//! `boinc-rs run` as a child process for the service tests: started on a data directory
//! with its GUI RPC (and its web dashboard) on port 0 of 127.0.0.1 (the system picks the
//! port; the service writes it to DIR/gui_rpc_port once it listens, which is where the
//! test learns it),
//! its log appended to a file, killed if a failing test leaves it behind (its apps exit
//! when they see their client gone); signals, and bounded waits for its start and end.

#![allow(dead_code)] // Each test binary uses a different part.

use super::wait::{poll_for, wait_for_or};
use boinc_service::service::GUI_RPC_PORT_FILE;
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

/// How long a service may take to serve GUI RPC (a first start benchmarks the CPUs).
pub const SERVE_WAIT: Duration = Duration::from_secs(120);

/// A running `boinc-rs run`, killed when dropped while it still runs.
pub struct ServiceProcess {
    pub child: Child,
    dir: PathBuf,
    log: PathBuf,
}

impl std::ops::Deref for ServiceProcess {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.child
    }
}

impl std::ops::DerefMut for ServiceProcess {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.child
    }
}

impl ServiceProcess {
    /// Waits (bounded) until the service serves GUI RPC; its port. Panics, with the
    /// service's log, when it exits first or does not serve in time.
    pub fn gui_rpc_port(&mut self) -> u16 {
        let file = self.dir.join(GUI_RPC_PORT_FILE);
        let log = self.log.clone();
        let read_log = || std::fs::read_to_string(&log).unwrap_or_default();
        let child = &mut self.child;
        wait_for_or(
            "boinc-rs run to serve GUI RPC",
            SERVE_WAIT,
            || {
                if let Ok(Some(status)) = child.try_wait() {
                    panic!("boinc-rs run exited ({status}):\n{}", read_log());
                }
                std::fs::read_to_string(&file).ok()?.trim().parse().ok()
            },
            read_log,
        )
    }
}

impl Drop for ServiceProcess {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `boinc-rs run` on `dir` with GUI RPC on a port the system picks (see
/// [`ServiceProcess::gui_rpc_port`]), its log appended to `log`.
pub fn start_service(dir: &Path, log: &Path) -> ServiceProcess {
    start_service_with(dir, log, &[], &[])
}

/// [`start_service`] with `env` added to the service's environment (a soak's
/// `LD_PRELOAD` of libfaketime, for one).
pub fn start_service_with_env(dir: &Path, log: &Path, env: &[(String, String)]) -> ServiceProcess {
    start_service_with(dir, log, &[], env)
}

/// [`start_service`] with `args` after `run`'s own and `env` added to its environment.
pub fn start_service_with(
    dir: &Path,
    log: &Path,
    args: &[&str],
    env: &[(String, String)],
) -> ServiceProcess {
    super::host_prefs::ignore_other_programs_cpu(dir);
    // The service removes a port file a killed service left behind, but only once it
    // runs: a test that looked before then would read the old port.
    match std::fs::remove_file(dir.join(GUI_RPC_PORT_FILE)) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => panic!("the old GUI RPC port file cannot be removed: {error}"),
    }
    let log_file =
        std::fs::OpenOptions::new().create(true).append(true).open(log).expect("the log");
    // The dashboard on a port the system picks too, unless the test says otherwise:
    // services of tests running at once would all want the default port.
    let chooses_web = args.iter().any(|a| *a == "--web-port" || *a == "--no-web");
    let web: &[&str] = if chooses_web { &[] } else { &["--web-port", "0"] };
    let child = Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
        .args(["run", "--dir"])
        .arg(dir)
        .args(["--gui-rpc-port", "0"])
        .args(web)
        .args(args)
        .env("RUST_LOG", "info")
        .envs(env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().expect("the log"))
        .stderr(log_file)
        .spawn()
        .expect("boinc-rs run starts");
    ServiceProcess { child, dir: dir.to_owned(), log: log.to_owned() }
}

/// Sends `signal` to `child`.
pub fn signal(child: &Child, signal: Signal) {
    let pid = Pid::from_raw(i32::try_from(child.id()).expect("a pid"));
    nix::sys::signal::kill(pid, signal).expect("the signal is sent");
}

/// Waits for the child to exit, at most `timeout`.
pub fn wait_exit(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    poll_for(timeout, || child.try_wait().ok().flatten())
}

/// Sends `signal` to `child` and waits for it, up to `limit`; then SIGKILL.
pub fn stop_child(child: &mut Child, signal: Signal, limit: Duration) {
    if matches!(child.try_wait(), Ok(Some(_))) {
        return;
    }
    let _ = nix::sys::signal::kill(Pid::from_raw(child.id() as i32), signal);
    if wait_exit(child, limit).is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
}
