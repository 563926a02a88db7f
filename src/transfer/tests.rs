//! The transfer policy over states made by taking scheduler replies in, as the client
//! does: which transfers start, what each end does to files, jobs and projects.

use super::*;
use crate::control::apply_reply;
use crate::model::{ClientState, FileId, FileStatus, JobId, JobState, Project, ProjectId};
use crate::protocol::{
    AppDescription, AppVersionDescription, FileDescription, FileReference, ResultDescription,
    SchedulerReply, WorkunitDescription,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const P: ProjectId = ProjectId(0);
const NOW: f64 = 1_000_000.0;

fn rng() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(7)
}

fn file(name: &str, urls: &[&str], nbytes: f64, md5: &str) -> FileDescription {
    FileDescription {
        name: name.into(),
        urls: urls.iter().map(|u| u.to_string()).collect(),
        nbytes: Some(nbytes),
        md5_cksum: md5.into(),
        ..FileDescription::default()
    }
}

/// A reply with app "a" (version 1, whose file is `app_file`), and one job per name in
/// `jobs`, each with its own input `in_NAME` (100 bytes, MD5 "aa…") at `input_urls` and
/// an output `NAME_out` to upload.
fn reply(app_file: Option<FileDescription>, jobs: &[&str], input_urls: &[&str]) -> SchedulerReply {
    let mut reply = SchedulerReply {
        apps: vec![AppDescription { name: "a".into(), ..AppDescription::default() }],
        ..SchedulerReply::default()
    };
    let mut version = AppVersionDescription {
        app_name: "a".into(),
        version_num: 1,
        avg_ncpus: Some(1.0),
        ..AppVersionDescription::default()
    };
    if let Some(app_file) = app_file {
        version.file_refs.push(FileReference {
            file_name: app_file.name.clone(),
            main_program: true,
            ..FileReference::default()
        });
        reply.file_infos.push(app_file);
    }
    reply.app_versions.push(version);
    for name in jobs {
        reply.file_infos.push(file(&format!("in_{name}"), input_urls, 100.0, &"a".repeat(32)));
        reply.file_infos.push(FileDescription {
            name: format!("{name}_out"),
            urls: vec!["http://p/upload".into()],
            max_nbytes: Some(1000.0),
            upload_when_present: true,
            generated_locally: true,
            ..FileDescription::default()
        });
        reply.workunits.push(WorkunitDescription {
            name: format!("wu_{name}"),
            app_name: "a".into(),
            rsc_fpops_est: 1e12,
            file_refs: vec![FileReference {
                file_name: format!("in_{name}"),
                open_name: "in".into(),
                ..FileReference::default()
            }],
            ..WorkunitDescription::default()
        });
        reply.results.push(ResultDescription {
            name: name.to_string(),
            wu_name: format!("wu_{name}"),
            version_num: Some(1),
            report_deadline: NOW + 86_400.0,
            file_refs: vec![FileReference {
                file_name: format!("{name}_out"),
                open_name: "out".into(),
                ..FileReference::default()
            }],
            ..ResultDescription::default()
        });
    }
    reply
}

fn state_with(reply: &SchedulerReply) -> (ClientState, Vec<JobId>) {
    let mut state = ClientState::default();
    state.projects.push(Project::new("p", "http://p/", 1.0));
    let outcome = apply_reply(&mut state, P, reply.clone(), NOW);
    (state, outcome.new_jobs)
}

fn file_id(state: &ClientState, name: &str) -> FileId {
    FileId::from_index(state.files.iter().position(|f| f.name == name).expect("the file"))
}

fn failed(kind: FailureKind, message: &str) -> TransferResult {
    TransferResult::Failed(TransferFailure { kind, message: message.into(), bytes_done: 0.0 })
}

fn downloaded(md5: &str) -> TransferResult {
    TransferResult::Downloaded { nbytes: 100.0, md5: md5.into() }
}

