//! GUI RPC replies against the real client's (docs/design.md "Protocol facts", GUI RPC):
//! boinc-rs renders each reply from the same state BOINC 7.20.5 was captured on
//! (tests/fixtures/gui_rpc/pending_result_replies.txt) and the two are compared field
//! by field: every field BOINC writes is either written by boinc-rs with the same
//! value, or listed here with the reason it differs or is left out.

use boinc_core::control::{MessageLog, MessagePriority, NoticeLog};
use boinc_core::model::{ClientState, RunMode};
use boinc_core::protocol::gui_rpc::{
    ClientView, Modes, Operation, Request, frame_reply, parse_request, render_query,
};
use boinc_core::protocol::{Notice, SourceText, StateFiles, load_state};
use quick_xml::Reader;
use quick_xml::events::Event;
use std::collections::{BTreeMap, BTreeSet};

use crate::support;

const CAPTURE: &str = include_str!("../fixtures/gui_rpc/pending_result_replies.txt");
const PLATFORM: &str = "x86_64-pc-linux-gnu";
/// The data directory of the client the capture was made on.
const DATA_DIR: &str = "/tmp/gr/r3";

/// Each leaf element's path (`client_state/project/master_url`) with its values in
/// document order; an empty element's value is empty.
type Fields = BTreeMap<String, Vec<String>>;

fn fields(xml: &str) -> Fields {
    let mut reader = Reader::from_str(xml);
    let mut path: Vec<String> = Vec::new();
    let mut text = String::new();
    let mut fields = Fields::new();
    loop {
        match reader.read_event().expect("well-formed reply") {
            Event::Start(tag) => {
                path.push(String::from_utf8_lossy(tag.name().as_ref()).into_owned());
                text.clear();
            }
            Event::Empty(tag) => {
                path.push(String::from_utf8_lossy(tag.name().as_ref()).into_owned());
                fields.entry(path.join("/")).or_default().push(String::new());
                path.pop();
            }
            Event::Text(t) => text.push_str(&t.unescape().expect("text")),
            Event::CData(data) => text.push_str(&String::from_utf8_lossy(&data)),
            Event::End(_) => {
                let key = path.join("/");
                let is_leaf = !fields.keys().any(|k| k.starts_with(&format!("{key}/")));
                if is_leaf {
                    fields.entry(key).or_default().push(text.trim().to_string());
                }
                text.clear();
                path.pop();
            }
            Event::Eof => break,
            _ => {}
        }
    }
    fields
}

/// The captured replies by the operation's element name.
fn captured() -> BTreeMap<String, String> {
    let mut replies = BTreeMap::new();
    for section in CAPTURE.split("\n--- ").skip(1) {
        let name = section[1..].split(['/', '>']).next().expect("a name").to_string();
        let start = section.find("<boinc_gui_rpc_reply>").expect("a reply");
        let end = section.find("</boinc_gui_rpc_reply>").expect("its end");
        replies.insert(name, section[start..end + "</boinc_gui_rpc_reply>".len()].to_string());
    }
    replies
}

/// The state the capture was made on: the fixture's files, run and network modes never.
fn state() -> ClientState {
    let client_state = support::read_fixture("boinc-7.20.5/state/client_state_pending_result.xml");
    let prefs = support::read_fixture("boinc-7.20.5/state/global_prefs_override.xml");
    let config = support::read_fixture("boinc-7.20.5/state/cc_config.xml");
    let mut state = load_state(&StateFiles {
        client_state: SourceText { name: "client_state.xml", text: &client_state },
        global_prefs: None,
        global_prefs_override: Some(SourceText { name: "override", text: &prefs }),
        cc_config: Some(SourceText { name: "cc_config.xml", text: &config }),
    })
    .expect("the fixture state loads");
    state.run_mode = RunMode::Never;
    state.network_mode = RunMode::Never;
    state
}

