//! `boinc-rs project-server`'s faults on purpose (issue "Talking to real project
//! servers": the faults a client must survive), each seen by a plain HTTP request: HTTP
//! 500, a body that is not XML, a hang past the client's timeout, a connection reset, a
//! truncated answer, an answer of 100 MB, a trickle, a download with the wrong MD5 or
//! size, an app whose signature does not verify or is missing, and a changed
//! code-signing key (signed by the old one, unsigned, or badly signed). Each rule is
//! used up by its count, and the server answers normally afterwards.

use crate::support;

use boinc_core::protocol::code_signing::{
    CodeSignKey, KeyUpdate, Signature, check_key_update, verify_file_signature,
};
use boinc_core::protocol::{
    ClientVersion, DataServerReply, DataServerRequest, FileUpload, SchedulerReply, SchedulerRequest,
};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use support::project_server::ProjectServerProcess;

/// BOINC 7.20.5's work request.
const FETCH_REQUEST: &str =
    include_str!("../../../../tests/fixtures/boinc-7.20.5/sched_request_02_fetch_work.xml");

/// A work request from a new host (of a new account, so that no host runs into its
/// limit of jobs in progress) holding `key` (none: a fresh attach).
fn work_request(key: Option<&str>) -> Vec<u8> {
    static HOSTS: AtomicU64 = AtomicU64::new(0);
    let mut request = SchedulerRequest::from_xml(FETCH_REQUEST).expect("the fixture reads");
    request.authenticator =
        format!("fault-test-account-{}", HOSTS.fetch_add(1, Ordering::Relaxed)).into();
    request.hostid = 0;
    request.code_sign_key = key.map(|key| key.to_owned().into());
    request.to_xml().into_bytes()
}

fn fault(project: &ProjectServerProcess, rule: Value) {
    let (code, body) = project.admin("faults", rule);
    assert_eq!(code, 200, "{body}");
}

/// A scheduler reply, read.
fn reply(project: &ProjectServerProcess, key: Option<&str>) -> SchedulerReply {
    let answer = project.post("cgi", work_request(key)).expect("the scheduler answers");
    assert_eq!(answer.status, 200);
    SchedulerReply::from_xml(&String::from_utf8(answer.body).expect("text")).expect("a reply")
}

#[test]
fn scheduler_transport_faults_each_once_then_normal_answers() {
    let project = ProjectServerProcess::start(&["--jobs", "100"]);
    fault(&project, json!({"target": "scheduler", "fault": "http_500"}));
    let answer = project.post("cgi", work_request(None)).expect("an answer");
    assert_eq!(answer.status, 500);

    fault(&project, json!({"target": "scheduler", "fault": "not_xml"}));
    let answer = project.post("cgi", work_request(None)).expect("an answer");
    assert_eq!(answer.status, 200);
    let text = String::from_utf8(answer.body).expect("text");
    assert!(SchedulerReply::from_xml(&text).is_err(), "{text}");

    fault(&project, json!({"target": "scheduler", "fault": "reset"}));
    let reset = project.post("cgi", work_request(None));
    assert!(reset.is_err(), "a reset connection gave an answer: {reset:?}");

    fault(&project, json!({"target": "scheduler", "fault": "truncated"}));
    let truncated = project.post("cgi", work_request(None));
    assert!(truncated.is_err(), "a truncated answer read in full: {truncated:?}");

    // Rules used up: a normal reply with work.
    assert!(!reply(&project, None).results.is_empty());
    let (code, body) = project.get_text("admin/faults");
    assert_eq!(code, 200);
    let listed: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(listed["rules"], json!([]));
    assert_eq!(listed["applied"].as_array().map(Vec::len), Some(4), "{listed:#}");
    assert_eq!(project.counter("faults_applied"), 4);
}

