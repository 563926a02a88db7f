//! A whole boinc-rs client against a `boinc-rs project-server` process told to
//! misbehave through `/admin` (issue "Talking to real project servers", acceptance
//! point 4). Scheduler faults (HTTP 500, a body that is not XML, silence, a reset, a
//! truncated reply, a reply of 100 MB, a code-signing key changed without the pinned
//! key's signature) each lead to seed 002's backoff: the failure count, `min_rpc_time`
//! within the randomised exponential bounds after each failure, the master page read
//! again after the tenth; a log line that says what happened; and nothing the client
//! holds lost. A download with the wrong MD5 or size is never put in place; an app
//! whose signature does not verify is never installed, put in a slot or run.
//!
//! The client runs in wall-clock time on a clock the test moves past each backoff.

use crate::support;

use boinc_core::model::{CcConfig, FileStatus};
use boinc_core::rpc_policy::{RPC_BACKOFF_MAX, RPC_BACKOFF_MAX_EXPONENT, RPC_BACKOFF_MIN};
use boinc_runtime::effects::Clock;
use boinc_runtime::{ClientEvent, UserAction};
use serde_json::{Value, json};
use std::time::Duration;
use support::live_client::{LiveClient, captured_log, log_lines_with};
use support::project_server::{ProjectServerProcess, files_under};
use support::wait::{holds_within, wait_for, wait_until_or};

/// The longest wait for one step of a test.
const STEP: Duration = Duration::from_secs(60);

/// A server making no jobs (no downloads needed) and a client that made its first
/// contact with it: a host id, the project's key pinned.
fn attached(config: &CcConfig) -> (ProjectServerProcess, LiveClient) {
    captured_log();
    let server = ProjectServerProcess::start(&["--jobs", "0", "--request-delay", "0"]);
    let mut client = LiveClient::start(&server.url, config);
    client
        .poll_until(STEP, |s| {
            let project = &s.state.projects[0];
            project.hostid > 0 && project.code_sign_key.is_some() && s.in_flight.is_empty()
        })
        .unwrap_or_else(|| panic!("no first contact; server log:\n{}", server.log()));
    // A successful RPC is logged at info.
    assert!(
        !log_lines_with(&["INFO", "scheduler RPC done", "reported="]).is_empty(),
        "no info line for the first contact"
    );
    (server, client)
}

/// Every scheduler request from now on meets `fault`; the client is asked to contact
/// the project. Checks the backoff after each of ten failures, the master page read
/// again after the tenth, the log line (with `words`), and that the project's account,
/// host id and key are what they were.
fn scheduler_fault_backs_off(fault: Value, config: &CcConfig, words: &[&str]) {
    let (server, mut client) = attached(config);
    let before = client.project();
    let mut rule = fault.clone();
    rule["target"] = json!("scheduler");
    rule["count"] = json!(0);
    server.add_faults(rule);
    client
        .handle
        .act_blocking(UserAction::UpdateProject(before.master_url.clone()))
        .expect("update");
    // Past the minute the client leaves between RPCs.
    client.advance_to_next_rpc();
    for failures in 1..=10u32 {
        let snapshot = client
            .poll_until(STEP, |s| {
                s.state.projects[0].nrpc_failures >= failures && s.in_flight.is_empty()
            })
            .unwrap_or_else(|| {
                panic!(
                    "{fault}: no failure {failures}; {}; the client's log:\n{}",
                    server.status(),
                    log_lines_with(&[]).join("\n")
                )
            });
        let project = &snapshot.state.projects[0];
        assert_eq!(project.nrpc_failures, failures, "{fault}");
        let failed_at = project.last_rpc_failure.expect("the failure's time");
        let exponent = (failures - 1).min(RPC_BACKOFF_MAX_EXPONENT);
        let base = (RPC_BACKOFF_MIN * f64::from(1u32 << exponent)).min(RPC_BACKOFF_MAX);
        let delay = project.min_rpc_time - failed_at;
        assert!(
            delay >= 0.5 * base - 1e-6 && delay < base + 1e-6,
            "{fault}: after failure {failures} the backoff is {delay} s, not in [{}, {base})",
            0.5 * base
        );
        if failures < 10 {
            // The master page is not read again before the tenth failure.
            assert_eq!(server.counter("master_requests"), 1, "{fault}: failure {failures}");
            assert!(!project.master_fetch_pending, "{fault}: failure {failures}");
        }
        client.advance_to_next_rpc();
    }
    client
        .wait_for(STEP, |_| server.counter("master_requests") >= 2)
        .unwrap_or_else(|| panic!("{fault}: the master page was not read again"));
    let after = client.project();
    assert_eq!(
        (&after.master_url, &after.authenticator, after.hostid, &after.code_sign_key),
        (&before.master_url, &before.authenticator, before.hostid, &before.code_sign_key),
        "{fault}: the project's account, host id and key are kept"
    );
    assert!(after.nrpc_failures >= 10, "{fault}");
    // Each failure is logged once.
    let failure_lines = log_lines_with(&["scheduler RPC failed", server.url.as_str()]);
    // (One more may have failed since the snapshot.)
    let failures = after.nrpc_failures as usize;
    assert!(
        (failures..=failures + 1).contains(&failure_lines.len()),
        "{fault}: {failures} failures, logged as {failure_lines:#?}"
    );
    let mut expected = vec!["scheduler RPC failed", server.url.as_str()];
    expected.extend_from_slice(words);
    assert!(
        !log_lines_with(&expected).is_empty(),
        "{fault}: no log line with {expected:?}; the log has {:?}",
        log_lines_with(&["scheduler RPC failed"])
    );
    client.stop();
}

