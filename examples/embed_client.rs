//! Embedding boinc-rs in a host program.
//!
//! The host's main thread is not async: it starts the client on its own thread (an
//! actix System on a paused tokio clock, so the client runs in virtual time), reads the
//! client's events from a crossbeam channel, and has the client suspend a project after
//! two simulated days, as a user would from a GUI.
//!
//! Run: `cargo run -p boinc-runtime --example embed_client [SCENARIO_DIR]`
//! (default: the shipped `examples/scenarios/desktop_gpu`).

use boinc_runtime::sim::paused_system;
use boinc_runtime::state_files::load_state_dir;
use boinc_runtime::{Client, ClientEvent, UserAction};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the host program saw.
#[derive(Debug, Default)]
struct Summary {
    events: BTreeMap<&'static str, usize>,
    started_after_suspend: usize,
    jobs_done: u32,
}

fn run(scenario: &Path, days: f64) -> Result<Summary, Box<dyn std::error::Error>> {
    let state = load_state_dir(scenario)?;
    let suspended = state.projects.first().map(|p| p.name.clone()).ok_or("no project")?;
    let (events_sender, events) = crossbeam_channel::bounded(1);
    let target = suspended.clone();
    let client_thread = std::thread::spawn(move || -> Result<u32, String> {
        let system = paused_system().map_err(|e| e.to_string())?;
        system.block_on(async move {
            let handle = Client::builder()
                .state(state)
                .days(days)
                .seed(3)
                .spawn()
                .map_err(|e| e.to_string())?;
            let _ = events_sender.send(handle.events_blocking());
            // Two simulated days later (the tokio clock is paused: this costs nothing).
            tokio::time::sleep(Duration::from_secs(2 * 86_400)).await;
            handle.act(UserAction::SuspendProject(target)).await.map_err(|e| e.to_string())?;
            let result = handle.finished().await.map_err(|e| e.to_string())?;
            let figures = result.simulation.ok_or("no figures")?.figures;
            Ok(figures.projects.values().map(|p| p.jobs_done).sum())
        })
    });
    let events = events.recv()?;
    let mut summary = Summary::default();
    let mut first_time = None;
    for event in events.iter() {
        let kind = match &event {
            ClientEvent::TaskStarted { project, time, .. } => {
                let t0 = *first_time.get_or_insert(*time);
                // The action comes two days in and takes effect at the next scheduling
                // step, at most a scheduling period (an hour) later.
                if *project == suspended && *time > t0 + 2.0 * 86_400.0 + 3600.0 {
                    summary.started_after_suspend += 1;
                }
                "task_started"
            }
            ClientEvent::TaskPreempted { .. } => "task_preempted",
            ClientEvent::TaskRestarting { .. } => "task_restarting",
            ClientEvent::TaskFinished { .. } => "task_finished",
            ClientEvent::WorkRequested { .. } => "work_requested",
            ClientEvent::RpcDone { .. } => "rpc_done",
            ClientEvent::BackoffSet { .. } => "backoff_set",
            ClientEvent::DiskAction { .. } => "disk_action",
            ClientEvent::ActorRestarted { .. } => "actor_restarted",
            ClientEvent::ActorGaveUp { .. } => "actor_gave_up",
            ClientEvent::TransferStarted { .. } => "transfer_started",
            ClientEvent::TransferProgress { .. } => "transfer_progress",
            ClientEvent::TransferEnded { .. } => "transfer_ended",
            ClientEvent::TransferNotice { .. } => "transfer_notice",
            ClientEvent::ProjectMessage { .. } => "project_message",
            ClientEvent::ProjectNotice { .. } => "project_notice",
            ClientEvent::ProjectFeeds { .. } => "project_feeds",
            ClientEvent::WebPreferences { .. } => "web_preferences",
            ClientEvent::Suspension { .. } => "suspension",
        };
        *summary.events.entry(kind).or_default() += 1;
    }
    summary.jobs_done = client_thread.join().map_err(|_| "the client thread panicked")??;
    Ok(summary)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scenario = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios/desktop_gpu")
    });
    let summary = run(&scenario, 4.0)?;
    println!("events seen by the host program:");
    for (kind, count) in &summary.events {
        println!("  {kind:<16} {count}");
    }
    println!("jobs done in 4 simulated days: {}", summary.jobs_done);
    println!(
        "tasks of the suspended project started after the suspension: {}",
        summary.started_after_suspend
    );
    Ok(())
}

#[test]
fn the_example_runs_and_sees_the_client_work() {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios/desktop_gpu");
    let summary = run(&scenario, 3.0).expect("the example runs");
    assert!(summary.events.get("task_started").copied().unwrap_or(0) > 0);
    assert!(summary.events.get("task_finished").copied().unwrap_or(0) > 0);
    assert!(summary.jobs_done > 0);
    assert_eq!(summary.started_after_suspend, 0, "the suspended project kept starting tasks");
}
