//! Every real BOINC state file in the shared fixtures and every emulator scenario must
//! load, with the values the scheduling policies depend on.

use boinc_core::model::{ClientState, JobState, ResourceType, SchedulerState};
use boinc_core::protocol::{SourceText, StateFiles, load_state, parse_client_state};
use std::fs;
use std::path::{Path, PathBuf};

/// The shared fixtures live beside the checkout; a missing directory is a broken test
/// setup, never a pass.
fn shared_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    assert!(
        dir.join("fixtures").is_dir() && dir.join("scenarios").is_dir(),
        "{} must hold fixtures/ and scenarios/",
        dir.display()
    );
    dir
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn client_state_fixtures() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                walk(&path, found);
            } else if path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("client_state") && n.ends_with(".xml"))
            {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(&shared_dir().join("fixtures"), &mut found);
    found.sort();
    assert!(found.len() >= 5, "expected the 7.20.5 and 8.3.0 state files, found {found:?}");
    found
}

fn scenario_dirs() -> Vec<PathBuf> {
    let root = shared_dir().join("scenarios");
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.join("client_state.xml").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 8, "expected the emulator scenarios, found {dirs:?}");
    dirs
}

fn load_scenario(name: &str) -> ClientState {
    load_scenario_dir(&shared_dir().join("scenarios").join(name))
}

