//! A scheduler request from boinc-rs beside BOINC 7.20.5's on the same host and state,
//! element by element (fixtures/boinc-7.20.5: the client's state file and override
//! preferences, and the request it sent to report a result): every element BOINC
//! sends is in ours, at the same place; where the value comes from the shared state
//! (the host, the preferences, the time statistics, the work asked), it is the same;
//! and ours adds no element BOINC's scheduler does not parse.

use boinc_core::control::{
    ClientIdentity, ConfigurationFiles, RpcCall, build_request, read_configuration,
};
use boinc_core::model::{ClientState, ProjectId, ResourceMap, ResourceType};
use boinc_core::protocol::{SourceText, parse_account, parse_client_state};
use boinc_core::work_fetch::{ResourceRequest, WorkRequest};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

fn fixture(relative: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every element of a document by its path (`scheduler_request/host_info/p_model`),
/// with the text of each occurrence (trimmed; empty for an element with children).
fn elements(xml: &str) -> BTreeMap<String, Vec<String>> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut path: Vec<String> = Vec::new();
    let mut text = String::new();
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    loop {
        match reader.read_event().expect("well-formed") {
            Event::Start(tag) => {
                path.push(String::from_utf8_lossy(tag.name().as_ref()).into_owned());
                text.clear();
            }
            Event::Empty(tag) => {
                let name = String::from_utf8_lossy(tag.name().as_ref()).into_owned();
                found.entry(format!("{}/{name}", path.join("/"))).or_default().push(String::new());
            }
            Event::Text(t) => text.push_str(&t.unescape().expect("text")),
            Event::CData(t) => text.push_str(&String::from_utf8_lossy(&t)),
            Event::End(_) => {
                found.entry(path.join("/")).or_default().push(text.trim().to_string());
                text.clear();
                path.pop();
            }
            Event::Eof => break,
            _ => {}
        }
    }
    found
}

/// Elements BOINC's scheduler parses that this capture happens not to hold: boinc-rs
/// may send them (by path prefix, with why).
const PARSED_BUT_NOT_IN_THE_CAPTURE: [&str; 4] = [
    // The jobs every project has in progress: BOINC sends them when a project asks,
    // boinc-rs always, so any server can run its deadline check.
    "scheduler_request/in_progress_results",
    // The client's own name beside the protocol version (client_brand.txt in BOINC).
    "scheduler_request/client_brand",
    // Peaks BOINC reports when it measured them (this capture's app was too short).
    "scheduler_request/result/final_peak_working_set_size",
    "scheduler_request/result/final_peak_swap_size",
];

/// Elements whose values come from the state both clients had, so they must agree.
const SAME_VALUE: [&str; 9] = [
    "scheduler_request/hostid",
    "scheduler_request/rpc_seqno",
    "scheduler_request/platform_name",
    "scheduler_request/work_req_seconds",
    "scheduler_request/cpu_req_secs",
    "scheduler_request/cpu_req_instances",
    "scheduler_request/working_global_preferences/global_preferences",
    "scheduler_request/host_info",
    "scheduler_request/result/state",
];

/// Host figures the state file was written with a little before the request (the free
/// disk space moved; BOINC benchmarked again at the client's start).
const MOVED_SINCE_THE_STATE_FILE: [&str; 3] = [
    "scheduler_request/host_info/d_free",
    "scheduler_request/host_info/p_calculated",
    "scheduler_request/host_info/host_cpid",
];

/// The request boinc-rs makes on BOINC's state, to report its pending result.
fn ours() -> String {
    let mut state: ClientState = parse_client_state(
        &fixture("boinc-7.20.5/state/client_state_pending_result.xml"),
        "client_state_pending_result.xml",
    )
    .expect("reads");
    let account = parse_account(
        &fixture("boinc-7.20.5/state/account_127.0.0.1_8088.xml"),
        "account_127.0.0.1_8088.xml",
    )
    .expect("reads");
    state.projects[0].authenticator = account.authenticator;
    let override_text = fixture("boinc-7.20.5/state/global_prefs_override.xml");
    let files = ConfigurationFiles {
        cc_config: None,
        global_prefs: None,
        global_prefs_override: Some(SourceText {
            name: "global_prefs_override.xml",
            text: &override_text,
        }),
        app_configs: Vec::new(),
    };
    state.prefs = read_configuration(&files, &state).prefs;
    let mut resources = ResourceMap::<ResourceRequest>::default();
    resources[ResourceType::Cpu] = ResourceRequest { req_seconds: 103680.0, req_ninstances: 2.0 };
    let call = RpcCall {
        request: WorkRequest { project: ProjectId(0), resources, work_req_seconds: 103680.0 },
        reported: vec!["wu_DEMO_r0".into()],
        estimated_delay: ResourceMap::default(),
    };
    let identity = ClientIdentity::default();
    build_request(&state, &call, &identity, 1795248600.0).to_xml()
}

#[test]
fn every_element_boinc_sends_is_in_ours_and_ours_are_all_parsed_by_boinc() {
    let ours = elements(&ours());
    let theirs = elements(&fixture("boinc-7.20.5/sched_request_04_report_success.xml"));
    let (our_paths, their_paths): (BTreeSet<_>, BTreeSet<_>) =
        (ours.keys().collect(), theirs.keys().collect());
    let missing: Vec<_> = their_paths.difference(&our_paths).collect();
    assert!(missing.is_empty(), "BOINC 7.20.5 sends these, boinc-rs does not: {missing:#?}");
    let added: Vec<_> = our_paths
        .difference(&their_paths)
        .filter(|path| !PARSED_BUT_NOT_IN_THE_CAPTURE.iter().any(|p| path.starts_with(p)))
        .collect();
    assert!(
        added.is_empty(),
        "boinc-rs sends these, BOINC's scheduler does not read them: {added:#?}"
    );
    let mut differ = Vec::new();
    for (path, values) in &theirs {
        let compared = SAME_VALUE.iter().any(|p| path.starts_with(p))
            && !MOVED_SINCE_THE_STATE_FILE.contains(&path.as_str());
        if compared && ours.get(path) != Some(values) {
            differ.push(format!("{path}: BOINC {values:?}, boinc-rs {:?}", ours.get(path)));
        }
    }
    assert!(differ.is_empty(), "values that mean the same differ:\n{}", differ.join("\n"));
}

#[test]
fn the_report_carries_the_apps_stderr_and_peaks_as_boinc_writes_them() {
    let ours = elements(&ours());
    // The state file's result had BOINC's stderr and peak disk use.
    assert_eq!(ours["scheduler_request/result/stderr_out/core_client_version"], ["8.3.0"]);
    let stderr = &ours["scheduler_request/result/stderr_out"][0];
    assert!(stderr.starts_with("<stderr_txt>") && stderr.ends_with("</stderr_txt>"), "{stderr}");
    assert_eq!(ours["scheduler_request/result/final_peak_disk_usage"], ["14579"]);
    // The time statistics' totals, from the state file's.
    assert_eq!(ours["scheduler_request/time_stats/total_duration"], ["30.050198"]);
    assert_eq!(ours["scheduler_request/time_stats/previous_uptime"], ["40.201514"]);
    // Seed 004's figures are not sent: BOINC's scheduler logs each as unknown.
    assert!(!ours.keys().any(|path| path.contains("free_space")));
}
