//! A project's app_config.xml and the client's cc_config.xml, honoured by the host service
//! (`boinc-rs run` in this process, attached to the real `boinc-rs project-server`,
//! running example-app jobs, driven by Debian's boinccmd): `<project_max_concurrent>` 1,
//! written at attach time before the project sent any app, holds the client to one task
//! on two CPUs; taken away and re-read with `read_cc_config`, both CPUs compute. An
//! option boinc-rs does not support is named once in the event log.

use crate::served;
use crate::support;

use boinc_core::control::project_dir;
use boinc_gui_rpc::PASSWORD_FILE;
use boinc_runtime::runtime::messages::StateSnapshot;
use boinc_service::account_files::write_account_file;
use std::time::{Duration, Instant};
use support::in_process::InProcessService;
use support::project_server::ProjectServerProcess;
use support::wait::wait_for;

const PASSWORD: &str = "app-config-test-password";
/// The longest the first task takes to start (the example app is downloaded first).
const START_WAIT: Duration = Duration::from_secs(240);
/// How soon a re-read configuration must change what runs.
const REACTION: Duration = Duration::from_secs(10);
/// How long the limit is watched with work for both CPUs waiting.
const WATCH: Duration = Duration::from_secs(8);

#[test]
#[cfg_attr(not(peer_boinccmd), ignore = "boinccmd is not installed: apt-get install boinc-client")]
fn project_max_concurrent_holds_the_project_to_its_limit() {
    let server = ProjectServerProcess::start(&["--job-seconds", "600", "--request-delay", "1"]);
    let dir = tempfile::tempdir().expect("a data directory");
    std::fs::write(dir.path().join(PASSWORD_FILE), PASSWORD).expect("the password");
    std::fs::write(
        dir.path().join("cc_config.xml"),
        "<cc_config><options><ncpus>2</ncpus><save_stats_days>30</save_stats_days>\
         </options></cc_config>\n",
    )
    .expect("cc_config.xml");
    let project = dir.path().join(project_dir(&server.url));
    std::fs::create_dir_all(&project).expect("the project's directory");
    let app_config = project.join("app_config.xml");
    std::fs::write(
        &app_config,
        "<app_config><project_max_concurrent>1</project_max_concurrent></app_config>\n",
    )
    .expect("app_config.xml");
    write_account_file(dir.path(), &server.url, "app_config_test_key").expect("attached");
    let service = InProcessService::start(dir.path());
    let snapshot = |what: &str, limit: Duration, done: &dyn Fn(&StateSnapshot) -> bool| {
        wait_for(what, limit, || Some(service.snapshot()).filter(|s| done(s)))
    };
    let boinccmd = |args: &[&str]| served::boinccmd_at(&service.gui_rpc, PASSWORD, args, true);

    // Work for both CPUs, one task running: the limit holds it there.
    snapshot("a task, and work for the other CPU", START_WAIT, &|s| {
        !s.running.is_empty()
            && s.state.jobs.iter().filter(|j| !j.state.computing_done()).count() >= 2
    });
    let watched = Instant::now();
    let mut most = 0;
    while watched.elapsed() < WATCH {
        let s = service.snapshot();
        most = most.max(s.running.len());
        assert_eq!(s.state.projects[0].app_config.project_max_concurrent, Some(1));
        std::thread::sleep(Duration::from_millis(250));
    }
    eprintln!("project_max_concurrent 1 on 2 CPUs: at most {most} task(s) ran over {WATCH:?}");
    assert_eq!(most, 1, "project_max_concurrent 1 on 2 CPUs");

    // The unsupported option was named once, by name, in the event log.
    let messages = boinccmd(&["--get_messages", "0"]);
    assert_eq!(messages.matches("<save_stats_days>").count(), 1, "{messages}");
    assert!(messages.contains("unrecognized tag"), "{messages}");

    // The limit taken away and the files re-read: both CPUs compute.
    std::fs::write(&app_config, "<app_config/>\n").expect("app_config.xml");
    boinccmd(&["--read_cc_config"]);
    let both = snapshot("two tasks without the limit", REACTION, &|s| s.running.len() >= 2);
    assert_eq!(both.state.projects[0].app_config.project_max_concurrent, None);
}
