//! A task outside any client state (issue "Running real apps": `boinc-rs app-test`, the
//! live tests, the overhead measurement): one app in a project directory of a scratch
//! data directory, on one CPU, without bounds, starting from nothing.

use boinc_core::control::{ProcessStatus, SlotFile, TaskProgram, TaskSpec, slot_dir};
use boinc_core::model::{ProjectId, ResourceUsage};
use boinc_core::protocol::app_api::COMPATIBLE_CLIENT_VERSION;

/// What a standalone task runs.
#[derive(Debug, Clone, PartialEq)]
pub struct StandaloneTask {
    /// The task's slot.
    pub slot: u32,
    /// The job's (and result's and workunit's) name.
    pub job: String,
    /// The project directory, relative to the data directory.
    pub project_dir: String,
    /// The program's file name in the project directory.
    pub executable: String,
    /// The program's command line.
    pub arguments: Vec<String>,
    /// The app uses BOINC's API (otherwise it runs in wrapper mode).
    pub api: bool,
    /// Its input and output files.
    pub files: Vec<SlotFile>,
}

impl StandaloneTask {
    /// The task's spec.
    pub fn spec(&self) -> TaskSpec {
        let (major, minor, release) = COMPATIBLE_CLIENT_VERSION;
        TaskSpec {
            project: ProjectId(0),
            job: self.job.clone(),
            slot: self.slot,
            usage: ResourceUsage { avg_ncpus: 1.0, coprocessor: None },
            gpu_instances: Vec::new(),
            status: ProcessStatus::default(),
            program: TaskProgram {
                project_dir: self.project_dir.clone(),
                slot_dir: slot_dir(self.slot),
                app_name: "standalone".into(),
                version_num: 1,
                api_version: if self.api {
                    format!("{major}.{minor}.{release}")
                } else {
                    String::new()
                },
                executable: self.executable.clone(),
                arguments: self.arguments.clone(),
                files: self.files.clone(),
                wu_name: self.job.clone(),
                result_name: self.job.clone(),
                checkpoint_period: 60.0,
                ..TaskProgram::default()
            },
        }
    }
}
