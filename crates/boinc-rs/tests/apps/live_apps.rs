//! The live process host with real child processes (issue "Running real apps"
//! acceptance): the example app runs to completion, suspends without using CPU,
//! resumes, quits and resumes from its checkpoint, is killed and restarted after the
//! backoff, gives up after the restart limit; bad apps end in clear errors or are
//! contained while the client keeps running.

use crate::support;

use boinc_runtime::effects::ProcessHost;
use boinc_runtime::runtime::messages::TaskReport;
use std::time::Duration;
use support::*;

const POLL: Duration = Duration::from_millis(250);
const BOUND: Duration = Duration::from_secs(60);

#[test]
fn example_app_runs_to_completion() {
    let scratch = Scratch::new();
    std::fs::write(scratch.project_file("in_file"), "hello boinc\n").unwrap();
    let host = scratch.host(|_| {});
    let spec = example_spec(
        &scratch,
        0,
        "complete",
        true,
        &["--seconds", "1.5", "--input", "in", "--checkpoint-period", "0.3"],
    );
    live(async {
        let driver = driver(&host, &spec, QUICK_RESTARTS);
        driver.start(&spec).await.unwrap();
        let run = poll_until(&driver, POLL, BOUND, |_| false).await;
        let TaskReport::Finished(status) = run.last() else { panic!("not finished: {run:?}") };
        assert!(status.finished);
        assert!(status.current_cpu_time >= 1.4, "{status:?}");
        assert!(run.checkpoints() >= 1, "checkpoints seen: {run:?}");
        let output = std::fs::read_to_string(scratch.project_file("complete_out")).unwrap();
        assert!(output.starts_with("HELLO BOINC\nresult "), "{output}");
        assert!(!scratch.data_dir().join("slots/0").exists(), "the slot is cleaned");
    });
}

/// Suspends the app once it has computed a little, keeps it suspended for `hold`, and
/// returns the CPU time it used while suspended (after `settle` for the suspension to
/// take effect).
async fn suspended_cpu(driver: &boinc_service::TaskDriver, hold: f64, settle: f64) -> f64 {
    poll_until(
        driver,
        POLL,
        BOUND,
        |r| matches!(r, TaskReport::Running(s) if s.current_cpu_time > 0.3),
    )
    .await;
    driver.suspend().await.unwrap();
    let suspended_at = driver.now();
    let run = poll_until(driver, POLL, BOUND, |_| driver.now() - suspended_at > hold).await;
    let used = run.cpu_at(suspended_at + hold) - run.cpu_at(suspended_at + settle);
    driver.resume().await.unwrap();
    used
}

#[test]
fn a_suspended_app_uses_no_cpu_and_resumes() {
    for api in [true, false] {
        let scratch = Scratch::new();
        let host = scratch.host(|_| {});
        let spec = example_spec(&scratch, 0, "suspend", api, &["--seconds", "1.5"]);
        live(async {
            let driver = driver(&host, &spec, QUICK_RESTARTS);
            driver.start(&spec).await.unwrap();
            let used = suspended_cpu(&driver, 1.5, 0.5).await;
            assert!(used < 0.05, "api {api}: {used} CPU s while suspended");
            let run = poll_until(&driver, POLL, BOUND, |_| false).await;
            assert!(matches!(run.last(), TaskReport::Finished(_)), "api {api}: {run:?}");
            assert!(scratch.project_file("suspend_out").is_file(), "api {api}: the output");
        });
    }
}