fn ours(request: &str, state: &ClientState, log: &MessageLog) -> String {
    ours_with(request, state, log, &NoticeLog::default())
}

/// [`ours`] with the client's notices.
fn ours_with(request: &str, state: &ClientState, log: &MessageLog, notices: &NoticeLog) -> String {
    let wrapped = format!("<boinc_gui_rpc_request>\n{request}\n</boinc_gui_rpc_request>\n");
    let Request::Operation { operation: Ok(operation), .. } = parse_request(wrapped.as_bytes())
    else {
        panic!("{request} is an operation");
    };
    let view = ClientView {
        now: 1795587628.0,
        state,
        in_flight: &[],
        platform: PLATFORM,
        client_start_time: 1795587620.0,
        modes: Modes::of(state),
        data_dir: std::path::Path::new(DATA_DIR),
    };
    let body = render_query(&operation, &view, log, notices).expect("a query");
    let framed = frame_reply(&body);
    assert_eq!(framed.last(), Some(&0x03));
    String::from_utf8(framed[..framed.len() - 1].to_vec()).expect("utf-8")
}

/// Fields BOINC writes that boinc-rs does not, and why.
const NOT_WRITTEN: &[(&str, &str)] = &[
    // Host and client facts the state does not hold.
    ("net_stats/", "transfer rates are the host service's"),
    ("time_stats/cpu_and_network_available_frac", "not modelled"),
    ("time_stats/total_", "not kept"),
    ("time_stats/previous_uptime", "not kept"),
    ("time_stats/session_", "not kept"),
    ("workunit/version_num", "jobs name their version"),
    ("workunit/command_line", "the host service's"),
    ("workunit/file_ref", "files are the host service's"),
    ("global_preferences/", "only the preferences the policies read are kept"),
    // Transfer details not kept.
    ("file_transfer/persistent_file_xfer/num_retries", "not kept"),
    ("file_transfer/persistent_file_xfer/first_request_time", "not kept"),
    ("file_transfer/persistent_file_xfer/next_request_time", "not kept"),
    ("file_transfer/persistent_file_xfer/time_so_far", "not kept"),
    ("file_transfer/persistent_file_xfer/last_bytes_xferred", "not kept"),
];

/// Fields both write whose values differ, and why.
const DIFFERENT: &[(&str, &str)] = &[
    ("time_stats/now", "another instant"),
    ("time_stats/client_start_time", "another start"),
    ("host_info/d_free", "measured at another time"),
    ("host_info/p_vendor", "BOINC measured its (new) host at start"),
    ("host_info/p_model", "BOINC measured its (new) host at start"),
    ("host_info/p_features", "BOINC measured its (new) host at start"),
    ("host_info/m_nbytes", "BOINC measured its (new) host at start"),
    ("host_info/m_cache", "BOINC measured its (new) host at start"),
    ("host_info/os_version", "BOINC measured its (new) host at start"),
    ("project/disk_share", "boinc-rs's disk limits (seed 004), not BOINC's"),
    ("project/sched_priority", "BOINC lowers it for each job its last pass scheduled"),
    ("project/project_dir", "another data directory"),
    ("result/final_cpu_time", "not kept: a task's CPU time is written while it has one"),
    ("disk_usage", "BOINC measures the directory; boinc-rs adds its files' sizes"),
    ("d_allowed", "follows d_free and the usage"),
    ("d_boinc", "the client's own files are the host service's to measure"),
    ("rsc_backoff_time/value", "BOINC cleared the backoff at start (run mode never)"),
    ("rsc_backoff_interval/value", "BOINC cleared the backoff at start (run mode never)"),
    ("time_stats/on_frac", "BOINC updated it over its run"),
    ("time_stats/active_frac", "BOINC updated it over its run"),
    ("time_stats/gpu_active_frac", "BOINC updated it over its run"),
    ("time_stats/connected_frac", "BOINC updated it over its run"),
    ("estimated_cpu_time_remaining", "boinc-rs's estimate"),
    (
        "project/rec",
        "client_state.xml keeps boinc-rs's REC (flops·seconds), read from BOINC's file as such",
    ),
    ("file_transfer", "the capture's executable was missing on disk"),
    ("project/scheduler_rpc_in_progress", "BOINC tried an RPC at start"),
    ("msg", "each client's own event log"),
    ("seqno", "each client's own event log"),
    ("cc_status/network_suspend_reason", "BOINC gives it only while work waits on the network"),
];

