//! A model-based test of the live client: seeded, bounded random sequences of what a
//! volunteer does (task suspend, resume and abort; project suspend, resume, update, no
//! more work, allow more work, reset, detach and attach; run and network modes with and
//! without durations; quit and restart), sent through GUI RPC to the host service
//! (`boinc-rs run`, in this process so the test can read its state) attached to the real
//! `boinc-rs project-server` running example-app jobs. After every action, within a
//! bounded wait, what the client says must be what is on the machine:
//! - a task the state calls executing has exactly one live process in its slot; a task
//!   suspended in memory at most one; a task quit or never started none; no process
//!   works in a slot no task holds, and no app is left a zombie; an executing task
//!   shows its process's pid and memory (what `get_results` writes), a quit one no pid;
//! - a detached project has no task, and no file in its project directory;
//! - every task that ended well reports a CPU time above 0 and at most its elapsed time
//!   times its CPUs;
//! - `get_results` lists the tasks the state holds (acknowledged ones aside).
//!
//! At the end, with everything resumed and the project attached, work runs.
//!
//! CI runs [`DEFAULT_ACTIONS`] actions of seed [`DEFAULT_SEED`]; longer runs:
//! `BOINC_RS_MODEL_ACTIONS=5000 BOINC_RS_MODEL_SEED=7 cargo test -p boinc-rs --test
//! model_based -- --nocapture`.
//!
//! It is a test binary of its own: the apps of the service it starts are children of
//! this process, and a zombie is judged among this process's children, which another
//! test's service in the same process would add to.

mod support;

use boinc_core::model::{JobState, SchedulerState};
use boinc_gui_rpc::{GuiRpcClient, PASSWORD_FILE};
use boinc_runtime::runtime::messages::StateSnapshot;
use boinc_service::account_files::write_account_file;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use support::in_process::InProcessService;
use support::live_processes::{processes_in, zombie_children};
use support::project_server::{ProjectServerProcess, files_under};
use support::wait::wait_for_or;

const PASSWORD: &str = "model-test-password";
const KEY: &str = "model_test_key";
/// Actions in a CI run.
const DEFAULT_ACTIONS: usize = 500;
/// The seed of a CI run.
const DEFAULT_SEED: u64 = 30;
/// How long the client may take to make its state true after an action (an app has
/// its quit or abort grace to go).
const SETTLE: Duration = Duration::from_secs(30);
/// The longest a wait for work lasts (the first start downloads a debug build of the
/// app).
const WORK_WAIT: Duration = Duration::from_secs(240);