#[test]
fn jobs_download_their_inputs_within_the_limits_and_run_once_they_are_in_place() {
    let (mut state, jobs) = state_with(&reply(None, &["j1", "j2", "j3"], &["http://p/dl"]));
    assert!(jobs.iter().all(|&j| state.job(j).state == JobState::New));
    let plan = plan_transfers(&mut state, NOW);
    // Two per project at once (BOINC's default), in the reply's order.
    let names: Vec<&str> = plan.orders.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["in_j1", "in_j2"]);
    let order = &plan.orders[0];
    assert_eq!(order.url, "http://p/dl");
    assert_eq!(order.path, "projects/p/in_j1");
    assert_eq!(order.staging_path, "downloads/p/in_j1");
    assert_eq!(
        (order.nbytes, order.max_nbytes, order.direction),
        (100.0, 100.0, Direction::Download)
    );
    assert!(jobs.iter().all(|&j| state.job(j).state == JobState::FilesDownloading));
    // Nothing more while two are in flight.
    assert!(plan_transfers(&mut state, NOW).orders.is_empty());

    let md5 = "a".repeat(32);
    let settled = settle_transfer(&mut state, order, downloaded(&md5), NOW + 1.0, &mut rng());
    assert_eq!(settled.staged, StagedDownload::Install);
    assert!(state.file(order.file).transfer.in_flight, "in flight until it is in place");
    let today = crate::model::day_of(NOW + 1.0);
    assert_eq!(
        state.daily_transfers,
        [crate::model::DailyTransfer { day: today, up: 0.0, down: 100.0 }],
        "the day's bytes"
    );
    let installed =
        settle_transfer(&mut state, order, TransferResult::Installed, NOW + 1.0, &mut rng());
    assert_eq!(installed.changes.ready, [jobs[0]]);
    assert_eq!(state.file(order.file).status, FileStatus::Present);
    assert_eq!(state.job(jobs[0]).state, JobState::FilesDownloaded);
    // The freed place goes to the third input.
    let next = plan_transfers(&mut state, NOW + 1.0);
    assert_eq!(next.orders.len(), 1);
    assert_eq!(next.orders[0].name, "in_j3");
}

#[test]
fn a_bad_copy_tries_the_next_url_and_is_given_up_when_every_url_gave_one() {
    let urls = ["http://mirror1/in", "http://mirror2/in"];
    let (mut state, jobs) = state_with(&reply(None, &["j1"], &urls));
    let first = plan_transfers(&mut state, NOW).orders.remove(0);
    let settled = settle_transfer(&mut state, &first, downloaded(&"b".repeat(32)), NOW, &mut rng());
    assert_eq!(settled.staged, StagedDownload::Discard, "a bad copy is never resumed from");
    assert_eq!(settled.retry_at, Some(NOW), "the next URL at once");
    let second = plan_transfers(&mut state, NOW).orders.remove(0);
    assert_eq!(second.url, urls[1]);
    let settled =
        settle_transfer(&mut state, &second, downloaded(&"b".repeat(32)), NOW, &mut rng());
    assert_eq!(settled.changes.failed, jobs);
    assert_eq!(state.file(second.file).status, FileStatus::Error(error_codes::ERR_MD5_FAILED));
    let job = state.job(jobs[0]);
    assert_eq!(
        (job.state, job.exit_status, job.ready_to_report),
        (JobState::ComputeError, -186, true)
    );
    assert!(
        job.stderr_out.contains("<error_code>-119 (MD5 check failed)</error_code>"),
        "{}",
        job.stderr_out
    );
    assert!(
        settled
            .notices
            .iter()
            .any(|n| n.error && n.text.contains("Giving up on download of in_j1"))
    );
}

#[test]
fn a_wrong_size_is_a_bad_copy_too() {
    let (mut state, jobs) = state_with(&reply(None, &["j1"], &["http://p/in"]));
    let order = plan_transfers(&mut state, NOW).orders.remove(0);
    let short = TransferResult::Downloaded { nbytes: 99.0, md5: "a".repeat(32) };
    let settled = settle_transfer(&mut state, &order, short, NOW, &mut rng());
    assert_eq!(settled.changes.failed, jobs);
    assert_eq!(state.file(order.file).status, FileStatus::Error(error_codes::ERR_WRONG_SIZE));
}

