//! The messages the actors exchange (DESIGN.md "Actors"): plain serde structs, so the
//! journal can record each one as it is delivered.

use boinc_core::Time;
use boinc_core::control::{HostView, ProjectRpcState, RpcCall, TaskCommand};
use boinc_core::model::{ClientState, Project, ResourceType, RunMode};
use boinc_core::protocol::{SchedulerReply, SchedulerRequest};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Virtual (or wall) time moved to `now`: the scheduler runs one step of the control
/// loop and answers when it wants the next one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "Time")]
pub struct Tick {
    /// The instant of the step.
    pub now: Time,
}

/// Start the tasks that were already running when the client started.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "()")]
pub struct Startup {
    /// When.
    pub now: Time,
}

/// The host's availability changed (from host discovery).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "()")]
pub struct HostChanged {
    /// The availability now.
    pub view: HostView,
}

/// A processing resource's availability, from its ResourceActor to the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "()")]
pub struct ResourceAvailable {
    /// The resource.
    pub resource: ResourceType,
    /// Whether it may compute now.
    pub may_compute: bool,
    /// The host's availability behind it.
    pub host: HostView,
}

/// Which tasks occupy a resource's instances after a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "()")]
pub struct InstanceAssignment {
    /// (job, instances used, GPU instances) of each running task using the resource.
    pub tasks: Vec<(String, f64, Vec<u32>)>,
}

/// The scheduler asks a task for its process's state.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "TaskReport")]
pub struct Poll {
    /// When.
    pub now: Time,
}

/// A task's answer to [`Poll`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum TaskReport {
    /// Running (or suspended): its state.
    Running(boinc_core::control::ProcessStatus),
    /// Finished its work; the process is gone.
    Finished(boinc_core::control::ProcessStatus),
    /// Its app crashed; it restarts from this checkpoint at the given time.
    Restarting {
        /// Its state as of the last checkpoint.
        checkpoint: boinc_core::control::ProcessStatus,
        /// When the restart happens.
        restart_at: Time,
    },
    /// Its app kept crashing or failed: a computation error.
    GaveUp,
    /// It has no process (suspended out of memory).
    Idle,
}

/// A command from the scheduler to a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "()")]
pub struct Command {
    /// What to do.
    pub command: TaskCommand,
    /// When.
    pub now: Time,
}

/// Read the project's master page (seed 002).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "ProjectRpcState")]
pub struct MasterFetch {
    /// When.
    pub now: Time,
    /// The project as the scheduler holds it (authoritative).
    pub project: Project,
}

/// Run a scheduler RPC session (from the scheduler to the FetchActor, and from it to
/// the ProjectActor).
#[derive(Debug, Clone, Serialize, Deserialize, actix::Message)]
#[rtype(result = "Result<SessionOutcome, String>")]
pub struct RunSession {
    /// When.
    pub now: Time,
    /// The request and the reported results.
    pub call: RpcCall,
    /// The scheduler request made for the call; shared, not journaled.
    #[serde(skip)]
    pub request: Arc<SchedulerRequest<'static>>,
    /// The client's state the request describes; shared, not journaled.
    #[serde(skip)]
    pub state: Arc<ClientState>,
}

/// How a session ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionOutcome {
    /// The server's reply; `None`: the RPC failed.
    pub reply: Option<SchedulerReply>,
    /// The project's protocol state after the session.
    pub rpc_state: ProjectRpcState,
}

/// What a user (or a host program) asks of the client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum UserAction {
    /// Suspend a project (by name).
    SuspendProject(String),
    /// Resume a project.
    ResumeProject(String),
    /// Suspend a task (by job name).
    SuspendTask(String),
    /// Resume a task.
    ResumeTask(String),
    /// Set the computing run mode.
    SetRunMode(RunMode),
    /// Detach from a project: it gets no more work and its queued jobs are dropped.
    Detach(String),
    /// Attach (again) to a project the client knows by its master URL.
    Attach(String),
}

/// A user action, delivered to the scheduler.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "Result<(), crate::client::ClientError>")]
pub struct User {
    /// The action.
    pub action: UserAction,
}

/// Counters the scheduler keeps (for the end of a run).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "(u64, u64)")]
pub struct Stats;

/// The disk manager's step: the jobs that just finished, then `data_manager_poll`.
#[derive(Debug, Clone, Serialize, Deserialize, actix::Message)]
#[rtype(result = "Box<ClientState>")]
pub struct DiskStep {
    /// When.
    pub now: Time,
    /// Jobs that finished in this step.
    pub finished: Vec<boinc_core::model::JobId>,
    /// The client state, lent for the step (not journaled).
    #[serde(skip)]
    pub state: Box<ClientState>,
}

/// A reply brought jobs: their files are associated.
#[derive(Debug, Clone, Serialize, Deserialize, actix::Message)]
#[rtype(result = "Box<ClientState>")]
pub struct DiskReply {
    /// When.
    pub now: Time,
    /// The new jobs.
    pub new_jobs: Vec<boinc_core::model::JobId>,
    /// The client state, lent for the step (not journaled).
    #[serde(skip)]
    pub state: Box<ClientState>,
}
