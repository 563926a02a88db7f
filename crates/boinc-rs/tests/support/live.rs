//! What the live tests share: a scratch data directory with a project holding the
//! example app, task specs for it, a process host over the directory and a driver that
//! polls the task until it ends. Every wait is bounded; the host kills what it started
//! when dropped.

#![allow(dead_code)]

use boinc_core::control::{ProcessStatus, SlotFile, SlotFileRole, TaskSpec};
use boinc_core::supervise::RestartPolicy;
use boinc_runtime::effects::{ProcessHost, SystemClock};
use boinc_runtime::runtime::messages::TaskReport;
use boinc_runtime::runtime::task::TaskSupervision;
use boinc_service::process::{LiveProcessHost, ProcessHostConfig};
use boinc_service::{StandaloneTask, TaskDriver};
use std::path::{Path, PathBuf};

use std::sync::Arc;
use std::time::{Duration, Instant};

/// The project every test task belongs to.
pub const PROJECT_DIR: &str = "projects/test";
/// The example app's file name in the project directory.
pub const EXAMPLE_APP: &str = "example_app";

/// A scratch data directory: `projects/test/` holds the example app (a link to the
/// `boinc-rs` binary) and whatever inputs a test adds.
pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        let dir = tempfile::tempdir().expect("a scratch directory");
        let project = dir.path().join(PROJECT_DIR);
        std::fs::create_dir_all(&project).expect("the project directory");
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_boinc-rs"), project.join(EXAMPLE_APP))
            .expect("the example app in the project");
        Scratch { dir }
    }

    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn project_file(&self, name: &str) -> PathBuf {
        self.dir.path().join(PROJECT_DIR).join(name)
    }

    /// A process host over the directory, with `tune` applied to BOINC's settings.
    pub fn host(&self, tune: impl FnOnce(&mut ProcessHostConfig)) -> Arc<LiveProcessHost> {
        let mut config = ProcessHostConfig::new(self.data_dir());
        tune(&mut config);
        Arc::new(LiveProcessHost::new(config, Arc::new(SystemClock)).expect("a process host"))
    }
}

/// A restart policy quick enough for a test: 0.4 s doubling to 1.6 s, ±10 %, giving up
/// after the fourth failure within ten minutes.
pub const QUICK_RESTARTS: RestartPolicy = RestartPolicy {
    initial_delay: 0.4,
    max_delay: 1.6,
    jitter: 0.1,
    max_failures: 3,
    window: 600.0,
    healthy_after: 600.0,
};

/// The example app's task in `slot` with `arguments` after `example-app`; an input
/// `in` (if the project has `in_file`) and an output `out`.
pub fn example_spec(
    scratch: &Scratch,
    slot: u32,
    job: &str,
    api: bool,
    arguments: &[&str],
) -> TaskSpec {
    let mut files = vec![SlotFile {
        open_name: "out".into(),
        file_name: format!("{job}_out"),
        copy: false,
        role: SlotFileRole::Output,
    }];
    if scratch.project_file("in_file").exists() {
        files.push(SlotFile {
            open_name: "in".into(),
            file_name: "in_file".into(),
            copy: false,
            role: SlotFileRole::Input,
        });
    }
    let mut all_arguments = vec!["example-app".to_string()];
    all_arguments.extend(arguments.iter().map(|a| a.to_string()));
    if !api {
        all_arguments.push("--no-api".into());
    }
    StandaloneTask {
        slot,
        job: job.into(),
        project_dir: PROJECT_DIR.into(),
        executable: EXAMPLE_APP.into(),
        arguments: all_arguments,
        api,
        files,
    }
    .spec()
}

/// A driver for `spec`'s task with `policy`.
pub fn driver(host: &Arc<LiveProcessHost>, spec: &TaskSpec, policy: RestartPolicy) -> TaskDriver {
    let host: Arc<dyn ProcessHost> = host.clone();
    TaskDriver::new(host, Arc::new(SystemClock), spec, TaskSupervision { policy, seed: 7 })
}

/// Every report of a task from the start of polling to its end.
#[derive(Debug, Default)]
pub struct Run {
    /// (wall time, report) at each poll.
    pub reports: Vec<(f64, TaskReport)>,
}

impl Run {
    pub fn last(&self) -> &TaskReport {
        &self.reports.last().expect("at least one report").1
    }

    /// The largest CPU time reported while running.
    pub fn cpu_seconds(&self) -> f64 {
        self.reports
            .iter()
            .filter_map(|(_, r)| match r {
                TaskReport::Running(s) | TaskReport::Finished(s) => Some(s.current_cpu_time),
                _ => None,
            })
            .fold(0.0, f64::max)
    }

