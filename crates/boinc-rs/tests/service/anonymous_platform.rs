//! The anonymous platform (BOINC's app_info.xml) and the files a project's directory
//! holds when it is attached, with the host service (`boinc-rs run`, in this process)
//! and the real `boinc-rs project-server`:
//!
//! - a project directory with an app_info.xml naming the volunteer's copy of the
//!   example app under a name of their own: the client says `anonymous`, the server sends
//!   jobs for the declared version and no app, the jobs run with the volunteer's
//!   executable (the process's `/proc/PID/exe`), are uploaded, reported and validated,
//!   the served app is never downloaded, and GUI RPC `get_state` shows the version;
//! - a project attached over GUI RPC while the client runs takes its app_config.xml and
//!   app_info.xml at once, and a damaged app_info.xml is an event log line while its
//!   project runs as if it had none.

use crate::support;

use boinc_core::control::project_dir;
use boinc_core::protocol::data_dir::APP_INFO;
use boinc_gui_rpc::{GuiRpcClient, PASSWORD_FILE};
use boinc_runtime::runtime::messages::StateSnapshot;
use boinc_service::account_files::write_account_file;
use std::time::Duration;
use support::in_process::InProcessService;
use support::project_server::{ProjectServerProcess, files_under};
use support::volunteer_apps::{
    VOLUNTEER_APP, VOLUNTEER_VERSION, app_info, process_running, volunteer_project,
};
use support::wait::wait_for;

const PASSWORD: &str = "anonymous-platform-test-password";
/// The longest the jobs take from the start to their validation: no download of the
/// app, two jobs of two CPU seconds, their uploads and the report.
const ROUND: Duration = Duration::from_secs(180);
/// How soon a project attached over GUI RPC must have taken its files.
const AT_ONCE: Duration = Duration::from_secs(10);

fn gui_rpc(service: &InProcessService, operation: &str) -> String {
    service.runtime.block_on(async {
        let mut client = GuiRpcClient::connect(&service.gui_rpc).await.expect("connects");
        client.authenticate(PASSWORD).await.expect("authenticates");
        client.call(operation).await.expect("answers")
    })
}

#[test]
fn jobs_run_with_the_volunteers_own_app_and_no_app_is_downloaded() {
    let server =
        ProjectServerProcess::start(&["--jobs", "2", "--job-seconds", "2", "--request-delay", "1"]);
    let dir = tempfile::tempdir().expect("a data directory");
    std::fs::write(dir.path().join(PASSWORD_FILE), PASSWORD).expect("the password");
    let own = volunteer_project(&dir.path().join(project_dir(&server.url)), &app_info());
    write_account_file(dir.path(), &server.url, "anonymous_platform_key").expect("attached");
    let service = InProcessService::start(dir.path());

    // A task runs the volunteer's executable.
    let pid = wait_for("a task running the volunteer's app", ROUND, || process_running(&own));
    eprintln!("task process {pid} runs {}", own.display());
    let done = |s: &StateSnapshot| {
        server.counter("results_validated") >= 2
            && !s.state.jobs.is_empty()
            && s.state.jobs.iter().all(|job| job.got_server_ack)
    };
    let snapshot = wait_for("both results reported, validated and acknowledged", ROUND, || {
        Some(service.snapshot()).filter(done)
    });
    let state = &snapshot.state;
    assert!(state.projects[0].anonymous_platform);
    assert_eq!(state.app_versions.len(), 1, "{:?}", state.app_versions);
    assert_eq!(state.app_versions[0].version_num, VOLUNTEER_VERSION);
    for job in &state.jobs {
        let version = state.app_version(job.app_version.expect("a version"));
        assert_eq!(version.version_num, VOLUNTEER_VERSION, "{}", job.name);
    }
    assert!(server.counter("uploads_completed") >= 2, "{}", server.status());

    // The served app was never downloaded: no file of its name, and the volunteer's file
    // is the one that was there.
    let status = server.status();
    let served = status["apps"][0]["file"].as_str().expect("the served app's file");
    let downloaded: Vec<_> = files_under(dir.path())
        .into_iter()
        .filter(|path| path.file_name().is_some_and(|name| name == served))
        .collect();
    assert!(downloaded.is_empty(), "the served app came down: {downloaded:?}");
    assert!(own.exists(), "the volunteer's app is kept");

    // GUI RPC shows the volunteer's version and its file.
    let reply = gui_rpc(&service, "<get_state/>");
    assert!(
        reply.contains(&format!("<version_num>{VOLUNTEER_VERSION}</version_num>"))
            && reply.contains(&format!("<file_name>{VOLUNTEER_APP}</file_name>"))
            && reply.contains("<anonymous_platform/>"),
        "{reply}"
    );
    let messages = gui_rpc(&service, "<get_messages><seqno>0</seqno></get_messages>");
    assert!(messages.contains("Found app_info.xml; using anonymous platform"), "{messages}");
}

#[test]
fn a_project_attached_over_gui_rpc_takes_its_app_config_and_app_info_at_once() {
    let server = ProjectServerProcess::start(&["--jobs", "0", "--request-delay", "1"]);
    let dir = tempfile::tempdir().expect("a data directory");
    std::fs::write(dir.path().join(PASSWORD_FILE), PASSWORD).expect("the password");
    let project = dir.path().join(project_dir(&server.url));
    volunteer_project(&project, &app_info());
    std::fs::write(
        project.join("app_config.xml"),
        "<app_config><project_max_concurrent>1</project_max_concurrent></app_config>\n",
    )
    .expect("app_config.xml");
    // A second project whose app_info.xml is damaged (its server never answers).
    let broken_url = "http://127.0.0.1:9/broken/";
    let broken = dir.path().join(project_dir(broken_url));
    std::fs::create_dir_all(&broken).expect("its directory");
    std::fs::write(broken.join(APP_INFO), "<app_info><app><name>a</name></app>\n")
        .expect("a damaged app_info.xml");
    let service = InProcessService::start(dir.path());

    for url in [server.url.as_str(), broken_url] {
        let reply = gui_rpc(
            &service,
            &format!(
                "<project_attach><project_url>{url}</project_url>\
                 <authenticator>attach_key</authenticator><project_name>p</project_name>\
                 </project_attach>"
            ),
        );
        assert!(reply.contains("<success/>"), "{reply}");
    }
    let snapshot = wait_for("both projects with their files taken", AT_ONCE, || {
        let snapshot = service.snapshot();
        let state = &snapshot.state;
        let project = state.project(state.project_by_url(&server.url)?);
        let broken = state.project_by_url(broken_url)?;
        (project.app_config.project_max_concurrent == Some(1) && project.anonymous_platform)
            .then_some((snapshot.clone(), broken))
    });
    let (snapshot, broken) = snapshot;
    assert!(!snapshot.state.project(broken).anonymous_platform, "runs as if it had none");
    let messages = gui_rpc(&service, "<get_messages><seqno>0</seqno></get_messages>");
    let named = format!("{}/{APP_INFO} line", project_dir(broken_url));
    assert!(messages.contains(&named), "{named} in {messages}");
    assert!(messages.contains("runs without the anonymous platform"), "{messages}");
}