fn load_scenario_dir(dir: &Path) -> ClientState {
    let client_state = read(&dir.join("client_state.xml"));
    let global_prefs = read(&dir.join("global_prefs.xml"));
    let cc_config = read(&dir.join("cc_config.xml"));
    let files = StateFiles {
        client_state: SourceText { name: "client_state.xml", text: &client_state },
        global_prefs: Some(SourceText { name: "global_prefs.xml", text: &global_prefs }),
        global_prefs_override: None,
        cc_config: Some(SourceText { name: "cc_config.xml", text: &cc_config }),
    };
    load_state(&files).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

fn load_fixture(relative: &str) -> ClientState {
    let path = shared_dir().join("fixtures").join(relative);
    parse_client_state(&read(&path), relative).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_fixture_state_file_parses() {
    for path in client_state_fixtures() {
        let name = path.display().to_string();
        let state = parse_client_state(&read(&path), &name).unwrap_or_else(|e| panic!("{e}"));
        assert!(state.host.p_fpops > 0.0, "{name}");
    }
}

#[test]
fn every_scenario_loads() {
    for dir in scenario_dirs() {
        let state = load_scenario_dir(&dir);
        assert!(!state.projects.is_empty(), "{}", dir.display());
        assert!(!state.app_versions.is_empty(), "{}", dir.display());
        for app in &state.apps {
            assert!(app.emulation.is_some(), "{}: app {} not emulated", dir.display(), app.name);
        }
    }
}

#[test]
fn gpu_share_host_and_gpu_app_version() {
    let state = load_scenario("gpu_share");
    let nvidia = state.host.coprocessors[ResourceType::Nvidia].as_ref().expect("an NVIDIA GPU");
    assert_eq!(nvidia.count, 1);
    assert_eq!(nvidia.peak_flops, 4e10);
    assert_eq!(state.instances(ResourceType::Nvidia), 1);
    let b = state.project_by_name("B").expect("project B");
    let b_gpu =
        state.apps.iter().position(|a| a.project == b && a.name == "b_gpu").expect("app b_gpu");
    let version =
        state.app_versions.iter().find(|v| v.app.index() == b_gpu).expect("b_gpu's app version");
    assert_eq!(version.usage.coprocessor, Some((ResourceType::Nvidia, 1.0)));
    assert_eq!(version.usage.avg_ncpus, 0.01);
    assert_eq!(version.flops, 8e9);
    let project_b = state.project(b);
    assert!(project_b.resources[ResourceType::Cpu].has_app_version);
    assert!(project_b.resources[ResourceType::Nvidia].has_app_version);
    let a = state.project(state.project_by_name("A").expect("project A"));
    assert!(!a.resources[ResourceType::Cpu].has_app_version);
    assert_eq!(state.prefs.work_buf_additional_days, 0.25);
    assert!(state.prefs.run_gpu_if_user_active);
}

#[test]
fn s2_beta_job_is_downloaded_with_its_deadline() {
    let state = load_scenario("s2");
    assert_eq!(state.jobs.len(), 1);
    let job = &state.jobs[0];
    assert_eq!(state.project(job.project).name, "beta");
    assert_eq!(job.state, JobState::FilesDownloaded);
    assert_eq!(job.report_deadline, 1_043_200.0);
    assert_eq!(job.received_time, 1_000_000.0);
    let version = state.app_version(job.app_version.expect("an app version"));
    assert_eq!(version.version_num, 200);
    assert_eq!(state.workunit(job.workunit).rsc_fpops_est, 57.6e12);
    assert_eq!(state.time_stats.on_frac, 0.8);
    assert_eq!(state.time_stats.on_lambda, Some(14400.0));
    let gamma = state.project(state.project_by_name("gamma").expect("gamma"));
    assert_eq!(gamma.resource_share, 50.0);
}

#[test]
fn starved_gpu_project_availability() {
    let state = load_scenario("starved_gpu");
    let g = state.project(state.project_by_name("G").expect("G"));
    let availability = g.availability.expect("<available>");
    assert_eq!((availability.frac, availability.lambda), (0.3, 14400.0));
}

#[test]
fn big_host_has_two_gpu_types() {
    let state = load_scenario("big_host");
    assert_eq!(state.instances(ResourceType::Nvidia), 2);
    assert_eq!(state.instances(ResourceType::Amd), 2);
}

#[test]
fn running_capture_has_a_running_task() {
    let state = load_fixture("boinc-8.3.0/client_state_running_captured.xml");
    assert_eq!(state.jobs.len(), 1);
    let job = &state.jobs[0];
    let task = job.task.as_ref().expect("an active task");
    assert_eq!(task.scheduler_state, SchedulerState::Running);
    assert!(job.is_running());
    assert_eq!(job.report_deadline, 1795507875.0);
    assert_eq!(state.project(job.project).name, "Stub Project");
    assert_eq!(state.project(job.project).scheduler_urls, ["http://127.0.0.1:18080/cgi"]);
    assert_eq!(state.files.len(), 2);
}

#[test]
fn pending_result_is_ready_to_report_with_cpu_backoff() {
    let state = load_fixture("boinc-7.20.5/state/client_state_pending_result.xml");
    let job = &state.jobs[0];
    assert_eq!(job.state, JobState::FilesUploaded);
    assert!(job.ready_to_report);
    assert_eq!(job.final_elapsed_time, 2.006476);
    let project = state.project(job.project);
    assert_eq!(project.resources[ResourceType::Cpu].backoff_interval, 600.0);
    assert_eq!(project.resources[ResourceType::Cpu].backoff_time, 1795249438.908329);
    assert_eq!(project.duration_correction_factor, 0.920065);
    assert!(project.sched_rpc_pending);
    assert_eq!(state.workunit(job.workunit).input_files.len(), 1);
}

#[test]
fn fresh_client_without_projects() {
    let state = load_fixture("boinc-7.20.5/state/client_state_fresh.xml");
    assert!(state.projects.is_empty());
    assert_eq!(state.host.p_ncpus, 2);
    assert_eq!(state.time_stats.connected_frac, -1.0);
    assert_eq!(state.run_mode, boinc_core::model::RunMode::Never);
}

#[test]
fn real_client_data_directory_with_override_and_config() {
    let dir = shared_dir().join("fixtures/boinc-7.20.5/state");
    let client_state = read(&dir.join("client_state_attached.xml"));
    let override_text = read(&dir.join("global_prefs_override.xml"));
    let cc_config = read(&dir.join("cc_config.xml"));
    let files = StateFiles {
        client_state: SourceText { name: "client_state.xml", text: &client_state },
        global_prefs: None,
        global_prefs_override: Some(SourceText {
            name: "global_prefs_override.xml",
            text: &override_text,
        }),
        cc_config: Some(SourceText { name: "cc_config.xml", text: &cc_config }),
    };
    let state = load_state(&files).unwrap_or_else(|e| panic!("{e}"));
    assert!(state.config.no_gpus);
    assert!(state.prefs.run_if_user_active);
    // Two projects, both named "Fake Loopback Project"; the app follows the second.
    assert_eq!(state.projects.len(), 2);
    assert_eq!(state.apps.len(), 1);
    assert_eq!(state.project(state.apps[0].project).master_url, "http://127.0.0.1:8088/");
}

#[test]
fn prefs_override_wins_over_global_prefs() {
    let dir = shared_dir().join("scenarios/gpu_share");
    let client_state = read(&dir.join("client_state.xml"));
    let global_prefs = read(&dir.join("global_prefs.xml"));
    let override_text = "<global_preferences>\n\
        <work_buf_min_days>2</work_buf_min_days>\n\
        <run_gpu_if_user_active>0</run_gpu_if_user_active>\n\
        </global_preferences>";
    let files = StateFiles {
        client_state: SourceText { name: "client_state.xml", text: &client_state },
        global_prefs: Some(SourceText { name: "global_prefs.xml", text: &global_prefs }),
        global_prefs_override: Some(SourceText {
            name: "global_prefs_override.xml",
            text: override_text,
        }),
        cc_config: None,
    };
    let state = load_state(&files).unwrap_or_else(|e| panic!("{e}"));
    // Overridden elements take the override's values ...
    assert_eq!(state.prefs.work_buf_min_days, 2.0);
    assert!(!state.prefs.run_gpu_if_user_active);
    // ... and the others keep global_prefs.xml's.
    assert_eq!(state.prefs.work_buf_additional_days, 0.25);
    assert!(state.prefs.run_if_user_active);
}

/// The real client's shared-memory file of a running BOINC-API task: channel 4 holds the
/// client's heartbeat, channel 5 the app's status, the others nothing.
#[test]
fn the_real_shared_memory_file_reads_channel_by_channel() {
    use boinc_core::protocol::app_api::{
        AppStatusMessage, Channel, Heartbeat, SHARED_MEMORY_SIZE, has_message, message_text,
    };
    let bytes = fs::read(shared_dir().join("fixtures/boinc-7.20.5/slot/boinc_mmap_file"))
        .expect("the fixture boinc_mmap_file");
    assert_eq!(bytes.len(), SHARED_MEMORY_SIZE);
    let text = |channel: Channel| message_text(channel.bytes(&bytes).expect("whole file"));
    // The client's heartbeat stays in its channel (flag clear once the app read it).
    let heartbeat_channel = Channel::Heartbeat.bytes(&bytes).expect("whole file");
    assert!(!has_message(heartbeat_channel));
    let heartbeat_text = std::str::from_utf8(&heartbeat_channel[1..])
        .expect("ASCII")
        .split('\0')
        .next()
        .expect("text");
    let heartbeat = Heartbeat::parse(heartbeat_text).expect("a heartbeat");
    assert_eq!(heartbeat.working_set_size, 4.030464e6);
    let status = AppStatusMessage::parse(text(Channel::AppStatus).expect("text").expect("present"))
        .expect("an app status");
    assert_eq!(status.fraction_done, Some(0.1));
    assert_eq!(status.current_cpu_time, 3.867e-3);
    for channel in Channel::ALL {
        if channel != Channel::AppStatus {
            assert_eq!(text(channel), Ok(None), "{channel:?}");
        }
    }
}
