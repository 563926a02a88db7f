//! A whole boinc-rs client over HTTP against the real `boinc-rs project-server`
//! process on 127.0.0.1 (issue "Talking to real project servers", acceptance point 2):
//! it attaches, reads the master page, asks for work, downloads the app and the job's
//! input, checks the app's signature with the project's key, runs the example app,
//! uploads the output by the data server protocol, reports the result and takes the
//! acknowledgement; the server validates the result.

use crate::support;

use boinc_core::model::CcConfig;
use boinc_runtime::ClientEvent;
use std::time::Duration;
use support::live_client::{LiveClient, captured_log, log_lines_with};
use support::project_server::{ProjectServerProcess, files_under};

/// The most a whole round may take: two downloads (the app is the boinc-rs binary),
/// a job of one CPU second, an upload and a report.
const ROUND_TIMEOUT: Duration = Duration::from_secs(240);

#[test]
fn a_client_fetches_runs_uploads_and_reports_a_job_of_the_project_server() {
    // The client's log, shown when the test fails. Gathered where the other tests of
    // this binary gather theirs: the first to install a subscriber has it for all.
    captured_log();
    let server =
        ProjectServerProcess::start(&["--jobs", "1", "--job-seconds", "1", "--request-delay", "1"]);
    let mut client = LiveClient::start(&server.url, &CcConfig::default());
    // Reported, and the acknowledgement taken: the client's job is acked (the
    // client's clock moves to each RPC time the project asks for).
    let acked = client
        .wait_for(ROUND_TIMEOUT, |snapshot| {
            server.counter("results_received") >= 1
                && snapshot.state.jobs.iter().all(|job| job.got_server_ack)
        })
        .is_some();
    let snapshot = client.snapshot();
    let (seen, data) = client.stop();
    let transfers: Vec<_> = seen
        .iter()
        .filter_map(|event| match event {
            ClientEvent::TransferEnded { file, upload, success, message, .. } => {
                Some((file.clone(), *upload, *success, message.clone()))
            }
            _ => None,
        })
        .collect();
    assert!(
        acked && server.counter("results_validated") == 1,
        "no acknowledged, validated result within {ROUND_TIMEOUT:?}; transfers {transfers:?}; \
         jobs {:?}; server status {}; server log:\n{}\nthe client's log:\n{}",
        snapshot.state.jobs,
        server.status(),
        server.log(),
        log_lines_with(&[]).join("\n")
    );
    // The signed app came down whole and is what the server signed.
    let status = server.status();
    let app = &status["apps"][0];
    let app_file = app["file"].as_str().expect("the app's file");
    let local = files_under(data.path())
        .into_iter()
        .find(|path| path.file_name().is_some_and(|name| name == app_file))
        .expect("the app in the project's directory");
    let bytes = std::fs::read(&local).expect("the app");
    assert_eq!(bytes.len() as u64, app["nbytes"].as_u64().expect("its size"));
    assert_eq!(boinc_core::protocol::code_signing::md5_hex(&bytes), app["md5"].as_str().unwrap());
    assert!(
        transfers.iter().any(|(file, upload, success, _)| file == app_file && !upload && *success),
        "{transfers:?}"
    );
    assert!(transfers.iter().any(|(_, upload, success, _)| *upload && *success), "{transfers:?}");
    // The app's download reported its progress on the way: bytes growing, a rate.
    let progress: Vec<(u64, f64)> =
        seen.iter()
            .filter_map(|event| match event {
                ClientEvent::TransferProgress {
                    file, upload: false, bytes, total, rate, ..
                } if file == app_file && *total == app["nbytes"].as_u64() => Some((*bytes, *rate)),
                _ => None,
            })
            .collect();
    assert!(!progress.is_empty(), "no progress of the app's download");
    assert!(progress.windows(2).all(|w| w[0].0 <= w[1].0), "{progress:?}");
    assert!(
        progress.iter().all(|(_, rate)| *rate >= 0.0) && progress.iter().any(|(_, r)| *r > 0.0)
    );
    // The output is on the server, not empty.
    let uploads = server.uploads();
    assert!(!uploads.is_empty(), "nothing uploaded");
    assert!(uploads.iter().all(|path| std::fs::metadata(path).is_ok_and(|m| m.len() > 0)));
    assert_eq!(server.counter("results_received"), 1);
}