#[test]
fn a_hang_outlasts_the_clients_timeout_and_a_trickle_is_slow_but_whole() {
    let project = ProjectServerProcess::start(&["--jobs", "1"]);
    fault(&project, json!({"target": "master", "fault": "hang", "seconds": 5}));
    let url = project.url.clone();
    let timed_out = project.block_on(async {
        let client =
            reqwest::Client::builder().timeout(Duration::from_millis(700)).build().expect("client");
        client.get(&url).send().await
    });
    assert!(timed_out.is_err_and(|e| e.is_timeout()), "the hang was answered");

    let page = project.get("", &[]).expect("the master page").body;
    let rate = 2 * page.len() as u64;
    fault(&project, json!({"target": "master", "fault": "slow", "bytes_per_second": rate}));
    let started = Instant::now();
    let slow = project.get("", &[]).expect("the trickled page").body;
    assert_eq!(slow, page);
    assert!(started.elapsed() >= Duration::from_millis(400), "{:?}", started.elapsed());
}

#[test]
fn a_huge_reply_is_a_hundred_megabytes_of_xml() {
    let project = ProjectServerProcess::start(&["--jobs", "1"]);
    fault(&project, json!({"target": "scheduler", "fault": "huge"}));
    let url = format!("{}cgi", project.url);
    let (length, total, head) = project.block_on(async {
        let mut response =
            project.http().post(&url).body(work_request(None)).send().await.expect("an answer");
        let length = response.content_length();
        let (mut total, mut head) = (0u64, Vec::new());
        while let Some(chunk) = response.chunk().await.expect("the body") {
            if head.len() < 64 {
                head.extend_from_slice(&chunk[..chunk.len().min(64)]);
            }
            total += chunk.len() as u64;
        }
        (length, total, head)
    });
    assert_eq!(length, Some(100_000_000));
    assert_eq!(total, 100_000_000);
    assert!(head.starts_with(b"<scheduler_reply>"), "{}", String::from_utf8_lossy(&head));
}

#[test]
fn downloads_with_the_wrong_md5_or_size_and_a_failing_upload() {
    let project = ProjectServerProcess::start(&["--jobs", "1"]);
    let reply = reply(&project, None);
    let input = reply.file_infos.iter().find(|f| !f.executable).expect("an input file");
    let path = format!("download/{}", input.name);
    let good = project.get(&path, &[]).expect("the file").body;
    assert_eq!(Some(good.len() as f64), input.nbytes);
    assert_eq!(boinc_core::protocol::code_signing::md5_hex(&good), input.md5_cksum);

    let file = input.name.as_str();
    fault(&project, json!({"target": "download", "fault": "wrong_md5", "file": file}));
    let wrong_md5 = project.get(&path, &[]).expect("the file").body;
    assert_eq!(wrong_md5.len(), good.len());
    assert_ne!(boinc_core::protocol::code_signing::md5_hex(&wrong_md5), input.md5_cksum);

    fault(&project, json!({"target": "download", "fault": "wrong_size", "file": file}));
    let wrong_size = project.get(&path, &[]).expect("the file").body;
    assert_ne!(wrong_size.len(), good.len());

    assert_eq!(project.get(&path, &[]).expect("the file").body, good, "the rules are used up");

    let size_query = DataServerRequest::FileSize {
        client_version: ClientVersion { major: 7, minor: 20, release: 5 },
        name: "example_app_0_0_out".into(),
    };
    fault(&project, json!({"target": "upload", "fault": "http_500"}));
    let upload = project.post("file_upload_handler", size_query.to_text().into_bytes());
    assert_eq!(upload.expect("an answer").status, 500);
    let upload = project.post("file_upload_handler", size_query.to_text().into_bytes());
    let answer = DataServerReply::from_xml(
        &String::from_utf8(upload.expect("an answer").body).expect("text"),
    );
    assert_eq!(answer.expect("a data server reply"), DataServerReply::file_size(0));
}