/// What a volunteer does.
#[derive(Debug, Clone)]
enum Action {
    Task(&'static str, String),
    Project(&'static str),
    Attach,
    Mode(&'static str, &'static str, u32),
    Restart,
}

struct Model {
    service: Option<InProcessService>,
    dir: tempfile::TempDir,
    server: ProjectServerProcess,
    history: Vec<String>,
}

impl Model {
    fn service(&self) -> &InProcessService {
        self.service.as_ref().expect("the service runs")
    }

    fn snapshot(&self) -> StateSnapshot {
        self.service().snapshot()
    }

    fn rpc(&self, request: &str) -> String {
        let service = self.service();
        service.runtime.block_on(async {
            let mut client = GuiRpcClient::connect(&service.gui_rpc).await.expect("connects");
            client.authenticate(PASSWORD).await.expect("authenticates");
            client.call(request).await.expect("answers")
        })
    }

    fn slots(&self) -> PathBuf {
        self.dir.path().join("slots")
    }

    fn attached(&self) -> bool {
        self.snapshot().state.projects.iter().any(|p| !p.detached)
    }

    /// A random action the volunteer can take now.
    fn choose(&self, rng: &mut ChaCha8Rng) -> Action {
        let snapshot = self.snapshot();
        let tasks: Vec<String> = snapshot
            .state
            .jobs
            .iter()
            .filter(|j| !j.state.computing_done())
            .map(|j| j.name.clone())
            .collect();
        if !self.attached() && rng.random_bool(0.5) {
            return Action::Attach;
        }
        let mode = |rng: &mut ChaCha8Rng| ["always", "never", "auto"][rng.random_range(0..3)];
        let duration =
            |rng: &mut ChaCha8Rng| if rng.random_bool(0.3) { rng.random_range(1..4) } else { 0 };
        match rng.random_range(0..100) {
            0..30 if !tasks.is_empty() => {
                let task = tasks[rng.random_range(0..tasks.len())].clone();
                let op = match rng.random_range(0..10) {
                    0..5 => "suspend_result",
                    5..9 => "resume_result",
                    _ => "abort_result",
                };
                Action::Task(op, task)
            }
            0..60 => Action::Project(
                [
                    "project_suspend",
                    "project_resume",
                    "project_resume",
                    "project_update",
                    "project_nomorework",
                    "project_allowmorework",
                    "project_allowmorework",
                    "project_reset",
                    "project_detach",
                ][rng.random_range(0..9)],
            ),
            60..80 => Action::Mode("set_run_mode", mode(rng), duration(rng)),
            80..98 => Action::Mode("set_network_mode", mode(rng), duration(rng)),
            _ => Action::Restart,
        }
    }

    fn apply(&mut self, action: &Action) {
        let url = self.server.url.clone();
        let reply = match action {
            Action::Task(op, name) => self.rpc(&format!(
                "<{op}>\n<project_url>{url}</project_url>\n<name>{name}</name>\n</{op}>"
            )),
            Action::Project(op) => {
                self.rpc(&format!("<{op}>\n<project_url>{url}</project_url>\n</{op}>"))
            }
            Action::Attach => self.rpc(&format!(
                "<project_attach>\n<project_url>{url}</project_url>\n<authenticator>{KEY}</authenticator>\n<project_name></project_name>\n</project_attach>"
            )),
            Action::Mode(op, mode, duration) => {
                self.rpc(&format!("<{op}>\n<{mode}/>\n<duration>{duration}</duration>\n</{op}>"))
            }
            Action::Restart => {
                if let Some(mut service) = self.service.take() {
                    service.stop();
                }
                // The stopped service's lock on the data directory may take a moment
                // to go.
                let dir = self.dir.path().to_owned();
                let mut why = String::new();
                let started = support::wait::poll_for(SETTLE, || {
                    InProcessService::try_start(&dir).map_err(|e| why = e).ok()
                });
                self.service =
                    Some(started.unwrap_or_else(|| panic!("no restart in {SETTLE:?}: {why}")));
                "<success/>".into()
            }
        };
        // An action on what is gone meanwhile (a task just ended, a detached project)
        // is refused: the reply must still be one.
        assert!(
            reply.contains("<success/>") || reply.contains("<error>"),
            "{action:?}: not a reply: {reply}"
        );
    }

    /// What the client says against what is on the machine: the first untruth found.
    fn violation(&self) -> Option<String> {
        let snapshot = self.snapshot();
        let state = &snapshot.state;
        let slots = self.slots();
        let processes = processes_in(&slots);
        let slot_of = |dir: &Path| -> Option<u32> {
            dir.strip_prefix(canonical(&slots)).ok()?.iter().next()?.to_str()?.parse().ok()
        };
        for (id, job) in state.jobs.iter().enumerate() {
            let Some(task) = &job.task else { continue };
            let in_slot: Vec<_> =
                processes.iter().filter(|p| slot_of(&p.cwd) == Some(task.slot)).collect();
            let executing = task.scheduler_state == SchedulerState::Running
                && task.restart_at.is_none()
                && snapshot.running.iter().any(|r| r.index() == id);
            if executing && in_slot.len() != 1 {
                return Some(format!("{} executing with processes {in_slot:?}", job.name));
            }
            // What get_results shows of its process (`<pid>`, memory) is that process's.
            if executing
                && (task.process.pid as i32 != in_slot[0].pid
                    || task.process.working_set_size <= 0.0)
            {
                return Some(format!(
                    "{} executing as {:?}, its process {:?}",
                    job.name, task.process, in_slot[0]
                ));
            }
            if task.scheduler_state == SchedulerState::Uninitialized && task.process.pid != 0 {
                return Some(format!("{} has no process, yet shows {:?}", job.name, task.process));
            }
            // Suspended in memory (as BOINC keeps a task that has not checkpointed, so
            // its work is not lost), a task keeps its one process; quit, it has none.
            let allowed = match task.scheduler_state {
                _ if executing => 1,
                SchedulerState::Preempted => 1,
                _ => 0,
            };
            if in_slot.len() > allowed {
                return Some(format!(
                    "{} not executing ({:?}) with processes {in_slot:?}",
                    job.name, task.scheduler_state
                ));
            }
        }
        for process in &processes {
            let held = state
                .jobs
                .iter()
                .filter_map(|j| j.task.as_ref())
                .any(|t| slot_of(&process.cwd) == Some(t.slot));
            if !held {
                return Some(format!("a process in a slot no task holds: {process:?}"));
            }
        }
        let zombies = zombie_children(std::process::id() as i32);
        if !zombies.is_empty() {
            return Some(format!("zombie apps {zombies:?}"));
        }
        for project in state.projects.iter().filter(|p| p.detached) {
            let jobs = state
                .jobs
                .iter()
                .filter(|j| state.project(j.project).master_url == project.master_url)
                .count();
            let files =
                files_under(
                    &self.dir.path().join("projects").join(
                        boinc_core::protocol::data_dir::escape_project_url(&project.master_url),
                    ),
                );
            if jobs > 0 || !files.is_empty() {
                return Some(format!("detached, yet {jobs} tasks and files {files:?}"));
            }
        }
        for job in &state.jobs {
            let ended_well = job.exit_status == 0
                && matches!(job.state, JobState::FilesUploading | JobState::FilesUploaded);
            if !ended_well {
                continue;
            }
            let ncpus = job.app_version.map_or(1.0, |v| state.app_version(v).usage.avg_ncpus);
            let cpu = job.final_cpu_time;
            if !(cpu > 0.0 && cpu <= job.final_elapsed_time * ncpus * 1.05 + 0.5) {
                return Some(format!(
                    "{} ended with CPU time {cpu} for an elapsed time of {} on {ncpus} CPUs",
                    job.name, job.final_elapsed_time
                ));
            }
        }
        let listed = self.rpc("<get_results>\n<active_only>0</active_only>\n</get_results>");
        let listed = listed.matches("<result>").count();
        let held = self.snapshot().state.jobs.iter().filter(|j| !j.got_server_ack).count();
        let held_before = state.jobs.iter().filter(|j| !j.got_server_ack).count();
        if listed != held && listed != held_before {
            return Some(format!("get_results lists {listed} tasks; the state holds {held}"));
        }
        None
    }

    /// Waits (bounded) until what the client says is true.
    fn check(&self) {
        let mut last = None;
        let started = Instant::now();
        while started.elapsed() < SETTLE {
            last = self.violation();
            if last.is_none() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let history = self.history[self.history.len().saturating_sub(20)..].join("\n");
        panic!(
            "untrue after {SETTLE:?}: {}\nthe last actions:\n{history}",
            last.unwrap_or_default()
        );
    }
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn random_user_actions_leave_the_client_telling_the_truth() {
    let actions = setting("BOINC_RS_MODEL_ACTIONS", DEFAULT_ACTIONS as u64) as usize;
    let seed = setting("BOINC_RS_MODEL_SEED", DEFAULT_SEED);
    let server = ProjectServerProcess::start(&["--job-seconds", "2-6", "--request-delay", "1"]);
    let dir = tempfile::tempdir().expect("a data directory");
    std::fs::write(dir.path().join(PASSWORD_FILE), PASSWORD).expect("the password");
    write_account_file(dir.path(), &server.url, KEY).expect("attached");
    let service = InProcessService::start(dir.path());
    let mut model = Model { service: Some(service), dir, server, history: Vec::new() };
    wait_for_or(
        "a first task running",
        WORK_WAIT,
        || (!model.snapshot().running.is_empty()).then_some(()),
        || model.server.log(),
    );

    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let started = Instant::now();
    for step in 0..actions {
        let action = model.choose(&mut rng);
        model.history.push(format!("{step}: {action:?}"));
        model.apply(&action);
        model.check();
        if (step + 1) % 100 == 0 {
            println!("{} actions in {:?}", step + 1, started.elapsed());
        }
    }
    let elapsed = started.elapsed();

    // Everything resumed and the project attached: work runs again.
    if !model.attached() {
        model.apply(&Action::Attach);
    }
    for action in [
        Action::Mode("set_run_mode", "always", 0),
        Action::Mode("set_network_mode", "always", 0),
        Action::Project("project_resume"),
        Action::Project("project_allowmorework"),
    ] {
        model.apply(&action);
    }
    wait_for_or(
        "work running after the actions",
        WORK_WAIT,
        || (!model.snapshot().running.is_empty()).then_some(()),
        || model.server.log(),
    );
    model.check();
    println!("{actions} actions of seed {seed} in {elapsed:?}, every invariant held");
}