#[test]
fn a_quit_app_resumes_from_its_checkpoint() {
    let scratch = Scratch::new();
    let host = scratch.host(|_| {});
    // Work enough that the app is still computing when the quit reaches it on a busy
    // machine (with less, it could finish first, which is a finish, not a quit).
    let mut spec =
        example_spec(&scratch, 1, "quit", true, &["--seconds", "3", "--checkpoint-period", "0.2"]);
    live(async {
        let driver = driver(&host, &spec, QUICK_RESTARTS);
        driver.start(&spec).await.unwrap();
        let run = poll_until(
            &driver,
            POLL,
            BOUND,
            |r| matches!(r, TaskReport::Running(s) if s.checkpoint_cpu_time > 0.8),
        )
        .await;
        driver.quit().await.unwrap();
        let gone = poll_until(&driver, POLL, BOUND, |r| matches!(r, TaskReport::Idle)).await;
        assert!(matches!(gone.last(), TaskReport::Idle), "{gone:?}");
        let checkpoint = gone.last_running().or(run.last_running()).expect("a status");
        assert!(checkpoint.checkpoint_cpu_time > 0.8);
        // Started again from where it checkpointed, as the scheduler would.
        spec.status = checkpoint;
        driver.start(&spec).await.unwrap();
        let rest = poll_until(&driver, POLL, BOUND, |_| false).await;
        let TaskReport::Finished(status) = rest.last() else { panic!("{rest:?}") };
        let first_report = rest.last_running().expect("ran again");
        assert!(first_report.current_cpu_time >= checkpoint.checkpoint_cpu_time);
        // The app's own accounting ends the work at 3 CPU s; the client's, from the
        // operating system, agrees within a few hundredths.
        assert!(status.current_cpu_time >= 2.9 && status.current_cpu_time < 4.5, "{status:?}");
        let stderr = host.take_stderr("quit").expect("the app's standard error");
        let restarted_at = stderr
            .lines()
            .filter_map(|l| l.strip_prefix("example-app: starting at iteration "))
            .nth(1)
            .expect("a second run");
        assert!(!restarted_at.starts_with("0 "), "resumed from its checkpoint: {stderr}");
    });
}

/// The example app in `slot` as job `job`, with work for longer than a test waits.
fn long_example(scratch: &Scratch, slot: u32, job: &str) -> boinc_core::control::TaskSpec {
    example_spec(scratch, slot, job, true, &["--seconds", "30", "--checkpoint-period", "0.2"])
}

/// Starts `spec`'s task and polls it until its app has checkpointed some work.
async fn started_until_checkpointed(
    driver: &boinc_service::TaskDriver,
    spec: &boinc_core::control::TaskSpec,
) -> Run {
    driver.start(spec).await.unwrap();
    poll_until(
        driver,
        POLL,
        BOUND,
        |r| matches!(r, TaskReport::Running(s) if s.checkpoint_cpu_time > 0.3),
    )
    .await
}

/// A task quit (its project or computing suspended) and started again while the quit
/// is still under way gets a new process: the run that was asked to quit is let go, not
/// "resumed" (which left the task executing with no process), and no zombie is left.
#[test]
fn a_task_started_again_while_it_quits_runs_a_new_process() {
    let scratch = Scratch::new();
    let host = scratch.host(|_| {});
    let mut spec = long_example(&scratch, 2, "toggle");
    live(async {
        let driver = driver(&host, &spec, QUICK_RESTARTS);
        let run = started_until_checkpointed(&driver, &spec).await;
        let first = host.process_id(2).expect("the first run");
        driver.quit().await.unwrap();
        // The scheduler starts it again at once, from its checkpoint.
        spec.status = run.last_running().expect("a status");
        driver.start(&spec).await.unwrap();
        let again = poll_until(&driver, POLL, BOUND, |_| {
            host.process_id(2).is_some_and(|pid| pid != first && process_alive(pid))
        })
        .await;
        let second = host.process_id(2).expect("a new run");
        assert_ne!(second, first, "{again:?}");
        assert!(!process_alive(first), "the quit run is gone, not a zombie");
        // The new run computes: its CPU time grows.
        let before = again.last_running().expect("running").current_cpu_time;
        let later = poll_until(
            &driver,
            POLL,
            BOUND,
            |r| matches!(r, TaskReport::Running(s) if s.current_cpu_time > before + 0.5),
        )
        .await;
        assert!(matches!(later.last(), TaskReport::Running(_)), "{later:?}");
        driver.quit().await.unwrap();
    });
}

