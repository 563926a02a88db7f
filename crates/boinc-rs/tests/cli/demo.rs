//! `boinc-rs demo`, the README's first command: it runs real jobs against its own local
//! project server, prints one JSON object with `--json`, exits 0, and leaves nothing
//! behind (no process, no temporary directory).

use std::process::Command;

/// The demo's temporary directories (`boinc-rs-demo-*` in the temp dir).
fn demo_dirs() -> Vec<std::path::PathBuf> {
    std::fs::read_dir(std::env::temp_dir())
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("boinc-rs-demo-"))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_demo_runs_and_reports_jobs_and_leaves_nothing_behind() {
    let before = demo_dirs();
    let output = Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
        .args(["demo", "--json", "--minutes", "1"])
        .output()
        .expect("the demo runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the demo failed: {}\n{stderr}", output.status);
    let summary: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("one JSON object on stdout");
    for key in ["jobs_done", "jobs_reported", "rpcs", "cpu_seconds"] {
        assert!(summary.get(key).is_some(), "{key} missing from {summary}");
    }
    // A debug build on a loaded test machine computes slowly; the release build's figure
    // (four jobs or more on two CPUs) is measured in the README's quick start.
    assert!(summary["jobs_done"].as_u64() >= Some(1), "{summary}\n{stderr}");
    assert!(summary["rpcs"].as_u64() >= Some(1), "{summary}");
    assert!(summary["cpu_seconds"].as_f64() > Some(1.0), "{summary}");
    let left: Vec<_> = demo_dirs().into_iter().filter(|d| !before.contains(d)).collect();
    assert!(left.is_empty(), "the demo left {left:?} behind");
}
