//! What supervising real apps costs the client, and how fast a suspension takes effect
//! (issue "Running real apps": overhead and suspend latency, measured).
//!
//! Two example apps (BOINC's API) run in slots of a scratch data directory, each under
//! its TaskActor and the live process host, polled once a second as BOINC polls. The
//! client's own CPU time (this process: the actors, the process host's /proc reads and
//! shared-memory exchanges; the apps are children and not counted) is measured over
//! the steady state and extrapolated to an hour, twice: as `getrusage(RUSAGE_SELF)`
//! says (sampled at the scheduler's tick) and as the kernel's per-thread run time says
//! (`/proc/self/task/*/schedstat`, nanoseconds).
//!
//! Then the suspend latency: the time from the suspend request to the app's CPU time
//! stopping, sampled every 2 ms from the kernel's per-thread run time
//! (`/proc/PID/task/*/schedstat`, nanoseconds). The CPU time has stopped at the last
//! sample in which it still grew by more than a quarter of the sampling interval. The
//! median over several tries is reported, for an app using BOINC's API (a message on
//! its process-control channel) and for one without it (SIGSTOP to its group), and for
//! a real BOINC-API app when one is given with `--boinc-app`.
//!
//! Run: `cargo build -p boinc-rs && cargo run -p boinc-rs --example
//! app_supervision_overhead -- --seconds 180` (prints one JSON object).

use boinc_core::control::{SlotFile, SlotFileRole, TaskSpec};
use boinc_core::supervise::RestartPolicy;
use boinc_runtime::effects::{ProcessHost, SystemClock};
use boinc_runtime::runtime::messages::TaskReport;
use boinc_runtime::runtime::task::TaskSupervision;
use boinc_service::process::{LiveProcessHost, ProcessHostConfig};
use boinc_service::{StandaloneTask, TaskDriver};
use clap::Parser;
use serde_json::json;
use std::path::{Path, PathBuf};

use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser)]
struct Args {
    /// Seconds to measure the client's CPU time over (after the apps started).
    #[arg(long, default_value_t = 120.0)]
    seconds: f64,
    /// Suspensions to time, per kind of app.
    #[arg(long, default_value_t = 9)]
    tries: usize,
    /// The boinc-rs binary (the example app); default: beside this example.
    #[arg(long)]
    app: Option<PathBuf>,
    /// A real BOINC-API app to time too (tests/apps/upper_case.cpp, built).
    #[arg(long)]
    boinc_app: Option<PathBuf>,
}

const PROJECT_DIR: &str = "projects/overhead";

fn spec(slot: u32, executable: &str, arguments: Vec<String>, api: bool) -> TaskSpec {
    let file = |open_name: &str, file_name: String, role| SlotFile {
        open_name: open_name.into(),
        file_name,
        copy: false,
        role,
    };
    StandaloneTask {
        slot,
        job: format!("job_{slot}"),
        project_dir: PROJECT_DIR.into(),
        executable: executable.into(),
        arguments,
        api,
        files: vec![
            file("in", "in".into(), SlotFileRole::Input),
            file("out", format!("out_{slot}"), SlotFileRole::Output),
        ],
    }
    .spec()
}

fn example_arguments(api: bool) -> Vec<String> {
    let mut arguments: Vec<String> =
        ["example-app", "--seconds", "100000"].map(String::from).to_vec();
    if !api {
        arguments.push("--no-api".into());
    }
    arguments
}

/// This process's CPU seconds (all its threads; not its children).
fn own_cpu_seconds() -> f64 {
    use nix::sys::resource::{UsageWho, getrusage};
    getrusage(UsageWho::RUSAGE_SELF).map_or(0.0, |u| {
        let seconds = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
        seconds(u.user_time()) + seconds(u.system_time())
    })
}

/// Run time of every thread of `pid`, nanoseconds.
fn run_time_ns(pid: i32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0 };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|line| line.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// Seconds from now until `pid`'s CPU time stops growing (sampled for `window`).
fn time_to_stop(pid: i32, requested: Instant, window: Duration) -> f64 {
    const SAMPLE: Duration = Duration::from_millis(2);
    let threshold = SAMPLE.as_nanos() as u64 / 4;
    let mut last = run_time_ns(pid);
    let mut stopped = requested;
    while requested.elapsed() < window {
        std::thread::sleep(SAMPLE);
        let now = run_time_ns(pid);
        if now.saturating_sub(last) > threshold {
            stopped = Instant::now();
        }
        last = now;
    }
    stopped.saturating_duration_since(requested).as_secs_f64()
}

fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

