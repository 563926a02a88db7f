//! What a task's process runs (docs/design.md "Protocol facts", App API; issue "Running real
//! apps"): the app version's main program and arguments, the files the app opens by
//! their open names, the slot and project directories, the bounds the client enforces,
//! and the identity an app reads from `init_data.xml`. Built by the core from the client
//! state; a process host carries it out. Paths are relative to the client's data
//! directory, so the same program runs wherever the directory is.

use super::app_limits::address_space_limit;
use crate::Time;
use crate::model::{ClientState, FileRef, JobId};
use serde::{Deserialize, Serialize};

/// Where the client keeps each project's files, relative to the data directory.
pub const PROJECTS_DIR: &str = "projects";
/// Where the client keeps the tasks' slot directories, relative to the data directory.
pub const SLOTS_DIR: &str = "slots";

/// How a file the app uses gets into its slot directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlotFile {
    /// The name the app opens (BOINC's `<open_name>`).
    pub open_name: String,
    /// The file's name in the project directory.
    pub file_name: String,
    /// Copy the file into the slot instead of writing a link file (`<copy_file/>`); for
    /// an output, copy it back into the project directory when the task ends.
    pub copy: bool,
    /// What the file is to the task.
    pub role: SlotFileRole,
}

/// What a slot file is to the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SlotFileRole {
    /// One of the app version's files (the main program among them).
    AppFile,
    /// One of the workunit's input files.
    Input,
    /// One of the result's output files, written by the app.
    Output,
}

/// The bounds the client enforces on a task (BOINC's `rsc_*` workunit fields) and the
/// figures the app is told about its job.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct TaskBounds {
    /// Estimated flops of the job.
    pub fpops_est: f64,
    /// Flops after which the job is aborted (elapsed-time limit = this / flops).
    pub fpops_bound: f64,
    /// Resident memory bound, bytes (0: none).
    pub memory_bound: f64,
    /// Slot disk bound, bytes (0: none); also the largest file the app may write.
    pub disk_bound: f64,
    /// The app's address-space limit, bytes (0: none), from the memory preferences
    /// (`app_limits::address_space_limit`).
    #[serde(default)]
    pub address_space_limit: f64,
    /// The app version's estimated speed, flops (for the elapsed-time limit).
    pub flops: f64,
    /// The job's report deadline.
    pub deadline: Time,
}

impl TaskBounds {
    /// Elapsed seconds after which the task is aborted (`None`: no limit known).
    pub fn elapsed_time_limit(&self) -> Option<f64> {
        (self.fpops_bound > 0.0 && self.flops > 0.0).then(|| self.fpops_bound / self.flops)
    }
}

/// Who the app computes for: what `init_data.xml` tells it besides its files.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TaskIdentity {
    /// The project's master URL.
    pub project_url: String,
    /// The project's name.
    pub project_name: String,
    /// The account's user name.
    pub user_name: String,
    /// The account's team name.
    pub team_name: String,
    /// The host's id at the project (0: none yet).
    pub hostid: u64,
    /// The account's authenticator.
    pub authenticator: String,
    /// The project's share of the host, 0–1.
    pub resource_share_fraction: f64,
}

/// Everything a process host needs to run a task's app.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TaskProgram {
    /// The project's directory, relative to the data directory (`projects/NAME`).
    pub project_dir: String,
    /// The task's slot directory, relative to the data directory (`slots/N`).
    pub slot_dir: String,
    /// The app's short name.
    pub app_name: String,
    /// The app version's number.
    pub version_num: u32,
    /// The app version's plan class (empty for a plain CPU version).
    pub plan_class: String,
    /// The BOINC API version the app was built with; empty: the app does not use the
    /// API and runs in wrapper mode.
    pub api_version: String,
    /// The main program's file name in the project directory (empty: the state names
    /// no program, as in emulator scenarios).
    pub executable: String,
    /// The command line: the app version's arguments, then the workunit's.
    pub arguments: Vec<String>,
    /// The files the app opens, by open name.
    pub files: Vec<SlotFile>,
    /// The workunit's name.
    pub wu_name: String,
    /// The result's name.
    pub result_name: String,
    /// Limits and estimates.
    pub bounds: TaskBounds,
    /// How often the app may checkpoint, seconds (the `disk_interval` preference).
    pub checkpoint_period: f64,
    /// Who the app computes for.
    pub identity: TaskIdentity,
    /// The CPU priority the app runs at, BOINC's level 0 (lowest) to 5 (realtime), from
    /// cc_config's `<process_priority>` (CPU apps) or `<process_priority_special>` (GPU
    /// apps); `None`: BOINC's default for the kind of app.
    #[serde(default)]
    pub priority: Option<u8>,
}

