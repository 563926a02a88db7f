//! `boinc-rs app-test` end to end (issue "Running real apps"): the example app through
//! the whole client machinery, suspended, resumed, quit and started again, with the JSON
//! report's keys and figures; and a plain program in wrapper mode.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn app_test(dir: &Path, args: &[&str]) -> (Value, bool) {
    let output = Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
        .arg("app-test")
        .arg("--dir")
        .arg(dir)
        .arg("--timeout")
        .arg("120")
        .args(args)
        .output()
        .expect("boinc-rs runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&output.stderr)));
    (report, output.status.success())
}

#[test]
fn app_test_reports_on_the_example_app() {
    let scratch = tempfile::tempdir().unwrap();
    let input = scratch.path().join("input.txt");
    std::fs::write(&input, "checked before deploying\n").unwrap();
    let (report, success) = app_test(
        &scratch.path().join("data"),
        &[
            env!("CARGO_BIN_EXE_boinc-rs"),
            "--input",
            &format!("in={}", input.display()),
            "--output",
            "out",
            "--suspend-at",
            "1",
            "--resume-after",
            "2.5",
            "--quit-at",
            "5",
            "--json",
            "--",
            "example-app",
            "--seconds",
            "3",
            "--input",
            "in",
            "--checkpoint-period",
            "0.5",
        ],
    );
    assert!(success, "{report}");
    let keys: Vec<&str> = report.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "checkpoints",
            "cpu_seconds",
            "exit_status",
            "finished",
            "outputs",
            "restarts",
            "suspended_cpu_seconds"
        ]
    );
    assert_eq!(report["exit_status"], 0);
    assert_eq!(report["finished"], true);
    assert!(report["checkpoints"].as_u64().unwrap() >= 2, "{report}");
    assert!(report["cpu_seconds"].as_f64().unwrap() >= 2.9, "{report}");
    assert!(report["suspended_cpu_seconds"].as_f64().unwrap() <= 0.05, "{report}");
    assert_eq!(report["restarts"], 1, "started again after the quit: {report}");
    let out = report["outputs"]["out"].as_str().expect("the output's path");
    let text = std::fs::read_to_string(out).unwrap();
    assert!(text.starts_with("CHECKED BEFORE DEPLOYING\nresult "), "{text}");
}

#[test]
fn app_test_runs_a_plain_program_in_wrapper_mode() {
    let scratch = tempfile::tempdir().unwrap();
    let script = scratch.path().join("upper.sh");
    std::fs::write(&script, "#!/bin/sh\ntr a-z A-Z < in > out\n").unwrap();
    let input = scratch.path().join("input.txt");
    std::fs::write(&input, "plain\n").unwrap();
    let args = [
        script.to_str().unwrap(),
        "--wrapper",
        "--input",
        &format!("in={}", input.display()),
        "--output",
        "out",
        "--json",
    ];
    let (report, success) = app_test(&scratch.path().join("data"), &args);
    assert!(success, "{report}");
    assert_eq!(report["finished"], true);
    assert_eq!(report["suspended_cpu_seconds"], Value::Null);
    let out = report["outputs"]["out"].as_str().expect("the output's path");
    assert_eq!(std::fs::read_to_string(out).unwrap(), "PLAIN\n");
    // Without its output, exit 0 is not a success.
    let silent = scratch.path().join("silent.sh");
    std::fs::write(&silent, "#!/bin/sh\nexit 0\n").unwrap();
    let (report, success) = app_test(
        &scratch.path().join("data2"),
        &[silent.to_str().unwrap(), "--wrapper", "--output", "missing", "--json"],
    );
    assert!(!success);
    assert_eq!(report["finished"], false);
    assert_eq!(report["exit_status"], boinc_core::supervise::ERR_FILE_MISSING);
}