/// A quit app that nothing polls any more (a preempted task is not) is waited for, so
/// it leaves no `<defunct>` process behind.
#[test]
fn a_quit_app_leaves_no_zombie() {
    let scratch = Scratch::new();
    let host = scratch.host(|_| {});
    let spec = long_example(&scratch, 3, "zombie");
    live(async {
        let driver = driver(&host, &spec, QUICK_RESTARTS);
        started_until_checkpointed(&driver, &spec).await;
        let pid = host.process_id(3).expect("a run");
        driver.quit().await.unwrap();
        // No poll from here on: only the task's actor looks after the quitting run.
        let proc_entry = format!("/proc/{pid}");
        support::wait::wait_until_async("the quit app to be waited for", BOUND, || {
            !std::path::Path::new(&proc_entry).exists()
        })
        .await;
        assert_eq!(host.process_id(3), None);
    });
}

#[test]
fn a_killed_app_restarts_from_its_checkpoint_after_a_doubling_backoff() {
    let scratch = Scratch::new();
    let host = scratch.host(|_| {});
    let spec = example_spec(
        &scratch,
        2,
        "killed",
        true,
        &["--seconds", "2.5", "--checkpoint-period", "0.2"],
    );
    live(async {
        let driver = driver(&host, &spec, QUICK_RESTARTS);
        driver.start(&spec).await.unwrap();
        let mut delays = Vec::new();
        let mut checkpoint = 0.0;
        for streak in 1..=2 {
            let before = host.process_id(2);
            // Killed once the run has checkpointed some work of its own.
            let run = poll_until(
                &driver,
                POLL,
                BOUND,
                |r| matches!(r, TaskReport::Running(s) if s.checkpoint_cpu_time > checkpoint + 0.3),
            )
            .await;
            checkpoint = run.last_running().expect("running").checkpoint_cpu_time;
            let pid = host.process_id(2).expect("running");
            assert_ne!(Some(pid), before.filter(|_| streak > 1), "a new process");
            nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            )
            .unwrap();
            let run =
                poll_until(&driver, POLL, BOUND, |r| matches!(r, TaskReport::Restarting { .. }))
                    .await;
            let (at, TaskReport::Restarting { restart_at, checkpoint, .. }) =
                run.reports.last().unwrap()
            else {
                panic!("{run:?}")
            };
            assert!(checkpoint.checkpoint_cpu_time > 0.0, "restarts from a checkpoint");
            delays.push(restart_at - at);
            let (low, high) = QUICK_RESTARTS.delay_bounds(streak);
            assert!(
                (low - 0.05..high + 0.05).contains(&(restart_at - at)),
                "streak {streak}: {delays:?}"
            );
        }
        assert!(delays[1] > delays[0] * 1.4, "the backoff doubles: {delays:?}");
        let run = poll_until(&driver, POLL, BOUND, |_| false).await;
        assert!(matches!(run.last(), TaskReport::Finished(_)), "{run:?}");
        let stderr = host.take_stderr("killed").expect("standard error");
        let resumed = stderr
            .lines()
            .filter_map(|l| l.strip_prefix("example-app: starting at iteration "))
            .skip(1)
            .filter(|l| !l.starts_with("0 "))
            .count();
        assert_eq!(resumed, 2, "both restarts resume from the checkpoint: {stderr}");
    });
}

