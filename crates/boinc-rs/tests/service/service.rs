//! `boinc-rs run`, the host service, as a volunteer runs it (issue "The host service"):
//! the real binary on a data directory, attached with `boinc-rs attach` to the real
//! `boinc-rs project-server` on 127.0.0.1, running the example app.
//!
//! - A service stopped with SIGTERM mid-job exits cleanly and, started again, resumes
//!   the task from its checkpoint: its CPU time never goes back further than the
//!   checkpoint the state recorded.
//! - `kill -9` at 20 seeded random moments (during downloads, computing, uploads, RPCs,
//!   state writes): after each, the state file reads; at the end every result the
//!   server issued was reported exactly once, by the server's own records.

use crate::support;

use boinc_core::model::ClientState;
use boinc_service::state_store::StateStore;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use support::project_server::ProjectServerProcess;
use support::service::{signal, start_service, wait_exit};
use support::wait::{holds_within, wait_for_or, wait_until_or};

/// The longest a service may take to stop after SIGTERM (tasks quit, state written).
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// A data directory attached to the project at `url`, checkpointing every second and
/// reporting results as soon as they are uploaded.
fn attached_data_dir(url: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a data directory");
    let status = Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
        .args(["attach", "--dir"])
        .arg(dir.path())
        .args([url, "service_test_key"])
        .stdout(Stdio::null())
        .status()
        .expect("boinc-rs attach runs");
    assert!(status.success(), "boinc-rs attach failed");
    std::fs::write(
        dir.path().join("global_prefs_override.xml"),
        format!(
            "<global_preferences><disk_interval>1</disk_interval>{}</global_preferences>\n",
            support::host_prefs::NO_CPU_BUSY_CHECK
        ),
    )
    .expect("the preferences");
    std::fs::write(
        dir.path().join("cc_config.xml"),
        "<cc_config><options><report_results_immediately>1</report_results_immediately>\
         </options></cc_config>\n",
    )
    .expect("cc_config.xml");
    dir
}

/// The state on disk, read as the service reads it (the newest whole copy).
fn saved_state(dir: &Path) -> Option<ClientState> {
    let store = StateStore::open(dir).expect("the directory is free again");
    store.load().expect("the state reads").map(|loaded| loaded.state)
}

/// The state file as it is now, while a service may be writing it: the main copy if
/// it reads, else nothing.
fn peek_state(dir: &Path) -> Option<ClientState> {
    let text = std::fs::read_to_string(dir.join("client_state.xml")).ok()?;
    boinc_core::protocol::parse_client_state(&text, "client_state.xml").ok()
}

pub(crate) fn log_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let tail: Vec<char> = text.chars().rev().take(20_000).collect();
    tail.into_iter().rev().collect()
}

/// A job's task, its CPU time and checkpoint, from a state.
fn task_times(state: &ClientState, job: &str) -> Option<(f64, f64)> {
    let job = state.jobs.iter().find(|j| j.name == job)?;
    let task = job.task.as_ref()?;
    Some((task.current_cpu_time, task.checkpoint_cpu_time))
}

/// A project of `jobs` jobs of `seconds` CPU seconds, a service attached to it, and the
/// first task to checkpoint `checkpoint` CPU seconds, with its job and slot.
struct Checkpointed {
    server: ProjectServerProcess,
    data: tempfile::TempDir,
    log: PathBuf,
    service: support::service::ServiceProcess,
    job: String,
    slot: u32,
}

/// A project of `jobs` jobs of `seconds` CPU seconds, asked for work every second, a
/// host holding `per_cpu` of them per CPU; and a data directory attached to it.
pub(crate) fn project_and_data_dir(
    jobs: &str,
    seconds: &str,
    per_cpu: &str,
) -> (ProjectServerProcess, tempfile::TempDir) {
    let server = ProjectServerProcess::start(&[
        "--jobs",
        jobs,
        "--job-seconds",
        seconds,
        "--request-delay",
        "1",
        "--max-jobs-per-cpu",
        per_cpu,
    ]);
    let data = attached_data_dir(&server.url);
    (server, data)
}

