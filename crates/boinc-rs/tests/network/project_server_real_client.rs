//! The real BOINC client accepts `boinc-rs project-server` (issue "Talking to real
//! project servers", acceptance): Debian's `boinc` 7.20.5, offline on loopback
//! (docs/design.md "Real peers": a scratch data directory, its own GUI RPC port, no GPUs, no
//! benchmarks, `<no_info_fetch>` in cc_config.xml, never `<unsigned_apps_ok>`), is
//! attached with `boinccmd --project_attach`; it fetches the master page, gets jobs of
//! the example app, downloads the app and checks its signature against the project's
//! key, runs it through BOINC's API, uploads the output and reports; the server's
//! `/status` must show every result validated and reported exactly once. A second run
//! serves a badly signed app: the real client must refuse to run it.
//!
//! Compiled as ignored, with the reason, where the real client is not installed (see
//! actors/build.rs): `apt-get install boinc-client`, as .ci/run does.

use crate::support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use support::peer_port::start_on_an_unused_port;
use support::project_server::ProjectServerProcess;
use support::service::stop_child;
use support::wait::{holds_within, poll_for, wait_until_or};

/// The GUI RPC password of the scratch client.
pub(super) const PASSWORD: &str = "boinc-rs-test";
/// How long the whole exchange may take (two small jobs, a 100+ MB debug binary to
/// download, a shared and busy machine).
const EXCHANGE_WAIT: Duration = Duration::from_secs(300);

/// The real client in a scratch directory, stopped (quit over GUI RPC, then signals)
/// when dropped.
pub(super) struct RealClient {
    pub(super) dir: tempfile::TempDir,
    port: u16,
    child: Child,
}

impl RealClient {
    pub(super) fn start() -> RealClient {
        RealClient::start_with_env(&[])
    }

    /// [`RealClient::start`] with `env` added to the client's environment (the X
    /// display a user-activity test gives it).
    pub(super) fn start_with_env(env: &[(&str, &str)]) -> RealClient {
        let dir = tempfile::tempdir().expect("temp dir");
        // Offline on loopback; the tasks report at once; nothing suspends them on a
        // busy machine.
        std::fs::write(
            dir.path().join("cc_config.xml"),
            "<cc_config>\n<log_flags>\n<sched_op_debug>1</sched_op_debug>\n\
             <file_xfer_debug>1</file_xfer_debug>\n<task_debug>1</task_debug>\n</log_flags>\n\
             <options>\n<no_info_fetch>1</no_info_fetch>\n\
             <report_results_immediately>1</report_results_immediately>\n</options>\n\
             </cc_config>\n",
        )
        .expect("cc_config.xml");
        std::fs::write(
            dir.path().join("global_prefs_override.xml"),
            "<global_preferences>\n<run_if_user_active>1</run_if_user_active>\n\
             <suspend_cpu_usage>0</suspend_cpu_usage>\n<cpu_usage_limit>100</cpu_usage_limit>\n\
             <max_ncpus_pct>100</max_ncpus_pct>\n<work_buf_min_days>0.01</work_buf_min_days>\n\
             <work_buf_additional_days>0</work_buf_additional_days>\n</global_preferences>\n",
        )
        .expect("global_prefs_override.xml");
        std::fs::write(dir.path().join("gui_rpc_auth.cfg"), PASSWORD).expect("password");
        // `--gui_rpc_port` takes no 0 and the client says nowhere where it listens: a
        // port that was free a moment ago, another when the client could not bind it.
        let log_path = dir.path().join("client.log");
        let log = || std::fs::read_to_string(&log_path).unwrap_or_default();
        let (port, child) = start_on_an_unused_port("the real BOINC client's GUI RPC", |port| {
            let log_file = std::fs::File::create(&log_path).expect("client log");
            let mut child = Command::new("boinc")
                .arg("--dir")
                .arg(dir.path())
                .args(["--gui_rpc_port", &port.to_string(), "--no_gpus", "--skip_cpu_benchmarks"])
                .current_dir(dir.path())
                .envs(env.iter().copied())
                .stdin(Stdio::null())
                .stdout(log_file.try_clone().expect("log"))
                .stderr(log_file)
                .spawn()
                .expect("the real BOINC client starts");
            // It tries to bind its port for half a minute, then says so and exits.
            let serving = poll_for(Duration::from_secs(60), || {
                if boinccmd(port, &["--get_cc_status"]).0 {
                    return Some(true);
                }
                matches!(child.try_wait(), Ok(Some(_))).then_some(false)
            });
            match serving {
                Some(true) => Ok((port, child)),
                Some(false) if log().contains("GUI RPC bind to port") => Err(log()),
                _ => {
                    stop_child(
                        &mut child,
                        nix::sys::signal::Signal::SIGKILL,
                        Duration::from_secs(5),
                    );
                    panic!("the real client never answered GUI RPC: {}", log())
                }
            }
        });
        RealClient { dir, port, child }
    }

    /// Its GUI RPC port.
    pub(super) fn port(&self) -> u16 {
        self.port
    }