    /// The CPU time reported at the first poll at or after `at`.
    pub fn cpu_at(&self, at: f64) -> f64 {
        self.reports
            .iter()
            .find_map(|(t, r)| match r {
                TaskReport::Running(s) if *t >= at => Some(s.current_cpu_time),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no running report after {at}: {self:?}"))
    }

    /// The latest running status.
    pub fn last_running(&self) -> Option<ProcessStatus> {
        self.reports.iter().rev().find_map(|(_, r)| match r {
            TaskReport::Running(s) => Some(*s),
            _ => None,
        })
    }

    /// How many times the reported checkpoint CPU time moved.
    pub fn checkpoints(&self) -> usize {
        let mut last = 0.0;
        let mut count = 0;
        for (_, report) in &self.reports {
            if let TaskReport::Running(s) = report
                && s.checkpoint_cpu_time > last
            {
                last = s.checkpoint_cpu_time;
                count += 1;
            }
        }
        count
    }
}

/// Polls every `every` until the task finishes or fails, or `until` says stop, at most
/// `timeout` (a panic past it: the test's bound).
pub async fn poll_until(
    driver: &TaskDriver,
    every: Duration,
    timeout: Duration,
    mut until: impl FnMut(&TaskReport) -> bool,
) -> Run {
    let started = Instant::now();
    let mut run = Run::default();
    loop {
        let at = driver.now();
        let report = driver.poll().await.expect("the task actor answers");
        let ended = matches!(report, TaskReport::Finished(_) | TaskReport::Failed { .. });
        let stop = until(&report);
        run.reports.push((at, report));
        if ended || stop {
            return run;
        }
        assert!(started.elapsed() < timeout, "the task did not end within {timeout:?}: {run:?}");
        // Not a guessed wait: `every` is the test's polling cadence (the client polls its
        // tasks once a second), and each poll is a step of the driver it records.
        tokio::time::sleep(every).await;
    }
}

/// Runs an async test body on an actix system on this thread.
pub fn live<F: std::future::Future<Output = ()>>(body: F) {
    actix::System::new().block_on(body);
}

/// CPU seconds this thread has used (the actors of a live test run on it).
pub fn thread_cpu_seconds() -> f64 {
    use nix::sys::resource::{UsageWho, getrusage};
    let usage = getrusage(UsageWho::RUSAGE_THREAD).expect("getrusage");
    let seconds = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    seconds(usage.user_time()) + seconds(usage.system_time())
}

/// Whether a process exists (and is not a zombie waiting to be reaped).
pub fn process_alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
        .unwrap_or(false)
}

/// A process host that records when it was asked to start an app, around the live one.
pub struct RecordingHost {
    pub inner: LiveProcessHost,
    pub starts: std::sync::Mutex<Vec<f64>>,
}

impl ProcessHost for RecordingHost {
    fn command(
        &self,
        command: &boinc_core::control::TaskCommand,
    ) -> Result<(), boinc_runtime::effects::ProcessError> {
        if matches!(command, boinc_core::control::TaskCommand::Start(_)) {
            use boinc_runtime::effects::Clock;
            self.starts.lock().unwrap().push(SystemClock.now());
        }
        self.inner.command(command)
    }
    fn poll(
        &self,
        slot: u32,
    ) -> Result<boinc_runtime::effects::ProcessReport, boinc_runtime::effects::ProcessError> {
        self.inner.poll(slot)
    }
    fn reap(&self, slot: u32) -> Result<(), boinc_runtime::effects::ProcessError> {
        self.inner.reap(slot)
    }
    fn kill(&self, slot: u32) -> Result<(), boinc_runtime::effects::ProcessError> {
        self.inner.kill(slot)
    }
    fn tend(&self, slot: u32) -> Result<bool, boinc_runtime::effects::ProcessError> {
        self.inner.tend(slot)
    }
}

/// How often [`run_to_end`] polls, and how long it waits at most.
const RUN_POLL: Duration = Duration::from_millis(200);
const RUN_BOUND: Duration = Duration::from_secs(60);

/// Runs `spec`'s task to its end under a fresh host tuned by `tune`, restarted after
/// `policy`; returns the run.
pub fn run_to_end(
    scratch: &Scratch,
    spec: &TaskSpec,
    policy: RestartPolicy,
    tune: impl FnOnce(&mut ProcessHostConfig),
) -> Run {
    let host = scratch.host(tune);
    let mut result = Run::default();
    live(async {
        let driver = driver(&host, spec, policy);
        driver.start(spec).await.unwrap();
        result = poll_until(&driver, RUN_POLL, RUN_BOUND, |_| false).await;
    });
    result
}

/// The exit status and message of a run that ended in an error (a panic otherwise).
pub fn failed(run: &Run) -> (i32, String) {
    match run.last() {
        TaskReport::Failed { exit_status, message } => (*exit_status, message.clone()),
        other => panic!("expected an error result, got {other:?} after {run:?}"),
    }
}

/// Asserts that a run finished.
pub fn finished(run: &Run) {
    assert!(matches!(run.last(), TaskReport::Finished(_)), "expected a finish: {run:?}");
}