#[test]
fn http_500_backs_off() {
    scheduler_fault_backs_off(json!({"fault": "http_500"}), &CcConfig::default(), &["HTTP 500"]);
}

#[test]
fn a_body_that_is_not_xml_backs_off() {
    scheduler_fault_backs_off(
        json!({"fault": "not_xml"}),
        &CcConfig::default(),
        &["not a valid scheduler reply"],
    );
}

#[test]
fn a_silent_server_times_out_and_backs_off() {
    let config = CcConfig { http_transfer_timeout: 1.0, ..CcConfig::default() };
    scheduler_fault_backs_off(
        json!({"fault": "hang", "seconds": 30.0}),
        &config,
        &["did not answer in time", "http_transfer_timeout"],
    );
}

#[test]
fn a_reset_connection_backs_off() {
    scheduler_fault_backs_off(json!({"fault": "reset"}), &CcConfig::default(), &[]);
}

#[test]
fn a_truncated_reply_backs_off() {
    scheduler_fault_backs_off(json!({"fault": "truncated"}), &CcConfig::default(), &["broke off"]);
}

#[test]
fn a_reply_of_100_mb_backs_off() {
    scheduler_fault_backs_off(
        json!({"fault": "huge", "bytes": 100_000_000u64}),
        &CcConfig::default(),
        &["bytes: refused"],
    );
}

#[test]
fn a_code_signing_key_changed_without_the_old_keys_signature_is_refused_and_backs_off() {
    for signature in ["none", "bad"] {
        let (server, mut client) = attached(&CcConfig::default());
        let before = client.project();
        server.rotate_key(signature);
        client
            .handle
            .act_blocking(UserAction::UpdateProject(before.master_url.clone()))
            .expect("update");
        // An update acts at once: no time passes on the client's clock.
        let snapshot = client
            .poll_until(STEP, |s| s.state.projects[0].nrpc_failures >= 1 && s.in_flight.is_empty())
            .unwrap_or_else(|| panic!("{signature}: the new key was taken"));
        let project = &snapshot.state.projects[0];
        assert_eq!(
            project.code_sign_key, before.code_sign_key,
            "{signature}: the pinned key stays"
        );
        let delay = project.min_rpc_time - project.last_rpc_failure.expect("failed");
        assert!((0.5 * RPC_BACKOFF_MIN..RPC_BACKOFF_MIN).contains(&delay), "{delay}");
        assert!(
            !log_lines_with(&["scheduler RPC failed", &server.url, "is refused"]).is_empty(),
            "{signature}: {:?}",
            log_lines_with(&["scheduler RPC failed"])
        );
        client.stop();
    }
}

