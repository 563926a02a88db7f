//! Failure paths a fleet of hosts meets, with a whole client against `boinc-rs
//! project-server`: an app's crashes counted across a restart of the client (the
//! restart limit is kept in the state file, so a host that restarts its client does not
//! run a crashing app for ever); a full disk that holds new tasks back, with a notice,
//! until there is room (within a poll of its return: the disk is measured at every poll
//! while it is full).

use crate::support;

use boinc_core::disk::MIN_ROOM;
use boinc_core::model::{CcConfig, ClientState, JobState};
use boinc_core::supervise::{EXIT_SIGNAL, RestartPolicy};
use boinc_runtime::client::ClientBuilder;
use boinc_runtime::{ClientEvent, UserAction};
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

/// How soon tasks held back by a full disk start once it has room: the disk is measured
/// at every poll (once a second) while the client finds it full, so within a poll and a
/// margin for a busy machine.
const ROOM_AGAIN_WAIT: Duration = Duration::from_secs(6);

/// A tmpfs of its own, unmounted when dropped; `None` (with the reason) where this
/// process may not mount one.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Result<Tmpfs, String> {
        if !nix::unistd::geteuid().is_root() {
            return Err("not root: cannot mount a tmpfs".into());
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let output = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "boinc-rs-full-disk"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("no mount: {e}"))?;
        if !output.status.success() {
            return Err(format!("mount failed: {}", String::from_utf8_lossy(&output.stderr)));
        }
        Ok(Tmpfs { dir })
    }

    /// Fills the file system (bounded by its size) with one file; its path.
    fn fill(&self) -> std::path::PathBuf {
        use std::io::Write;
        let path = self.dir.path().join("filler");
        let mut file = std::fs::File::create(&path).expect("the filler");
        let block = vec![0u8; 1 << 20];
        for _ in 0..4096 {
            if file.write_all(&block).is_err() {
                break;
            }
        }
        let _ = file.sync_all();
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(self.dir.path()).status();
    }
}

/// On a full disk no new task starts (it would fail at once, its slot's files
/// unwritable, and be reported as an error): the tasks wait, the user is told with a
/// notice, nothing counts against the project; within a poll of room returning they
/// start. The data directory is a small tmpfs (skipped, loudly, where the test may not
/// mount one).
#[test]
fn on_a_full_disk_new_tasks_wait_and_start_once_there_is_room() {
    let tmpfs = match Tmpfs::mount("1G") {
        Ok(tmpfs) => tmpfs,
        Err(why) => {
            eprintln!("SKIPPED: the full-disk test needs a tmpfs: {why}");
            return;
        }
    };
    captured_log();
    let server = ProjectServerProcess::start(&["--job-seconds", "600", "--request-delay", "1"]);
    let data = tempfile::tempdir_in(tmpfs.dir.path()).expect("a data directory");
    let mut state = attached_state(&server.url);
    // The disk itself fills, not the preferences' share of a small one.
    (state.prefs.disk_max_used_gb, state.prefs.disk_max_used_pct) = (0.0, 100.0);
    state.prefs.disk_min_free_gb = 0.0;
    let mut client = LiveClient::start_on(data, state, &CcConfig::default(), |b| b, false);
    let waiting = |s: &boinc_runtime::runtime::messages::StateSnapshot| {
        s.state
            .jobs
            .iter()
            .filter(|j| j.state == JobState::FilesDownloaded && j.task.is_none())
            .count()
    };
    let snapshot =
        client.wait_for(STEP, |s| !s.running.is_empty() && waiting(s) >= 1).unwrap_or_else(|| {
            panic!(
                "no work running and waiting; {}; the server's log:\n{}",
                server.status(),
                server.log()
            )
        });

    // A CPU comes free on a full disk (its task aborted): no task may start on it.
    let filler = tmpfs.fill();
    // The disk is measured at every poll.
    let measured = client.poll_until(STEP, |s| s.state.host.d_free < MIN_ROOM);
    assert!(measured.is_some(), "the full disk was never measured");
    let running_before = snapshot.running.clone();
    let aborted = snapshot.state.jobs[running_before[0].index()].name.clone();
    client.handle.act_blocking(UserAction::AbortTask(aborted.clone())).expect("the abort");
    let started = client.poll_until(Duration::from_secs(10), |s| {
        s.running.iter().any(|id| !running_before.contains(id))
    });
    assert!(started.is_none(), "a task started on a full disk: {:?}", started.map(|s| s.running));
    let alerted = |events: &[ClientEvent]| {
        events.iter().any(|e| {
            matches!(e, ClientEvent::DiskAction { alert: true, action, .. }
                if action.contains("new tasks wait"))
        })
    };
    assert!(alerted(client.events()), "no notice of the full disk: {:?}", client.events());
    let snapshot = client.snapshot();
    let errors: Vec<_> = snapshot
        .state
        .jobs
        .iter()
        .filter(|j| j.state.computing_done() && j.name != aborted)
        .map(|j| &j.name)
        .collect();
    assert!(errors.is_empty(), "jobs ended on the full disk: {errors:?}");
    let project = &snapshot.state.projects[0];
    assert_eq!(project.nrpc_failures, 0, "the full disk counted against the project");

    std::fs::remove_file(&filler).expect("the filler goes");
    let room_again = std::time::Instant::now();
    let running = client
        .poll_until(ROOM_AGAIN_WAIT, |s| s.running.iter().any(|id| !running_before.contains(id)));
    assert!(
        running.is_some(),
        "no task started within {ROOM_AGAIN_WAIT:?} of room returning ({:?}); the client's log:\n{}",
        {
            let s = client.snapshot();
            let jobs: Vec<_> = s
                .state
                .jobs
                .iter()
                .map(|j| (j.name.clone(), j.state, j.suspended, j.task.is_some()))
                .collect();
            (s.state.host.d_free, s.state.run_mode, s.running, jobs)
        },
        log_lines_with(&[]).join("\n")
    );
    eprintln!("a waiting task started {:?} after room returned", room_again.elapsed());
    client.stop();
}
