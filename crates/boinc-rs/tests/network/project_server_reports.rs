//! What the project server stores of a boinc-rs client's reports, as a BOINC project's
//! result table would: a failing app's standard error (BOINC's `<stderr_out>`, which
//! projects debug failed apps from), and a finished task's CPU time and peak memory
//! (which projects grant credit from and size their jobs by), measured by the live
//! process supervision.

use crate::support;

use boinc_core::model::CcConfig;
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;
use support::live_client::{LiveClient, captured_log, log_lines_with};
use support::project_server::ProjectServerProcess;

/// Both jobs fetched, run, and reported (the example app's job runs one CPU second).
const ROUND_TIMEOUT: Duration = Duration::from_secs(240);

/// What a failing app writes before it exits with status 3.
const FAILURE_TEXT: &str = "input unreadable: failing on purpose";

/// The server's stored report of the job of `app`.
fn report_of<'a>(status: &'a Value, app: &str) -> &'a Value {
    let results = status["results"].as_array().expect("the results");
    let job = results.iter().find(|r| r["app"] == app).unwrap_or_else(|| panic!("{app}'s job"));
    &job["report"]
}

#[test]
fn the_server_stores_a_failing_apps_stderr_and_a_finished_tasks_cpu_time_and_peaks() {
    captured_log();
    let scripts = tempfile::tempdir().expect("a directory");
    let failing = scripts.path().join("failing");
    std::fs::write(&failing, format!("#!/bin/sh\necho '{FAILURE_TEXT}' >&2\nexit 3\n"))
        .expect("the failing app");
    std::fs::set_permissions(&failing, std::fs::Permissions::from_mode(0o755)).expect("mode");
    let failing = failing.to_str().expect("a UTF-8 path");
    // Two jobs, one of each app (the server deals its jobs to its apps in turn).
    let server = ProjectServerProcess::start(&[
        "--app",
        failing,
        "--with-example-app",
        "--jobs",
        "2",
        "--job-seconds",
        "1",
        "--request-delay",
        "1",
    ]);
    let mut client = LiveClient::start(&server.url, &CcConfig::default());
    let reported =
        client.wait_for(ROUND_TIMEOUT, |_| server.counter("results_received") >= 2).is_some();
    let snapshot = client.snapshot();
    client.stop();
    let status = server.status();
    assert!(
        reported,
        "two results were not reported within {ROUND_TIMEOUT:?}; jobs {:?}; server status \
         {status}; server log:\n{}\nthe client's log:\n{}",
        snapshot.state.jobs,
        server.log(),
        log_lines_with(&[]).join("\n")
    );
    let failed = report_of(&status, "failing");
    assert_eq!(failed["exit_status"], 3, "{failed}");
    let stderr = failed["stderr_out"].as_str().expect("the stored stderr");
    assert!(stderr.contains(FAILURE_TEXT), "the app's stderr reached the server: {stderr}");
    assert!(stderr.contains("<stderr_txt>") && stderr.contains("<message>"), "{stderr}");
    let example = status["results"]
        .as_array()
        .and_then(|results| results.iter().find(|r| r["app"] != "failing"))
        .map(|job| &job["report"])
        .expect("the example app's job");
    println!("stored: failing app {failed}\nexample app {example}");
    assert_eq!(example["exit_status"], 0, "{example}");
    let cpu = example["cpu_time"].as_f64().expect("cpu_time");
    let peak = example["peak_working_set_size"].as_f64().expect("peak_working_set_size");
    let disk = example["peak_disk_usage"].as_f64().expect("peak_disk_usage");
    assert!(cpu > 0.5, "a one-CPU-second job's CPU time: {example}");
    assert!(peak > 1e5, "the example app's peak memory: {example}");
    assert!(disk > 0.0, "its slot's peak disk use: {example}");
}