/// A scheduler reply that stalls past the client's timeout: the RPC fails when the
/// timeout ends, and its backoff counts from then, not from when the RPC began. The
/// client's clock moves ten minutes on while the request is held, so a backoff counted
/// from the start (at most an hour's first step, [`RPC_BACKOFF_MIN`]) would already be
/// over and the next RPC would follow at once; no RPC comes before the backoff after the
/// failure, and one comes when it ends.
#[test]
fn a_stalled_rpc_backs_off_from_when_its_failure_is_known() {
    let config = CcConfig { http_transfer_timeout: 2.0, ..CcConfig::default() };
    let (server, mut client) = attached(&config);
    let url = client.project().master_url;
    server.add_faults(json!({"target": "scheduler", "fault": "hang", "seconds": 30.0}));
    let before = server.counter("scheduler_requests");
    let started = client.clock.now();
    client.handle.act_blocking(UserAction::UpdateProject(url)).expect("update");
    wait_for("the stalled request to reach the server", STEP, || {
        (server.counter("scheduler_requests") > before).then_some(())
    });
    const HELD: f64 = 600.0;
    client.clock.advance(HELD);
    let failed = client
        .poll_until(STEP, |s| s.state.projects[0].nrpc_failures == 1 && s.in_flight.is_empty())
        .unwrap_or_else(|| panic!("the stalled RPC did not fail; {}", server.status()));
    let project = &failed.state.projects[0];
    let failed_at = project.last_rpc_failure.expect("the failure's time");
    assert!(
        failed_at >= started + HELD,
        "the failure is dated {} s after the start",
        failed_at - started
    );
    let delay = project.min_rpc_time - failed_at;
    assert!(
        (0.5 * RPC_BACKOFF_MIN - 1e-6..RPC_BACKOFF_MIN).contains(&delay),
        "the backoff after the failure is {delay} s; the next RPC may come {} s after the \
         RPC began",
        project.min_rpc_time - started
    );
    // Short of the backoff's end nothing is sent, in a few seconds of real time (the
    // client's clock moves with them).
    let min_rpc_time = project.min_rpc_time;
    client.clock.advance(min_rpc_time - client.clock.now() - 10.0);
    assert!(
        !holds_within(Duration::from_secs(3), || {
            server.counter("scheduler_requests") > before + 1
        }),
        "an RPC came {} s before the backoff after the failure ended",
        min_rpc_time - client.clock.now()
    );
    assert_eq!(server.counter("scheduler_requests"), before + 1);
    client.clock.advance(min_rpc_time - client.clock.now() + 1.0);
    wait_until_or(
        "the RPC after the backoff",
        STEP,
        || server.counter("scheduler_requests") > before + 1,
        || server.status().to_string(),
    );
    client.stop();
}

/// Computing suspended by the user does not hold the network back: an update the user
/// asks for still contacts the project.
#[test]
fn an_update_contacts_the_project_while_computing_is_suspended() {
    let (server, mut client) = attached(&CcConfig::default());
    let url = client.project().master_url;
    client
        .handle
        .act_blocking(UserAction::SetRunMode(boinc_core::model::RunMode::Never))
        .expect("suspend");
    let before = server.counter("scheduler_requests");
    client.handle.act_blocking(UserAction::UpdateProject(url)).expect("update");
    // An update acts at once: no time passes on the client's clock.
    client
        .poll_until(STEP, |_| server.counter("scheduler_requests") > before)
        .unwrap_or_else(|| panic!("no RPC for the update while suspended; {}", server.status()));
    client.stop();
}

/// A wall clock set back six hours while nothing else happens (no task running, no
/// transfer) is noticed at the next poll, not at the control step planned in the old
/// clock, six hours away: the RPC backoff set before moves back with the clock, and the
/// next RPC comes when the backoff ends.
#[test]
fn a_clock_set_back_between_steps_does_not_hold_the_next_rpc() {
    let (server, mut client) = attached(&CcConfig::default());
    let url = client.project().master_url;
    server.add_faults(json!({"target": "scheduler", "fault": "http_500", "count": 1}));
    client.handle.act_blocking(UserAction::UpdateProject(url)).expect("update");
    // An update acts at once: no time passes on the client's clock.
    let failed = client
        .poll_until(STEP, |s| s.state.projects[0].nrpc_failures == 1 && s.in_flight.is_empty())
        .unwrap_or_else(|| panic!("no failed RPC; {}", server.status()));
    let waits = failed.state.projects[0].min_rpc_time - client.clock.now();
    assert!(waits > 1.0 && waits <= RPC_BACKOFF_MIN, "a first backoff of {waits} s");

    let clock = client.clock.clone();
    clock.set_back(6.0 * 3600.0);
    let moved = client
        .poll_until(Duration::from_secs(10), |s| {
            s.state.projects[0].min_rpc_time - clock.now() <= RPC_BACKOFF_MIN
        })
        .map(|s| s.state.projects[0].min_rpc_time - clock.now());
    assert!(
        moved.is_some(),
        "the RPC backoff stays six hours away after the clock went back; the log:\n{}",
        log_lines_with(&[]).join("\n")
    );
    // The backoff ends in the new clock and the client asks again.
    client.clock.advance(RPC_BACKOFF_MIN + 1.0);
    client
        .poll_until(STEP, |s| s.state.projects[0].nrpc_failures == 0 && s.in_flight.is_empty())
        .unwrap_or_else(|| panic!("no RPC after the backoff; {}", server.status()));
    client.stop();
}