fn run_until_a_checkpoint(jobs: &str, seconds: &str, checkpoint: f64) -> Checkpointed {
    let (server, data) = project_and_data_dir(jobs, seconds, "1");
    let dir = data.path();
    let log: PathBuf = dir.with_extension("log");
    let service = start_service(dir, &log);
    let (job, slot) = wait_for_or(
        &format!("a task to checkpoint at least {checkpoint} CPU seconds"),
        Duration::from_secs(300),
        || {
            let state = peek_state(dir)?;
            state.jobs.iter().find_map(|j| {
                let task = j.task.as_ref()?;
                (task.checkpoint_cpu_time >= checkpoint).then(|| (j.name.clone(), task.slot))
            })
        },
        || format!("the service's log:\n{}", log_of(&log)),
    );
    Checkpointed { server, data, log, service, job, slot }
}

#[test]
fn a_service_stopped_mid_job_resumes_it_from_its_checkpoint() {
    let Checkpointed { server: _server, data, log, mut service, job, .. } =
        run_until_a_checkpoint("2", "20", 3.0);
    let dir = data.path();
    signal(&service, nix::sys::signal::Signal::SIGTERM);
    let status = wait_exit(&mut service, STOP_TIMEOUT)
        .unwrap_or_else(|| panic!("no exit within {STOP_TIMEOUT:?}:\n{}", log_of(&log)));
    assert!(status.success(), "the service exited with {status}:\n{}", log_of(&log));
    // "state written" is logged once it is written: after the stop began.
    let text = log_of(&log);
    let stopping = text.find("stopping:").expect("the stop is logged");
    assert!(text[stopping..].contains("state written"), "{text}");
    let state = saved_state(dir).expect("a state was written");
    let (cpu_at_stop, checkpoint) = task_times(&state, &job).expect("the task is kept");
    assert!(checkpoint >= 3.0 && cpu_at_stop >= checkpoint, "{cpu_at_stop} {checkpoint}");

    let mut service = start_service(dir, &log);
    let mut lowest_after_restart = f64::INFINITY;
    wait_until_or(
        "the task to compute again after the restart",
        Duration::from_secs(300),
        || {
            let Some((cpu, _)) = peek_state(dir).and_then(|s| task_times(&s, &job)) else {
                return false;
            };
            lowest_after_restart = lowest_after_restart.min(cpu);
            cpu > cpu_at_stop + 2.0
        },
        || log_of(&log),
    );
    assert!(
        lowest_after_restart >= checkpoint,
        "CPU time went back to {lowest_after_restart} s, before the checkpoint at {checkpoint} s"
    );
    signal(&service, nix::sys::signal::Signal::SIGTERM);
    let status = wait_exit(&mut service, STOP_TIMEOUT).expect("the service stops");
    assert!(status.success(), "{status}:\n{}", log_of(&log));
    // A log written to a file is plain text: no terminal colour codes.
    let text = log_of(&log);
    assert!(text.contains("INFO") && !text.contains('\u{1b}'), "{text}");
}

/// A client killed with `kill -9` leaves its app running in the slot; the restarted
/// client asks it to quit through its shared memory (the app API's quit) rather than
/// killing it, so its checkpoint is never cut off mid-write, and the task goes on from
/// that checkpoint. The old app's standard error says it was asked to quit.
#[test]
fn a_leftover_app_is_asked_to_quit_before_it_would_be_killed() {
    let Checkpointed { server: _server, data, log, mut service, slot, .. } =
        run_until_a_checkpoint("1", "60", 2.0);
    let dir = data.path();
    signal(&service, nix::sys::signal::Signal::SIGKILL);
    wait_exit(&mut service, STOP_TIMEOUT).expect("the killed service is gone");
    let stderr = dir.join("slots").join(slot.to_string()).join("stderr.txt");
    let mut service = start_service(dir, &log);
    wait_until_or(
        "the task to start again after the restart",
        Duration::from_secs(300),
        || log_of(&log).matches("app started").count() >= 2,
        || log_of(&log),
    );
    let text = log_of(&log);
    assert!(
        text.contains("is asked to quit") && !text.contains("is killed"),
        "the leftover app was not asked to quit, or was killed:\n{text}"
    );
    let app_said = std::fs::read_to_string(&stderr).unwrap_or_default();
    assert!(
        app_said.contains("the client asked to Quit"),
        "the old app did not hear a quit:\n{app_said}"
    );
    signal(&service, nix::sys::signal::Signal::SIGTERM);
    let status = wait_exit(&mut service, STOP_TIMEOUT).expect("the service stops");
    assert!(status.success(), "{status}:\n{}", log_of(&log));
}

