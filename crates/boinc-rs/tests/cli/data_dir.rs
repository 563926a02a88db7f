//! A data directory shared with the real BOINC client (issue "The host service", State):
//! Debian's `boinc` 7.20.5 reads the client_state.xml and account files boinc-rs writes
//! and shows their projects and tasks over `boinccmd --get_state`; boinc-rs reads back
//! what the real client then writes; a real client's data directory imports; the lock
//! keeps the real client out of a directory boinc-rs holds; `boinc-rs attach` writes the
//! account file the real client reads.
//!
//! The tests that need the real client are compiled as ignored, with the reason, where
//! it is not installed (see actors/build.rs): `apt-get install boinc-client`, as .ci/run
//! does.

use crate::served;
use crate::support;

use boinc_core::control::apply_accounts;
use boinc_core::model::{
    ActiveTask, App, AppId, AppVersion, AppVersionId, ClientState, FileId, FileInfo, FileRef,
    FileStatus, Job, Project, ProjectId, ResourceType, ResourceUsage, RunMode, SchedulerState,
    Workunit, WorkunitId,
};
use boinc_core::protocol::parse_client_state;
use boinc_service::account_files::{read_account_files, write_account_file};
use boinc_service::state_store::StateStore;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::peer_port::{PEER_PORT_TRIES, unused_port_for_a_peer};
use support::service::wait_exit;
use support::wait::wait_for_or;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

fn fixture_state(name: &str) -> ClientState {
    let path = fixtures().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse_client_state(&text, name).unwrap_or_else(|e| panic!("{e}"))
}

/// The real client's state with a reported-to-be result, plus a second project of our
/// own with a task that has run to a checkpoint and is suspended: everything a restart
/// must keep. Computation and network are off, so the real client only reads it.
fn state_to_hand_over() -> ClientState {
    let mut state = fixture_state("boinc-7.20.5/state/client_state_pending_result.xml");
    let project = ProjectId::from_index(state.projects.len());
    let mut header = Project::new("Our Project", "http://127.0.0.1:8099/", 50.0);
    header.scheduler_urls.push("http://127.0.0.1:8099/cgi".into());
    header.hostid = 7;
    header.rpc_seqno = 3;
    header.resources[ResourceType::Cpu].backoff_time = 1_795_300_000.0;
    header.resources[ResourceType::Cpu].backoff_interval = 1200.0;
    state.projects.push(header);
    let app = AppId::from_index(state.apps.len());
    state.apps.push(App::new(project, "crunch"));
    let exe = FileId::from_index(state.files.len());
    let mut program = FileInfo::new(project, "crunch_1.00_x86_64-pc-linux-gnu", 5.0);
    program.status = FileStatus::Present;
    program.executable = true;
    state.files.push(program);
    let input = FileId::from_index(state.files.len());
    let mut input_file = FileInfo::new(project, "in_1", 3.0);
    input_file.status = FileStatus::Present;
    state.files.push(input_file);
    let usage = ResourceUsage { avg_ncpus: 1.0, coprocessor: None };
    let version_id = AppVersionId::from_index(state.app_versions.len());
    let mut version = AppVersion::new(project, app, 100, "", usage, 1e9);
    version.platform = "x86_64-pc-linux-gnu".into();
    version.files.push(FileRef { main_program: true, ..FileRef::new(exe) });
    state.app_versions.push(version);
    let workunit = WorkunitId::from_index(state.workunits.len());
    state.workunits.push(Workunit {
        project,
        name: "wu_ours".into(),
        app,
        rsc_fpops_est: 1e12,
        rsc_fpops_bound: 1e14,
        rsc_memory_bound: 1e8,
        rsc_disk_bound: 1e8,
        command_line: String::new(),
        input_files: vec![FileRef { open_name: "in".into(), ..FileRef::new(input) }],
    });
    let mut job = Job::downloaded(
        project,
        "wu_ours_0",
        workunit,
        version_id,
        1_795_248_000.0,
        1_796_000_000.0,
    );
    job.platform = "x86_64-pc-linux-gnu".into();
    job.version_num = 100;
    let mut task = ActiveTask::new(3);
    task.scheduler_state = SchedulerState::Preempted;
    task.elapsed_time = 120.0;
    task.current_cpu_time = 118.0;
    task.checkpoint_elapsed_time = 100.0;
    task.checkpoint_cpu_time = 99.0;
    task.fraction_done = 0.3;
    job.task = Some(task);
    state.jobs.push(job);
    state.run_mode = RunMode::Never;
    state.network_mode = RunMode::Never;
    state
}

