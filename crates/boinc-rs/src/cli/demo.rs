//! `boinc-rs demo [--json] [--minutes M]`: boinc-rs at work on this machine. It starts
//! `boinc-rs project-server` on 127.0.0.1 (a free port, a temporary directory) serving
//! the example app, attaches a client with a temporary data directory to it, and runs
//! the host service (the same code as `boinc-rs run`) for about a minute: real
//! processes, downloads, uploads and scheduler RPCs. A table of the tasks is redrawn in
//! place meanwhile; then a summary, whose `--json` form is one object with the keys
//! `jobs_done`, `jobs_reported`, `rpcs` and `cpu_seconds`. Everything it started is
//! stopped and every file it wrote removed before it exits.

use anyhow::{Context, Result, bail};
use boinc_core::model::JobState;
use boinc_runtime::ClientEvent;
use boinc_runtime::runtime::messages::StateSnapshot;
use boinc_service::account_files::write_account_file;
use boinc_service::service::{Service, ServiceConfig};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The arguments of `demo`.
#[derive(clap::Args)]
pub(crate) struct DemoArgs {
    /// Print the summary as one JSON object (and no table).
    #[arg(long)]
    json: bool,
    /// How long the client computes, in minutes.
    #[arg(long, value_name = "M", default_value_t = 1.0)]
    minutes: f64,
}

/// What the demo did.
#[derive(Debug, serde::Serialize)]
struct DemoSummary {
    /// Jobs whose computation finished without error.
    jobs_done: u64,
    /// Results the project server received (its own record).
    jobs_reported: u64,
    /// Scheduler RPCs the client made.
    rpcs: u64,
    /// CPU seconds the apps used.
    cpu_seconds: f64,
}

/// The demo project's jobs: short, so that a minute on two CPUs finishes several.
const JOB_SECONDS: &str = "5-10";
/// How long the project server may take to start (it signs the example app, which is
/// this binary).
const SERVER_START: Duration = Duration::from_secs(60);
/// How long the client may take to stop once asked (tasks quit, the state is written).
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs the demo.
pub(crate) fn demo(args: &DemoArgs) -> Result<()> {
    if !(args.minutes.is_finite() && args.minutes > 0.0 && args.minutes <= 24.0 * 60.0) {
        bail!("--minutes must be more than 0 and at most a day (1440), not {}", args.minutes);
    }
    let root = tempfile::Builder::new()
        .prefix("boinc-rs-demo-")
        .tempdir()
        .context("cannot make the demo's temporary directory")?;
    let mut server = ProjectServerChild::start(&root.path().join("project"))?;
    let client_dir = root.path().join("client");
    write_account_file(&client_dir, &server.url, "demo_account_key")?;
    // Results are reported as soon as they are uploaded, so the demo's minute shows them.
    std::fs::write(
        client_dir.join("cc_config.xml"),
        "<cc_config><options><report_results_immediately>1</report_results_immediately>\
         </options></cc_config>\n",
    )
    .context("cannot write the demo client's cc_config.xml")?;
    // The demo computes whatever else the machine is doing: BOINC's default would
    // suspend it for "CPU is busy" on a machine at work, and its minute would show nothing.
    std::fs::write(
        client_dir.join(boinc_core::protocol::data_dir::GLOBAL_PREFS_OVERRIDE),
        "<global_preferences><suspend_cpu_usage>0</suspend_cpu_usage></global_preferences>\n",
    )
    .context("cannot write the demo client's global_prefs_override.xml")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the demo's runtime")?;
    let duration = Duration::from_secs_f64(args.minutes * 60.0);
    let outcome = runtime.block_on(run_client(&client_dir, &server.url, duration, !args.json));
    server.stop();
    let summary = outcome?;
    if args.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        println!(
            "boinc-rs demo: {} jobs done, {} reported to the project, {:.1} CPU seconds, {} scheduler RPCs",
            summary.jobs_done, summary.jobs_reported, summary.cpu_seconds, summary.rpcs
        );
    }
    Ok(())
}

/// Runs the service attached to the project for `duration`, showing its tasks.
async fn run_client(
    dir: &Path,
    url: &str,
    duration: Duration,
    show_table: bool,
) -> Result<DemoSummary> {
    let mut config = ServiceConfig::new(dir);
    config.gui_rpc_port = None;
    let service = Service::start(config).await.context("cannot start the demo client")?;
    let mut events = service.handle.events_with_capacity(10_000);
    let table = ProgressBar::with_draw_target(
        None,
        if show_table { ProgressDrawTarget::stdout() } else { ProgressDrawTarget::hidden() },
    );
    table.set_style(ProgressStyle::with_template("{msg}").unwrap_or(ProgressStyle::default_bar()));
    let started = Instant::now();
    let mut cpu: BTreeMap<String, f64> = BTreeMap::new();
    let mut jobs_done = 0u64;
    let mut rpcs = 0u64;
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    while started.elapsed() < duration {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(500)) => {}
            _ = &mut interrupted => break,
        }
        while let Ok(event) = events.try_recv() {
            if let ClientEvent::TaskFinished { error: false, .. } = event {
                jobs_done += 1;
            }
        }
        let Ok(snapshot) = service.handle.snapshot().await else { break };
        rpcs = snapshot.rpcs;
        for job in &snapshot.state.jobs {
            let used =
                job.final_cpu_time.max(job.task.as_ref().map_or(0.0, |t| t.current_cpu_time));
            let seen = cpu.entry(job.name.clone()).or_insert(0.0);
            *seen = seen.max(used);
        }
        table.set_message(task_table(&snapshot, url, started.elapsed(), duration));
        table.tick();
    }
    table.finish();
    service.stop();
    let report = tokio::time::timeout(STOP_TIMEOUT, service.finished())
        .await
        .context("the demo client did not stop in time")?
        .context("the demo client failed")?;
    while let Ok(event) = events.try_recv() {
        if let ClientEvent::TaskFinished { error: false, .. } = event {
            jobs_done += 1;
        }
    }
    let jobs_reported = results_received(url).await?;
    Ok(DemoSummary {
        jobs_done,
        jobs_reported,
        rpcs: report.rpcs.max(rpcs),
        cpu_seconds: cpu.values().sum(),
    })
}