/// CPU seconds (user and system, all threads) and context switches (voluntary and
/// not, all threads) of process `pid` so far.
fn cpu_and_switches(pid: u32) -> (f64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the process's stat");
    let fields: Vec<&str> =
        stat.rsplit_once(')').expect("a stat line").1.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks: f64 =
        fields[11].parse::<f64>().expect("utime") + fields[12].parse::<f64>().expect("stime");
    let hz: f64 = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8_lossy(&out.stdout).trim().parse().ok())
        .expect("getconf CLK_TCK tells the clock ticks per second");
    let mut switches = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("the threads").flatten() {
        let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
        switches += status
            .lines()
            .filter(|l| {
                l.starts_with("voluntary_ctxt_switches")
                    || l.starts_with("nonvoluntary_ctxt_switches")
            })
            .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .sum::<u64>();
    }
    (ticks / hz, switches)
}

/// A client waiting on a scheduler RPC that stalls (the server holds the request for
/// an hour; the client's timeout is five minutes) costs next to nothing: under 2 % of a
/// CPU and under 50 context switches a second, measured over ten seconds of the wait.
#[test]
fn waiting_on_a_stalled_rpc_costs_next_to_nothing() {
    let server = ProjectServerProcess::start(&["--jobs", "0", "--request-delay", "1"]);
    server.add_faults(serde_json::json!([
        {"target": "scheduler", "fault": "hang", "seconds": 3600.0, "count": 0}
    ]));
    let data = attached_data_dir(&server.url);
    let dir = data.path();
    let log: PathBuf = dir.with_extension("log");
    let mut service = start_service(dir, &log);
    wait_until_or(
        "the scheduler request to stall",
        Duration::from_secs(120),
        || server.log().contains("fault injected on purpose"),
        || log_of(&log),
    );
    // The start's own work (host discovery, the first decision) settles first.
    std::thread::sleep(Duration::from_secs(2));
    const SPAN: Duration = Duration::from_secs(10);
    let (cpu_before, switches_before) = cpu_and_switches(service.id());
    std::thread::sleep(SPAN);
    let (cpu_after, switches_after) = cpu_and_switches(service.id());
    let share = (cpu_after - cpu_before) / SPAN.as_secs_f64();
    let rate = (switches_after - switches_before) as f64 / SPAN.as_secs_f64();
    assert!(
        server.log().matches("fault injected on purpose").count() == 1,
        "the stalled RPC ended within the span:\n{}",
        server.log()
    );
    assert!(
        share < 0.02 && rate < 50.0,
        "waiting on a stalled RPC took {:.1} % of a CPU and {rate:.0} context switches a second",
        share * 100.0
    );
    signal(&service, nix::sys::signal::Signal::SIGTERM);
    wait_exit(&mut service, STOP_TIMEOUT).expect("the service stops");
}

