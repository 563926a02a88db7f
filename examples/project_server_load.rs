//! How many scheduler requests per second `boinc-rs project-server` answers (issue
//! "Talking to real project servers", throughput): CLIENTS hosts at once on loopback,
//! each a real client's request loop without the waiting: it attaches (a new account and
//! host), then asks for work again and again, each request reporting the jobs the last
//! reply sent as finished and uploaded. The requests are BOINC 7.20.5's own (the captures
//! in tests/fixtures), read and written with the core's `SchedulerRequest`, with each
//! host's authenticator, host id, sequence number, the project's key and its reports
//! filled in; each reply is read with the core's `SchedulerReply`. The server does all its
//! work for each: accounts, reports and their validation, the work generator (an input
//! file written per job), the work-send policy, and saving its records before answering.
//!
//! Run: `cargo build --release -p boinc-rs --bin boinc-rs --example project_server_load
//! && target/release/examples/project_server_load --json` (default: 50 clients, 3 runs of
//! 10 s, each against a fresh `boinc-rs project-server` in a temporary directory, started
//! from the `boinc-rs` beside this example's directory); `--url URL` loads a server that
//! is already running instead. Prints each run and the median as JSON.

use boinc_core::protocol::{ReportedResult, SchedulerReply, SchedulerRequest};
use boinc_project_server::URL_FILE;
use clap::Parser;
use serde_json::json;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Barrier;

/// The attach request of BOINC 7.20.5 (no host id yet).
const ATTACH_REQUEST: &str =
    include_str!("../tests/fixtures/boinc-7.20.5/sched_request_01_attach.xml");
/// Its work request.
const FETCH_REQUEST: &str =
    include_str!("../tests/fixtures/boinc-7.20.5/sched_request_02_fetch_work.xml");
/// Its report of a job that succeeded (the reported result is the template).
const REPORT_REQUEST: &str =
    include_str!("../tests/fixtures/boinc-7.20.5/sched_request_04_report_success.xml");
/// The headers the real client sends with a scheduler request.
const USER_AGENT: &str = "BOINC client (x86_64-pc-linux-gnu 7.20.5)";
/// How long the started server may take to be ready (it checksums and signs its app).
const START_WAIT: Duration = Duration::from_secs(120);

/// The load generator's options.
#[derive(Debug, Parser)]
struct Options {
    /// Hosts sending requests at once.
    #[arg(long, default_value_t = 50)]
    clients: usize,
    /// Seconds each run measures (after every host has attached).
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Runs; the median is reported.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// A running project server's URL (default: a fresh one per run).
    #[arg(long)]
    url: Option<String>,
    /// The `boinc-rs` that serves (default: beside this example's directory).
    #[arg(long)]
    server: Option<PathBuf>,
    /// The started server's HTTP worker threads.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// JSON only.
    #[arg(long)]
    json: bool,
}

/// The request templates.
struct Templates {
    attach: SchedulerRequest<'static>,
    fetch: SchedulerRequest<'static>,
    report: ReportedResult<'static>,
}

impl Templates {
    fn read() -> Result<Templates, String> {
        let read = |name: &str, text: &str| {
            SchedulerRequest::from_xml(text).map_err(|e| format!("the fixture {name}: {e}"))
        };
        let report = read("sched_request_04_report_success.xml", REPORT_REQUEST)?
            .results
            .into_iter()
            .next()
            .ok_or("the report fixture reports no result")?;
        Ok(Templates {
            attach: read("sched_request_01_attach.xml", ATTACH_REQUEST)?,
            fetch: read("sched_request_02_fetch_work.xml", FETCH_REQUEST)?,
            report,
        })
    }
}

/// One host's figures.
#[derive(Default)]
struct HostFigures {
    requests: u64,
    errors: u64,
    jobs_received: u64,
    results_reported: u64,
    latencies: Vec<f64>,
}

/// Sends one request; the reply, or why there is none.
async fn scheduler_rpc(
    http: &reqwest::Client,
    url: &str,
    request: &SchedulerRequest<'_>,
) -> Result<SchedulerReply, String> {
    let response = http
        .post(url)
        .header(reqwest::header::USER_AGENT, USER_AGENT)
        .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(request.to_xml())
        .send()
        .await
        .map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        return Err(format!("HTTP {}", response.status()));
    }
    let text = response.text().await.map_err(|e| e.to_string())?;
    SchedulerReply::from_xml(&text).map_err(|e| e.to_string())
}