/// A server with one job whose input download meets `fault`; a client that fetched it:
/// the copy is refused, deleted, and the job ends in a download error.
fn download_fault_is_never_installed(fault: &str) {
    captured_log();
    let server = ProjectServerProcess::start(&["--jobs", "1", "--job-seconds", "1"]);
    let input = "example_app_0_in";
    server.add_faults(json!({"target": "download", "fault": fault, "file": input, "count": 0}));
    let mut client = LiveClient::start(&server.url, &CcConfig::default());
    // A copy that is not the file is never put in place: with one URL to get it from,
    // the file is given up at once (as BOINC does on a checksum failure) and its job
    // ends in a download error, reported to the project, never run.
    let snapshot = client
        .poll_until(STEP * 3, |s| {
            s.state
                .files
                .iter()
                .any(|f| f.name == input && matches!(f.status, FileStatus::Error(_)))
        })
        .unwrap_or_else(|| panic!("{fault}: the bad download was not refused"));
    let file = snapshot.state.files.iter().find(|f| f.name == input).expect("the input");
    assert!(!file.transfer.last_error.is_empty(), "{fault}");
    let job = &snapshot.state.jobs[0];
    assert_ne!(job.exit_status, 0, "{fault}: the job ends in a download error");
    assert!(client.events().iter().all(|e| !matches!(e, ClientEvent::TaskStarted { .. })));
    // Nothing else the client holds is lost: the project, its account and host id.
    let project = &snapshot.state.projects[0];
    assert!(project.hostid > 0 && !project.authenticator.is_empty() && !project.detached);
    let (events, data) = client.stop();
    let copies: Vec<_> = files_under(data.path())
        .into_iter()
        .filter(|path| path.file_name().is_some_and(|name| name == input))
        .collect();
    assert!(copies.is_empty(), "{fault}: {copies:?}");
    let failure = events.iter().find_map(|e| match e {
        ClientEvent::TransferEnded { file, success: false, message, .. } if file == input => {
            Some(message.clone())
        }
        _ => None,
    });
    assert!(failure.is_some_and(|m| !m.is_empty()), "{fault}: {events:?}");
}

#[test]
fn a_download_with_the_wrong_md5_is_never_put_in_place() {
    download_fault_is_never_installed("wrong_md5");
}

#[test]
fn a_download_with_the_wrong_size_is_never_put_in_place() {
    download_fault_is_never_installed("wrong_size");
}

/// The app's executable comes with a bad or no signature: it is never installed, put
/// in a slot or run, and the user is told.
fn unsigned_app_never_runs(fault: &str) {
    captured_log();
    let server = ProjectServerProcess::start(&["--jobs", "1", "--job-seconds", "1"]);
    server.add_faults(json!({"target": "scheduler", "fault": fault, "count": 0}));
    let mut client = LiveClient::start(&server.url, &CcConfig::default());
    let notice = |events: &[ClientEvent]| {
        events.iter().find_map(|e| match e {
            ClientEvent::TransferNotice { text, error: true, .. } => Some(text.clone()),
            _ => None,
        })
    };
    let told =
        wait_for(&format!("{fault}: the user to be told"), STEP * 3, || notice(client.events()));
    assert!(told.to_lowercase().contains("signature"), "{fault}: {told}");
    let snapshot = client.snapshot();
    let (events, data) = client.stop();
    assert!(
        events.iter().all(|e| !matches!(e, ClientEvent::TaskStarted { .. })),
        "{fault}: a task started"
    );
    let app_file = server.status()["apps"][0]["file"].as_str().expect("the app").to_owned();
    let copies: Vec<_> = files_under(data.path())
        .into_iter()
        .filter(|path| path.file_name().is_some_and(|name| name == app_file.as_str()))
        .collect();
    assert!(copies.is_empty(), "{fault}: the executable was kept: {copies:?}");
    let slots: Vec<_> = files_under(&data.path().join("slots"));
    assert!(slots.is_empty(), "{fault}: {slots:?}");
    assert!(
        snapshot.state.files.iter().all(|f| f.name != app_file || f.status != FileStatus::Present),
        "{fault}"
    );
}

#[test]
fn an_app_with_a_bad_signature_never_runs() {
    unsigned_app_never_runs("bad_signature");
}

#[test]
fn an_app_without_a_signature_never_runs() {
    unsigned_app_never_runs("missing_signature");
}
