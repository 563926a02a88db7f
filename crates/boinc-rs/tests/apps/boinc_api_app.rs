//! A real BOINC-API app under boinc-rs (issue "Running real apps" acceptance): a few
//! lines of C++ (tests/apps/upper_case.cpp) built against Debian's libboinc-app-dev run
//! to completion, and are suspended and resumed through the shared-memory channel.
//!
//! Built only where the package and a C++ compiler are installed (`.ci/run` installs
//! them); elsewhere the test is compiled as ignored, so it counts as skipped, not
//! passed (see actors/build.rs).

use crate::support;

use boinc_runtime::effects::ProcessHost;
use boinc_runtime::runtime::messages::TaskReport;
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use support::*;

/// Builds the app into the scratch project as `upper_case`.
fn build_app(scratch: &Scratch) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/apps/upper_case.cpp");
    let output = Command::new("g++")
        .args(["-O2", "-o"])
        .arg(scratch.project_file("upper_case"))
        .arg(&source)
        .args(["-lboinc_api", "-lboinc", "-lpthread"])
        .output()
        .expect("g++ runs");
    assert!(
        output.status.success(),
        "building {}: {}",
        source.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
#[cfg_attr(
    not(boinc_app_api),
    ignore = "SKIPPED: libboinc-app-dev or g++ is missing (apt-get install libboinc-app-dev g++)"
)]
fn a_real_boinc_api_app_runs_suspends_and_resumes_under_boinc_rs() {
    let scratch = Scratch::new();
    build_app(&scratch);
    std::fs::write(scratch.project_file("in_file"), "made with libboinc\n").unwrap();
    let mut spec = example_spec(&scratch, 0, "upper", true, &[]);
    spec.program.executable = "upper_case".into();
    spec.program.arguments = vec!["300".into()];
    spec.program.checkpoint_period = 1.0;
    let host = scratch.host(|_| {});
    let poll = Duration::from_millis(250);
    let bound = Duration::from_secs(90);
    live(async {
        let driver = driver(&host, &spec, QUICK_RESTARTS);
        driver.start(&spec).await.unwrap();
        poll_until(
            &driver,
            poll,
            bound,
            |r| matches!(r, TaskReport::Running(s) if s.current_cpu_time > 0.5),
        )
        .await;
        // Suspended through the process-control channel: the API stops the worker.
        driver.suspend().await.unwrap();
        let suspended_at = driver.now();
        let held = poll_until(&driver, poll, bound, |_| driver.now() - suspended_at > 2.0).await;
        let used = held.cpu_at(suspended_at + 2.0) - held.cpu_at(suspended_at + 0.5);
        assert!(used < 0.05, "{used} CPU s while suspended");
        driver.resume().await.unwrap();
        let rest = poll_until(&driver, poll, bound, |_| false).await;
        let TaskReport::Finished(status) = rest.last() else { panic!("{rest:?}") };
        assert!(status.current_cpu_time > 0.5);
        assert!(rest.checkpoints() + held.checkpoints() >= 1, "the app checkpointed");
        let fractions: Vec<f64> = rest
            .reports
            .iter()
            .filter_map(|(_, r)| match r {
                TaskReport::Running(s) => Some(s.fraction_done),
                _ => None,
            })
            .collect();
        assert!(fractions.iter().any(|&f| f > 0.0 && f < 1.0), "progress reported: {fractions:?}");
        let output = std::fs::read_to_string(scratch.project_file("upper_out")).unwrap();
        assert_eq!(output, "MADE WITH LIBBOINC\n");
        let stderr = host.take_stderr("upper").unwrap_or_default();
        assert!(stderr.contains("called boinc_finish(0)"), "{stderr}");
    });
}