impl TaskProgram {
    /// Whether the app talks to the client through BOINC's shared-memory API.
    pub fn uses_boinc_api(&self) -> bool {
        !self.api_version.is_empty()
    }
}

/// The slot directory of slot `slot`, relative to the data directory.
pub fn slot_dir(slot: u32) -> String {
    format!("{SLOTS_DIR}/{slot}")
}

/// The directory of the project with this master URL, relative to the data directory:
/// BOINC's escaping of the URL without its scheme (`http://127.0.0.1:8088/x/` →
/// `projects/127.0.0.1_8088_x`).
pub fn project_dir(master_url: &str) -> String {
    format!("{PROJECTS_DIR}/{}", crate::protocol::data_dir::escape_project_url(master_url))
}

/// The program of job `id`'s task in `slot`, from the client state: the app version's
/// main program and files, the workunit's inputs and the result's outputs by open name,
/// the command line, the bounds and who the app computes for. `None` when the job's app
/// version names no program to run (emulator scenarios: building one for every emulated
/// start would cost the emulator for nothing).
pub fn task_program(state: &ClientState, id: JobId, slot: u32) -> Option<TaskProgram> {
    let job = state.job(id);
    let version_id = job.app_version?;
    let (main, executable) = state.main_program(version_id)?;
    let version = state.app_version(version_id);
    let workunit = state.workunit(job.workunit);
    let project = state.project(job.project);
    let slot_file = |reference: &FileRef, role| SlotFile {
        open_name: state.open_name(reference).to_string(),
        file_name: state.file(reference.file).name.clone(),
        copy: reference.copy_file,
        role,
    };
    let mut files: Vec<SlotFile> = version
        .files
        .iter()
        .filter(|r| !std::ptr::eq(*r, main))
        .map(|r| slot_file(r, SlotFileRole::AppFile))
        .collect();
    files.extend(state.job_input_files(id).iter().map(|r| slot_file(r, SlotFileRole::Input)));
    files.extend(state.job_output_files(id).iter().map(|r| slot_file(r, SlotFileRole::Output)));
    let arguments = version
        .cmdline
        .split_whitespace()
        .chain(workunit.command_line.split_whitespace())
        .map(str::to_string)
        .collect();
    let total_share: f64 = state.projects.iter().map(|p| p.resource_share.max(0.0)).sum();
    Some(TaskProgram {
        project_dir: project_dir(&project.master_url),
        slot_dir: slot_dir(slot),
        app_name: state.app(workunit.app).name.clone(),
        version_num: version.version_num,
        plan_class: version.plan_class.clone(),
        api_version: version.api_version.clone(),
        executable: executable.name.clone(),
        arguments,
        files,
        wu_name: workunit.name.clone(),
        result_name: job.name.clone(),
        bounds: TaskBounds {
            fpops_est: workunit.rsc_fpops_est,
            fpops_bound: workunit.rsc_fpops_bound,
            memory_bound: workunit.rsc_memory_bound,
            disk_bound: workunit.rsc_disk_bound,
            address_space_limit: address_space_limit(
                state.host.m_nbytes,
                &state.prefs,
                &version.usage,
            )
            .unwrap_or(0.0),
            flops: version.flops,
            deadline: job.report_deadline,
        },
        checkpoint_period: state.prefs.disk_interval,
        priority: match version.usage.coprocessor {
            Some(_) => state.config.process_priority_special,
            None => state.config.process_priority,
        },
        identity: TaskIdentity {
            project_url: project.master_url.clone(),
            project_name: project.name.clone(),
            user_name: project.user_name.clone(),
            team_name: project.team_name.clone(),
            hostid: project.hostid,
            authenticator: project.authenticator.clone(),
            resource_share_fraction: if total_share > 0.0 {
                project.resource_share.max(0.0) / total_share
            } else {
                1.0
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_directories_follow_the_master_url() {
        assert_eq!(project_dir("http://127.0.0.1:8088/"), "projects/127.0.0.1_8088");
        assert_eq!(project_dir("https://einstein.phys.uwm.edu/"), "projects/einstein.phys.uwm.edu");
        assert_eq!(project_dir("http://a.org/b/c"), "projects/a.org_b_c");
        assert_eq!(project_dir("http://x/../../etc"), "projects/x_.._.._etc");
        assert_eq!(project_dir("http://../"), "projects/__");
        assert_eq!(project_dir(""), "projects/_");
        assert_eq!(slot_dir(3), "slots/3");
    }

    #[test]
    fn elapsed_time_limit_needs_a_bound_and_a_speed() {
        let bounds = TaskBounds { fpops_bound: 1e12, flops: 1e9, ..TaskBounds::default() };
        assert_eq!(bounds.elapsed_time_limit(), Some(1000.0));
        assert_eq!(TaskBounds::default().elapsed_time_limit(), None);
    }
}