/// The tasks now: project, state, fraction done, elapsed, deadline.
fn task_table(
    snapshot: &StateSnapshot,
    url: &str,
    elapsed: Duration,
    duration: Duration,
) -> String {
    let state = &snapshot.state;
    let mut lines = vec![
        format!(
            "boinc-rs demo: project {url}, {:.0} of {:.0} s, {} scheduler RPCs",
            elapsed.as_secs_f64(),
            duration.as_secs_f64(),
            snapshot.rpcs
        ),
        format!(
            "{:<24} {:<28} {:<14} {:>6} {:>8} {:>9}",
            "project", "task", "state", "done", "elapsed", "deadline"
        ),
    ];
    for job in state.jobs.iter().rev().take(12).rev() {
        let project = state.projects.get(job.project.index()).map_or("?", |p| p.name.as_str());
        let running =
            job.task.is_some() && snapshot.running.iter().any(|&id| state.job(id).name == job.name);
        let (fraction, elapsed) =
            job.task.as_ref().map_or((0.0, 0.0), |t| (t.fraction_done, t.elapsed_time));
        let what = if running {
            "running"
        } else if job.got_server_ack {
            "reported"
        } else {
            match job.state {
                JobState::New | JobState::FilesDownloading => "downloading",
                JobState::FilesDownloaded if job.task.is_some() => "waiting",
                JobState::FilesDownloaded => "ready",
                JobState::FilesUploading => "uploading",
                JobState::FilesUploaded => "ready to report",
                JobState::ComputeError | JobState::UploadFailed => "error",
                JobState::Aborted => "aborted",
            }
        };
        let (fraction, elapsed) = if job.state.computing_done() {
            (1.0, job.final_elapsed_time)
        } else {
            (fraction, elapsed)
        };
        lines.push(format!(
            "{:<24} {:<28} {:<14} {:>5.0}% {:>7.0}s {:>8.0}s",
            truncate(project, 24),
            truncate(&job.name, 28),
            what,
            fraction * 100.0,
            elapsed,
            (job.report_deadline - snapshot.time).max(0.0)
        ));
    }
    lines.join("\n")
}

fn truncate(text: &str, width: usize) -> String {
    text.chars().take(width).collect()
}

/// The project server's count of results received (`GET /status`).
async fn results_received(url: &str) -> Result<u64> {
    let status: serde_json::Value = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()?
        .get(format!("{url}status"))
        .send()
        .await
        .context("the demo project server does not answer")?
        .json()
        .await
        .context("the demo project server's status is not JSON")?;
    status["results_received"]
        .as_u64()
        .context("the project server's status has no results_received")
}

/// `boinc-rs project-server` in a child process, stopped when dropped.
struct ProjectServerChild {
    child: Child,
    url: String,
}

impl ProjectServerChild {
    /// Starts the server with its project in `dir` on a free port and reads its URL
    /// from the line it prints.
    fn start(dir: &Path) -> Result<ProjectServerChild> {
        let exe = std::env::current_exe().context("cannot find the boinc-rs binary")?;
        let mut child = Command::new(exe)
            .arg("project-server")
            .arg("--dir")
            .arg(dir)
            .args(["--port", "0", "--job-seconds", JOB_SECONDS, "--request-delay", "1"])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("cannot start boinc-rs project-server")?;
        let stdout = child.stdout.take().context("the project server's output")?;
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(url) = line
                    .strip_prefix("project-server: serving ")
                    .and_then(|rest| rest.split_whitespace().next())
                {
                    let _ = sender.send(url.to_string());
                }
            }
        });
        let mut server = ProjectServerChild { child, url: String::new() };
        match receiver.recv_timeout(SERVER_START) {
            Ok(url) => server.url = url,
            Err(_) => bail!("boinc-rs project-server did not start within {SERVER_START:?}"),
        }
        Ok(server)
    }

    /// Asks the server to stop (SIGTERM: it saves its records) and waits for it; kills
    /// it if it does not go within seconds.
    fn stop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ProjectServerChild {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.stop();
        }
    }
}