#[test]
fn transient_failures_go_round_the_urls_then_back_off_the_file_then_the_project() {
    let urls = ["http://a/in", "http://b/in"];
    let (mut state, jobs) = state_with(&reply(None, &["j1"], &urls));
    let mut rng = rng();
    let mut now = NOW;
    let mut delays = Vec::new();
    for round in 1..=3 {
        for url in urls {
            let order = plan_transfers(&mut state, now).orders.remove(0);
            assert_eq!(order.url, url);
            let settled = settle_transfer(
                &mut state,
                &order,
                failed(FailureKind::Transient, "reset"),
                now,
                &mut rng,
            );
            if url == urls[0] {
                assert_eq!(settled.retry_at, Some(now));
            } else {
                let at = settled.retry_at.expect("a retry");
                let base = (60.0 * 2f64.powi(round)).min(TRANSFER_RETRY_MAX);
                assert!(at - now >= base * 0.5 && at - now < base, "round {round}: {}", at - now);
                assert!(
                    settled.notices.iter().any(|n| !n.error && n.text.starts_with("Backing off"))
                );
                delays.push(at - now);
                let file = state.file(order.file);
                assert!(file.transfer_deferred && file.transfer.retries == round as u32);
                // Nothing before the backoff ends.
                assert!(plan_transfers(&mut state, at - 1.0).orders.is_empty());
                now = at;
            }
        }
    }
    // The third failed round in a row backs the project's downloads off.
    let backoff = state.project(P).transfer_backoff.download;
    assert_eq!(backoff.failures, PROJECT_BACKOFF_AFTER);
    assert!(backoff.next_time > now - 1.0, "{backoff:?}");
    assert_eq!(state.job(jobs[0]).state, JobState::FilesDownloading, "nothing lost");
    // A success clears both.
    let order = plan_transfers(&mut state, backoff.next_time.max(now)).orders.remove(0);
    let t = backoff.next_time.max(now);
    settle_transfer(&mut state, &order, downloaded(&"a".repeat(32)), t, &mut rng);
    settle_transfer(&mut state, &order, TransferResult::Installed, t, &mut rng);
    assert_eq!(state.project(P).transfer_backoff.download.failures, 0);
    assert_eq!(state.file(order.file).transfer.retries, 0);
}

#[test]
fn a_transfer_without_progress_for_90_days_is_given_up() {
    let (mut state, jobs) = state_with(&reply(None, &["j1"], &["http://p/in"]));
    let order = plan_transfers(&mut state, NOW).orders.remove(0);
    settle_transfer(&mut state, &order, failed(FailureKind::Transient, "down"), NOW, &mut rng());
    let later = NOW + TRANSFER_GIVE_UP_AFTER + 1.0;
    let order = plan_transfers(&mut state, later).orders.remove(0);
    let settled = settle_transfer(
        &mut state,
        &order,
        failed(FailureKind::Transient, "down"),
        later,
        &mut rng(),
    );
    assert_eq!(settled.changes.failed, jobs);
    assert_eq!(state.file(order.file).status, FileStatus::Error(error_codes::ERR_GIVEUP_DOWNLOAD));
}

#[test]
fn a_file_the_server_does_not_have_is_given_up_at_once() {
    let (mut state, jobs) = state_with(&reply(None, &["j1"], &["http://p/a", "http://p/b"]));
    let order = plan_transfers(&mut state, NOW).orders.remove(0);
    let settled = settle_transfer(
        &mut state,
        &order,
        failed(FailureKind::Permanent, "HTTP 404"),
        NOW,
        &mut rng(),
    );
    assert_eq!(settled.changes.failed, jobs);
}

