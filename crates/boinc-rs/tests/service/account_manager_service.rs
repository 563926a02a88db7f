//! Account managers with the host service (issue "GUI RPC server", account managers):
//! two `boinc-rs run` services, joined to one account manager (`boinc-rs project-server`
//! in that role) over GUI RPC, one with `boinc-rs acct-mgr attach`, the other with
//! Debian's `boinccmd --acct_mgr attach` (where installed), get their project list
//! from it, keep it across a restart, and follow a change: a project dropped from the
//! list is detached, its account file and project directory removed.

use crate::served;
use crate::support;

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;
use support::project_server::ProjectServerProcess;
use support::service::{ServiceProcess, signal, start_service, wait_exit};
use support::wait::wait_until_or;

/// The longest a service may take to follow its manager.
const FOLLOW_WAIT: Duration = Duration::from_secs(120);

/// A running `boinc-rs run` on its own data directory and GUI RPC port (the one the
/// system gave it), stopped (and killed if need be) when dropped.
struct Service {
    dir: tempfile::TempDir,
    port: u16,
    process: ServiceProcess,
}

impl Service {
    fn start() -> Service {
        let dir = tempfile::tempdir().expect("a data directory");
        let mut process = start_service(dir.path(), &dir.path().join("service.log"));
        let port = process.gui_rpc_port();
        Service { dir, port, process }
    }

