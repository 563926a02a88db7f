//! `boinc-rs app-test EXE`: what a project developer runs to check an app before
//! deploying it (issue "Running real apps"). The app runs in a scratch data directory
//! under the client's own machinery, without a server: a TaskActor with the live
//! process host, polled once a second as BOINC polls its tasks, suspended, resumed and
//! quit on request, restarted after crashes by the app restart policy. The report says
//! how it ended, the checkpoints and progress it reported, the CPU time it used (and
//! used while suspended: it should be none), how often it was started again, and where
//! its outputs were left.

use anyhow::{Context, Result, bail};
use boinc_core::control::{ProcessStatus, SlotFile, SlotFileRole, TaskSpec, project_dir};
use boinc_core::supervise::RestartPolicy;
use boinc_runtime::effects::{ProcessHost, SystemClock};
use boinc_runtime::runtime::messages::TaskReport;
use boinc_runtime::runtime::task::TaskSupervision;
use boinc_service::process::{LiveProcessHost, ProcessHostConfig};
use boinc_service::{StandaloneTask, TaskDriver};
use serde::Serialize;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use std::sync::Arc;
use std::time::{Duration, Instant};

/// BOINC polls its tasks once a second.
const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// After a suspend request, the app has this long to stop before its CPU time counts as
/// used while suspended.
const SUSPEND_SETTLE: f64 = 1.0;
/// The scratch project's master URL (its directory name comes from it).
const PROJECT_URL: &str = "http://app-test.invalid/";
/// The job's name.
const JOB: &str = "app_test_0";

/// `boinc-rs app-test`'s command line.
#[derive(Debug, clap::Args)]
pub(crate) struct AppTestArgs {
    /// The app's executable.
    #[arg(value_name = "EXE")]
    executable: PathBuf,
    /// An input file the app opens as OPEN_NAME (repeatable).
    #[arg(long = "input", value_name = "OPEN_NAME=FILE", value_parser = parse_input)]
    inputs: Vec<(String, PathBuf)>,
    /// An output file the app writes as OPEN_NAME (repeatable).
    #[arg(long = "output", value_name = "OPEN_NAME")]
    outputs: Vec<String>,
    /// Suspend the app this many seconds after it starts.
    #[arg(long, value_name = "S", requires = "resume_after")]
    suspend_at: Option<f64>,
    /// Resume it this many seconds after suspending it.
    #[arg(long, value_name = "S", requires = "suspend_at")]
    resume_after: Option<f64>,
    /// Quit the app this many seconds after it starts, then start it again from its
    /// checkpoint.
    #[arg(long, value_name = "S")]
    quit_at: Option<f64>,
    /// The app does not use BOINC's API: run it as BOINC's wrapper does (signals to
    /// suspend, resume and quit; success is exit 0 with every output present).
    #[arg(long)]
    wrapper: bool,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    /// The scratch data directory (default: a new directory under the system's
    /// temporary directory, kept so that the outputs can be inspected).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Give up after this many seconds (the app is killed).
    #[arg(long, value_name = "S", default_value_t = 3600.0)]
    timeout: f64,
    /// The app's command line.
    #[arg(last = true, value_name = "ARGS")]
    arguments: Vec<String>,
}

fn parse_input(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((open_name, file)) if !open_name.is_empty() && !file.is_empty() => {
            Ok((open_name.to_owned(), PathBuf::from(file)))
        }
        _ => Err(format!("expected OPEN_NAME=FILE, found \"{text}\"")),
    }
}

/// The report (`--json` prints exactly these keys).
#[derive(Debug, Clone, PartialEq, Serialize)]
struct AppTestReport {
    /// 0 when the app finished, else the job's exit status (BOINC's codes).
    exit_status: i32,
    /// Whether the app finished its work.
    finished: bool,
    /// Checkpoints the app reported.
    checkpoints: u32,
    /// CPU seconds the job used, over every run.
    cpu_seconds: f64,
    /// CPU seconds used while suspended (from a second after the suspend request to the
    /// resume); `None` without `--suspend-at`.
    suspended_cpu_seconds: Option<f64>,
    /// Times the app was started again (after a quit or a crash).
    restarts: u32,
    /// Where each output was left, by open name.
    outputs: BTreeMap<String, PathBuf>,
}

/// What the run saw besides the report.
#[derive(Debug, Default)]
struct Observations {
    /// (seconds since the start, fraction done) at each change.
    fraction_samples: Vec<(f64, f64)>,
    /// Why the job ended in an error.
    message: Option<String>,
    /// The run went past `--timeout`.
    timed_out: bool,
}

