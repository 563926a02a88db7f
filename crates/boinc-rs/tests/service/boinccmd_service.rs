//! Debian's boinccmd controls the host service (issue "GUI RPC server", acceptance
//! point 1): the service `boinc-rs run` runs (the same `Service` the command starts, in
//! this process so the test can read the client's state), attached to the real
//! `boinc-rs project-server` on 127.0.0.1 and running example-app jobs; boinccmd reads
//! it, stops and resumes its tasks (their CPU time measured), suspends, resumes and
//! updates the project, suspends, resumes and aborts a task, is refused with a wrong
//! password and quits it. Outputs are parsed and checked against the client's state.

use crate::served;
use crate::support;

use boinc_core::model::{JobState, RunMode};
use boinc_gui_rpc::PASSWORD_FILE;
use boinc_runtime::runtime::messages::StateSnapshot;
use boinc_service::account_files::write_account_file;
use served::values;
use std::time::Duration;
use support::in_process::InProcessService;
use support::project_server::ProjectServerProcess;
use support::wait::wait_for;

const PASSWORD: &str = "service-test-password";
/// The longest any wait here lasts (the first start downloads a debug build of the app).
const WAIT: Duration = Duration::from_secs(240);

struct LiveService {
    service: InProcessService,
    _dir: tempfile::TempDir,
    _server: ProjectServerProcess,
}

impl LiveService {
    fn start() -> LiveService {
        let server = ProjectServerProcess::start(&["--job-seconds", "300", "--request-delay", "1"]);
        let dir = tempfile::tempdir().expect("a data directory");
        std::fs::write(dir.path().join(PASSWORD_FILE), PASSWORD).expect("the password");
        write_account_file(dir.path(), &server.url, "boinccmd_test_key").expect("attached");
        let service = InProcessService::start(dir.path());
        let live = LiveService { service, _dir: dir, _server: server };
        live.wait_for("a task running", |s| !s.running.is_empty());
        live
    }

    fn snapshot(&self) -> StateSnapshot {
        self.service.snapshot()
    }

    fn wait_for(&self, what: &str, done: impl Fn(&StateSnapshot) -> bool) -> StateSnapshot {
        wait_for(what, WAIT, || Some(self.snapshot()).filter(|snapshot| done(snapshot)))
    }

    fn boinccmd_with(&self, password: &str, args: &[&str], succeed: bool) -> String {
        served::boinccmd_at(&self.service.gui_rpc, password, args, succeed)
    }

    fn boinccmd(&self, args: &[&str]) -> String {
        self.boinccmd_with(PASSWORD, args, true)
    }

    /// The CPU time of `job`'s task now.
    fn cpu_time(&self, job: &str) -> f64 {
        let snapshot = self.snapshot();
        snapshot
            .state
            .jobs
            .iter()
            .find(|j| j.name == job)
            .and_then(|j| j.task.as_ref())
            .map_or(0.0, |t| t.current_cpu_time)
    }
}