/// A slow data server still takes the file: its real answer comes slowly, and the file
/// is held and recorded after it (an answer of success for a file not stored would
/// leave the client's report with no output).
#[test]
fn a_slow_upload_answer_is_the_real_one() {
    let project = ProjectServerProcess::start(&["--jobs", "1"]);
    let _ = reply(&project, None);
    let content = b"THE OUTPUT OF EXAMPLE_APP_0_0\n".repeat(40);
    let md5 = boinc_core::protocol::code_signing::md5_hex(&content);
    let upload = DataServerRequest::Upload {
        client_version: ClientVersion { major: 7, minor: 20, release: 5 },
        upload: FileUpload {
            name: "example_app_0_0_out".into(),
            max_nbytes: 1e6,
            nbytes: content.len() as f64,
            md5_cksum: md5,
            offset: 0,
        },
    };
    let mut body = upload.to_text().into_bytes();
    body.extend_from_slice(&content);
    fault(&project, json!({"target": "upload", "fault": "slow", "bytes_per_second": 400}));
    let answer = project.post("file_upload_handler", body).expect("an answer");
    let answer = DataServerReply::from_xml(&String::from_utf8(answer.body).expect("text"));
    assert_eq!(answer.expect("a data server reply").status, 0);
    let size_query = DataServerRequest::FileSize {
        client_version: ClientVersion { major: 7, minor: 20, release: 5 },
        name: "example_app_0_0_out".into(),
    };
    let held = project.post("file_upload_handler", size_query.to_text().into_bytes());
    let held =
        DataServerReply::from_xml(&String::from_utf8(held.expect("an answer").body).expect("text"));
    assert_eq!(held.expect("a data server reply").file_size, Some(content.len() as u64));
    assert_eq!(project.counter("uploads_completed"), 1);
}

#[test]
fn apps_with_a_bad_or_missing_signature() {
    let project = ProjectServerProcess::start(&["--jobs", "100"]);
    let verifies = |reply: &SchedulerReply| -> Option<bool> {
        let key = CodeSignKey::parse(reply.code_sign_key.as_deref()?).expect("the key");
        let app = reply.file_infos.iter().find(|f| f.executable)?;
        let signature = Signature::parse(app.file_signature.as_deref()?).ok()?;
        Some(verify_file_signature(&key, &signature, &app.md5_cksum).is_ok())
    };
    assert_eq!(verifies(&reply(&project, None)), Some(true));
    fault(&project, json!({"target": "scheduler", "fault": "bad_signature"}));
    assert_eq!(verifies(&reply(&project, None)), Some(false));
    fault(&project, json!({"target": "scheduler", "fault": "missing_signature"}));
    let unsigned = reply(&project, None);
    assert!(unsigned.file_infos.iter().any(|f| f.executable));
    assert_eq!(verifies(&unsigned), None);
}

#[test]
fn a_changed_signing_key_signed_unsigned_or_badly_signed() {
    let project = ProjectServerProcess::start(&["--jobs", "10"]);
    let mut outcomes = Vec::new();
    for signature in ["signed", "none", "bad"] {
        // A client attached now pins the current key, and is told nothing while it
        // holds it.
        let pinned_text = reply(&project, None).code_sign_key.expect("the key at attach");
        let pinned = CodeSignKey::parse(&pinned_text).expect("the key");
        assert_eq!(reply(&project, Some(&pinned_text)).code_sign_key, None);
        let (code, body) = project.admin("rotate_key", json!({"signature": signature}));
        assert_eq!(code, 200, "{body}");
        let offered = reply(&project, Some(&pinned_text));
        let key = CodeSignKey::parse(offered.code_sign_key.as_deref().expect("the new key"))
            .expect("the new key");
        assert_ne!(key, pinned);
        let key_signature =
            offered.code_sign_key_signature.as_deref().map(|s| Signature::parse(s).expect("hex"));
        assert_eq!(key_signature.is_some(), signature != "none");
        let update = check_key_update(Some(&pinned), key.clone(), key_signature.as_ref());
        if signature == "signed" {
            assert_eq!(update.as_ref().ok(), Some(&KeyUpdate::Replace(key)));
        }
        outcomes.push((signature, update.is_ok()));
    }
    assert_eq!(outcomes, [("signed", true), ("none", false), ("bad", false)]);
}
