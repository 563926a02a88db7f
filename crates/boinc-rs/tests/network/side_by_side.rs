//! Side by side with BOINC 7.20.5 (issue "Every user action works every time",
//! acceptance): the real client and `boinc-rs run`, with the same preferences, both
//! attached to one `boinc-rs project-server` of long jobs, take the same 20 user actions
//! through boinccmd (task suspend and resume, project suspend, resume, no more work,
//! allow more work and update, run modes); after each, within a bounded wait, both
//! compute the same number of tasks.
//!
//! Compiled as ignored, with the reason, where the real client is not installed (see
//! build.rs): `apt-get install boinc-client`, as .ci/run does.

use crate::support;

use super::project_server_real_client::{PASSWORD, RealClient, attach, boinccmd};
use std::time::{Duration, Instant};
use support::project_server::ProjectServerProcess;
use support::service::{ServiceProcess, start_service};
use support::wait::wait_until_or;

/// Long enough that no job ends while the actions run.
const JOB_SECONDS: &str = "3000";
/// How long both clients may take to download the app and start work.
const WORK_WAIT: Duration = Duration::from_secs(300);
/// How long the two may take to agree after an action.
const AGREE_WAIT: Duration = Duration::from_secs(60);
/// The same preferences for both: nothing suspends them on a busy machine, and a buffer
/// that fills each up to the server's cap, so that a suspended task leaves others to
/// run.
const PREFS: &str = "<global_preferences>\n<run_if_user_active>1</run_if_user_active>\n\
    <suspend_cpu_usage>0</suspend_cpu_usage>\n<cpu_usage_limit>100</cpu_usage_limit>\n\
    <max_ncpus_pct>100</max_ncpus_pct>\n<work_buf_min_days>0.5</work_buf_min_days>\n\
    <work_buf_additional_days>0</work_buf_additional_days>\n</global_preferences>\n";

/// One client as boinccmd sees it.
trait Client {
    fn name(&self) -> &'static str;
    fn cmd(&self, args: &[&str]) -> (bool, String);
}

struct Real(RealClient);

impl Client for Real {
    fn name(&self) -> &'static str {
        "BOINC 7.20.5"
    }
    fn cmd(&self, args: &[&str]) -> (bool, String) {
        self.0.boinccmd(args)
    }
}

struct Ours {
    _dir: tempfile::TempDir,
    _service: ServiceProcess,
    port: u16,
}

impl Client for Ours {
    fn name(&self) -> &'static str {
        "boinc-rs"
    }
    fn cmd(&self, args: &[&str]) -> (bool, String) {
        boinccmd(self.port, args)
    }
}

/// The tasks of `get_tasks`: name, executing, suspended by the user.
fn tasks(client: &dyn Client) -> Vec<(String, bool, bool)> {
    let (_, text) = client.cmd(&["--get_tasks"]);
    let mut tasks = Vec::new();
    for block in text.split("-----------").skip(1) {
        let field = |key: &str| {
            block.lines().find_map(|l| l.trim().strip_prefix(key).map(|v| v.trim().to_owned()))
        };
        let Some(name) = field("name:") else { continue };
        let executing = field("active_task_state:").as_deref() == Some("EXECUTING");
        let suspended = field("suspended via GUI:").as_deref() == Some("yes");
        tasks.push((name, executing, suspended));
    }
    tasks
}

fn computing(client: &dyn Client) -> usize {
    tasks(client).iter().filter(|t| t.1).count()
}

