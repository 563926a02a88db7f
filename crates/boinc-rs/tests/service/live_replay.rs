//! A live run's journal and its replay (docs/actors.md "Live journal and replay"):
//! `boinc-rs run --journal FILE` against `boinc-rs project-server`, the example app's
//! jobs downloaded, run, uploaded and reported; then `boinc-rs replay FILE`, with no
//! network, processes or clock, re-derives every decision the run made. One recorded
//! decision changed and replay names it as the first difference.

use super::service::{log_of, project_and_data_dir};
use crate::support;

use serde_json::Value;
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;
use support::service::{signal, start_service_with, wait_exit};
use support::wait::wait_until_or;

/// How long the run may take to have its first results reported (a report goes with
/// the client's scheduling check, once a minute).
const REPORTED_WAIT: Duration = Duration::from_secs(240);

/// The longest a service may take to stop after SIGTERM.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// The journal of one live run (recorded once, for every test here): its lines.
fn recorded_journal() -> &'static str {
    static JOURNAL: OnceLock<String> = OnceLock::new();
    JOURNAL.get_or_init(record_a_live_run)
}

/// Runs a client with `--journal` until the server has two results reported, stops it,
/// and returns the journal's text.
fn record_a_live_run() -> String {
    let (server, data) = project_and_data_dir("4", "3", "2");
    let dir = data.path();
    let journal = dir.join("journal.jsonl");
    let log = dir.join("service.log");
    let journal_arg = journal.to_str().expect("a UTF-8 path");
    let mut service = start_service_with(dir, &log, &["--journal", journal_arg], &[]);
    server.wait_for_or(
        "two results reported",
        REPORTED_WAIT,
        |status| status["jobs_reported"].as_u64().is_some_and(|n| n >= 2),
        || log_of(&log),
    );
    // The reply to the report is taken in (a reply still on its way when the client
    // stops is never taken in, and so not in the journal).
    let reported_in_reply = |text: &str| {
        text.lines().any(|l| l.contains("scheduler RPC done") && !l.contains("reported=0"))
    };
    wait_until_or(
        "the client to take the report's reply in",
        REPORTED_WAIT,
        || reported_in_reply(&log_of(&log)),
        || log_of(&log),
    );
    signal(&service, nix::sys::signal::Signal::SIGTERM);
    let status = wait_exit(&mut service, STOP_TIMEOUT)
        .unwrap_or_else(|| panic!("no exit within {STOP_TIMEOUT:?}:\n{}", log_of(&log)));
    assert!(status.success(), "the service exited with {status}:\n{}", log_of(&log));
    std::fs::read_to_string(&journal).expect("the journal was written")
}

/// `boinc-rs replay` of `text` (written to a file of its own).
fn replay(text: &str) -> Output {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("journal.jsonl");
    std::fs::write(&path, text).expect("the journal");
    Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
        .arg("replay")
        .arg(&path)
        .output()
        .expect("boinc-rs replay runs")
}

/// The journal's entries.
fn entries(text: &str) -> Vec<Value> {
    text.lines().map(|line| serde_json::from_str(line).expect("a journal line")).collect()
}

/// How many entries of `kind` named `name` the journal has.
fn count(entries: &[Value], kind: &str, name: &str) -> usize {
    entries.iter().filter(|e| e["kind"] == kind && e["name"] == name).count()
}

#[test]
fn a_live_runs_journal_replays_with_no_difference() {
    let text = recorded_journal();
    let entries = entries(text);
    assert_eq!(entries[0]["name"], "LiveSetup", "the setup line comes first");
    // Every kind of input the run took in is there: the driver's, the servers', the
    // processes', the disk's.
    for (kind, name, least) in [
        ("input", "Tick", 1),
        ("input", "PollTasks", 10),
        ("input", "RpcReply", 2),
        ("input", "TransferEnded", 4),
        ("input", "ProcessReport", 4),
        ("input", "DiskSpace", 1),
        ("message", "Command", 2),
        ("message", "RunSession", 2),
    ] {
        let found = count(&entries, kind, name);
        assert!(found >= least, "{found} {kind} {name} entries, fewer than {least}");
    }
    let uploads = entries
        .iter()
        .filter(|e| e["name"] == "TransferEnded" && e["body"]["Uploaded"].is_object());
    assert!(uploads.count() >= 2, "no uploads in the journal");
    let output = replay(text);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "replay found a difference:\n{stdout}{stderr}");
    assert!(
        stdout.contains(&format!("replayed {} messages", entries.len())),
        "not every entry was replayed:\n{stdout}"
    );
}

#[test]
fn a_tampered_journal_is_named_at_the_changed_decision() {
    let text = recorded_journal();
    let mut entries = entries(text);
    // A task command the run sent (a decision), its job renamed.
    let changed = entries
        .iter()
        .position(|e| e["kind"] == "message" && e["name"] == "Command")
        .expect("a task command in the journal");
    let seq = entries[changed]["seq"].as_u64().expect("a sequence number");
    let command = entries[changed]["body"]["command"].to_string();
    let job = entries[changed]["actor"].as_str().expect("an actor").rsplit(':').next().unwrap();
    let tampered = command.replacen(job, "another_job", 1);
    assert_ne!(tampered, command, "the command names its job");
    entries[changed]["body"]["command"] = serde_json::from_str(&tampered).expect("JSON");
    let text: String = entries.iter().map(|e| format!("{e}\n")).collect();
    let output = replay(&text);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "the difference went unnoticed:\n{stderr}");
    assert!(stderr.contains(&format!("replay diverged at message {seq}\n")), "{stderr}");
    assert!(stderr.contains("another_job") && stderr.contains("replayed:"), "{stderr}");
}

/// Rotation keeps the file bounded; the journal of a run rotated once still replays.
#[test]
fn a_journal_rotated_once_replays_from_its_older_part() {
    let text = recorded_journal();
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("journal.jsonl");
    let lines: Vec<&str> = text.lines().collect();
    let (older, newer) = lines.split_at(lines.len() / 2);
    std::fs::write(dir.path().join("journal.jsonl.1"), older.join("\n") + "\n").expect("FILE.1");
    std::fs::write(&path, newer.join("\n") + "\n").expect("FILE");
    let output = Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
        .arg("replay")
        .arg(&path)
        .output()
        .expect("boinc-rs replay runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}
