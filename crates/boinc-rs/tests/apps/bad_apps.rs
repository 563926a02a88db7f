//! Bad apps under the live process host (issue "Running real apps" acceptance): a
//! missing or non-executable program, an app that damages or truncates its shared
//! memory, one that leaves children behind, one that writes outside its slot, one that
//! floods its standard error, one that hangs (always, or once), one that goes over its
//! limits, one that exits early or asks to be restarted later. Each ends in a clear error result or is
//! contained, and the client (this test process) keeps running and runs the next app.

use crate::support;

use boinc_core::supervise::{
    ERR_FILE_MISSING, EXIT_CHILD_FAILED, EXIT_DISK_LIMIT_EXCEEDED, EXIT_MEM_LIMIT_EXCEEDED,
    EXIT_SIGNAL, EXIT_TIME_LIMIT_EXCEEDED, RestartPolicy,
};
use boinc_runtime::effects::ProcessHost;
use boinc_runtime::runtime::messages::TaskReport;
use std::time::Duration;
use support::*;

const POLL: Duration = Duration::from_millis(200);
const BOUND: Duration = Duration::from_secs(60);

#[test]
fn a_missing_or_non_executable_program_is_an_error() {
    let scratch = Scratch::new();
    let mut spec = example_spec(&scratch, 0, "missing", true, &[]);
    spec.program.executable = "no_such_program".into();
    let run = run_to_end(&scratch, &spec, QUICK_RESTARTS, |_| {});
    let (status, message) = failed(&run);
    assert_eq!(status, EXIT_CHILD_FAILED, "{message}");
    assert!(message.contains("no_such_program"), "{message}");

    std::fs::write(scratch.project_file("not_executable"), "#!/bin/sh\n").unwrap();
    spec.program.executable = "not_executable".into();
    let run = run_to_end(&scratch, &spec, QUICK_RESTARTS, |_| {});
    let (status, message) = failed(&run);
    assert_eq!(status, EXIT_CHILD_FAILED, "{message}");
    assert!(message.contains("not an executable"), "{message}");
}

#[test]
fn damaged_shared_memory_is_contained() {
    let scratch = Scratch::new();
    // Garbage in every channel: the client drops what it cannot read and goes on.
    let spec = example_spec(
        &scratch,
        0,
        "garbage",
        true,
        &["--seconds", "1", "--damage-shared-memory", "garbage"],
    );
    finished(&run_to_end(&scratch, &spec, QUICK_RESTARTS, |_| {}));
    // A truncated file kills the app (its own mapping faults) at every start; the
    // client, which never maps the file, keeps going and gives up on the job.
    let spec = example_spec(
        &scratch,
        1,
        "truncated",
        true,
        &["--seconds", "1", "--damage-shared-memory", "truncate"],
    );
    let policy = RestartPolicy { max_failures: 1, ..QUICK_RESTARTS };
    let (status, message) = failed(&run_to_end(&scratch, &spec, policy, |_| {}));
    assert_eq!(status, EXIT_SIGNAL, "{message}");
    assert!(message.contains("signal 7"), "killed by SIGBUS: {message}");
    // And the client runs the next app as if nothing happened.
    let spec = example_spec(&scratch, 2, "after", true, &["--seconds", "0.5"]);
    finished(&run_to_end(&scratch, &spec, QUICK_RESTARTS, |_| {}));
}

#[test]
fn children_left_behind_are_killed() {
    let scratch = Scratch::new();
    let spec = example_spec(&scratch, 0, "forking", true, &["--seconds", "1", "--fork-child"]);
    let host = scratch.host(|_| {});
    live(async {
        let driver = driver(&host, &spec, QUICK_RESTARTS);
        driver.start(&spec).await.unwrap();
        let child_file = scratch.data_dir().join("slots/0/example_app_child_pid");
        let mut child = None;
        let run = poll_until(&driver, POLL, BOUND, |_| {
            child = child
                .or_else(|| std::fs::read_to_string(&child_file).ok()?.trim().parse::<i32>().ok());
            false
        })
        .await;
        finished(&run);
        let child = child.expect("the app started a child");
        // SIGKILL takes effect as soon as the child is scheduled.
        wait_until(
            &format!("the child {child} to be killed with the app's group"),
            Duration::from_secs(5),
            || !process_alive(child),
        );
    });
}

