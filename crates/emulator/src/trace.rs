//! The emulator's trace: one event per line of JSON, complete enough that every figure of
//! merit can be recomputed from the trace alone (the setup event carries the host's
//! capacities and the projects' shares; run segments carry what each job occupied).

use boinc_core::Time;
use boinc_core::model::{ResourceMap, ResourceType};
use boinc_core::policy::Policy;
use serde::{Deserialize, Serialize};

/// A GPU type present on the emulated host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceGpu {
    /// Which type.
    pub resource: ResourceType,
    /// Instances.
    pub count: u32,
    /// Advertised peak flops of one instance.
    pub peak_flops: f64,
}

/// A project as the trace's setup describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceProject {
    /// Project name.
    pub name: String,
    /// Resource share.
    pub resource_share: f64,
    /// The devices it has app versions for (absent in older traces: every device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devices: Option<Vec<ResourceType>>,
}

/// Which availability process changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AvailabilityKind {
    /// The host (and the client) is running.
    HostOn,
    /// The host is connected to the network.
    Connected,
    /// Computation is allowed (the user is not using the machine, or prefs allow it).
    Active,
    /// GPU computation is allowed.
    GpuActive,
    /// A project's scheduler is up.
    ProjectUp {
        /// Project name.
        project: String,
    },
}

/// One event of an emulator run. Times are virtual seconds; per-resource figures are
/// arrays in the order cpu, nvidia, amd, intel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum TraceEvent {
    /// First event: what was run and on what host.
    Setup {
        /// Scenario name.
        scenario: String,
        /// Policy family.
        policy: Policy,
        /// RNG seed.
        seed: u64,
        /// BOINC-emulator modelling choices in force (`--boinc-compat`).
        boinc_compat: bool,
        /// Virtual start time.
        start: Time,
        /// Virtual end time.
        end: Time,
        /// Usable CPUs.
        ncpus: u32,
        /// Peak flops of one CPU.
        p_fpops: f64,
        /// GPU types present.
        gpus: Vec<TraceGpu>,
        /// Projects and shares.
        projects: Vec<TraceProject>,
        /// Scheduling period, seconds (monotony is measured against it).
        scheduling_period: f64,
    },
    /// A scheduler RPC.
    Rpc {
        /// When.
        time: Time,
        /// Project asked.
        project: String,
        /// The server answered.
        success: bool,
        /// Instance-seconds requested per resource.
        req_seconds: ResourceMap<f64>,
        /// Instances requested per resource.
        req_ninstances: ResourceMap<f64>,
        /// Results reported in it.
        reported: u32,
        /// Jobs received.
        jobs_received: u32,
        /// The server withheld work because of deadlines.
        no_work_because_of_deadlines: bool,
    },
    /// A job arrived.
    JobReceived {
        /// When.
        time: Time,
        /// Job name.
        job: String,
        /// Project name.
        project: String,
        /// App name.
        app: String,
        /// CPUs it uses.
        avg_ncpus: f64,
        /// GPU type and instances it uses.
        coprocessor: Option<(ResourceType, f64)>,
        /// Its true size, flops.
        flops: f64,
        /// The server's estimate, flops.
        fpops_est: f64,
        /// Report deadline.
        deadline: Time,
    },
    /// A job ran without interruption from `start` to `end`.
    RunSegment {
        /// Job name.
        job: String,
        /// Project name.
        project: String,
        /// Start of the segment.
        start: Time,
        /// End of the segment.
        end: Time,
        /// CPUs occupied (a fraction for GPU jobs).
        avg_ncpus: f64,
        /// GPU type, instances it ran on, and fraction of each instance used.
        gpu: Option<(ResourceType, Vec<u32>, f64)>,
    },
    /// A running job was preempted (its run segment ends at the same time).
    Preempted {
        /// When.
        time: Time,
        /// Job name.
        job: String,
        /// Project name.
        project: String,
        /// It made room for a job the scheduler runs earliest-deadline-first (one the
        /// round-robin simulation sees missing its deadline, or one that can't wait a
        /// scheduling period): a deadline forced it.
        for_deadline: bool,
    },
    /// A job finished computing.
    JobFinished {
        /// When.
        time: Time,
        /// Job name.
        job: String,
        /// Project name.
        project: String,
    },
    /// A job was reported to its project.
    JobReported {
        /// When.
        time: Time,
        /// Job name.
        job: String,
        /// Project name.
        project: String,
        /// Its deadline.
        deadline: Time,
        /// Reported after the deadline: its work counts as wasted.
        missed: bool,
    },
    /// An availability process changed state.
    Availability {
        /// When.
        time: Time,
        /// Which process.
        #[serde(flatten)]
        what: AvailabilityKind,
        /// New state.
        up: bool,
    },
    /// Seed 004: the emulated disk (only in scenarios that give file sizes).
    Disk {
        /// When.
        time: Time,
        /// What happened.
        #[serde(flatten)]
        what: DiskEvent,
    },
}

/// What happened on the emulated disk. Byte figures are per project in the setup's
/// project order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DiskEvent {
    /// The limits, once at the start (they don't change during a run).
    Limits {
        /// all_Projects_limit, bytes.
        all_projects_limit: f64,
        /// Project_limit(p), bytes.
        project_limits: Vec<f64>,
    },
    /// The projects' usage after files arrived or were deleted.
    Usage {
        /// Project_usage(p), bytes.
        project_usage: Vec<f64>,
    },
    /// The disk manager deleted a file.
    FileDeleted {
        /// Project name.
        project: String,
        /// File name.
        file: String,
        /// Its size.
        nbytes: f64,
        /// Why it went first (`expired`, `priority N`, `least recently used`).
        reason: String,
        /// The job that brought it, if a job did.
        job: Option<String>,
    },
    /// A poll found BOINC over its limit with this project over its share.
    Violation {
        /// Project name.
        project: String,
        /// Its usage, bytes.
        usage: f64,
        /// Its limit, bytes.
        limit: f64,
    },
    /// Computation was suspended (`true`, with the message) or resumed.
    Suspended {
        /// Suspended now.
        suspended: bool,
        /// The message shown to the user ("" on resuming).
        message: String,
    },
}