#[test]
fn attach_writes_the_account_file_and_refuses_bad_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let output = served::run_bounded(
        Command::new(env!("CARGO_BIN_EXE_boinc-rs")).args([
            "attach",
            "--dir",
            data.to_str().expect("utf-8"),
            "http://127.0.0.1:8088",
            "0123456789abcdef0123456789abcdef",
        ]),
        served::WAIT,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("account_127.0.0.1_8088.xml"), "{stdout}");
    // The same file the real client keeps (fixtures/boinc-7.20.5/state).
    let ours = read_account_files(&data).expect("reads");
    let theirs = read_account_files(&fixtures().join("boinc-7.20.5/state")).expect("reads");
    assert_eq!(ours.accounts, theirs.accounts);

    let refused = served::run_bounded(
        Command::new(env!("CARGO_BIN_EXE_boinc-rs")).args([
            "attach",
            "--dir",
            data.to_str().expect("utf-8"),
            "example.org",
            "key",
        ]),
        served::WAIT,
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(stderr.contains("not a project URL"), "{stderr}");
}

/// A real client's data directory: its state, then its account files for the
/// authenticators BOINC keeps there.
#[test]
fn a_real_clients_data_directory_imports() {
    let dir = tempfile::tempdir().expect("temp dir");
    let source = fixtures().join("boinc-7.20.5/state");
    for (from, to) in [
        ("client_state_attached.xml", "client_state.xml"),
        ("account_127.0.0.1_8088.xml", "account_127.0.0.1_8088.xml"),
    ] {
        std::fs::copy(source.join(from), dir.path().join(to)).expect("copy");
    }
    let store = StateStore::open(dir.path()).expect("open");
    let loaded = store.load().expect("loads").expect("a state");
    let mut state = loaded.state;
    let accounts = read_account_files(dir.path()).expect("accounts");
    let changes = apply_accounts(&mut state, &accounts.accounts);
    let attached = state.project_by_url("http://127.0.0.1:8088/").expect("the project");
    assert_eq!(changes.updated, [attached]);
    assert_eq!(state.project(attached).authenticator, "0123456789abcdef0123456789abcdef");
    assert!(changes.attached.is_empty());
    // Saved in our format and read again, the imported state is unchanged.
    store.save(&state).expect("saves");
    assert_eq!(store.load().expect("loads").expect("a state").state, state);
}

/// The real client on a data directory: stopped (and killed if need be) when dropped.
struct RealClient {
    child: std::process::Child,
    dir: PathBuf,
    /// Its GUI RPC port: `--gui_rpc_port` takes no 0 and the client says nowhere where
    /// it listens, so a port that was free a moment ago (see [`RealClient::state`]).
    port: u16,
    ports_tried: usize,
}

const GUI_RPC_PASSWORD: &str = "data-dir-test";

/// How long the real client may take to answer: longer than the half minute it tries
/// to bind a port that is taken before it gives up.
const ANSWER_WAIT: Duration = Duration::from_secs(120);

impl RealClient {
    fn start(dir: &Path) -> RealClient {
        let port = unused_port_for_a_peer();
        RealClient {
            child: RealClient::spawn(dir, port),
            dir: dir.to_owned(),
            port,
            ports_tried: 1,
        }
    }

    fn spawn(dir: &Path, port: u16) -> std::process::Child {
        let log = |name: &str| std::fs::File::create(dir.join(name)).expect("log file");
        Command::new("boinc")
            .args(["--dir", dir.to_str().expect("utf-8"), "--gui_rpc_port", &port.to_string()])
            .stdin(std::process::Stdio::null())
            .stdout(log("real_client_stdout.txt"))
            .stderr(log("real_client_stderr.txt"))
            .spawn()
            .expect("boinc starts")
    }

    fn boinccmd(&self, args: &[&str]) -> std::process::Output {
        let host = format!("127.0.0.1:{}", self.port);
        served::run_bounded(
            Command::new("boinccmd")
                .args(["--host", &host, "--passwd", GUI_RPC_PASSWORD])
                .args(args),
            served::WAIT,
        )
    }

    /// `boinccmd --get_state` once the client answers (bounded). A client that could not
    /// bind its port (another process took it) is started again on another one, at
    /// most [`PEER_PORT_TRIES`] ports in all.
    fn state(&mut self) -> String {
        let dir = self.dir.clone();
        wait_for_or(
            "the real client to answer with its tasks",
            ANSWER_WAIT * PEER_PORT_TRIES as u32,
            || {
                let output = self.boinccmd(&["--get_state"]);
                let text = String::from_utf8_lossy(&output.stdout).into_owned();
                if output.status.success() && text.contains("======== Tasks ========") {
                    return Some(text);
                }
                if let Ok(Some(status)) = self.child.try_wait() {
                    let log = real_client_log(&dir);
                    if !log.contains("GUI RPC bind to port") || self.ports_tried == PEER_PORT_TRIES
                    {
                        panic!("the real client exited ({status}):\n{log}");
                    }
                    self.port = unused_port_for_a_peer();
                    self.child = RealClient::spawn(&dir, self.port);
                    self.ports_tried += 1;
                }
                None
            },
            || real_client_log(&dir),
        )
    }

