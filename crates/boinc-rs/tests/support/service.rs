//! `boinc-rs run` as a child process for the service tests: started on a data directory
//! with its GUI RPC on a loopback port of the caller's choice, its log appended to a
//! file, killed if a failing test leaves it behind (its apps exit when they see their
//! client gone), and signals and bounded waits for its end.

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A running `boinc-rs run`, killed when dropped while it still runs.
pub struct ServiceProcess(pub Child);

impl std::ops::Deref for ServiceProcess {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for ServiceProcess {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for ServiceProcess {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// `boinc-rs run` on `dir` with GUI RPC on 127.0.0.1:`port`, its log appended to `log`.
pub fn start_service(dir: &Path, port: u16, log: &Path) -> ServiceProcess {
    start_service_with_env(dir, port, log, &[])
}

/// [`start_service`] with `env` added to the service's environment (a soak's
/// `LD_PRELOAD` of libfaketime, for one).
pub fn start_service_with_env(
    dir: &Path,
    port: u16,
    log: &Path,
    env: &[(String, String)],
) -> ServiceProcess {
    let log = std::fs::OpenOptions::new().create(true).append(true).open(log).expect("the log");
    Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
        .args(["run", "--dir"])
        .arg(dir)
        .args(["--gui-rpc-port", &port.to_string()])
        .env("RUST_LOG", "info")
        .envs(env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("the log"))
        .stderr(log)
        .spawn()
        .map(ServiceProcess)
        .expect("boinc-rs run starts")
}

/// Sends `signal` to `child`.
pub fn signal(child: &Child, signal: nix::sys::signal::Signal) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("a pid"));
    nix::sys::signal::kill(pid, signal).expect("the signal is sent");
}

/// Waits for the child to exit, at most `timeout`.
pub fn wait_exit(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let started = Instant::now();
    while started.elapsed() < timeout {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}
