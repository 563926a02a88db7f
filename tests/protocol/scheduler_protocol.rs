//! The scheduler RPC's messages against what the real BOINC client sends and the replies
//! it accepted (tests/fixtures, boinc-7.20.5 and boinc-8.3.0): every captured request
//! and reply reads, with its values; what boinc-rs writes reads back to the same value;
//! the requests boinc-rs makes for the attach, fetch and report cases carry the real
//! client's top-level elements in its order (snapshots beside the captured requests);
//! and the signed reply becomes a job with its files, open names and the pinned key.

use boinc_core::control::{
    ClientIdentity, CodeSignKeyUpdate, RpcCall, SlotFileRole, apply_reply, build_request,
    take_app_info, task_program, usable_app_info,
};
use boinc_core::model::{ClientState, JobState, Project, ProjectId, ResourceMap, ResourceType};
use boinc_core::protocol::{
    MasterPage, MessagePriority, SchedulerReply, SchedulerRequest, parse_account,
    parse_client_state, read_app_info,
};
use boinc_core::work_fetch::{ResourceRequest, WorkRequest};
use std::fs;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    assert!(dir.is_dir(), "{} must hold the real client's captures", dir.display());
    dir
}

fn fixture(relative: &str) -> String {
    let path = fixtures().join(relative);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

const REQUESTS: [&str; 7] = [
    "boinc-7.20.5/sched_request_01_attach.xml",
    "boinc-7.20.5/sched_request_02_fetch_work.xml",
    "boinc-7.20.5/sched_request_03_report_failed_task.xml",
    "boinc-7.20.5/sched_request_04_report_success.xml",
    "boinc-7.20.5/sched_request_05_anonymous_platform.xml",
    "boinc-8.3.0/sched_request_1_init_captured.xml",
    "boinc-8.3.0/sched_request_3_report_result_captured.xml",
];

const REPLIES: [&str; 3] = [
    "boinc-7.20.5/sched_reply_nowork_example.xml",
    "boinc-7.20.5/sched_reply_work_signed_example.xml",
    "boinc-7.20.5/sched_reply_work_unsigned_REJECTED_example.xml",
];

fn request(relative: &str) -> SchedulerRequest<'static> {
    SchedulerRequest::from_xml(&fixture(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

fn reply(relative: &str) -> SchedulerReply {
    SchedulerReply::from_xml(&fixture(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

#[test]
fn every_captured_request_reads_and_reads_back_from_what_we_write() {
    for relative in REQUESTS {
        let read = request(relative);
        assert_eq!(read.authenticator, "0123456789abcdef0123456789abcdef", "{relative}");
        // The anonymous-platform capture names no platform (app_info.xml).
        let platform =
            if relative.contains("anonymous") { "anonymous" } else { "x86_64-pc-linux-gnu" };
        assert_eq!(read.platform_name, platform, "{relative}");
        assert_eq!(read.host_info.p_ncpus, 2);
        assert_eq!(read.host_info.description.os_name, "Linux Debian");
        assert!(read.working_global_preferences.is_some());
        assert!(read.in_progress_results.is_none(), "the real client sends them only on request");
        let again = SchedulerRequest::from_xml(&read.to_xml()).expect("our own request reads");
        assert_eq!(again, read, "{relative}");
    }
}

#[test]
fn captured_request_values() {
    let attach = request("boinc-7.20.5/sched_request_01_attach.xml");
    assert_eq!((attach.hostid, attach.rpc_seqno), (0, 0));
    assert_eq!(attach.client_version.to_string(), "7.20.5");
    assert_eq!(
        (attach.work_req_seconds, attach.cpu_req_secs, attach.cpu_req_instances),
        (1.0, 1.0, 0.0)
    );
    assert_eq!(attach.disk_usage.d_boinc_used_total, 61440.0);
    assert_eq!(attach.disk_usage.d_project_share, 91_961_082_920.96);
    assert_eq!(attach.time_stats.connected_frac, -1.0);
    assert_eq!(attach.time_stats.now, Some(1795247974.585973));
    assert_eq!(attach.net_stats.bwdown, 2857142.857143);
    assert_eq!(attach.cross_project_id.as_deref(), Some(""));
    let prefs = attach.working_global_preferences.expect("prefs");
    assert_eq!((prefs.work_buf_min_days, prefs.disk_min_free_gb), (0.1, 0.1));

    let fetch = request("boinc-7.20.5/sched_request_02_fetch_work.xml");
    assert_eq!((fetch.cpu_req_secs, fetch.cpu_req_instances), (103680.0, 2.0));
    assert!(fetch.requests(ResourceType::Cpu) && !fetch.requests(ResourceType::Nvidia));
    assert_eq!(fetch.usable_instances(ResourceType::Cpu), 2);

    let failed = request("boinc-7.20.5/sched_request_03_report_failed_task.xml");
    assert_eq!((failed.hostid, failed.rpc_seqno), (42, 1));
    let result = &failed.results[0];
    assert_eq!((result.name.as_ref(), result.exit_status, result.state), ("wu_A_r0", -186, 1));
    assert_eq!((result.version_num, result.app_version_num), (100, Some(100)));
    assert!(result.stderr_out.contains("<error_code>-123 (no signature)</error_code>"));
    assert!(result.output_files.is_empty());
    assert_eq!(failed.app_versions[0].api_version, "7.20.5");

    let success = request("boinc-7.20.5/sched_request_04_report_success.xml");
    assert_eq!(success.duration_correction_factor, 0.92014);
    assert!(success.code_sign_key.as_deref().is_some_and(|k| k.starts_with("1024\n")));
    let result = &success.results[0];
    assert_eq!(
        (result.final_elapsed_time, result.final_peak_disk_usage),
        (2.014027, Some(14548.0))
    );
    assert!(
        result.stderr_out.starts_with("<stderr_txt>")
            && result.stderr_out.ends_with("</stderr_txt>")
    );
    let output = &result.output_files[0];
    assert_eq!((output.name.as_ref(), output.nbytes), ("wu_B_r0_out", 50.0));
    assert_eq!(output.upload_urls.as_ref(), ["http://127.0.0.1:8088/file_upload_handler"]);

    let report = request("boinc-8.3.0/sched_request_3_report_result_captured.xml");
    assert_eq!(report.client_version.to_string(), "8.3.0");
    assert_eq!((report.hostid, report.rpc_seqno), (42, 0));
    assert!(report.allow_multiple_clients);
    assert_eq!(report.results[0].final_peak_working_set_size, Some(3624960.0));
    assert_eq!(report.cross_project_id, None);
}

#[test]
fn every_reply_the_real_client_accepted_reads_and_reads_back() {
    for relative in REPLIES {
        let read = reply(relative);
        assert_eq!(read.project_name.as_deref(), Some("Fake Loopback Project"), "{relative}");
        assert_eq!(read.master_url.as_deref(), Some("http://127.0.0.1:8088/"));
        assert_eq!(read.scheduler_version, Some(720));
        assert_eq!(read.messages[0].priority, MessagePriority::Low);
        let again = SchedulerReply::from_xml(&read.to_xml()).expect("our own reply reads");
        assert_eq!(again, read, "{relative}");
    }
    let nowork = reply(REPLIES[0]);
    assert_eq!(nowork.request_delay, Some(60.0));
    assert!(nowork.results.is_empty() && nowork.no_work_reasons().next().is_none());
}

#[test]
fn the_signed_reply_in_detail() {
    let signed = reply("boinc-7.20.5/sched_reply_work_signed_example.xml");
    assert_eq!((signed.hostid, signed.userid), (Some(42), Some(7)));
    assert_eq!(signed.user_name.as_deref(), Some("tester"));
    assert_eq!(signed.result_acks, ["wu_A_r0"]);
    assert!(signed.code_sign_key.as_deref().is_some_and(|k| k.ends_with("\n.")));
    assert_eq!(signed.apps[0].user_friendly_name, "Uppercase test app");
    let executable = &signed.file_infos[0];
    assert!(executable.executable);
    assert_eq!(executable.nbytes, Some(16544.0));
    assert!(executable.file_signature.as_deref().is_some_and(|s| s.starts_with("1f5f8ea2")));
    let version = &signed.app_versions[0];
    assert_eq!(
        (version.version_num, version.avg_ncpus, version.flops),
        (101, Some(1.0), Some(1e9))
    );
    assert!(version.file_refs[0].main_program);
    let workunit = &signed.workunits[0];
    assert_eq!((workunit.command_line.as_str(), workunit.rsc_fpops_est), ("--tag B", 1e10));
    assert_eq!(workunit.file_refs[0].open_name, "in");
    let output = &signed.file_infos[2];
    assert!(output.generated_locally && output.upload_when_present);
    assert_eq!(output.max_nbytes, Some(1e6));
    let result = &signed.results[0];
    assert_eq!((result.report_deadline, result.version_num), (1795853021.0, Some(101)));
    assert_eq!(result.file_refs[0].open_name, "out");
    let unsigned = reply("boinc-7.20.5/sched_reply_work_unsigned_REJECTED_example.xml");
    assert!(unsigned.code_sign_key.is_none() && unsigned.file_infos[0].file_signature.is_none());
}

/// The 7.20.5 client's state before its attach, with the project attached by the
/// account file.
fn attached_state() -> ClientState {
    let mut state = parse_client_state(
        &fixture("boinc-7.20.5/state/client_state_fresh.xml"),
        "client_state_fresh.xml",
    )
    .expect("reads");
    let account = parse_account(
        &fixture("boinc-7.20.5/state/account_127.0.0.1_8088.xml"),
        "account_127.0.0.1_8088.xml",
    )
    .expect("reads");
    let mut project = Project::new("", account.master_url, 100.0);
    project.authenticator = account.authenticator;
    let master = MasterPage::parse(&fixture("boinc-7.20.5/state/master_127.0.0.1_8088.xml"));
    project.scheduler_urls = master.scheduler_urls;
    state.projects.push(project);
    state
}

fn cpu_call(req_seconds: f64, req_ninstances: f64, reported: &[&str]) -> RpcCall {
    let mut resources = ResourceMap::<ResourceRequest>::default();
    resources[ResourceType::Cpu] = ResourceRequest { req_seconds, req_ninstances };
    RpcCall {
        request: WorkRequest { project: ProjectId(0), resources, work_req_seconds: req_seconds },
        reported: reported.iter().map(|r| r.to_string()).collect(),
        estimated_delay: ResourceMap::default(),
    }
}

#[test]
fn master_page_and_account_file() {
    let state = attached_state();
    assert_eq!(state.projects[0].scheduler_urls, ["http://127.0.0.1:8088/cgi"]);
    assert_eq!(state.projects[0].authenticator, "0123456789abcdef0123456789abcdef");
}

#[test]
fn the_signed_reply_becomes_a_job_with_its_files_and_the_pinned_key() {
    let mut state = attached_state();
    let signed = reply("boinc-7.20.5/sched_reply_work_signed_example.xml");
    let outcome = apply_reply(&mut state, ProjectId(0), signed.clone(), 1795248000.0);
    let project = &state.projects[0];
    assert_eq!(project.name, "Fake Loopback Project");
    assert_eq!((project.hostid, project.rpc_seqno, project.userid), (42, 0, 7));
    assert!(matches!(outcome.code_sign_key, CodeSignKeyUpdate::Pinned(_)));
    assert_eq!(project.code_sign_key, signed.code_sign_key);
    // wu_A_r0 is acknowledged but this client never held it.
    assert_eq!(outcome.acknowledged, 0);
    assert_eq!(outcome.problems.len(), 1, "{:?}", outcome.problems);
    assert_eq!(outcome.work.jobs_received[ResourceType::Cpu], 1);
    let id = outcome.new_jobs[0];
    let job = state.job(id);
    assert_eq!((job.name.as_str(), job.state), ("wu_B_r0", JobState::New));
    assert_eq!((job.version_num, job.platform.as_str()), (101, "x86_64-pc-linux-gnu"));
    assert_eq!(job.report_deadline, 1795853021.0);
    let version = job.app_version.expect("an app version");
    let (reference, executable) = state.main_program(version).expect("a main program");
    assert!(reference.main_program && executable.executable);
    assert_eq!(executable.name, "upper_1.01_x86_64-pc-linux-gnu");
    assert!(executable.file_signature.is_some());
    assert_eq!(
        executable.download_urls[0],
        "http://127.0.0.1:8088/download/upper_1.01_x86_64-pc-linux-gnu"
    );
    let inputs: Vec<(&str, &str)> = state
        .job_input_files(id)
        .iter()
        .map(|r| (state.file(r.file).name.as_str(), state.open_name(r)))
        .collect();
    assert_eq!(inputs, [("in_B", "in")]);
    let outputs = state.job_output_files(id);
    let output = state.file(outputs[0].file);
    assert_eq!((output.name.as_str(), state.open_name(&outputs[0])), ("wu_B_r0_out", "out"));
    assert!(output.upload_when_present);
    assert_eq!(output.upload_urls.as_ref(), ["http://127.0.0.1:8088/file_upload_handler"]);
    assert_eq!(state.workunit(job.workunit).command_line, "--tag B");
    // What a process host is told to run for it.
    let program = task_program(&state, id, 3).expect("the app version names a program");
    assert_eq!(program.executable, "upper_1.01_x86_64-pc-linux-gnu");
    assert_eq!(
        (program.project_dir.as_str(), program.slot_dir.as_str()),
        ("projects/127.0.0.1_8088", "slots/3")
    );
    assert_eq!(program.arguments, ["--tag", "B"]);
    let files: Vec<(&str, &str, SlotFileRole)> = program
        .files
        .iter()
        .map(|f| (f.open_name.as_str(), f.file_name.as_str(), f.role))
        .collect();
    assert_eq!(
        files,
        [("in", "in_B", SlotFileRole::Input), ("out", "wu_B_r0_out", SlotFileRole::Output)]
    );
    assert_eq!((program.wu_name.as_str(), program.result_name.as_str()), ("wu_B", "wu_B_r0"));
    assert_eq!(program.identity.authenticator, "0123456789abcdef0123456789abcdef");
    assert_eq!((program.identity.hostid, program.identity.user_name.as_str()), (42, "tester"));
    // The same reply again changes nothing but the deadline it repeats.
    let again = apply_reply(&mut state, ProjectId(0), signed, 1795248100.0);
    assert!(again.new_jobs.is_empty() && again.code_sign_key == CodeSignKeyUpdate::Unchanged);
}

/// The names of a request's top-level elements, in order.
fn top_level_elements(xml: &str) -> Vec<String> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut depth = 0usize;
    let mut names = Vec::new();
    loop {
        match reader.read_event().expect("well-formed") {
            quick_xml::events::Event::Start(tag) => {
                if depth == 1 {
                    names.push(String::from_utf8_lossy(tag.name().as_ref()).into_owned());
                }
                depth += 1;
            }
            quick_xml::events::Event::Empty(tag) if depth == 1 => {
                names.push(String::from_utf8_lossy(tag.name().as_ref()).into_owned());
            }
            quick_xml::events::Event::End(_) => depth -= 1,
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
    }
    names
}

/// Elements the real client writes only in some situations, and boinc-rs in others:
/// `<cross_project_id>` when a cross-project id is known (7.20.5 wrote an empty one),
/// `<in_progress_results>` (the real client only when a project asks for them; boinc-rs
/// always, so any server can run seed 000's deadline check), `<client_brand>` (the real
/// client when client_brand.txt names one; boinc-rs always names itself).
const SITUATIONAL: [&str; 3] = ["cross_project_id", "in_progress_results", "client_brand"];

/// Our request has the real client's top-level elements, in its order, apart from the
/// situational ones.
fn assert_same_elements(ours: &str, theirs: &str, case: &str) {
    let keep = |names: Vec<String>| -> Vec<String> {
        names.into_iter().filter(|n| !SITUATIONAL.contains(&n.as_str())).collect()
    };
    let (ours, theirs) = (keep(top_level_elements(ours)), keep(top_level_elements(theirs)));
    assert_eq!(ours, theirs, "{case}: top-level elements differ");
}

/// Our request beside each capture: the top-level elements, one per line, aligned
/// where they agree; then our request in full.
fn side_by_side(ours: &SchedulerRequest, captures: &[&str]) -> String {
    let xml = ours.to_xml();
    let mut text = String::new();
    for capture in captures {
        let theirs = fixture(capture);
        assert_same_elements(&xml, &theirs, capture);
        text.push_str(&format!("{:<32} | {capture}\n", "ours"));
        let (a, b) = (top_level_elements(&xml), top_level_elements(&theirs));
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let (left, right) = match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) if x == y => (x.as_str(), y.as_str()),
                (Some(x), _) if SITUATIONAL.contains(&x.as_str()) => (x.as_str(), ""),
                (_, Some(y)) if SITUATIONAL.contains(&y.as_str()) => ("", y.as_str()),
                (x, y) => (x.map_or("", String::as_str), y.map_or("", String::as_str)),
            };
            i += usize::from(!left.is_empty());
            j += usize::from(!right.is_empty());
            text.push_str(&format!("  {left:<30} | {right}\n"));
        }
        text.push('\n');
    }
    text.push_str("ours in full:\n");
    text.push_str(&xml);
    text
}

#[test]
fn attach_request_beside_the_real_clients() {
    let state = attached_state();
    let identity = ClientIdentity::default();
    let request = build_request(&state, &cpu_call(1.0, 0.0, &[]), &identity, 1795247974.0);
    assert_eq!((request.hostid, request.rpc_seqno, request.work_req_seconds), (0, 0, 1.0));
    insta::assert_snapshot!(side_by_side(
        &request,
        &[
            "boinc-7.20.5/sched_request_01_attach.xml",
            "boinc-8.3.0/sched_request_1_init_captured.xml"
        ]
    ));
}

#[test]
fn fetch_request_beside_the_real_clients() {
    let state = attached_state();
    let identity = ClientIdentity::default();
    let request = build_request(&state, &cpu_call(103680.0, 2.0, &[]), &identity, 1795248036.0);
    assert_eq!((request.cpu_req_secs, request.cpu_req_instances), (103680.0, 2.0));
    insta::assert_snapshot!(side_by_side(
        &request,
        &["boinc-7.20.5/sched_request_02_fetch_work.xml"]
    ));
}

#[test]
fn report_request_beside_the_real_clients() {
    let mut state = parse_client_state(
        &fixture("boinc-7.20.5/state/client_state_pending_result.xml"),
        "client_state_pending_result.xml",
    )
    .expect("reads");
    // The real client keeps the authenticator in the account file.
    state.projects[0].authenticator = attached_state().projects[0].authenticator.clone();
    let identity = ClientIdentity::default();
    let request =
        build_request(&state, &cpu_call(103680.0, 2.0, &["wu_DEMO_r0"]), &identity, 1795248600.0);
    let result = &request.results[0];
    assert_eq!((result.name.as_ref(), result.state, result.version_num), ("wu_DEMO_r0", 5, 100));
    assert_eq!(result.output_files[0].md5_cksum, "3a9a6d472869a8e61c402c6b33ba4e01");
    assert!(request.code_sign_key.is_some());
    assert_eq!((request.hostid, request.rpc_seqno), (42, 1));
    insta::assert_snapshot!(side_by_side(
        &request,
        &[
            "boinc-7.20.5/sched_request_04_report_success.xml",
            "boinc-8.3.0/sched_request_3_report_result_captured.xml"
        ]
    ));
}

/// A project run with the volunteer's own apps (app_info.xml, BOINC's anonymous
/// platform): the request names the platform `anonymous` and no other, and lists the
/// declared versions where BOINC 7.20.5 lists app versions, without their files.
#[test]
fn an_anonymous_platform_request_lists_the_volunteers_versions() {
    let mut state = attached_state();
    // BOINC 7.20.5 made its request with benchmarks skipped: 1 GFLOPS.
    state.host.p_fpops = 1e9;
    let info = read_app_info(&fixture("app_info/app_info.xml"), "app_info.xml").expect("reads");
    let (info, missing) = usable_app_info(info, |_| Some(1000));
    assert!(missing.is_empty(), "{missing:?}");
    take_app_info(&mut state, ProjectId(0), &info);
    let identity = ClientIdentity {
        alt_platforms: vec!["i686-pc-linux-gnu".into()],
        ..ClientIdentity::default()
    };
    let made = build_request(&state, &cpu_call(1.0, 0.0, &[]), &identity, 1795247974.0);
    assert_eq!(made.platform_name, "anonymous");
    assert!(made.alt_platforms.is_empty(), "no other platform is named");
    let xml = made.to_xml();
    let part = |from: &str, to: &str| -> String {
        let start = xml.find(from).expect(from);
        let end = xml[start..].find(to).expect(to) + start;
        xml[start..end].to_owned()
    };
    let versions = part("<app_versions>", "<other_results>");
    assert!(!versions.contains("file_ref"), "no files, as BOINC lists versions");
    // BOINC 7.20.5's request from the same app_info.xml: the same platform and the
    // same versions, element for element.
    let theirs = request("boinc-7.20.5/sched_request_05_anonymous_platform.xml");
    assert_eq!(theirs.platform_name, "anonymous");
    assert!(theirs.alt_platforms.is_empty());
    let ours = SchedulerRequest::from_xml(&xml).expect("our request reads");
    assert_eq!(ours.app_versions, theirs.app_versions);
    insta::assert_snapshot!(format!(
        "{}\n...\n{}",
        part("<client_cap_plan_class>", "<working_global_preferences>"),
        versions
    ));
}
