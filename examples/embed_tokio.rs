//! Embedding boinc-rs in a multi-threaded tokio program.
//!
//! The client runs on a thread of its own (`start`), here over a shipped scenario in
//! virtual time. The host drives it from two places at once: a tokio task on the
//! multi-threaded runtime that watches the event stream and queries snapshots of the
//! state, and a plain thread that suspends and resumes a project as a user would from a
//! GUI. Then the host shuts the client down and reads its report.
//!
//! Run: `cargo run -p boinc-runtime --example embed_tokio [SCENARIO_DIR]`
//! (default: the shipped `examples/scenarios/desktop_gpu`).

use boinc_runtime::state_files::load_state_dir;
use boinc_runtime::{Client, ClientEvent, UserAction};
use std::path::{Path, PathBuf};

/// What the host program saw.
#[derive(Debug, Default)]
struct Summary {
    events: usize,
    snapshots: usize,
    running_seen: usize,
    suspended_then_resumed: bool,
    decisions: u64,
}

async fn run(scenario: &Path) -> Result<Summary, Box<dyn std::error::Error + Send + Sync>> {
    let state = load_state_dir(scenario)?;
    let project = state.projects.first().map(|p| p.name.clone()).ok_or("no project")?;
    // A long span: the host, not the span, ends the run.
    let handle = Client::builder().state(state).days(3650.0).seed(3).start()?;

    // A tokio task watches the events.
    let mut events = handle.events();
    let watcher = tokio::spawn(async move {
        let mut count = 0;
        while let Some(event) = events.recv().await {
            count += 1;
            if matches!(event, ClientEvent::TaskFinished { .. }) && count > 1_000 {
                break;
            }
        }
        count
    });

    // A plain thread acts as a user would.
    let user = handle.clone();
    let target = project.clone();
    let acting = std::thread::spawn(move || -> Result<bool, String> {
        user.act_blocking(UserAction::SuspendProject(target.clone())).map_err(|e| e.to_string())?;
        let suspended = user.snapshot_blocking().map_err(|e| e.to_string())?;
        let is_suspended = suspended.state.projects.iter().any(|p| p.name == target && p.suspended);
        user.act_blocking(UserAction::ResumeProject(target.clone())).map_err(|e| e.to_string())?;
        let resumed = user.snapshot_blocking().map_err(|e| e.to_string())?;
        let is_resumed = resumed.state.projects.iter().any(|p| p.name == target && !p.suspended);
        Ok(is_suspended && is_resumed)
    });

    // Meanwhile, this task queries the state.
    let mut summary = Summary::default();
    for _ in 0..20 {
        let snapshot = handle.snapshot().await?;
        summary.snapshots += 1;
        summary.running_seen = summary.running_seen.max(snapshot.running.len());
        tokio::task::yield_now().await;
    }
    summary.suspended_then_resumed = acting.join().map_err(|_| "the user thread panicked")??;
    summary.events = watcher.await?;

    handle.shutdown();
    let report = handle.finished().await?;
    summary.decisions = report.decisions;
    Ok(summary)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let scenario = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios/desktop_gpu")
    });
    let summary = run(&scenario).await?;
    println!("events seen: {}", summary.events);
    println!(
        "snapshots taken: {} (at most {} tasks running)",
        summary.snapshots, summary.running_seen
    );
    println!(
        "a project suspended and resumed from another thread: {}",
        summary.suspended_then_resumed
    );
    println!("decisions until shutdown: {}", summary.decisions);
    Ok(())
}

#[test]
fn the_example_drives_the_client_from_two_threads_and_shuts_it_down() {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios/desktop_gpu");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let summary = runtime.block_on(run(&scenario)).expect("the example runs");
    assert!(summary.events > 1_000, "the host saw the client work: {summary:?}");
    assert_eq!(summary.snapshots, 20);
    assert!(summary.running_seen > 0, "a snapshot showed running tasks");
    assert!(summary.suspended_then_resumed, "the user thread's actions took effect");
    assert!(summary.decisions > 0);
}