/// A result to report at once (the data directory's cc_config.xml says
/// `report_results_immediately`) goes seconds after its upload, as BOINC 7.20.5 looks
/// for results to report every 5 s; not at the next minute's work fetch, as it did.
#[test]
fn a_result_to_report_at_once_goes_seconds_after_its_upload() {
    let server =
        ProjectServerProcess::start(&["--jobs", "1", "--job-seconds", "3", "--request-delay", "1"]);
    let data = attached_data_dir(&server.url);
    let dir = data.path();
    let log: PathBuf = dir.with_extension("log");
    let mut service = start_service(dir, &log);
    let epoch_now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    };
    let reported_at = wait_for_or(
        "the result's report",
        Duration::from_secs(180),
        || (server.status()["jobs_reported"].as_u64() == Some(1)).then(epoch_now),
        || format!("the service's log:\n{}", log_of(&log)),
    );
    let completed = wait_for_or(
        "the state to hold the task's end",
        Duration::from_secs(30),
        || {
            let state = peek_state(dir)?;
            let job = state.jobs.first()?;
            (job.completed_time > 0.0).then_some(job.completed_time)
        },
        || format!("the service's log:\n{}", log_of(&log)),
    );
    signal(&service, nix::sys::signal::Signal::SIGTERM);
    let _ = wait_exit(&mut service, STOP_TIMEOUT);
    let gap = reported_at - completed;
    eprintln!("reported {gap:.1} s after the task ended");
    // The upload takes a moment and the report poll looks every 5 s; the minute's work
    // fetch would have taken about 50 s more.
    assert!(gap < 25.0, "reported {gap:.1} s after the task ended\n{}", log_of(&log));
}

#[test]
fn twenty_kills_lose_no_result_and_report_none_twice() {
    const JOBS: u64 = 8;
    let server = ProjectServerProcess::start(&[
        "--jobs",
        &JOBS.to_string(),
        "--job-seconds",
        "2-4",
        "--request-delay",
        "1",
        "--max-jobs-per-cpu",
        "2",
    ]);
    let data = attached_data_dir(&server.url);
    let dir = data.path();
    let log: PathBuf = dir.with_extension("log");
    let mut rng = ChaCha8Rng::seed_from_u64(20);
    for kill in 0..20 {
        let mut service = start_service(dir, &log);
        // The kill's moment is the test's draw: whatever the service is doing then.
        let alive = Duration::from_secs_f64(rng.random_range(0.2..5.0));
        std::thread::sleep(alive);
        signal(&service, nix::sys::signal::Signal::SIGKILL);
        wait_exit(&mut service, STOP_TIMEOUT).expect("a killed service is gone");
        // Whatever the moment, the state reads (or none was written yet).
        let state = saved_state(dir);
        if kill > 5 {
            assert!(state.is_some(), "no state after {} kills:\n{}", kill + 1, log_of(&log));
        }
    }
    let mut service = start_service(dir, &log);
    let done = |status: &serde_json::Value| {
        status["jobs_created"].as_u64() == Some(JOBS)
            && status["jobs_reported"].as_u64() == Some(JOBS)
    };
    // Not reaching it is reported below, with the server's figures.
    holds_within(Duration::from_secs(400), || done(&server.status()));
    // The server counts the last reports before the client has read its answer and
    // written the acknowledgements down: wait, bounded, for the state file to hold
    // them before stopping the client.
    let all_acknowledged = |state: Option<ClientState>| {
        state.is_some_and(|state| state.jobs.iter().all(|job| job.got_server_ack))
    };
    holds_within(Duration::from_secs(120), || all_acknowledged(peek_state(dir)));
    signal(&service, nix::sys::signal::Signal::SIGTERM);
    let _ = wait_exit(&mut service, STOP_TIMEOUT);
    let status = server.status();
    assert!(done(&status), "not every job reported: {status:#}\n{}", log_of(&log));
    assert_eq!(status["duplicate_reports"], 0, "{status:#}");
    for result in status["results"].as_array().expect("the results") {
        assert_eq!(result["times_reported"], 1, "{result}");
        // A kill costs a task the time since its checkpoint, never the task: the app
        // a killed client left running is stopped and the task restarts.
        assert_eq!(result["outcome"], "valid", "{result}\n{}", log_of(&log));
    }
    let state = saved_state(dir).expect("the state");
    assert!(
        state.jobs.iter().all(|job| job.got_server_ack),
        "the client still holds a job the server has not acknowledged: {:?}",
        state.jobs
    );
}