fn listed(path: &str, list: &[(&str, &str)]) -> bool {
    list.iter().any(|(prefix, _)| path.contains(prefix))
}

#[test]
fn replies_match_the_real_clients_field_by_field() {
    let state = state();
    let log = MessageLog::default();
    let requests = [
        ("get_state", "<get_state/>"),
        ("get_results", "<get_results>\n<active_only>0</active_only>\n</get_results>"),
        ("get_project_status", "<get_project_status/>"),
        ("get_cc_status", "<get_cc_status/>"),
        ("get_disk_usage", "<get_disk_usage/>"),
        ("get_statistics", "<get_statistics/>"),
        ("get_file_transfers", "<get_file_transfers/>"),
        ("get_notices", "<get_notices>\n<seqno>0</seqno>\n</get_notices>"),
    ];
    let replies = captured();
    let mut problems = Vec::new();
    for (name, request) in requests {
        let real = fields(&replies[name]);
        let mine = fields(&ours(request, &state, &log));
        for (path, values) in &real {
            match mine.get(path) {
                None if listed(path, NOT_WRITTEN) || listed(path, DIFFERENT) => {}
                None => problems.push(format!("{name}: {path} missing (BOINC: {values:?})")),
                Some(mine) if mine != values && !listed(path, DIFFERENT) => {
                    problems.push(format!("{name}: {path} = {mine:?}, BOINC: {values:?}"))
                }
                Some(_) => {}
            }
        }
        for path in mine.keys().filter(|p| !real.contains_key(*p)) {
            // A field BOINC writes only when it applies (a flag, a coprocessor) may be
            // ours alone; anything else is a typo in an element name.
            let optional = ["resources", "non_cpu_intensive", "plan_class", "max_ncpus"];
            if !optional.iter().any(|o| path.ends_with(o)) && !listed(path, DIFFERENT) {
                problems.push(format!("{name}: {path} written by boinc-rs only"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn messages_and_their_count() {
    let state = state();
    let mut log = MessageLog::default();
    log.push(1795587600.5, "", MessagePriority::Info, "Starting boinc-rs");
    log.push(1795587601.0, "Fake Loopback Project", MessagePriority::UserAlert, "a <b> ]]> c");
    let count = fields(&ours("<get_message_count/>", &state, &log));
    assert_eq!(count["boinc_gui_rpc_reply/seqno"], ["2"]);
    let messages = fields(&ours("<get_messages>\n<seqno>1</seqno>\n</get_messages>", &state, &log));
    assert_eq!(messages["boinc_gui_rpc_reply/msgs/msg/seqno"], ["2"]);
    assert_eq!(messages["boinc_gui_rpc_reply/msgs/msg/body"], ["a <b> ]]> c"]);
    assert_eq!(messages["boinc_gui_rpc_reply/msgs/msg/pri"], ["2"]);
    assert_eq!(messages["boinc_gui_rpc_reply/msgs/msg/time"], ["1795587601"]);
    // The real client's message layout, element for element.
    let real = fields(&captured()["get_messages"]);
    let real_keys: BTreeSet<&String> = real.keys().collect();
    let our_keys: BTreeSet<&String> = messages.keys().collect();
    assert_eq!(our_keys, real_keys);
    let mut notices = NoticeLog::default();
    notices.push(Notice {
        description: "a <b> ]]> c".into(),
        category: "client".into(),
        ..Notice::default()
    });
    notices.push(Notice { description: "mine".into(), is_private: true, ..Notice::default() });
    let public = fields(&ours_with("<get_notices_public/>", &state, &log, &notices));
    assert_eq!(public["boinc_gui_rpc_reply/notices/notice/description"], ["a <b> ]]> c"]);
    assert_eq!(public["boinc_gui_rpc_reply/notices/notice/category"], ["client"]);
    let all = fields(&ours_with("<get_notices/>", &state, &log, &notices));
    assert_eq!(all["boinc_gui_rpc_reply/notices/notice/seqno"], ["1", "2"]);
}

#[test]
fn host_info_is_the_state_files_host() {
    let state = state();
    let host = fields(&ours("<get_host_info/>", &state, &MessageLog::default()));
    let file = fields(&support::read_fixture("boinc-7.20.5/state/client_state_pending_result.xml"));
    let mut compared = 0;
    for (path, values) in host {
        let in_file = path.replace("boinc_gui_rpc_reply/", "client_state/");
        match file.get(&in_file) {
            Some(expected) => {
                assert_eq!(&values, expected, "{path}");
                compared += 1;
            }
            None => assert!(
                ["n_usable_coprocs", "wsl_available", "p_vm_extensions_disabled", "coprocs"]
                    .iter()
                    .any(|computed| path.ends_with(computed)),
                "{path} is neither in the state file nor computed"
            ),
        }
    }
    assert!(compared >= 15, "only {compared} host fields compared");
}

#[test]
fn every_query_renders_on_every_fixture_and_scenario() {
    let queries = [
        Operation::GetState,
        Operation::GetResults { active_only: true },
        Operation::GetSimpleGuiInfo,
        Operation::GetScreensaverTasks,
        Operation::GetOldResults,
        Operation::GetDiskUsage,
        Operation::GetFileTransfers,
        Operation::GetStatistics,
        Operation::GetNewerVersion,
        Operation::GetDailyTransferHistory,
        Operation::ExchangeVersions,
    ];
    let mut states = vec![state()];
    for name in support::scenario_names() {
        states.push(support::load_scenario(&name));
    }
    for state in &states {
        let view = ClientView {
            now: 0.0,
            state,
            in_flight: &[],
            platform: PLATFORM,
            client_start_time: 0.0,
            modes: Modes::of(state),
            data_dir: std::path::Path::new(DATA_DIR),
        };
        for query in &queries {
            let body = render_query(query, &view, &MessageLog::default(), &NoticeLog::default())
                .expect("a query");
            let framed = String::from_utf8(frame_reply(&body)).expect("utf-8");
            fields(framed.trim_end_matches('\u{3}'));
        }
    }
}

#[test]
fn simple_gui_info_lists_the_active_tasks_and_newer_version_a_download_url() {
    let mut state = state();
    let active = state.jobs.iter().filter(|j| j.task.is_some()).count();
    assert!(active < state.jobs.len() || state.jobs.len() < 2, "the fixture has tasks without one");
    // One task more that never started: it is not listed.
    let mut waiting = state.jobs[0].clone();
    waiting.name.push_str("_waiting");
    waiting.task = None;
    waiting.got_server_ack = false;
    state.jobs.push(waiting);
    let info = fields(&ours("<get_simple_gui_info/>", &state, &MessageLog::default()));
    let listed = info.get("boinc_gui_rpc_reply/simple_gui_info/result/name").map_or(0, Vec::len);
    let shown = state.jobs.iter().filter(|j| j.task.is_some() && !j.got_server_ack).count();
    assert_eq!(listed, shown, "{info:?}");
    let newer = fields(&ours("<get_newer_version/>", &state, &MessageLog::default()));
    // BOINC 7.20.5's reply (fixture gui_rpc_get_state_with_projects.txt).
    assert_eq!(
        newer["boinc_gui_rpc_reply/download_url"],
        ["https://boinc.berkeley.edu/download.php"]
    );
}