async fn wait_running(driver: &TaskDriver, cpu: f64) {
    loop {
        if let Ok(TaskReport::Running(status)) = driver.poll().await
            && status.current_cpu_time > cpu
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Median suspend latency of the app `spec` runs, over `tries` suspensions, in ms.
async fn suspend_latency(
    host: &Arc<LiveProcessHost>,
    spec: &TaskSpec,
    tries: usize,
) -> serde_json::Value {
    let dyn_host: Arc<dyn ProcessHost> = host.clone();
    let supervision = TaskSupervision { policy: RestartPolicy::APP, seed: 1 };
    let driver = TaskDriver::new(dyn_host, Arc::new(SystemClock), spec, supervision);
    driver.start(spec).await.expect("started");
    wait_running(&driver, 0.3).await;
    let pid = host.process_id(spec.slot).expect("the app runs");
    let mut samples = Vec::new();
    for _ in 0..tries {
        let requested = Instant::now();
        driver.suspend().await.expect("suspended");
        samples.push(time_to_stop(pid, requested, Duration::from_millis(800)) * 1000.0);
        driver.resume().await.expect("resumed");
        let resumed_at = driver.now();
        loop {
            if let Ok(TaskReport::Running(status)) = driver.poll().await
                && driver.now() - resumed_at > 0.7
                && status.current_cpu_time > 0.0
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    host.kill(spec.slot).ok();
    let _ = driver.poll().await;
    host.reap(spec.slot).ok();
    if samples.is_empty() {
        return serde_json::Value::Null;
    }
    let median_ms = median(&mut samples.clone());
    json!({ "median_ms": median_ms, "samples_ms": samples })
}

async fn measure(args: Args, data_dir: &Path) -> serde_json::Value {
    let host = Arc::new(
        LiveProcessHost::new(ProcessHostConfig::new(data_dir), Arc::new(SystemClock))
            .expect("host"),
    );
    let dyn_host: Arc<dyn ProcessHost> = host.clone();
    let supervision = TaskSupervision { policy: RestartPolicy::APP, seed: 1 };
    let specs: Vec<TaskSpec> =
        (0..2).map(|slot| spec(slot, "example_app", example_arguments(true), true)).collect();
    let drivers: Vec<TaskDriver> = specs
        .iter()
        .map(|spec| TaskDriver::new(dyn_host.clone(), Arc::new(SystemClock), spec, supervision))
        .collect();
    for (driver, spec) in drivers.iter().zip(&specs) {
        driver.start(spec).await.expect("started");
    }
    for driver in &drivers {
        wait_running(driver, 0.1).await;
    }
    // Steady state: each task polled once a second.
    let mut ticks = tokio::time::interval(Duration::from_secs(1));
    ticks.tick().await;
    let cpu_before = own_cpu_seconds();
    let run_time_before = run_time_ns(std::process::id() as i32);
    let started = Instant::now();
    let mut polls = 0u64;
    while started.elapsed().as_secs_f64() < args.seconds {
        ticks.tick().await;
        for driver in &drivers {
            let report = driver.poll().await.expect("a report");
            assert!(matches!(report, TaskReport::Running(_)), "{report:?}");
            polls += 1;
        }
    }
    let wall = started.elapsed().as_secs_f64();
    let client_cpu = own_cpu_seconds() - cpu_before;
    let client_run_time =
        run_time_ns(std::process::id() as i32).saturating_sub(run_time_before) as f64 / 1e9;
    for spec in &specs {
        host.kill(spec.slot).ok();
    }
    for driver in &drivers {
        let _ = driver.poll().await;
    }
    for spec in &specs {
        host.reap(spec.slot).ok();
    }
    let api =
        suspend_latency(&host, &spec(2, "example_app", example_arguments(true), true), args.tries)
            .await;
    let wrapper = suspend_latency(
        &host,
        &spec(3, "example_app", example_arguments(false), false),
        args.tries,
    )
    .await;
    let boinc = match &args.boinc_app {
        Some(_) => {
            suspend_latency(&host, &spec(4, "boinc_app", vec!["1000000".into()], true), args.tries)
                .await
        }
        None => serde_json::Value::Null,
    };
    json!({
        "apps_supervised": 2,
        "poll_interval_seconds": 1,
        "wall_seconds": wall,
        "polls": polls,
        "client_cpu_seconds": client_cpu,
        "client_cpu_seconds_per_hour": client_cpu / wall * 3600.0,
        "client_run_time_seconds": client_run_time,
        "client_run_time_seconds_per_hour": client_run_time / wall * 3600.0,
        "suspend_latency": { "api": api, "wrapper": wrapper, "boinc_api_app": boinc },
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let app = match &args.app {
        Some(app) => app.clone(),
        None => std::env::current_exe()?
            .parent()
            .and_then(Path::parent)
            .ok_or("no target dir")?
            .join("boinc-rs"),
    };
    if !app.is_file() {
        return Err(
            format!("{} is missing: run `cargo build -p boinc-rs` first", app.display()).into()
        );
    }
    let scratch = tempfile::tempdir()?;
    let project = scratch.path().join(PROJECT_DIR);
    std::fs::create_dir_all(&project)?;
    std::os::unix::fs::symlink(&app, project.join("example_app"))?;
    if let Some(boinc_app) = &args.boinc_app {
        std::fs::copy(boinc_app, project.join("boinc_app"))?;
    }
    std::fs::write(project.join("in"), "input\n")?;
    let figures = actix::System::new().block_on(measure(args, scratch.path()));
    println!("{figures}");
    Ok(())
}