#[test]
fn an_unsigned_executable_is_never_downloaded_and_its_app_version_is_rejected() {
    let mut app = file("a_1", &["http://p/a_1"], 100.0, &"c".repeat(32));
    app.executable = true;
    let (mut state, jobs) = state_with(&reply(Some(app), &["j1", "j2"], &["http://p/in"]));
    let plan = plan_transfers(&mut state, NOW);
    assert!(plan.orders.iter().all(|o| o.name != "a_1"), "never downloaded");
    assert_eq!(plan.changes.failed, jobs);
    let app_file = state.file(file_id(&state, "a_1"));
    assert_eq!(app_file.status, FileStatus::Error(error_codes::ERR_NO_SIGNATURE));
    assert!(
        plan.notices.iter().any(|n| n.error && n.text.starts_with("App version a 1 rejected")),
        "{:?}",
        plan.notices
    );
    for &job in &jobs {
        let job = state.job(job);
        assert_eq!((job.state, job.exit_status), (JobState::ComputeError, -186));
        assert!(job.stderr_out.starts_with("app_version download error"), "{}", job.stderr_out);
        assert!(job.stderr_out.contains("-123 (no signature)"), "{}", job.stderr_out);
    }
    // A job sent later for the same version ends the same way, without a download.
    let again = reply(None, &["j3"], &["http://p/in"]);
    let outcome = apply_reply(&mut state, P, again.clone(), NOW);
    let plan = plan_transfers(&mut state, NOW);
    assert_eq!(plan.changes.failed, outcome.new_jobs);
}

/// A file announced larger than its own `max_nbytes`, or than all the disk the
/// preferences give BOINC, could never be kept: it is given up before any byte comes,
/// and the jobs needing it end in a download error.
#[test]
fn a_file_announced_larger_than_it_may_be_is_never_downloaded() {
    let mut over_its_own_bound = reply(None, &["j1"], &["http://p/in"]);
    over_its_own_bound.file_infos[0].max_nbytes = Some(50.0);
    let mut over_the_disk = reply(None, &["j2"], &["http://p/in"]);
    over_the_disk.file_infos[0].nbytes = Some(3e9);
    for (reply, expected) in [
        (over_its_own_bound, "more than the 50 it allows the file (max_nbytes)"),
        (over_the_disk, "more than the 1000000000 BOINC may use on this disk"),
    ] {
        let mut state = ClientState::default();
        state.prefs.disk_max_used_gb = 1.0;
        state.projects.push(Project::new("p", "http://p/", 1.0));
        let jobs = apply_reply(&mut state, P, reply.clone(), NOW).new_jobs;
        let plan = plan_transfers(&mut state, NOW);
        assert!(plan.orders.iter().all(|o| o.direction != Direction::Download), "never fetched");
        assert_eq!(plan.changes.failed, jobs);
        let input = state.file(file_id(&state, &reply.file_infos[0].name));
        assert_eq!(input.status, FileStatus::Error(error_codes::ERR_FILE_TOO_BIG));
        let job = state.job(jobs[0]);
        assert!(job.stderr_out.contains(expected), "{}", job.stderr_out);
    }
}

#[test]
fn outputs_go_up_before_the_job_is_reported() {
    let (mut state, jobs) = state_with(&reply(None, &["j1"], &["http://p/in"]));
    let id = jobs[0];
    outputs_produced(&mut state, id);
    assert!(has_outputs_to_upload(&state, id));
    state.jobs[id.index()].state = JobState::FilesUploading;
    let plan = plan_transfers(&mut state, NOW);
    let upload = plan.orders.iter().find(|o| o.direction == Direction::Upload).expect("an upload");
    assert_eq!((upload.name.as_str(), upload.url.as_str()), ("j1_out", "http://p/upload"));
    assert_eq!((upload.max_nbytes, upload.staging_path.as_str()), (1000.0, ""));
    let done = TransferResult::Uploaded { nbytes: 12.0, md5: "d".repeat(32) };
    let settled = settle_transfer(&mut state, upload, done, NOW, &mut rng());
    assert_eq!(settled.changes.reportable, [id]);
    let job = state.job(id);
    assert_eq!((job.state, job.ready_to_report), (JobState::FilesUploaded, true));
    let out = state.file(upload.file);
    assert!(out.uploaded && out.nbytes == 12.0 && out.md5_cksum == "d".repeat(32));
}