/// One host: attaches, then requests work and reports until `deadline`.
async fn host(
    number: usize,
    http: reqwest::Client,
    scheduler: String,
    templates: Arc<Templates>,
    attached: Arc<Barrier>,
    seconds: f64,
) -> Result<HostFigures, String> {
    let authenticator = format!("load-generator-host-{number}");
    let mut attach = templates.attach.clone();
    attach.authenticator = authenticator.clone().into();
    let reply = scheduler_rpc(&http, &scheduler, &attach).await.and_then(|reply| {
        reply.hostid.map(|hostid| (hostid, reply)).ok_or("the attach reply gave no host id".into())
    });
    // Every host attaches before the clock starts (a failed one too, or the rest wait
    // for it forever).
    attached.wait().await;
    let (hostid, reply) = reply?;
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut request = templates.fetch.clone();
    request.authenticator = authenticator.into();
    request.hostid = hostid;
    request.rpc_seqno = attach.rpc_seqno;
    request.code_sign_key = reply.code_sign_key.clone().map(Into::into);
    let mut held: Vec<String> = reply.results.iter().map(|r| r.name.clone()).collect();
    let mut figures = HostFigures::default();
    while Instant::now() < deadline {
        request.rpc_seqno += 1;
        request.results = held
            .drain(..)
            .map(|name| ReportedResult { name: name.into(), ..templates.report.clone() })
            .collect();
        let reported = request.results.len() as u64;
        let sent = Instant::now();
        let answer = scheduler_rpc(&http, &scheduler, &request).await;
        figures.latencies.push(sent.elapsed().as_secs_f64());
        figures.requests += 1;
        match answer {
            Ok(reply) => {
                figures.results_reported += reported;
                figures.jobs_received += reply.results.len() as u64;
                held.extend(reply.results.into_iter().map(|r| r.name));
            }
            Err(_) => figures.errors += 1,
        }
    }
    Ok(figures)
}

/// The value at `fraction` of sorted `values`.
fn percentile(sorted: &[f64], fraction: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * fraction).round() as usize]
}

/// One measured run against `url`.
async fn run(url: &str, options: &Options) -> Result<serde_json::Value, String> {
    let templates = Arc::new(Templates::read()?);
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .pool_max_idle_per_host(options.clients)
        .build()
        .map_err(|e| e.to_string())?;
    let scheduler = format!("{url}cgi");
    let attached = Arc::new(Barrier::new(options.clients + 1));
    let hosts: Vec<_> = (0..options.clients)
        .map(|number| {
            tokio::spawn(host(
                number,
                http.clone(),
                scheduler.clone(),
                templates.clone(),
                attached.clone(),
                options.seconds,
            ))
        })
        .collect();
    attached.wait().await;
    let start = Instant::now();
    let mut total = HostFigures::default();
    for host in hosts {
        let figures = host.await.map_err(|e| e.to_string())??;
        total.requests += figures.requests;
        total.errors += figures.errors;
        total.jobs_received += figures.jobs_received;
        total.results_reported += figures.results_reported;
        total.latencies.extend(figures.latencies);
    }
    let elapsed = Instant::now().duration_since(start).as_secs_f64();
    total.latencies.sort_by(f64::total_cmp);
    Ok(json!({
        "clients": options.clients,
        "seconds": elapsed,
        "requests": total.requests,
        "errors": total.errors,
        "requests_per_second": total.requests as f64 / elapsed,
        "jobs_received": total.jobs_received,
        "results_reported": total.results_reported,
        "latency_ms": {
            "median": percentile(&total.latencies, 0.5) * 1e3,
            "p90": percentile(&total.latencies, 0.9) * 1e3,
            "p99": percentile(&total.latencies, 0.99) * 1e3,
        },
    }))
}

/// A `boinc-rs project-server` in a temporary directory, stopped when dropped.
struct StartedServer {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl StartedServer {
    fn start(binary: &PathBuf, workers: usize) -> Result<StartedServer, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let child = Command::new(binary)
            .arg("project-server")
            .arg("--dir")
            .arg(dir.path())
            .args(["--workers", &workers.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .env("RUST_LOG", "warn")
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let mut server = StartedServer { child, url: String::new(), _dir: dir };
        let deadline = Instant::now() + START_WAIT;
        loop {
            if let Ok(url) = std::fs::read_to_string(server._dir.path().join(URL_FILE)) {
                server.url = url.trim().to_owned();
                return Ok(server);
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!("the project server exited at start: {status}"));
            }
            if Instant::now() > deadline {
                return Err(format!("the project server was not ready in {START_WAIT:?}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for StartedServer {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse();
    if options.clients == 0
        || options.runs == 0
        || !options.seconds.is_finite()
        || options.seconds <= 0.0
    {
        return Err("--clients, --runs and --seconds must be positive".into());
    }
    let binary = match &options.server {
        Some(binary) => binary.clone(),
        None => {
            let exe = std::env::current_exe()?;
            let profile_dir = exe.parent().and_then(|examples| examples.parent());
            profile_dir.map(|dir| dir.join("boinc-rs")).ok_or("cannot find boinc-rs")?
        }
    };
    if options.url.is_none() && !binary.is_file() {
        return Err(format!(
            "{} is missing: build it (cargo build --release -p boinc-rs --bin boinc-rs), \
             or name a server with --server or --url",
            binary.display()
        )
        .into());
    }
    // The generator keeps to one thread, so that the server has the rest of the machine.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let mut runs = Vec::new();
    for _ in 0..options.runs {
        let started = match &options.url {
            Some(_) => None,
            None => Some(StartedServer::start(&binary, options.workers)?),
        };
        let url =
            options.url.clone().or(started.as_ref().map(|s| s.url.clone())).unwrap_or_default();
        let figures = runtime.block_on(run(&url, &options))?;
        if !options.json {
            eprintln!("{figures}");
        }
        runs.push(figures);
        drop(started);
    }
    let mut rates: Vec<f64> =
        runs.iter().filter_map(|r| r["requests_per_second"].as_f64()).collect();
    rates.sort_by(f64::total_cmp);
    let report = json!({
        "clients": options.clients,
        "seconds_per_run": options.seconds,
        "server_workers": options.url.is_none().then_some(options.workers),
        "median_requests_per_second": percentile(&rates, 0.5),
        "runs": runs,
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}