#[test]
fn a_crash_loop_gives_up_after_the_restart_limit_at_negligible_cost() {
    let scratch = Scratch::new();
    let host = std::sync::Arc::new(RecordingHost {
        inner: boinc_service::process::LiveProcessHost::new(
            boinc_service::process::ProcessHostConfig::new(scratch.data_dir()),
            std::sync::Arc::new(boinc_runtime::effects::SystemClock),
        )
        .unwrap(),
        starts: Default::default(),
    });
    let spec = example_spec(&scratch, 3, "crashing", true, &["--crash-after", "0"]);
    live(async {
        let dyn_host: std::sync::Arc<dyn boinc_runtime::effects::ProcessHost> = host.clone();
        let driver = boinc_service::TaskDriver::new(
            dyn_host,
            std::sync::Arc::new(boinc_runtime::effects::SystemClock),
            &spec,
            boinc_runtime::runtime::task::TaskSupervision { policy: QUICK_RESTARTS, seed: 3 },
        );
        let cpu_before = thread_cpu_seconds();
        driver.start(&spec).await.unwrap();
        let run = poll_until(&driver, Duration::from_millis(100), BOUND, |_| false).await;
        let client_cpu = thread_cpu_seconds() - cpu_before;
        let TaskReport::Failed { exit_status, message } = run.last() else { panic!("{run:?}") };
        assert_eq!(*exit_status, boinc_core::supervise::EXIT_SIGNAL, "{message}");
        assert!(message.contains("signal 11"), "{message}");
        // The app ran once and was restarted `max_failures` times, no more.
        let starts = host.starts.lock().unwrap().clone();
        assert_eq!(starts.len(), QUICK_RESTARTS.max_failures as usize + 1, "{starts:?}");
        // Each restart waited for its backoff, doubling, measured on the clock.
        let mut restart_ats: Vec<(f64, f64)> = Vec::new();
        for (at, report) in &run.reports {
            if let TaskReport::Restarting { restart_at, .. } = report
                && restart_ats.last().is_none_or(|(_, r)| r != restart_at)
            {
                restart_ats.push((*at, *restart_at));
            }
        }
        assert_eq!(restart_ats.len(), QUICK_RESTARTS.max_failures as usize);
        for (streak, ((decided, restart_at), started)) in
            restart_ats.iter().zip(&starts[1..]).enumerate()
        {
            let (low, high) = QUICK_RESTARTS.delay_bounds(streak as u32 + 1);
            let delay = restart_at - decided;
            assert!((low - 0.05..high + 0.05).contains(&delay), "streak {}: {delay}", streak + 1);
            assert!(started >= restart_at, "never before its time: {started} < {restart_at}");
            assert!(started - restart_at < 0.5, "at the first poll after its time");
        }
        eprintln!("client CPU over the crash loop: {client_cpu:.3} s for {} starts", starts.len());
        assert!(client_cpu < 0.5, "the client spent {client_cpu} CPU s supervising the loop");
    });
}

/// A client killed after its app finished, but before it wrote that down, finds the
/// finished run in the slot when it restarts: the task is reported finished at once,
/// its output goes to the project, and the app does not run again.
#[test]
fn a_run_that_finished_before_the_client_restarted_is_not_run_again() {
    use boinc_core::control::TaskCommand;
    use boinc_core::supervise::AppExit;
    use boinc_runtime::effects::{ProcessHost, ProcessReport};

    let scratch = Scratch::new();
    let spec = example_spec(&scratch, 0, "finished", true, &["--seconds", "0.5"]);
    let start = TaskCommand::Start(Box::new(spec.clone()));
    {
        let host = scratch.host(|_| {});
        host.command(&start).expect("the app starts");
        support::wait::wait_until("the app to finish", BOUND, || {
            matches!(host.poll(0), Ok(ProcessReport::Exited { exit: AppExit::Finished, .. }))
        });
        // The client is killed here: the slot is not cleaned, and its state still says
        // the task runs.
    }
    let stderr = scratch.data_dir().join("slots/0/stderr.txt");
    let before = std::fs::read_to_string(&stderr).expect("the run's standard error");
    let host = scratch.host(|_| {});
    host.command(&start).expect("the start is taken");
    let report = host.poll(0).expect("a report");
    assert!(
        matches!(report, ProcessReport::Exited { exit: AppExit::Finished, status } if status.finished),
        "{report:?}"
    );
    let after = std::fs::read_to_string(&stderr).unwrap_or_default();
    assert_eq!(after, before, "the app ran again");
    host.reap(0).expect("the slot is cleaned");
    assert!(scratch.project_file("finished_out").exists(), "the output went to the project");
}