    fn restart(&mut self) {
        self.stop();
        self.process = start_service(self.dir.path(), &self.dir.path().join("service.log"));
        self.port = self.process.gui_rpc_port();
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("service.log")).unwrap_or_default()
    }

    /// `boinc-rs COMMAND --port P --dir D ARGS…`: the CLI over this service's GUI RPC.
    fn cli(&self, command: &str, args: &[&str]) -> (bool, String) {
        let mut cli = Command::new(env!("CARGO_BIN_EXE_boinc-rs"));
        cli.arg(command).args(["--port", &self.port.to_string(), "--dir"]);
        cli.arg(self.dir.path()).args(args);
        run_bounded(&mut cli)
    }

    /// Debian's `boinccmd ARGS…` against this service.
    #[cfg(peer_boinccmd)]
    fn boinccmd(&self, args: &[&str]) -> (bool, String) {
        let password = std::fs::read_to_string(self.dir.path().join("gui_rpc_auth.cfg"))
            .expect("the GUI RPC password");
        let mut boinccmd = Command::new("boinccmd");
        boinccmd.args(["--host", &format!("127.0.0.1:{}", self.port), "--passwd", password.trim()]);
        boinccmd.args(args);
        run_bounded(&mut boinccmd)
    }

    /// Whether `boinc-rs status` lists the project at `url`.
    fn lists(&self, url: &str) -> bool {
        let (ok, output) = self.cli("status", &[]);
        ok && output.lines().any(|line| line.split_whitespace().any(|word| word == url))
    }

    fn account_file(&self, url: &str) -> PathBuf {
        let host = url.trim_start_matches("http://").trim_end_matches('/').replace(':', "_");
        self.dir.path().join(format!("account_{host}.xml"))
    }

    fn stop(&mut self) {
        if matches!(self.process.try_wait(), Ok(None)) {
            signal(&self.process, nix::sys::signal::Signal::SIGTERM);
            // Not stopped in time: the process is killed when dropped.
            let _ = wait_exit(&mut self.process, Duration::from_secs(30));
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs `command` to its end (killed after 3 minutes): whether it succeeded, and what
/// it printed.
fn run_bounded(command: &mut Command) -> (bool, String) {
    let output = served::run_bounded(command, Duration::from_secs(180));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// Waits (at most [`FOLLOW_WAIT`]) until `done` holds of every service; their logs
/// otherwise.
fn wait_until(what: &str, services: &[&Service], done: impl Fn(&Service) -> bool) {
    wait_until_or(
        &format!("the services to {what}"),
        FOLLOW_WAIT,
        || services.iter().all(|s| done(s)),
        || services.iter().map(|s| s.log()).collect::<Vec<_>>().join("\n----\n"),
    );
}

#[test]
fn two_services_follow_their_account_manager() {
    let project = ProjectServerProcess::start(&["--jobs", "0", "--request-delay", "1"]);
    let status = project.status();
    let manager_url = status["account_manager_url"].as_str().expect("the manager's URL").to_owned();
    let (name, password) = ("farmer", "a password");
    let list = |projects: Value| {
        json!({"name": "boinc-rs test farm", "repeat_seconds": 3600,
               "users": [{"name": name, "password": password}], "projects": projects})
    };
    project.set_account_manager(list(json!([
        {"url": project.url, "authenticator": "farm-account-key", "resource_share": 250}
    ])));
    let mut services = [Service::start(), Service::start()];

    // A wrong password is refused, with the manager's reason, and attaches nothing.
    let (ok, output) =
        services[0].cli("acct-mgr", &["attach", &manager_url, name, "not the password"]);
    assert!(!ok, "a wrong password was accepted: {output}");
    assert!(output.contains("account manager"), "{output}");
    assert!(!services[0].lists(&project.url));

    // One joins with our CLI, the other with Debian's boinccmd where it is installed.
    let (ok, output) = services[0].cli("acct-mgr", &["attach", &manager_url, name, password]);
    assert!(ok, "boinc-rs acct-mgr attach failed: {output}\n{}", services[0].log());
    #[cfg(peer_boinccmd)]
    let (ok, output) =
        services[1].boinccmd(&["--acct_mgr", "attach", &manager_url, name, password]);
    #[cfg(not(peer_boinccmd))]
    let (ok, output) = {
        eprintln!(
            "SKIPPED PART: boinccmd is not installed (apt-get install boinc-client); the \
             second service joins with boinc-rs acct-mgr instead"
        );
        services[1].cli("acct-mgr", &["attach", &manager_url, name, password])
    };
    assert!(ok, "joining the manager failed: {output}\n{}", services[1].log());
    let both: Vec<&Service> = services.iter().collect();
    wait_until("attach the manager's project", &both, |s| s.lists(&project.url));
    for service in &services {
        let (_, info) = service.cli("acct-mgr", &["info"]);
        assert!(info.contains(&manager_url) && info.contains("boinc-rs test farm"), "{info}");
        let (_, status) = service.cli("status", &[]);
        assert!(status.contains("share 250"), "the manager's share was not taken:\n{status}");
        let account = std::fs::read_to_string(service.account_file(&project.url))
            .expect("the manager's project has an account file");
        assert!(account.contains("farm-account-key"), "{account}");
        // The password is kept only as its hash, for the user's eyes only.
        let login = service.dir.path().join("acct_mgr_login.xml");
        let text = std::fs::read_to_string(&login).expect("the login file");
        assert!(!text.contains(password), "{text}");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&login).expect("metadata").permissions().mode();
        assert_eq!(mode & 0o077, 0, "the login file is readable by others: {mode:o}");
    }
    assert_eq!(project.counter("account_manager_hosts"), 2, "{:#}", project.status());
    // The scheduler heard from both hosts under the manager's account.
    wait_until("contact the project", &both, |_| project.counter("hosts") >= 2);

    // A restarted service goes on with the same manager.
    services[1].restart();
    let (_, info) = services[1].cli("acct-mgr", &["info"]);
    assert!(info.contains(&manager_url), "the manager was forgotten on restart: {info}");
    assert!(services[1].lists(&project.url));

    // The project leaves the list; each service syncs and detaches it.
    project.set_account_manager(list(json!([])));
    for service in &services {
        let (ok, output) = service.cli("acct-mgr", &["sync"]);
        assert!(ok, "boinc-rs acct-mgr sync failed: {output}\n{}", service.log());
    }
    let both: Vec<&Service> = services.iter().collect();
    wait_until("detach the project the manager dropped", &both, |s| !s.lists(&project.url));
    for service in &services {
        assert!(
            !service.account_file(&project.url).exists(),
            "the detached project's account file is still there:\n{}",
            service.log()
        );
    }

    // A project the user attached and then detached stays detached: its account file
    // goes with it, so the service does not take it in again.
    let attached = Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
        .args(["attach", "--dir"])
        .arg(services[0].dir.path())
        .args([project.url.as_str(), "own-account-key"])
        .output()
        .expect("boinc-rs attach runs");
    assert!(attached.status.success(), "{attached:?}");
    wait_until("take in the account file", &[&services[0]], |s| s.lists(&project.url));
    let (ok, output) = services[0].cli("project", &[&project.url, "detach"]);
    assert!(ok, "{output}");
    assert!(!services[0].account_file(&project.url).exists(), "{}", services[0].log());
    // Time passes on purpose, longer than the account files' scan (5 s): nothing must
    // bring the project back, and there is no event to wait for instead.
    std::thread::sleep(Duration::from_secs(7));
    assert!(!services[0].lists(&project.url), "the detached project came back");

    // Leaving the manager forgets it.
    let (ok, output) = services[0].cli("acct-mgr", &["detach"]);
    assert!(ok, "{output}");
    let (_, info) = services[0].cli("acct-mgr", &["info"]);
    assert!(info.contains("no account manager"), "{info}");
}