/// One user action, as each client is told it.
#[derive(Debug, Clone, Copy)]
enum Action {
    /// Suspend the first task executing now.
    SuspendTask,
    /// Resume the task suspended longest ago.
    ResumeTask,
    Project(&'static str),
    RunMode(&'static str),
}

const ACTIONS: [Action; 20] = [
    Action::SuspendTask,
    Action::ResumeTask,
    Action::Project("suspend"),
    Action::Project("resume"),
    Action::Project("nomorework"),
    Action::Project("allowmorework"),
    Action::Project("update"),
    Action::RunMode("never"),
    Action::RunMode("always"),
    Action::SuspendTask,
    Action::RunMode("auto"),
    Action::Project("suspend"),
    Action::ResumeTask,
    Action::Project("resume"),
    Action::SuspendTask,
    Action::SuspendTask,
    Action::ResumeTask,
    Action::RunMode("never"),
    Action::ResumeTask,
    Action::RunMode("auto"),
];

/// Applies `action` to `client`; `suspended` is the tasks it has suspended, oldest
/// first.
fn apply(client: &dyn Client, url: &str, action: Action, suspended: &mut Vec<String>) {
    let (ok, output) = match action {
        Action::SuspendTask => {
            let Some((name, ..)) = tasks(client).into_iter().find(|t| t.1 && !t.2) else {
                panic!("{}: no task executing to suspend", client.name());
            };
            suspended.push(name.clone());
            client.cmd(&["--task", url, &name, "suspend"])
        }
        Action::ResumeTask => {
            let name = suspended.remove(0);
            client.cmd(&["--task", url, &name, "resume"])
        }
        Action::Project(op) => client.cmd(&["--project", url, op]),
        Action::RunMode(mode) => client.cmd(&["--set_run_mode", mode]),
    };
    assert!(ok, "{}: {action:?} failed: {output}", client.name());
}

#[test]
#[cfg_attr(
    not(peer_boinc),
    ignore = "the real BOINC client is not installed: apt-get install boinc-client"
)]
fn the_same_actions_leave_boinc_and_boinc_rs_computing_the_same_number_of_tasks() {
    let project =
        ProjectServerProcess::start(&["--job-seconds", JOB_SECONDS, "--request-delay", "1"]);
    let real = RealClient::start();
    std::fs::write(real.dir.path().join("global_prefs_override.xml"), PREFS).expect("prefs");
    let (ok, output) = real.boinccmd(&["--read_global_prefs_override"]);
    assert!(ok, "{output}");
    attach(&real, &project);
    let real = Real(real);

    let dir = tempfile::tempdir().expect("a data directory");
    std::fs::write(dir.path().join("gui_rpc_auth.cfg"), PASSWORD).expect("password");
    std::fs::write(dir.path().join("global_prefs_override.xml"), PREFS).expect("prefs");
    let mut service = start_service(dir.path(), &dir.path().join("service.log"));
    let port = service.gui_rpc_port();
    let ours = Ours { _dir: dir, _service: service, port };
    let (ok, output) = ours.cmd(&["--project_attach", &project.url, "an-account-key"]);
    assert!(ok, "boinc-rs: --project_attach failed: {output}");

    let clients: [&dyn Client; 2] = [&real, &ours];
    // Both compute, with tasks to spare for the suspensions.
    for client in clients {
        wait_until_or(
            &format!("{} to compute, with at least 4 tasks", client.name()),
            WORK_WAIT,
            || computing(client) > 0 && tasks(client).len() >= 4,
            || format!("{:?}\n{}", tasks(client), project.log()),
        );
    }

    let mut suspended: [Vec<String>; 2] = [Vec::new(), Vec::new()];
    let mut history = Vec::new();
    let started = Instant::now();
    for (step, action) in ACTIONS.into_iter().enumerate() {
        for (client, suspended) in clients.iter().zip(suspended.iter_mut()) {
            apply(*client, &project.url, action, suspended);
        }
        // The same count twice in a row, a second apart: both have settled on it.
        let mut last = None;
        let agreed = support::wait::poll_for(AGREE_WAIT, || {
            let counts = (computing(&real), computing(&ours));
            let settled = counts.0 == counts.1 && last == Some(counts);
            last = Some(counts);
            if !settled {
                std::thread::sleep(Duration::from_secs(1));
            }
            settled.then_some(counts)
        });
        history.push(format!("{step}: {action:?} -> {last:?}"));
        assert!(
            agreed.is_some(),
            "after {action:?} the clients compute different numbers of tasks (BOINC, \
             boinc-rs): {last:?}\n{}\nBOINC's tasks: {:?}\nboinc-rs's tasks: {:?}",
            history.join("\n"),
            tasks(&real),
            tasks(&ours)
        );
    }
    println!(
        "20 actions in {:?}, both clients computing the same number of tasks after each:\n{}",
        started.elapsed(),
        history.join("\n")
    );
}