    /// Waits (bounded) for the client to exit; `None` if it is still running.
    fn wait_exit(&mut self) -> Option<std::process::ExitStatus> {
        wait_exit(&mut self.child, served::WAIT)
    }

    /// Asks the client to quit and waits for it (it writes its state on the way out).
    fn quit(mut self) {
        let _ = self.boinccmd(&["--quit"]);
        assert!(self.wait_exit().is_some(), "the real client did not quit");
    }
}

impl Drop for RealClient {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn real_client_log(dir: &Path) -> String {
    ["real_client_stdout.txt", "real_client_stderr.txt"]
        .iter()
        .map(|name| std::fs::read_to_string(dir.join(name)).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a data directory needs beside the state: the account files (the real client
/// drops a project without one), the GUI RPC password, and the files the state says
/// are present.
fn prepare_data_dir(dir: &Path, state: &ClientState) {
    for (i, project) in state.projects.iter().enumerate() {
        write_account_file(dir, &project.master_url, &format!("authenticator{i}"))
            .expect("account file");
    }
    std::fs::write(dir.join("gui_rpc_auth.cfg"), GUI_RPC_PASSWORD).expect("password");
    for file in state.files.iter().filter(|f| f.status == FileStatus::Present) {
        let project_dir =
            dir.join(boinc_core::control::project_dir(&state.project(file.project).master_url));
        std::fs::create_dir_all(&project_dir).expect("project dir");
        std::fs::write(project_dir.join(&file.name), vec![b'x'; file.nbytes as usize])
            .expect("file");
    }
}

#[test]
#[cfg_attr(not(peer_boinccmd), ignore = "boinc is not installed: apt-get install boinc-client")]
fn the_real_client_reads_the_state_we_write() {
    let dir = tempfile::tempdir().expect("temp dir");
    let state = state_to_hand_over();
    prepare_data_dir(dir.path(), &state);
    {
        let store = StateStore::open(dir.path()).expect("open");
        store.save(&state).expect("saves");
        // While boinc-rs holds the directory, the real client is turned away.
        let mut refused = RealClient::start(dir.path());
        let exit = refused.wait_exit().unwrap_or_else(|| {
            panic!("the real client runs on a locked directory:\n{}", real_client_log(dir.path()))
        });
        assert!(!exit.success(), "the real client ran on a locked directory");
        let log = real_client_log(dir.path());
        assert!(log.contains("Another instance of BOINC is running"), "{log}");
    }

    let mut client = RealClient::start(dir.path());
    let shown = client.state();
    for project in &state.projects {
        assert!(
            shown.contains(&format!("master URL: {}", project.master_url)),
            "{}: {shown}",
            project.master_url
        );
        assert!(shown.contains(&format!("name: {}", project.name)), "{}: {shown}", project.name);
    }
    for job in &state.jobs {
        assert!(shown.contains(&format!("name: {}", job.name)), "{}: {shown}", job.name);
    }
    let ready = served::values(&shown, "ready to report");
    assert!(ready.contains(&"yes"), "the uploaded result is ready to report: {shown}");
    // The task is there, preempted, in its slot, at its checkpoint (the real client
    // starts with no process, as boinc-rs does).
    assert!(served::values(&shown, "scheduler state").contains(&"preempted"), "{shown}");
    assert_eq!(served::values(&shown, "slot"), ["3"], "{shown}");
    let checkpoint = served::values(&shown, "CPU time at last checkpoint");
    assert_eq!(checkpoint, ["99.000000"], "{shown}");
    assert_eq!(served::values(&shown, "elapsed task time"), ["100.000000"], "{shown}");
    client.quit();

    // What the real client wrote on its way out reads back with the projects, jobs and
    // checkpoint it was given.
    let written = std::fs::read_to_string(dir.path().join("client_state.xml")).expect("state");
    let back =
        parse_client_state(&written, "client_state.xml").expect("the real client's state parses");
    for project in &state.projects {
        let id = back.project_by_url(&project.master_url).expect("the project is kept");
        assert_eq!(back.project(id).hostid, project.hostid);
        assert_eq!(back.project(id).rpc_seqno, project.rpc_seqno);
    }
    for job in &state.jobs {
        let kept = back.jobs.iter().find(|j| j.name == job.name).expect("the job is kept");
        assert_eq!((kept.state, kept.ready_to_report), (job.state, job.ready_to_report));
        if let Some(task) = &job.task {
            let kept_task = kept.task.as_ref().expect("the task is kept");
            assert_eq!(kept_task.checkpoint_cpu_time, task.checkpoint_cpu_time);
            assert_eq!(kept_task.slot, task.slot);
        }
    }
}