    /// Runs boinccmd against the client (bounded); whether it succeeded, and its output.
    pub(super) fn boinccmd(&self, args: &[&str]) -> (bool, String) {
        boinccmd(self.port, args)
    }

    pub(super) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("client.log")).unwrap_or_default()
    }

    /// The project directory the client made for `url`.
    fn project_dir(&self, url: &str) -> PathBuf {
        let name = url.trim_start_matches("http://").trim_end_matches('/').replace([':', '/'], "_");
        self.dir.path().join("projects").join(name)
    }
}

impl Drop for RealClient {
    fn drop(&mut self) {
        let _ = self.boinccmd(&["--quit"]);
        stop_child(&mut self.child, nix::sys::signal::Signal::SIGTERM, Duration::from_secs(20));
    }
}

/// Runs boinccmd against the client on `port` (bounded); whether it succeeded, and its
/// output.
pub(super) fn boinccmd(port: u16, args: &[&str]) -> (bool, String) {
    let mut child = Command::new("boinccmd")
        .args(["--host", &format!("127.0.0.1:{port}"), "--passwd", PASSWORD])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("boinccmd runs");
    // Read as it writes: an output larger than a pipe's buffer (a long event log) would
    // otherwise keep boinccmd from ever finishing.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut text);
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    if !holds_within(Duration::from_secs(30), || matches!(child.try_wait(), Ok(Some(_)))) {
        stop_child(&mut child, nix::sys::signal::Signal::SIGKILL, Duration::from_secs(5));
        return (false, "boinccmd did not finish".into());
    }
    let status = child.wait().expect("boinccmd's status");
    let text =
        format!("{}{}", stdout.join().unwrap_or_default(), stderr.join().unwrap_or_default());
    (status.success(), text)
}

/// The lines of the client's log that tell the story of the exchange.
fn story(log: &str) -> String {
    const KEYS: [&str; 14] = [
        "Master file download succeeded",
        "Scheduler request completed",
        "Finished download",
        "Started download",
        "Starting task",
        "Computation for task",
        "Started upload",
        "Finished upload",
        "Reporting",
        "got ack",
        "ignature",
        "rror",
        "Giving up",
        "md5",
    ];
    log.lines().filter(|l| KEYS.iter().any(|k| l.contains(k))).collect::<Vec<_>>().join("\n")
}

pub(super) fn attach(client: &RealClient, project: &ProjectServerProcess) {
    let (ok, output) =
        client.boinccmd(&["--project_attach", &project.url, "an-account-key-of-our-choice"]);
    assert!(ok, "boinccmd --project_attach failed: {output}");
}

fn md5_of(path: &Path) -> String {
    boinc_core::protocol::code_signing::md5_hex(&std::fs::read(path).expect("file"))
}

#[test]
#[cfg_attr(
    not(peer_boinc),
    ignore = "the real BOINC client is not installed: apt-get install boinc-client"
)]
fn the_real_client_downloads_verifies_runs_uploads_and_reports() {
    let project =
        ProjectServerProcess::start(&["--jobs", "2", "--job-seconds", "2", "--request-delay", "1"]);
    let client = RealClient::start();
    attach(&client, &project);
    let status = project.wait_for_or(
        "the real client to finish two jobs",
        EXCHANGE_WAIT,
        |s| s["results_validated"].as_u64() == Some(2),
        || format!("client log:\n{}\nserver log:\n{}", client.log(), project.log()),
    );
    // The server counts a report when it answers the request; the client logs the
    // acknowledgement only once it has read that answer, a moment later.
    wait_for_clients(&[&client], "log the acknowledgement of both reports", |c| {
        c.log().matches("got ack for task example_app_").count() >= 2
    });
    let log = client.log();
    println!("What the real client logged:\n{}", story(&log));
    assert_eq!(status["jobs_sent"], 2, "{status:#}");
    assert_eq!(status["results_received"], 2, "{status:#}");
    assert_eq!(status["results_validated"], 2, "{status:#}");
    assert_eq!(status["results_failed"], 0, "{status:#}");
    assert_eq!(status["uploads_completed"], 2, "{status:#}");
    for result in status["results"].as_array().expect("results") {
        assert_eq!(result["times_reported"], 1, "{result}");
        assert_eq!(result["outcome"], "valid", "{result}");
    }
    // The client holds the app the project signed, byte for byte.
    let app = &status["apps"][0];
    let held = client.project_dir(&project.url).join(app["file"].as_str().expect("file"));
    assert_eq!(md5_of(&held), app["md5"].as_str().expect("md5"));
    for expected in [
        "Master file download succeeded",
        "Finished download of example_app_100_",
        "Starting task example_app_",
        "Computation for task example_app_",
        "Finished upload of example_app_",
        "got ack for task example_app_",
    ] {
        assert!(log.contains(expected), "the client never logged {expected:?}:\n{log}");
    }
    assert!(!log.contains("ignature verification failed"), "{log}");
    // The outputs are the inputs upper-cased, as the example app writes them.
    for result in status["results"].as_array().expect("results") {
        let name = result["name"].as_str().expect("name");
        let output = std::fs::read(project.dir.join("upload").join(format!("{name}_out")))
            .expect("the output arrived");
        let workunit = name.strip_suffix("_0").expect("a first replica's name ends in _0");
        let input = std::fs::read(project.dir.join("download").join(format!("{workunit}_in")))
            .expect("the input");
        assert!(!input.is_empty());
        assert!(
            output.starts_with(&input.to_ascii_uppercase()),
            "{name}: the output is not the input upper-cased: {}",
            String::from_utf8_lossy(&output)
        );
    }
}