/// Where the run stands.
#[derive(Debug, Default)]
struct Progress {
    last: ProcessStatus,
    checkpoints: u32,
    restarts: u32,
    last_restart_at: Option<f64>,
}

impl Progress {
    /// Counts a checkpoint the running app reported (a finish is not one).
    fn saw_checkpoint(&mut self, status: &ProcessStatus) {
        if status.checkpoint_cpu_time > self.last.checkpoint_cpu_time {
            self.checkpoints += 1;
        }
    }

    fn saw(&mut self, status: &ProcessStatus, elapsed: f64, observations: &mut Observations) {
        if observations.fraction_samples.last().is_none_or(|&(_, f)| f != status.fraction_done) {
            observations.fraction_samples.push((elapsed, status.fraction_done));
        }
        self.last = ProcessStatus {
            checkpoint_cpu_time: status.checkpoint_cpu_time.max(self.last.checkpoint_cpu_time),
            ..*status
        };
    }
}

/// Sets up the scratch data directory: the project directory with the executable and
/// the inputs. Returns the task's spec.
fn prepare(args: &AppTestArgs, data_dir: &Path) -> Result<TaskSpec> {
    let project = project_dir(PROJECT_URL);
    let project_path = data_dir.join(&project);
    std::fs::create_dir_all(&project_path)
        .with_context(|| format!("cannot create {}", project_path.display()))?;
    let executable = args
        .executable
        .file_name()
        .and_then(|n| n.to_str())
        .context("the executable has no file name")?
        .to_owned();
    let installed = project_path.join(&executable);
    std::fs::copy(&args.executable, &installed)
        .with_context(|| format!("cannot copy {}", args.executable.display()))?;
    std::fs::set_permissions(&installed, std::fs::Permissions::from_mode(0o755))?;
    let mut files = Vec::new();
    for (open_name, path) in &args.inputs {
        let file_name = format!("input_{open_name}");
        std::fs::copy(path, project_path.join(&file_name))
            .with_context(|| format!("cannot copy the input {}", path.display()))?;
        files.push(SlotFile {
            open_name: open_name.clone(),
            file_name,
            copy: false,
            role: SlotFileRole::Input,
        });
    }
    for open_name in &args.outputs {
        let file_name = format!("output_{open_name}");
        files.push(SlotFile {
            open_name: open_name.clone(),
            file_name,
            copy: false,
            role: SlotFileRole::Output,
        });
    }
    Ok(StandaloneTask {
        slot: 0,
        job: JOB.into(),
        project_dir: project,
        executable,
        arguments: args.arguments.clone(),
        api: !args.wrapper,
        files,
    }
    .spec())
}

