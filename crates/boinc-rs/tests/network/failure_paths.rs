//! Failure paths a fleet of hosts meets, with a whole client against `boinc-rs
//! project-server`: an app's crashes counted across a restart of the client (the
//! restart limit is kept in the state file, so a host that restarts its client does not
//! run a crashing app for ever).

use crate::support;

use boinc_core::model::{CcConfig, ClientState, JobState};
use boinc_core::supervise::{EXIT_SIGNAL, RestartPolicy};
use boinc_runtime::ClientEvent;
use boinc_runtime::client::ClientBuilder;
use std::time::Duration;
use support::live_client::{LiveClient, attached_state, captured_log, log_lines_with};
use support::project_server::ProjectServerProcess;

/// The longest wait for one step of a test.
const STEP: Duration = Duration::from_secs(120);

/// Quick restarts, and an error at the fifth crash.
const QUICK: RestartPolicy = RestartPolicy {
    initial_delay: 0.2,
    max_delay: 0.2,
    jitter: 0.0,
    max_failures: 4,
    window: 86_400.0,
    healthy_after: 600.0,
};

/// The crashes among `events` (a restart planned anew; `planned`, the restart a state
/// file carried over, is not a new crash).
fn crashes(events: &[ClientEvent], planned: Option<f64>) -> usize {
    events
        .iter()
        .filter(|e| {
            matches!(e, ClientEvent::TaskRestarting { restart_at, .. } if Some(*restart_at) != planned)
        })
        .count()
}

/// The crash streak of the one job's task in `state`.
fn streak(state: &ClientState) -> u32 {
    state.jobs.first().and_then(|j| j.task.as_ref()).map_or(0, |t| t.crashes.streak())
}

/// A job whose app crashes at every run: two crashes, a restart of the client, and the
/// count goes on from two: the job ends in an error after the limit's remaining crashes,
/// not after a fresh count of five.
#[test]
fn an_apps_crash_count_survives_a_restart_of_the_client() {
    captured_log();
    let server = ProjectServerProcess::start(&[
        "--jobs",
        "1",
        "--job-seconds",
        "1",
        "--crash-fraction",
        "1",
        "--request-delay",
        "0",
    ]);
    let quick = |builder: ClientBuilder| builder.app_restart_policy(QUICK);
    let data = tempfile::tempdir().expect("a data directory");
    let state = attached_state(&server.url);
    let mut client = LiveClient::start_on(data, state, &CcConfig::default(), quick, true);
    client.wait_for(STEP, |s| streak(&s.state) >= 2).unwrap_or_else(|| {
        panic!(
            "no second crash; {}; the client's log:\n{}",
            server.status(),
            log_lines_with(&[]).join("\n")
        )
    });
    let (_, data) = client.stop();
    let text = std::fs::read_to_string(data.path().join("client_state.xml")).expect("the state");
    let saved = boinc_core::protocol::parse_client_state(&text, "client_state.xml")
        .expect("the state reads");
    let before = streak(&saved);
    let planned = saved.jobs.first().and_then(|j| j.task.as_ref()).and_then(|t| t.restart_at);
    assert!(
        (2..QUICK.max_failures).contains(&before),
        "the state file holds {before} crashes:\n{text}"
    );
    assert!(text.contains("<crash_streak>"), "{text}");

    let mut client =
        LiveClient::start_on(data, ClientState::default(), &CcConfig::default(), quick, true);
    let ended = client
        .wait_for(STEP, |s| s.state.jobs.first().is_some_and(|j| j.state == JobState::ComputeError))
        .unwrap_or_else(|| {
            panic!(
                "the crashing job did not end in an error; {}; the client's log:\n{}",
                server.status(),
                log_lines_with(&[]).join("\n")
            )
        });
    assert_eq!(ended.state.jobs[0].exit_status, EXIT_SIGNAL);
    let (events, _) = client.stop();
    // Crashes before + restarted after the restart + the one that ended it = the limit + 1.
    let after = crashes(&events, planned);
    assert_eq!(
        before as usize + after + 1,
        QUICK.max_failures as usize + 1,
        "{before} crashes before the restart, {after} restarts after it"
    );
}
