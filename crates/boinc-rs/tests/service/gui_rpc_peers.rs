//! The real BOINC tools against boinc-rs's GUI RPC server (issue "GUI RPC server"):
//! Debian's boinccmd reads the state, tasks, projects, status, host and messages,
//! changes modes, projects and tasks, fails on a wrong password and quits the client;
//! boinctui, driven headless under tmux, shows the tasks. Outputs are parsed and
//! checked against the client's own state.
//!
//! A test whose tool is not installed is compiled as ignored, with the reason (see
//! actors/build.rs): `apt-get install boinc-client boinctui tmux`, as .ci/run does.

use crate::served;
use crate::support;

use boinc_core::model::{JobState, RunMode};
use served::{PASSWORD, Served, WAIT, boinccmd, boinccmd_with, run_bounded, values};
use std::process::Command;
use support::wait::wait_until_or;

#[test]
#[cfg_attr(not(peer_boinccmd), ignore = "boinccmd is not installed: apt-get install boinc-client")]
fn boinccmd_reads_the_client() {
    let served = Served::start();
    let snapshot = served.snapshot();
    let state = &snapshot.state;

    // --get_tasks: every task, the running ones executing, the others not.
    let tasks = boinccmd(&served, &["--get_tasks"]);
    let names = values(&tasks, "name");
    let expected: Vec<&str> = state.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, expected, "{tasks}");
    let urls = values(&tasks, "project URL");
    for (job, url) in state.jobs.iter().zip(&urls) {
        assert_eq!(*url, state.project(job.project).master_url);
    }
    let executing =
        values(&tasks, "active_task_state").iter().filter(|s| **s == "EXECUTING").count();
    assert!(executing >= 1 && executing <= state.ncpus() as usize, "{tasks}");

    // --get_project_status: names, URLs and shares.
    let projects = boinccmd(&served, &["--get_project_status"]);
    let names = values(&projects, "name");
    let expected: Vec<&str> = state.projects.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, expected, "{projects}");
    let shares: Vec<f64> =
        values(&projects, "resource share").iter().map(|s| s.parse().expect("a share")).collect();
    let expected: Vec<f64> = state.projects.iter().map(|p| p.resource_share).collect();
    assert_eq!(shares, expected);

    // --get_state: the projects, the applications, the workunits and the tasks.
    let full = boinccmd(&served, &["--get_state"]);
    for heading in [
        "======== Projects ========",
        "======== Applications ========",
        "======== Workunits ========",
        "======== Tasks ========",
    ] {
        assert!(full.contains(heading), "{heading} missing:\n{full}");
    }
    for job in &state.jobs {
        assert!(full.contains(&format!("name: {}", job.name)), "{} missing", job.name);
    }

    // --get_cc_status: the modes.
    let status = boinccmd(&served, &["--get_cc_status"]);
    assert_eq!(values(&status, "current mode"), ["according to prefs"; 3], "{status}");

    // --get_host_info: the host.
    let host = boinccmd(&served, &["--get_host_info"]);
    assert_eq!(values(&host, "#CPUS"), [state.host.p_ncpus.to_string().as_str()], "{host}");
    let memory: f64 = values(&host, "mem size")[0].parse().expect("a size");
    assert_eq!(memory, state.host.m_nbytes);

    // --get_messages: the server's own line, numbered from 1.
    let messages = boinccmd(&served, &["--get_messages", "0"]);
    assert!(messages.lines().next().is_some_and(|l| l.starts_with("1: ")), "{messages}");
    assert!(messages.contains("GUI RPC server listening on"), "{messages}");
}

#[test]
#[cfg_attr(not(peer_boinccmd), ignore = "boinccmd is not installed: apt-get install boinc-client")]
fn boinccmd_run_modes_stop_and_resume_the_tasks() {
    let served = Served::start();
    assert!(!served.snapshot().running.is_empty());
    boinccmd(&served, &["--set_run_mode", "never"]);
    let stopped = served.snapshot();
    assert_eq!(stopped.state.run_mode, RunMode::Never);
    assert!(stopped.running.is_empty(), "tasks still running: {:?}", stopped.running);
    let status = boinccmd(&served, &["--get_cc_status"]);
    assert!(status.contains("suspended: user request"), "{status}");
    let tasks = boinccmd(&served, &["--get_tasks"]);
    assert!(!values(&tasks, "active_task_state").contains(&"EXECUTING"), "{tasks}");

    boinccmd(&served, &["--set_run_mode", "auto"]);
    let resumed = served.snapshot();
    assert_eq!(resumed.state.run_mode, RunMode::Auto);
    assert!(!resumed.running.is_empty(), "no task runs again");
    let messages = boinccmd(&served, &["--get_messages", "0"]);
    assert!(messages.contains("computing: suspended (by user request)"), "{messages}");

    // A temporary mode: never for two seconds, then back to auto by itself.
    boinccmd(&served, &["--set_run_mode", "never", "2"]);
    let status = boinccmd(&served, &["--get_cc_status"]);
    assert!(status.contains("perm mode: according to prefs"), "{status}");
    served.wait_for("the permanent mode to return", |s| s.state.run_mode == RunMode::Auto);
}