#[test]
#[cfg_attr(
    not(peer_boinc),
    ignore = "the real BOINC client is not installed: apt-get install boinc-client"
)]
fn the_real_client_refuses_an_app_whose_signature_does_not_verify() {
    let project =
        ProjectServerProcess::start(&["--jobs", "1", "--job-seconds", "2", "--request-delay", "1"]);
    let (code, body) = project
        .admin("faults", json!({"target": "scheduler", "fault": "bad_signature", "count": 0}));
    assert_eq!(code, 200, "{body}");
    let client = RealClient::start();
    attach(&client, &project);
    // 7.20.5 logs the failed check as `check_file_signature: decrypt_public error`, ends
    // the task in an unrecoverable error and reports it as a download failure.
    let status = project.wait_for("the refused job's report", EXCHANGE_WAIT, |s| {
        s["results_failed"].as_u64() == Some(1)
    });
    let log = client.log();
    println!("What the real client logged:\n{}", story(&log));
    assert!(log.contains("check_file_signature"), "the client never checked the signature:\n{log}");
    assert!(log.contains("Unrecoverable error for task example_app_0_0"), "{log}");
    assert!(!log.contains("Starting task"), "a badly signed app was run:\n{log}");
    assert_eq!(status["results_validated"], 0, "{status:#}");
    assert_eq!(status["uploads_completed"], 0, "{status:#}");
    assert_eq!(status["results"][0]["outcome"], "client_error", "{status:#}");
    // Nothing of the app reached a slot.
    let slots = client.dir.path().join("slots");
    let in_slots = walk(&slots);
    assert!(
        in_slots.iter().all(|p| !p.to_string_lossy().contains("example_app_100")),
        "the badly signed app is in a slot: {in_slots:?}"
    );
}

/// Every file under `dir` (none when it is missing).
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found
}

/// Whether the client lists `url` among its projects.
fn lists_project(client: &RealClient, url: &str) -> bool {
    let (ok, output) = client.boinccmd(&["--get_project_status"]);
    ok && output.lines().any(|l| l.trim() == format!("master URL: {url}"))
}

/// Waits (bounded) until `done` holds for every client; the clients' logs otherwise.
fn wait_for_clients(clients: &[&RealClient], what: &str, done: impl Fn(&RealClient) -> bool) {
    wait_until_or(
        &format!("the real clients to {what}"),
        EXCHANGE_WAIT,
        || clients.iter().all(|c| done(c)),
        || clients.iter().map(|c| c.log()).collect::<Vec<_>>().join("\n----\n"),
    );
}

#[test]
#[cfg_attr(
    not(peer_boinc),
    ignore = "the real BOINC client is not installed: apt-get install boinc-client"
)]
fn two_real_clients_follow_the_account_manager() {
    let project = ProjectServerProcess::start(&["--jobs", "0", "--request-delay", "1"]);
    let manager_url = project.status()["account_manager_url"].as_str().expect("url").to_owned();
    let (name, password) = ("farmer", "a password");
    let list = |projects: Value| {
        json!({"name": "boinc-rs test farm", "repeat_seconds": 3600,
               "users": [{"name": name, "password": password}], "projects": projects})
    };
    let (code, body) = project.put(
        "admin/account_manager",
        list(json!([{"url": project.url, "authenticator": "farm-account-key"}])),
    );
    assert_eq!(code, 200, "{body}");
    let clients = [RealClient::start(), RealClient::start()];
    for client in &clients {
        let (ok, output) = client.boinccmd(&["--acct_mgr", "attach", &manager_url, name, password]);
        assert!(ok, "boinccmd --acct_mgr attach failed: {output}");
    }
    let both: Vec<&RealClient> = clients.iter().collect();
    wait_for_clients(&both, "attach the manager's project", |c| lists_project(c, &project.url));
    for client in &clients {
        let (_, info) = client.boinccmd(&["--acct_mgr", "info"]);
        assert!(info.contains(&manager_url), "{info}");
    }
    assert_eq!(project.counter("account_manager_hosts"), 2);

    // The project leaves the list; each client syncs and detaches.
    let (code, body) = project.put("admin/account_manager", list(json!([])));
    assert_eq!(code, 200, "{body}");
    for client in &clients {
        let (ok, output) = client.boinccmd(&["--acct_mgr", "sync"]);
        assert!(ok, "boinccmd --acct_mgr sync failed: {output}");
    }
    wait_for_clients(&both, "detach the project the manager dropped", |c| {
        !lists_project(c, &project.url)
    });
}