#[test]
fn an_upload_the_project_refuses_ends_the_job_in_an_upload_error() {
    let (mut state, jobs) = state_with(&reply(None, &["j1"], &["http://p/in"]));
    outputs_produced(&mut state, jobs[0]);
    state.jobs[jobs[0].index()].state = JobState::FilesUploading;
    let upload = plan_transfers(&mut state, NOW)
        .orders
        .into_iter()
        .find(|o| o.direction == Direction::Upload)
        .expect("an upload");
    let settled = settle_transfer(
        &mut state,
        &upload,
        failed(FailureKind::Permanent, "refused"),
        NOW,
        &mut rng(),
    );
    assert_eq!(settled.changes.failed, jobs);
    let job = state.job(jobs[0]);
    assert_eq!(
        (job.state, job.exit_status, job.ready_to_report),
        (JobState::UploadFailed, -187, true)
    );
}

#[test]
fn the_limits_count_each_direction_apart() {
    let (mut state, jobs) = state_with(&reply(None, &["j1", "j2", "j3"], &["http://p/in"]));
    state.config.max_file_xfers = 1;
    for &id in &jobs[1..] {
        outputs_produced(&mut state, id);
        state.jobs[id.index()].state = JobState::FilesUploading;
    }
    let plan = plan_transfers(&mut state, NOW);
    let directions: Vec<Direction> = plan.orders.iter().map(|o| o.direction).collect();
    assert_eq!(directions, [Direction::Download, Direction::Upload]);
}

#[test]
fn a_file_forgotten_meanwhile_is_discarded() {
    let (mut state, _) = state_with(&reply(None, &["j1"], &["http://p/in"]));
    let mut order = plan_transfers(&mut state, NOW).orders.remove(0);
    order.name = "something else".into();
    let settled = settle_transfer(&mut state, &order, downloaded(&"a".repeat(32)), NOW, &mut rng());
    assert_eq!(settled.staged, StagedDownload::Discard);
}

/// The user's "Retry now" ends the file's and the project's backoff; "Abort" gives the
/// file up: its job ends in a download error, and an attempt still under way when the
/// user aborted is discarded when it ends.
#[test]
fn the_user_retries_and_aborts_a_transfer() {
    use crate::control::{ERR_ABORTED_VIA_GUI, UserAction, UserActionError, apply_user_action};
    let (mut state, jobs) = state_with(&reply(None, &["j1", "j2"], &["http://p/in"]));
    let orders = plan_transfers(&mut state, NOW).orders;
    let backed_off = NOW + 3600.0;
    for order in &orders {
        settle_transfer(&mut state, order, failed(FailureKind::Transient, "down"), NOW, &mut rng());
    }
    let file = file_id(&state, "in_j1");
    state.files[file.index()].transfer.next_request_time = backed_off;
    state.projects[0].transfer_backoff.download.next_time = backed_off;
    assert!(plan_transfers(&mut state, NOW + 1.0).orders.iter().all(|o| o.name != "in_j1"));
    let retry = UserAction::RetryFileTransfer { project: "http://p/".into(), file: "in_j1".into() };
    apply_user_action(&mut state, &retry, NOW + 1.0).expect("retried");
    let again = plan_transfers(&mut state, NOW + 1.0);
    assert!(again.orders.iter().any(|o| o.name == "in_j1"), "goes now: {:?}", again.orders);
    // Aborted while under way: the job ends in an error, what comes is not used.
    let under_way = again.orders.iter().find(|o| o.name == "in_j1").expect("in flight");
    let abort = UserAction::AbortFileTransfer { project: "p".into(), file: "in_j1".into() };
    apply_user_action(&mut state, &abort, NOW + 2.0).expect("aborted");
    let settled =
        settle_transfer(&mut state, under_way, downloaded(&"a".repeat(32)), NOW + 3.0, &mut rng());
    assert_eq!(settled.staged, StagedDownload::Discard);
    assert_eq!(state.file(file).status, FileStatus::Error(ERR_ABORTED_VIA_GUI));
    plan_transfers(&mut state, NOW + 3.0);
    let job = state.job(jobs[0]);
    assert_eq!(job.state, JobState::ComputeError, "the job that needed it failed");
    assert!(job.ready_to_report);
    assert_eq!(state.job(jobs[1]).state, JobState::FilesDownloading, "the other job waits");
    // Nothing waits any more for that file; an unknown file is said to be unknown.
    assert!(matches!(
        apply_user_action(&mut state, &abort, NOW + 4.0),
        Err(UserActionError::NoSuchTransfer { .. })
    ));
    let ghost = UserAction::RetryFileTransfer { project: "p".into(), file: "ghost".into() };
    assert!(apply_user_action(&mut state, &ghost, NOW).is_err());
}

