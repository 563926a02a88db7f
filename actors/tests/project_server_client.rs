//! A whole boinc-rs client over HTTP against the real `boinc-rs project-server`
//! process on 127.0.0.1 (issue "Talking to real project servers", acceptance point 2):
//! it attaches, reads the master page, asks for work, downloads the app and the job's
//! input, checks the app's signature with the project's key, runs the example app,
//! uploads the output by the data server protocol, reports the result and takes the
//! acknowledgement; the server validates the result.

mod support;

use boinc_actors::effects::SystemClock;
use boinc_actors::live::data_directory::DataDirectory;
use boinc_actors::live::host_discovery::{DiscoverySettings, LiveHostDiscovery};
use boinc_actors::live::http::{HttpSettings, LiveNetwork};
use boinc_actors::live::process::{LiveProcessHost, ProcessHostConfig};
use boinc_actors::{Client, ClientEvent, Effects};
use boinc_core::control::{ClientIdentity, apply_accounts};
use boinc_core::model::{CcConfig, ClientState};
use boinc_core::protocol::Account;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::project_server::{ProjectServerProcess, files_under};

/// A fresh client attached to the project at `url`.
fn attached_state(url: &str) -> ClientState {
    let mut state = ClientState::default();
    state.host.p_ncpus = 1;
    state.host.m_nbytes = 8e9;
    state.host.d_total = 100e9;
    state.host.d_free = 50e9;
    let account = Account {
        master_url: url.to_owned(),
        authenticator: "integration_test_key".into(),
        project_name: None,
        project_preferences: None,
    };
    let changes = apply_accounts(&mut state, &[account]);
    assert_eq!(changes.attached.len(), 1);
    state
}

/// The most a whole round may take: two downloads (the app is the boinc-rs binary),
/// a job of one CPU second, an upload and a report.
const ROUND_TIMEOUT: Duration = Duration::from_secs(240);

#[test]
fn a_client_fetches_runs_uploads_and_reports_a_job_of_the_project_server() {
    // The client's log, shown when the test fails.
    let _ = tracing_subscriber::fmt().with_test_writer().with_env_filter("info").try_init();
    let server =
        ProjectServerProcess::start(&["--jobs", "1", "--job-seconds", "1", "--request-delay", "1"]);
    let data = tempfile::tempdir().expect("a data directory");
    let clock: Arc<dyn boinc_actors::effects::Clock> = Arc::new(SystemClock);
    let process_host = Arc::new(
        LiveProcessHost::new(ProcessHostConfig::new(data.path()), clock.clone())
            .expect("a process host"),
    );
    let settings = HttpSettings::new(&CcConfig::default(), &ClientIdentity::default());
    let network = LiveNetwork::new(settings, data.path()).expect("the network");
    let effects = Effects {
        clock: clock.clone(),
        process_host,
        transport: network.transport.clone(),
        host_discovery: Arc::new(LiveHostDiscovery::new(
            data.path(),
            clock.clone(),
            DiscoverySettings::default(),
        )),
        file_transfer: Some(network.file_transfer.clone()),
        file_system: Some(Arc::new(DataDirectory::new(data.path()))),
        persistence: None,
        tick_interval: Duration::from_millis(200),
    };
    let client = Client::builder()
        .state(attached_state(&server.url))
        .effects(effects)
        .start()
        .expect("the client starts");
    let events = client.events_blocking();
    let started = Instant::now();
    let mut seen = Vec::new();
    let mut acked = false;
    while started.elapsed() < ROUND_TIMEOUT {
        while let Ok(event) = events.try_recv() {
            seen.push(event);
        }
        let snapshot = client.snapshot_blocking().expect("a snapshot");
        // The result was reported and the server's acknowledgement taken: the client
        // forgets the job.
        let received = server.counter("results_received");
        if received >= 1 && snapshot.state.jobs.iter().all(|job| job.got_server_ack) {
            acked = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let snapshot = client.snapshot_blocking().expect("a snapshot");
    client.shutdown();
    let _ = client.join();
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
         jobs {:?}; server status {}; server log:\n{}",
        snapshot.state.jobs,
        server.status(),
        server.log()
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
    // The output is on the server, not empty.
    let uploads = server.uploads();
    assert!(!uploads.is_empty(), "nothing uploaded");
    assert!(uploads.iter().all(|path| std::fs::metadata(path).is_ok_and(|m| m.len() > 0)));
    assert_eq!(server.counter("results_received"), 1);
}