#[test]
fn writes_outside_the_slot_are_refused() {
    if !boinc_service::process::write_containment_available() {
        eprintln!(
            "SKIPPED (not passed): this kernel has no Landlock, so the client cannot confine \
             an app's writes to its slot"
        );
        return;
    }
    let scratch = Scratch::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped.txt");
    let data_dir_target = scratch.data_dir().join("escaped.txt");
    for (slot, path) in [(0, &target), (1, &data_dir_target)] {
        let spec = example_spec(
            &scratch,
            slot,
            &format!("escape{slot}"),
            true,
            &["--write-outside", path.to_str().unwrap()],
        );
        let (status, message) = failed(&run_to_end(&scratch, &spec, QUICK_RESTARTS, |_| {}));
        assert_eq!(status, 1, "the app reports the refused write: {message}");
        assert!(!path.exists(), "{} was written", path.display());
    }
    // Writing in its slot and project directory is the app's business.
    let spec = example_spec(
        &scratch,
        2,
        "inside",
        true,
        &["--seconds", "0.3", "--write-outside", "../../projects/test/allowed.txt"],
    );
    finished(&run_to_end(&scratch, &spec, QUICK_RESTARTS, |_| {}));
    assert!(scratch.project_file("allowed.txt").is_file());
}

#[test]
fn a_flood_of_standard_error_is_capped() {
    use boinc_core::protocol::app_api::{STDERR_FILE_LIMIT, STDERR_REPORT_BYTES};
    let scratch = Scratch::new();
    let spec = example_spec(&scratch, 0, "flood", true, &["--seconds", "2", "--flood-stderr"]);
    let host = scratch.host(|_| {});
    let stderr_path = scratch.data_dir().join("slots/0/stderr.txt");
    let mut largest = 0u64;
    live(async {
        let driver = driver(&host, &spec, QUICK_RESTARTS);
        driver.start(&spec).await.unwrap();
        let run = poll_until(&driver, POLL, BOUND, |_| {
            // Right after a poll the file is at most the limit plus what the app wrote
            // since (it writes at most ~100 MB/s; the test allows a fifth of a second).
            largest = largest.max(std::fs::metadata(&stderr_path).map_or(0, |m| m.len()));
            false
        })
        .await;
        finished(&run);
    });
    assert!(largest > 0, "the app wrote to its standard error");
    assert!(largest < STDERR_FILE_LIMIT + 25 * 1024 * 1024, "stderr.txt reached {largest} bytes");
    let tail = host.take_stderr("flood").expect("the reported tail");
    assert!(tail.len() <= STDERR_REPORT_BYTES, "{} bytes reported", tail.len());
}

#[test]
fn a_hung_app_is_killed_and_restarted_then_given_up() {
    let scratch = Scratch::new();
    let spec = example_spec(&scratch, 0, "hung", true, &["--hang"]);
    let policy = RestartPolicy { max_failures: 1, ..QUICK_RESTARTS };
    let run = run_to_end(&scratch, &spec, policy, |c| c.hung_after = Duration::from_secs(1));
    let restarts: Vec<f64> = run
        .reports
        .iter()
        .filter_map(|(_, r)| match r {
            TaskReport::Restarting { restart_at, .. } => Some(*restart_at),
            _ => None,
        })
        .collect();
    assert!(!restarts.is_empty(), "killed as hung and restarted once: {run:?}");
    let (status, message) = failed(&run);
    assert_eq!(status, EXIT_SIGNAL);
    assert!(message.contains("heartbeats"), "{message}");
}