#[test]
fn a_download_ending_after_its_project_detached_is_discarded() {
    let (mut state, _) = state_with(&reply(None, &["j1"], &["http://p/in"]));
    let order = plan_transfers(&mut state, NOW).orders.remove(0);
    // Detached while the bytes came: they must not bring its directory back.
    state.projects[order.project.index()].detached = true;
    let settled = settle_transfer(&mut state, &order, downloaded(&"a".repeat(32)), NOW, &mut rng());
    assert_eq!(settled.staged, StagedDownload::Discard);
}

/// The real client's signed reply: its key, its executable's MD5 and signature.
fn signed_fixture() -> (String, String, String) {
    let text =
        include_str!("../../tests/fixtures/boinc-7.20.5/sched_reply_work_signed_example.xml");
    let reply = SchedulerReply::from_xml(text).expect("the fixture");
    let executable = reply.file_infos.iter().find(|f| f.executable).expect("an executable");
    (
        reply.code_sign_key.clone().expect("a key"),
        executable.md5_cksum.clone(),
        executable.file_signature.clone().expect("a signature"),
    )
}

/// A state whose project pinned the fixture's key and whose app version's executable
/// carries `signature` for the fixture's MD5.
fn signed_state(signature: &str) -> (ClientState, Vec<JobId>, String) {
    let (key, md5, _) = signed_fixture();
    let mut app = file("a_1", &["http://p/a_1"], 100.0, &md5);
    app.executable = true;
    app.file_signature = Some(signature.to_owned());
    let mut reply = reply(Some(app), &["j1"], &["http://p/in"]);
    reply.code_sign_key = Some(key);
    let (state, jobs) = state_with(&reply);
    (state, jobs, md5)
}

#[test]
fn a_signed_executable_is_put_in_place_once_its_signature_verifies() {
    let (_, _, signature) = signed_fixture();
    let (mut state, jobs, md5) = signed_state(&signature);
    let plan = plan_transfers(&mut state, NOW);
    let app = plan.orders.iter().find(|o| o.name == "a_1").expect("the executable comes down");
    let settled = settle_transfer(&mut state, app, downloaded(&md5), NOW, &mut rng());
    assert_eq!(settled.staged, StagedDownload::Install);
    settle_transfer(&mut state, app, TransferResult::Installed, NOW, &mut rng());
    let input = plan.orders.iter().find(|o| o.name == "in_j1").expect("the input");
    settle_transfer(&mut state, input, downloaded(&"a".repeat(32)), NOW, &mut rng());
    let settled = settle_transfer(&mut state, input, TransferResult::Installed, NOW, &mut rng());
    assert_eq!(settled.changes.ready, jobs);
}