#[test]
#[cfg_attr(not(peer_boinccmd), ignore = "boinccmd is not installed: apt-get install boinc-client")]
fn boinccmd_controls_boinc_rs_run() {
    let live = LiveService::start();
    let snapshot = live.snapshot();
    let state = &snapshot.state;
    let running = state.job(snapshot.running[0]).name.clone();
    let url = state.projects[0].master_url.clone();

    // Reading: tasks, projects, status, host, messages.
    let tasks = live.boinccmd(&["--get_tasks"]);
    let names = values(&tasks, "name");
    assert!(names.contains(&running.as_str()), "{running} missing:\n{tasks}");
    assert!(values(&tasks, "active_task_state").contains(&"EXECUTING"), "{tasks}");
    let projects = live.boinccmd(&["--get_project_status"]);
    assert_eq!(values(&projects, "master URL"), [url.as_str()], "{projects}");
    let status = live.boinccmd(&["--get_cc_status"]);
    assert_eq!(values(&status, "current mode"), ["according to prefs"; 3], "{status}");
    let host = live.boinccmd(&["--get_host_info"]);
    assert_eq!(values(&host, "#CPUS"), [state.host.p_ncpus.to_string().as_str()], "{host}");
    assert!(state.host.p_ncpus >= 1 && state.host.m_nbytes > 0.0);
    let full = live.boinccmd(&["--get_state"]);
    assert!(full.contains(&format!("name: {running}")), "{full}");
    let messages = live.boinccmd(&["--get_messages", "0"]);
    assert!(messages.lines().next().is_some_and(|l| l.starts_with("1: ")), "{messages}");

    // Run mode never: the tasks stop, and their CPU time with them; auto: they go on.
    live.boinccmd(&["--set_run_mode", "never"]);
    live.wait_for("the tasks to stop", |s| s.running.is_empty());
    // Time passes on purpose: the last CPU time the stopped app reported settles (2 s),
    // and then (3 s) must not grow; there is no event to wait for instead.
    std::thread::sleep(Duration::from_secs(2));
    let stopped_at = live.cpu_time(&running);
    std::thread::sleep(Duration::from_secs(3));
    let still = live.cpu_time(&running);
    assert!(still - stopped_at < 0.2, "CPU time went on while suspended: {stopped_at} → {still}");
    let tasks = live.boinccmd(&["--get_tasks"]);
    assert!(!values(&tasks, "active_task_state").contains(&"EXECUTING"), "{tasks}");
    live.boinccmd(&["--set_run_mode", "auto"]);
    live.wait_for("the tasks to run again", |s| !s.running.is_empty());
    let resumed_at = live.cpu_time(&running);
    live.wait_for("CPU time to advance", |s| {
        s.state.jobs.iter().any(|j| {
            j.name == running
                && j.task.as_ref().is_some_and(|t| t.current_cpu_time > resumed_at + 1.0)
        })
    });

    // The project: suspend, resume, update.
    live.boinccmd(&["--project", &url, "suspend"]);
    let after = live.wait_for("the project's tasks to stop", |s| s.running.is_empty());
    assert!(after.state.projects[0].suspended);
    let listed = live.boinccmd(&["--get_project_status"]);
    assert!(values(&listed, "suspended via GUI").contains(&"yes"), "{listed}");
    live.boinccmd(&["--project", &url, "resume"]);
    live.wait_for("the project's tasks to run again", |s| !s.running.is_empty());
    let rpcs = live.snapshot().rpcs;
    live.boinccmd(&["--project", &url, "update"]);
    live.wait_for("the update's scheduler RPC", |s| s.rpcs > rpcs);

    // A task: suspend, resume, abort.
    live.boinccmd(&["--task", &url, &running, "suspend"]);
    live.wait_for("the task to stop", |s| {
        s.running.iter().all(|&j| s.state.job(j).name != running)
    });
    // Resumed, it may run again or wait its turn behind the task that took its CPU.
    live.boinccmd(&["--task", &url, &running, "resume"]);
    live.wait_for("the task to be resumed", |s| {
        s.state.jobs.iter().any(|j| j.name == running && !j.suspended)
    });
    live.boinccmd(&["--task", &url, &running, "abort"]);
    let aborted = live.wait_for("the task to be aborted", |s| {
        s.state.jobs.iter().all(|j| j.name != running || j.state == JobState::Aborted)
    });
    assert!(!aborted.running.iter().any(|&j| aborted.state.job(j).name == running));

    // A wrong password changes nothing; quit stops the service.
    let refused = live.boinccmd_with("not-the-password", &["--set_run_mode", "never"], false);
    assert!(refused.contains("Authorization failure"), "{refused}");
    assert_eq!(live.snapshot().state.run_mode, RunMode::Auto);
    live.boinccmd(&["--quit"]);
    let mut live = live;
    let service = live.service.take().expect("running");
    let report = live
        .service
        .runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(30), service.finished()).await })
        .expect("the service quits within 30 s")
        .expect("cleanly");
    assert!(report.decisions > 0);
}