#[test]
#[cfg_attr(not(peer_boinccmd), ignore = "boinccmd is not installed: apt-get install boinc-client")]
fn boinccmd_project_operations() {
    let served = Served::start();
    let state = served.snapshot().state;
    let running = served.snapshot().running;
    let project = state.job(running[0]).project;
    let url = state.project(project).master_url.clone();

    boinccmd(&served, &["--project", &url, "suspend"]);
    let after = served.snapshot();
    assert!(after.state.project(project).suspended);
    assert!(after.running.iter().all(|&j| after.state.job(j).project != project));
    let listed = boinccmd(&served, &["--get_project_status"]);
    assert!(values(&listed, "suspended via GUI").contains(&"yes"), "{listed}");

    boinccmd(&served, &["--project", &url, "resume"]);
    assert!(!served.snapshot().state.project(project).suspended);

    boinccmd(&served, &["--project", &url, "update"]);
    assert!(served.snapshot().state.project(project).sched_rpc_pending);
    let messages = boinccmd(&served, &["--get_messages", "0"]);
    assert!(messages.contains("update requested by user"), "{messages}");

    let unknown =
        boinccmd_with(&served, PASSWORD, &["--project", "http://nowhere/", "suspend"], false);
    assert!(unknown.contains("No such project"), "{unknown}");
}

#[test]
#[cfg_attr(not(peer_boinccmd), ignore = "boinccmd is not installed: apt-get install boinc-client")]
fn boinccmd_task_operations() {
    let served = Served::start();
    let snapshot = served.snapshot();
    let job = snapshot.running[0];
    let name = snapshot.state.job(job).name.clone();
    let url = snapshot.state.project(snapshot.state.job(job).project).master_url.clone();

    boinccmd(&served, &["--task", &url, &name, "suspend"]);
    let after = served.snapshot();
    assert!(after.state.job(job).suspended && !after.running.contains(&job));
    let tasks = boinccmd(&served, &["--get_tasks"]);
    assert!(values(&tasks, "suspended via GUI").contains(&"yes"), "{tasks}");

    boinccmd(&served, &["--task", &url, &name, "resume"]);
    assert!(!served.snapshot().state.job(job).suspended);

    boinccmd(&served, &["--task", &url, &name, "abort"]);
    let aborted = served.snapshot();
    let record = aborted.state.jobs.iter().find(|j| j.name == name).expect("kept until reported");
    assert_eq!(record.state, JobState::Aborted);
    assert!(!aborted.running.iter().any(|&j| aborted.state.job(j).name == name));

    let unknown =
        boinccmd_with(&served, PASSWORD, &["--task", &url, "no_such_task", "suspend"], false);
    assert!(unknown.contains("no such result"), "{unknown}");
}

#[test]
#[cfg_attr(not(peer_boinccmd), ignore = "boinccmd is not installed: apt-get install boinc-client")]
fn boinccmd_wrong_password_and_quit() {
    let served = Served::start();
    let refused = boinccmd_with(&served, "not-the-password", &["--set_run_mode", "never"], false);
    assert!(refused.contains("Authorization failure"), "{refused}");
    assert_eq!(served.snapshot().state.run_mode, RunMode::Auto, "a refused client changed nothing");

    boinccmd(&served, &["--quit"]);
    let (sender, receiver) = std::sync::mpsc::channel();
    let client = served.client.clone();
    std::thread::spawn(move || {
        let _ = sender.send(client.join().map(|report| report.decisions));
    });
    let decisions = receiver.recv_timeout(WAIT).expect("the client quits").expect("cleanly");
    assert!(decisions > 0);
}