#[test]
fn an_executable_whose_signature_fails_is_discarded_and_its_app_version_rejected() {
    let (_, _, signature) = signed_fixture();
    let digits: Vec<usize> = signature
        .bytes()
        .enumerate()
        .filter(|(_, b)| b.is_ascii_hexdigit())
        .map(|(i, _)| i)
        .collect();
    // A flipped digit anywhere in the signature fails it (a few places suffice here;
    // the code-signing tests flip every one).
    for &at in [digits[0], digits[digits.len() / 2], digits[digits.len() - 1]].iter() {
        let mut bad = signature.clone().into_bytes();
        bad[at] = if bad[at] == b'0' { b'1' } else { b'0' };
        let (mut state, jobs, md5) = signed_state(&String::from_utf8(bad).expect("ascii"));
        let plan = plan_transfers(&mut state, NOW);
        let app = plan.orders.iter().find(|o| o.name == "a_1").expect("the executable");
        let settled = settle_transfer(&mut state, app, downloaded(&md5), NOW, &mut rng());
        assert_eq!(settled.staged, StagedDownload::Discard, "never put where a slot could link it");
        assert_eq!(state.file(app.file).status, FileStatus::Error(error_codes::ERR_RSA_FAILED));
        assert_eq!(settled.changes.failed, jobs);
        assert!(settled.notices.iter().any(|n| n.text.starts_with("App version a 1 rejected")));
        assert!(state.job(jobs[0]).stderr_out.contains("-120 (RSA key check failed)"));
    }
}

#[test]
fn a_full_disk_holds_downloads_back_and_its_failures_do_not_count_against_the_server() {
    let (mut state, jobs) = state_with(&reply(None, &["j1"], &["http://a/in", "http://b/in"]));
    state.host.d_total = 100e9;
    state.host.d_free = 50e9;
    let mut rng = rng();
    let order = plan_transfers(&mut state, NOW).orders.remove(0);
    // The disk fills while the file comes down: this host's failure, not the server's.
    let full = TransferResult::Failed(TransferFailure {
        kind: FailureKind::Local,
        message: "No space left on device".into(),
        bytes_done: 40.0,
    });
    let settled = settle_transfer(&mut state, &order, full, NOW, &mut rng);
    assert_eq!(settled.retry_at, None);
    let file = state.file(order.file);
    assert_eq!((file.transfer.retries, file.transfer.url_index), (0, 0), "no backoff, same URL");
    assert!(!file.transfer_deferred && file.transfer.bytes_done == 40.0);
    assert_eq!(state.project(P).transfer_backoff.download.failures, 0);
    // While the disk is full nothing comes down; a poll later, with room, it resumes.
    state.host.d_free = 1000.0;
    let held = plan_transfers(&mut state, NOW + 1.0);
    assert!(held.orders.is_empty());
    assert!(held.next_check <= NOW + 1.0 + FULL_DISK_RECHECK);
    state.host.d_free = 50e9;
    let resumed = plan_transfers(&mut state, NOW + 2.0).orders;
    assert_eq!(resumed.len(), 1);
    assert_eq!(resumed[0].url, "http://a/in");
    assert_eq!(state.job(jobs[0]).state, JobState::FilesDownloading, "nothing lost");
}

#[test]
fn no_transfer_starts_once_the_daily_limit_is_reached_until_the_window_moves() {
    let (mut state, _) = state_with(&reply(None, &["j1"], &["http://p/dl"]));
    state.prefs.reported.daily_xfer_limit_mb = 1.0;
    state.prefs.reported.daily_xfer_period_days = 2;
    let today = crate::model::day_of(NOW);
    // Yesterday and today moved 1 MB in all.
    state.daily_transfers = vec![
        crate::model::DailyTransfer { day: today - 1, up: 524_288.0, down: 0.0 },
        crate::model::DailyTransfer { day: today, up: 0.0, down: 524_288.0 },
    ];
    let held = plan_transfers(&mut state, NOW);
    assert!(held.orders.is_empty(), "a transfer started over the limit");
    let tomorrow = (today + 1) as f64 * 86_400.0;
    assert_eq!(held.next_check, tomorrow, "looked at again when the window moves");
    // Tomorrow, yesterday's half leaves the window and the download starts.
    let plan = plan_transfers(&mut state, tomorrow);
    assert_eq!(plan.orders.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(), ["in_j1"]);
}
