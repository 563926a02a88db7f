//! What the control loop tells the processes and what it hears back (docs/design.md "Time,
//! effects, determinism"): the vocabulary shared by the emulated world and the process
//! host effect of the actors.

use super::suspend_reason::SuspendReasons;
use super::task_program::TaskProgram;
use crate::Time;
use crate::model::{ProcessUsage, ProjectId, ResourceType, ResourceUsage, TaskPeaks};
use serde::{Deserialize, Serialize};

/// The host's availability as the client sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostView {
    /// The host (and client) is running.
    pub on: bool,
    /// The network is reachable.
    pub connected: bool,
    /// Computing is allowed.
    pub active: bool,
    /// GPU computing is allowed.
    pub gpu_active: bool,
    /// Why computing, GPU computing or the network is suspended (BOINC's reasons).
    #[serde(default)]
    pub suspend: SuspendReasons,
    /// The user is using the host (input within `idle_time_to_run`): the apps get
    /// `ram_max_used_busy_pct` of the memory, else `ram_max_used_idle_pct`. True where
    /// nobody watches the user (the emulator), which keeps to the smaller busy limit.
    #[serde(default = "user_active_by_default")]
    pub user_active: bool,
}

fn user_active_by_default() -> bool {
    true
}

impl HostView {
    /// Everything up: the state a run starts in.
    pub const UP: HostView = HostView {
        on: true,
        connected: true,
        active: true,
        gpu_active: true,
        suspend: SuspendReasons::NONE,
        user_active: true,
    };

    /// Whether a task using `usage` may compute. `boinc_compat`: CPU tasks compute even
    /// while the host is off, as in BOINC's emulator.
    pub fn may_compute(&self, usage: &ResourceUsage, boinc_compat: bool) -> bool {
        self.resource_may_compute(usage.main_resource(), boinc_compat)
    }

    /// Whether tasks may compute on `resource`: a GPU while the host is on and GPU
    /// computing is allowed; the CPU while it is on and computing is allowed (always,
    /// with `boinc_compat`: CPU tasks compute even while the host is off, as in BOINC's
    /// emulator).
    pub fn resource_may_compute(&self, resource: ResourceType, boinc_compat: bool) -> bool {
        if resource.is_gpu() {
            self.on && self.gpu_active
        } else {
            boinc_compat || (self.on && self.active)
        }
    }
}

/// Everything a process host needs to start (or restart from its checkpoint) a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSpec {
    /// The job's project.
    pub project: ProjectId,
    /// The job (result) name.
    pub job: String,
    /// The task's slot: the process's identity while the task exists.
    pub slot: u32,
    /// What the task occupies.
    pub usage: ResourceUsage,
    /// GPU instances it runs on (empty for a CPU task).
    pub gpu_instances: Vec<u32>,
    /// Where the task starts from: its checkpoint (or its running state when a running
    /// task is adopted at startup).
    pub status: ProcessStatus,
    /// What to run, with which files, under which bounds; empty (the default, which
    /// costs nothing to build) for a task whose app version names no program, as in the
    /// emulator, where the emulated world needs none.
    pub program: TaskProgram,
}

/// A task's state as its process reports it (BOINC's shared-memory status channel).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ProcessStatus {
    /// Seconds the task has been running (elapsed time).
    pub elapsed_time: f64,
    /// CPU seconds used.
    pub current_cpu_time: f64,
    /// Fraction done, as the app reports it.
    pub fraction_done: f64,
    /// Elapsed time at the last checkpoint.
    pub checkpoint_elapsed_time: f64,
    /// CPU time at the last checkpoint.
    pub checkpoint_cpu_time: f64,
    /// When the last checkpoint was written.
    pub checkpoint_wall_time: Time,
    /// The app finished its work and exited successfully.
    pub finished: bool,
    /// The most the task's processes have held over all its runs.
    #[serde(default)]
    pub peaks: TaskPeaks,
    /// What its process uses now (zero: no process, or not measured).
    #[serde(default)]
    pub process: ProcessUsage,
}

/// What the control loop asks of a task's process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TaskCommand {
    /// Start the app (first run, or restart from its checkpoint after a quit).
    Start(Box<TaskSpec>),
    /// Resume a task suspended in memory, on these GPU instances.
    Resume {
        /// The job's project.
        project: ProjectId,
        /// The job name.
        job: String,
        /// The task's slot.
        slot: u32,
        /// GPU instances it runs on now.
        gpu_instances: Vec<u32>,
    },
    /// Suspend the task (left in memory) or quit it (it restarts from its checkpoint).
    Preempt {
        /// The job's project.
        project: ProjectId,
        /// The job name.
        job: String,
        /// The task's slot.
        slot: u32,
        /// Quit the app rather than suspend it.
        remove_from_memory: bool,
        /// The preemption makes room for a deadline-endangered job.
        for_deadline: bool,
    },
    /// Abort the task: its process is killed and its job ends in an error (the user or
    /// the project aborted it, or it went over a limit).
    Abort {
        /// The job's project.
        project: ProjectId,
        /// The job name.
        job: String,
        /// The task's slot.
        slot: u32,
    },
    /// Tell the control loop when the task next checkpoints: it runs only until then.
    WatchCheckpoint {
        /// The job's project.
        project: ProjectId,
        /// The job name.
        job: String,
        /// The task's slot.
        slot: u32,
        /// Watch (true) or stop watching.
        watch: bool,
    },
}

impl TaskCommand {
    /// What the command does, in a word (for logs).
    pub fn name(&self) -> &'static str {
        match self {
            TaskCommand::Start(_) => "start",
            TaskCommand::Resume { .. } => "resume",
            TaskCommand::Preempt { remove_from_memory: true, .. } => "quit",
            TaskCommand::Preempt { .. } => "suspend",
            TaskCommand::Abort { .. } => "abort",
            TaskCommand::WatchCheckpoint { .. } => "watch checkpoint",
        }
    }

    /// The project, job and slot the command is for.
    pub fn target(&self) -> (ProjectId, &str, u32) {
        match self {
            TaskCommand::Start(spec) => (spec.project, &spec.job, spec.slot),
            TaskCommand::Resume { project, job, slot, .. }
            | TaskCommand::Preempt { project, job, slot, .. }
            | TaskCommand::Abort { project, job, slot }
            | TaskCommand::WatchCheckpoint { project, job, slot, .. } => (*project, job, *slot),
        }
    }
}