#[test]
fn an_app_that_hangs_once_is_killed_restarted_and_finishes() {
    let scratch = Scratch::new();
    let spec = example_spec(&scratch, 0, "hung_once", true, &["--seconds", "0.5", "--hang-once"]);
    let run =
        run_to_end(&scratch, &spec, QUICK_RESTARTS, |c| c.hung_after = Duration::from_secs(1));
    let restarts =
        run.reports.iter().filter(|(_, r)| matches!(r, TaskReport::Restarting { .. })).count();
    assert!(restarts >= 1, "killed as hung and restarted: {run:?}");
    finished(&run);
}

/// A wall clock that can be set back, as the soak's libfaketime does.
struct SettableClock(std::sync::Mutex<f64>);

impl boinc_runtime::effects::Clock for SettableClock {
    fn now(&self) -> boinc_core::Time {
        let offset = *self.0.lock().unwrap();
        boinc_runtime::effects::SystemClock.now() + offset
    }
}

#[test]
fn a_clock_set_back_does_not_hold_a_crashed_apps_restart_for_the_jump() {
    use boinc_runtime::effects::Clock;
    let scratch = Scratch::new();
    let spec =
        example_spec(&scratch, 0, "crash", true, &["--seconds", "3", "--crash-after", "0.2"]);
    let host: std::sync::Arc<dyn boinc_runtime::effects::ProcessHost> = scratch.host(|_| {});
    let clock = std::sync::Arc::new(SettableClock(std::sync::Mutex::new(0.0)));
    let policy = RestartPolicy { initial_delay: 3.0, max_delay: 3.0, ..QUICK_RESTARTS };
    let supervision = boinc_runtime::runtime::task::TaskSupervision { policy, seed: 7 };
    live(async {
        let driver = boinc_service::TaskDriver::new(host, clock.clone(), &spec, supervision);
        driver.start(&spec).await.unwrap();
        let crashed =
            poll_until(&driver, POLL, BOUND, |r| matches!(r, TaskReport::Restarting { .. })).await;
        let TaskReport::Restarting { restart_at, .. } = crashed.last() else {
            panic!("the app did not crash: {crashed:?}")
        };
        let planned = restart_at - crashed.reports.last().unwrap().0;
        // Six hours back: the restart stays within the wait planned.
        *clock.0.lock().unwrap() = -6.0 * 3600.0;
        let report = driver.poll().await.unwrap();
        let TaskReport::Restarting { restart_at, .. } = report else {
            panic!("still restarting: {report:?}")
        };
        assert!(restart_at <= clock.now() + planned + 0.5, "the restart waits for the jump");
        let started = std::time::Instant::now();
        let again = poll_until(&driver, POLL, BOUND, |r| matches!(r, TaskReport::Running(_))).await;
        assert!(matches!(again.last(), TaskReport::Running(_)), "{again:?}");
        assert!(started.elapsed() < Duration::from_secs(30));
    });
}

#[test]
fn limits_abort_the_task_with_their_exit_status() {
    let scratch = Scratch::new();
    // Elapsed time: a bound of 1e9 flops at 1e9 flops/s is one second.
    let mut spec = example_spec(&scratch, 0, "slow", true, &["--seconds", "20"]);
    spec.program.bounds.fpops_bound = 1e9;
    spec.program.bounds.flops = 1e9;
    let (status, message) = failed(&run_to_end(&scratch, &spec, QUICK_RESTARTS, |_| {}));
    assert_eq!(status, EXIT_TIME_LIMIT_EXCEEDED, "{message}");
    // Memory: any real process has more than 1 MB resident.
    let mut spec = example_spec(&scratch, 1, "big", true, &["--seconds", "20"]);
    spec.program.bounds.memory_bound = 1e6;
    let (status, message) = failed(&run_to_end(&scratch, &spec, QUICK_RESTARTS, |_| {}));
    assert_eq!(status, EXIT_MEM_LIMIT_EXCEEDED, "{message}");
    // Disk: the slot holds more than 100 bytes (init_data.xml alone).
    let mut spec = example_spec(&scratch, 2, "wide", true, &["--seconds", "20"]);
    spec.program.bounds.disk_bound = 100.0;
    let (status, message) = failed(&run_to_end(&scratch, &spec, QUICK_RESTARTS, |c| {
        c.disk_check_interval = Duration::from_millis(100)
    }));
    assert_eq!(status, EXIT_DISK_LIMIT_EXCEEDED, "{message}");
}