#[test]
#[cfg_attr(not(peer_boinccmd), ignore = "boinccmd is not installed: apt-get install boinc-client")]
fn boinccmd_rereads_configuration_and_sets_gpu_and_network_modes() {
    let served = Served::start();
    let dir = served.dir.path();
    std::fs::write(
        dir.join("cc_config.xml"),
        "<cc_config><options><ncpus>2</ncpus></options></cc_config>",
    )
    .expect("cc_config.xml");
    boinccmd(&served, &["--read_cc_config"]);
    let after = served.snapshot();
    assert_eq!(after.state.config.ncpus, Some(2));
    assert!(after.running.len() <= 2, "{} tasks run on 2 CPUs", after.running.len());

    std::fs::write(
        dir.join("global_prefs_override.xml"),
        format!(
            "<global_preferences><work_buf_min_days>0.5</work_buf_min_days>{}</global_preferences>",
            support::host_prefs::NO_CPU_BUSY_CHECK
        ),
    )
    .expect("global_prefs_override.xml");
    boinccmd(&served, &["--read_global_prefs_override"]);
    assert_eq!(served.snapshot().state.prefs.work_buf_min_days, 0.5);

    std::fs::write(dir.join("cc_config.xml"), "<cc_config><options><ncpus>two").expect("broken");
    let refused = boinccmd_with(&served, PASSWORD, &["--read_cc_config"], false);
    assert!(refused.contains("cc_config.xml"), "{refused}");
    assert_eq!(served.snapshot().state.config.ncpus, Some(2), "a broken file changes nothing");

    boinccmd(&served, &["--set_gpu_mode", "never"]);
    boinccmd(&served, &["--set_network_mode", "never"]);
    let state = served.snapshot().state;
    assert_eq!((state.gpu_mode, state.network_mode), (RunMode::Never, RunMode::Never));
    let status = boinccmd(&served, &["--get_cc_status"]);
    assert_eq!(
        values(&status, "current mode"),
        ["according to prefs", "never", "never"],
        "{status}"
    );

    let disk = boinccmd(&served, &["--get_disk_usage"]);
    assert_eq!(values(&disk, "master URL").len(), state.projects.len(), "{disk}");
}

/// The task names boinctui shows under tmux, read from its screen; fails with the
/// screen when they do not all appear within the wait.
#[test]
#[cfg_attr(
    not(peer_boinctui),
    ignore = "boinctui or tmux is not installed: apt-get install boinctui tmux"
)]
fn boinctui_shows_the_tasks() {
    let served = Served::start();
    let names: Vec<String> = served.snapshot().state.jobs.iter().map(|j| j.name.clone()).collect();
    let home = tempfile::tempdir().expect("a home for boinctui");
    std::fs::write(
        home.path().join(".boinctui.cfg"),
        format!(
            "<boinctui_cfg>\n  <server>\n    <host>127.0.0.1</host>\n    <port>{}</port>\n    \
             <pwd>{PASSWORD}</pwd>\n  </server>\n</boinctui_cfg>\n",
            served.address.port()
        ),
    )
    .expect("boinctui's configuration");
    let socket = format!("boinc-rs-test-{}", std::process::id());
    let tmux =
        |args: &[&str]| run_bounded(Command::new("tmux").args(["-L", &socket]).args(args), WAIT);
    struct KillServer<'a>(&'a dyn Fn(&[&str]) -> std::process::Output);
    impl Drop for KillServer<'_> {
        fn drop(&mut self) {
            (self.0)(&["kill-server"]);
        }
    }
    let command = format!("env HOME={} TERM=xterm boinctui", home.path().display());
    let started = tmux(&["new-session", "-d", "-s", "tui", "-x", "200", "-y", "50", &command]);
    assert!(started.status.success(), "tmux: {}", String::from_utf8_lossy(&started.stderr));
    let _kill = KillServer(&tmux);
    let capture =
        || String::from_utf8_lossy(&tmux(&["capture-pane", "-p", "-t", "tui"]).stdout).into_owned();
    let mut screen = String::new();
    wait_until_or(
        "boinctui to show every task",
        WAIT,
        || {
            screen = capture();
            names.iter().all(|name| screen.contains(name.as_str()))
        },
        || format!("{names:?} not all on the screen:\n{}", capture()),
    );
    assert!(screen.contains(&format!("Host 127.0.0.1:{}", served.address.port())), "{screen}");
}
