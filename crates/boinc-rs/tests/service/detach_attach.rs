//! Detach, then attach again, through GUI RPC to the host service (`boinc-rs run`, in
//! this process so the test can read its state) attached to the real `boinc-rs
//! project-server` running example-app jobs: the detach leaves no task, slot file,
//! process or project file behind; the attach downloads the app again and runs new jobs
//! to their end (no old task comes back). The same after reset + detach + attach, where
//! every new job used to fail with "app could not be started".

use crate::support;

use boinc_core::model::JobState;
use boinc_gui_rpc::{GuiRpcClient, PASSWORD_FILE};
use boinc_runtime::runtime::messages::StateSnapshot;
use boinc_service::account_files::write_account_file;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;
use support::in_process::InProcessService;
use support::live_processes::processes_in;
use support::project_server::ProjectServerProcess;
use support::wait::{holds_within, wait_for_or};

const PASSWORD: &str = "detach-test-password";
const KEY: &str = "detach_test_key";
/// The longest a wait lasts (the first start downloads a debug build of the app).
const WAIT: Duration = Duration::from_secs(240);
/// How long a detach may take to leave nothing behind (an app has 15 s to quit).
const GONE_WAIT: Duration = Duration::from_secs(30);

struct Live {
    service: InProcessService,
    dir: tempfile::TempDir,
    server: ProjectServerProcess,
}

impl Live {
    fn rpc(&self, request: &str) -> String {
        self.service.runtime.block_on(async {
            let mut client = GuiRpcClient::connect(&self.service.gui_rpc).await.expect("connects");
            client.authenticate(PASSWORD).await.expect("authenticates");
            client.call(request).await.expect("answers")
        })
    }

    fn project_op(&self, op: &str) {
        let url = &self.server.url;
        let reply = self.rpc(&format!("<{op}>\n<project_url>{url}</project_url>\n</{op}>"));
        assert!(reply.contains("<success/>"), "{op}: {reply}");
    }

    fn attach(&self) {
        let url = &self.server.url;
        let reply = self.rpc(&format!(
            "<project_attach>\n<project_url>{url}</project_url>\n<authenticator>{KEY}</authenticator>\n<project_name></project_name>\n</project_attach>"
        ));
        assert!(reply.contains("<success/>"), "attach: {reply}");
    }

    fn wait_for<T>(&self, what: &str, mut done: impl FnMut(&StateSnapshot) -> Option<T>) -> T {
        wait_for_or(what, WAIT, || done(&self.service.snapshot()), || self.report())
    }

    fn report(&self) -> String {
        let snapshot = self.service.snapshot();
        let jobs: Vec<_> = snapshot
            .state
            .jobs
            .iter()
            .map(|j| format!("{} {:?} exit {}", j.name, j.state, j.exit_status))
            .collect();
        format!("jobs: {jobs:#?}\nserver log:\n{}", self.server.log())
    }

    /// The names of the project's jobs now.
    fn job_names(&self) -> BTreeSet<String> {
        self.service.snapshot().state.jobs.iter().map(|j| j.name.clone()).collect()
    }

    /// Detaches and checks that nothing of the project is left: no task, no process, no
    /// file in a slot or in the project's directory.
    fn detach_leaves_nothing(&self) {
        self.project_op("project_detach");
        let slots = self.dir.path().join("slots");
        let projects = self.dir.path().join("projects");
        let left = || {
            let s = self.service.snapshot();
            let jobs: Vec<_> = s.state.jobs.iter().map(|j| j.name.clone()).collect();
            (jobs, processes_in(&slots), files_in(&slots), files_in(&projects))
        };
        let gone = holds_within(GONE_WAIT, || {
            let (jobs, processes, slot_files, project_files) = left();
            jobs.is_empty()
                && processes.is_empty()
                && slot_files.is_empty()
                && project_files.is_empty()
        });
        let (jobs, processes, slot_files, project_files) = left();
        assert!(
            gone,
            "left {GONE_WAIT:?} after the detach: jobs {jobs:?}, processes {processes:?}, slot \
             files {slot_files:?}, project files {project_files:?}"
        );
    }

    /// Attaches again and waits for a new job (none of `old`) to run and then end well,
    /// with no job failing meanwhile.
    fn attach_runs_new_work(&self, old: &BTreeSet<String>) {
        self.attach();
        let slots = self.dir.path().join("slots");
        self.wait_for("a new job running, with its process", |s| {
            let running = s.running.iter().map(|&j| s.state.job(j)).collect::<Vec<_>>();
            let new = running.iter().any(|j| !old.contains(&j.name));
            (new && !processes_in(&slots).is_empty()).then_some(())
        });
        self.wait_for("a new job computed to its end", |s| {
            let failed = s.state.jobs.iter().find(|j| j.state == JobState::ComputeError);
            assert!(failed.is_none(), "a new job failed: {failed:?}\n{}", self.report());
            s.state
                .jobs
                .iter()
                .any(|j| {
                    !old.contains(&j.name)
                        && j.exit_status == 0
                        && matches!(j.state, JobState::FilesUploading | JobState::FilesUploaded)
                })
                .then_some(())
        });
    }
}

/// Every plain file under `dir` (none when it is missing).
fn files_in(dir: &Path) -> Vec<std::path::PathBuf> {
    support::project_server::files_under(dir)
}

#[test]
fn detach_then_attach_again_downloads_the_app_and_runs_new_work() {
    let server = ProjectServerProcess::start(&["--job-seconds", "3", "--request-delay", "1"]);
    let dir = tempfile::tempdir().expect("a data directory");
    std::fs::write(dir.path().join(PASSWORD_FILE), PASSWORD).expect("the password");
    write_account_file(dir.path(), &server.url, KEY).expect("attached");
    let service = InProcessService::start(dir.path());
    let live = Live { service, dir, server };
    live.wait_for("a task running", |s| (!s.running.is_empty()).then_some(()));

    let old = live.job_names();
    live.detach_leaves_nothing();
    live.attach_runs_new_work(&old);

    // Reset, detach and attach: the reset's removal of the app must not outlive the
    // attach either.
    let old = live.job_names();
    live.project_op("project_reset");
    live.detach_leaves_nothing();
    live.attach_runs_new_work(&old);
}