#[test]
fn exits_are_read_as_boinc_reads_them() {
    let scratch = Scratch::new();
    // A non-zero exit is an error with that status.
    let spec = example_spec(&scratch, 0, "status3", true, &["--exit-code", "3"]);
    assert_eq!(failed(&run_to_end(&scratch, &spec, QUICK_RESTARTS, |_| {})).0, 3);
    // Exit 0 without finishing is restarted (then given up on here).
    let spec =
        example_spec(&scratch, 1, "early", true, &["--seconds", "5", "--exit-early-after", "0"]);
    let policy = RestartPolicy { max_failures: 1, ..QUICK_RESTARTS };
    let (status, message) = failed(&run_to_end(&scratch, &spec, policy, |_| {}));
    assert_eq!(status, EXIT_SIGNAL);
    assert!(message.contains("without finishing"), "{message}");
    // Without the API, exit 0 is a finish only with the outputs present.
    let spec = example_spec(
        &scratch,
        2,
        "no_output",
        false,
        &["--seconds", "0.3", "--output", "elsewhere"],
    );
    let (status, message) = failed(&run_to_end(&scratch, &spec, QUICK_RESTARTS, |_| {}));
    assert_eq!(status, ERR_FILE_MISSING, "{message}");
    // A temporary exit is restarted after the delay it asked for, and then finishes.
    let spec =
        example_spec(&scratch, 3, "later", true, &["--seconds", "0.3", "--temporary-exit", "1"]);
    let run = run_to_end(&scratch, &spec, QUICK_RESTARTS, |_| {});
    finished(&run);
    let (at, restart_at) = run
        .reports
        .iter()
        .find_map(|(at, r)| match r {
            TaskReport::Restarting { restart_at, .. } => Some((*at, *restart_at)),
            _ => None,
        })
        .expect("a postponed restart");
    assert!(restart_at - at >= 0.95, "waited the delay it asked for: {}", restart_at - at);
}

#[test]
fn a_quit_that_is_not_obeyed_ends_in_a_kill_after_the_grace_period() {
    let scratch = Scratch::new();
    // Without the API: SIGTERM ignored (as the shell's children inherit).
    std::fs::write(
        scratch.project_file("stubborn.sh"),
        "#!/bin/sh\ntrap '' TERM\nwhile true; do sleep 1; done\n",
    )
    .unwrap();
    std::fs::set_permissions(
        scratch.project_file("stubborn.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let mut wrapper = example_spec(&scratch, 0, "stubborn", false, &[]);
    wrapper.program.executable = "stubborn.sh".into();
    wrapper.program.arguments.clear();
    // With the API: the quit request is never read.
    let api = example_spec(&scratch, 1, "deaf", true, &["--hang"]);
    let grace = Duration::from_secs(1);
    let host = scratch.host(|c| c.quit_grace = grace);
    for spec in [wrapper, api] {
        live(async {
            let driver = driver(&host, &spec, QUICK_RESTARTS);
            driver.start(&spec).await.unwrap();
            // Time for the app to get going, on purpose: the script must have set its
            // trap before the quit request comes, and nothing outside it tells when.
            tokio::time::sleep(Duration::from_millis(500)).await;
            let pid = host.process_id(spec.slot).expect("running");
            let asked = std::time::Instant::now();
            driver.quit().await.unwrap();
            let run = poll_until(&driver, POLL, BOUND, |r| matches!(r, TaskReport::Idle)).await;
            let took = asked.elapsed();
            assert!(matches!(run.last(), TaskReport::Idle), "{}: {run:?}", spec.job);
            assert!(took >= grace && took < grace * 4, "{}: gone after {took:?}", spec.job);
            assert!(!process_alive(pid), "{}: killed", spec.job);
            boinc_runtime::effects::ProcessHost::reap(&*host, spec.slot).unwrap();
        });
    }
}