/// Runs the app to its end (or the timeout) and reports.
async fn drive(
    args: &AppTestArgs,
    host: &Arc<LiveProcessHost>,
    spec: &TaskSpec,
) -> Result<(AppTestReport, Observations)> {
    let dyn_host: Arc<dyn ProcessHost> = host.clone();
    let supervision = TaskSupervision { policy: RestartPolicy::APP, seed: 1 };
    let driver = TaskDriver::new(dyn_host, Arc::new(SystemClock), spec, supervision);
    let started = Instant::now();
    let mut observations = Observations::default();
    let mut progress = Progress::default();
    let mut suspended: Option<f64> = None;
    let mut suspended_cpu: Option<(f64, f64)> = None;
    let mut resumed = false;
    // The quit was asked for; the app is gone and waits to be started again.
    let mut quit_asked = false;
    let mut quit = false;
    let mut suspended_cpu_seconds = None;
    driver.start(spec).await?;
    let mut ticks = tokio::time::interval(POLL_INTERVAL);
    let (exit_status, finished) = loop {
        ticks.tick().await;
        let elapsed = started.elapsed().as_secs_f64();
        if elapsed > args.timeout {
            observations.timed_out = true;
            host.kill(spec.slot).ok();
            host.reap(spec.slot).ok();
            break (-1, false);
        }
        let report = driver.poll().await?;
        match &report {
            TaskReport::Running(status) => {
                progress.saw_checkpoint(status);
                progress.saw(status, elapsed, &mut observations);
                if suspended.is_some_and(|at| elapsed >= at + SUSPEND_SETTLE) && !resumed {
                    suspended_cpu
                        .get_or_insert((status.current_cpu_time, status.current_cpu_time))
                        .1 = status.current_cpu_time;
                }
            }
            TaskReport::Finished(status) => {
                progress.saw(status, elapsed, &mut observations);
                break (0, true);
            }
            TaskReport::Failed { exit_status, message } => {
                observations.message = Some(message.clone());
                break (*exit_status, false);
            }
            TaskReport::Restarting { restart_at, .. } => {
                if progress.last_restart_at != Some(*restart_at) {
                    progress.last_restart_at = Some(*restart_at);
                    progress.restarts += 1;
                }
            }
            TaskReport::Idle => {
                if quit {
                    // Quit and gone: started again from its checkpoint, as the
                    // scheduler would.
                    quit = false;
                    progress.restarts += 1;
                    let restart = TaskSpec { status: progress.last, ..spec.clone() };
                    driver.start(&restart).await?;
                }
            }
        }
        if let (Some(at), None) = (args.suspend_at, suspended)
            && elapsed >= at
        {
            driver.suspend().await?;
            suspended = Some(elapsed);
        }
        if let (Some(at), Some(after), false) = (suspended, args.resume_after, resumed)
            && elapsed >= at + after
        {
            driver.resume().await?;
            resumed = true;
            suspended_cpu_seconds = Some(suspended_cpu.map_or(0.0, |(from, to)| to - from));
        }
        if args.quit_at.is_some_and(|at| elapsed >= at)
            && !quit_asked
            && matches!(report, TaskReport::Running(_))
        {
            driver.quit().await?;
            quit_asked = true;
            quit = true;
        }
    };
    let outputs = spec
        .program
        .files
        .iter()
        .filter(|f| f.role == SlotFileRole::Output)
        .map(|f| {
            (
                f.open_name.clone(),
                host.data_dir().join(&spec.program.project_dir).join(&f.file_name),
            )
        })
        .filter(|(_, path)| path.is_file())
        .collect();
    let report = AppTestReport {
        exit_status,
        finished,
        checkpoints: progress.checkpoints,
        cpu_seconds: progress.last.current_cpu_time,
        suspended_cpu_seconds,
        restarts: progress.restarts,
        outputs,
    };
    Ok((report, observations))
}

fn print_text(
    report: &AppTestReport,
    observations: &Observations,
    data_dir: &Path,
    stderr: Option<String>,
) {
    let verdict = if report.finished { "finished" } else { "did not finish" };
    println!("app-test: the app {verdict} (exit status {})", report.exit_status);
    if let Some(message) = &observations.message {
        println!("  error: {message}");
    }
    if observations.timed_out {
        println!("  timed out: the app was killed");
    }
    println!("  CPU time: {:.2} s", report.cpu_seconds);
    println!("  checkpoints reported: {}", report.checkpoints);
    let samples: Vec<String> = observations
        .fraction_samples
        .iter()
        .map(|(t, f)| format!("{t:.0}s:{:.1}%", f * 100.0))
        .collect();
    println!(
        "  fraction done: {}",
        if samples.is_empty() { "never reported".into() } else { samples.join(" ") }
    );
    match report.suspended_cpu_seconds {
        Some(used) if used <= 0.05 => {
            println!("  suspension honoured: {used:.2} CPU s while suspended")
        }
        Some(used) => println!("  suspension NOT honoured: {used:.2} CPU s while suspended"),
        None => {}
    }
    println!("  restarts: {}", report.restarts);
    for (open_name, path) in &report.outputs {
        println!("  output {open_name}: {}", path.display());
    }
    println!("  data directory: {}", data_dir.display());
    if let Some(stderr) = stderr.filter(|s| !s.trim().is_empty()) {
        println!("  standard error (last lines):");
        let lines: Vec<&str> = stderr.lines().collect();
        for line in &lines[lines.len().saturating_sub(10)..] {
            println!("    {line}");
        }
    }
}

/// Runs `boinc-rs app-test`.
pub(crate) fn app_test(args: AppTestArgs) -> Result<()> {
    if !args.executable.is_file() {
        bail!("{} is not a file", args.executable.display());
    }
    let data_dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => tempfile::Builder::new().prefix("boinc-rs-app-test-").tempdir()?.keep(),
    };
    let spec = prepare(&args, &data_dir)?;
    let host =
        Arc::new(LiveProcessHost::new(ProcessHostConfig::new(&data_dir), Arc::new(SystemClock))?);
    let (report, observations) = actix::System::new().block_on(drive(&args, &host, &spec))?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print_text(&report, &observations, host.data_dir(), host.take_stderr(JOB));
    }
    if !report.finished {
        std::process::exit(1);
    }
    Ok(())
}
