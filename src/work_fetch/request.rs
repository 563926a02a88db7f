//! The work request and the decision around it (seed 003 "Scheduler request and reply
//! message": per-resource `req_seconds` and `req_ninstances`, plus `work_req_seconds`
//! for old servers), with what `explain` needs to show why.

use crate::model::{ProjectId, ResourceMap, ResourceType};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What to ask for one resource.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ResourceRequest {
    /// Instance-seconds of work requested (seed 003 `req_seconds`).
    pub req_seconds: f64,
    /// Send enough jobs to occupy this many instances (seed 003 `req_ninstances`).
    pub req_ninstances: f64,
}

/// A work request to one project.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WorkRequest {
    /// The project to ask.
    pub project: ProjectId,
    /// Per resource; a server sends a resource's jobs only where its request is nonzero.
    pub resources: ResourceMap<ResourceRequest>,
    /// The scalar request old servers read: the largest `req_seconds`.
    pub work_req_seconds: f64,
}

impl WorkRequest {
    /// Whether the request asks for any work of `resource`.
    pub fn requests(&self, resource: ResourceType) -> bool {
        let r = self.resources[resource];
        r.req_seconds > 0.0 || r.req_ninstances > 0.0
    }
}

/// The urgency levels of seed 001's work fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Urgency {
    /// No project will starve within the connection period.
    DontNeedWork,
    /// Some project will starve within the connection period.
    NeedWork,
    /// The CPU scheduler is starved now.
    NeedWorkImmediately,
}

/// Why a request is made, or why none is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum FetchReason {
    /// Instances of the resource are idle now (seed 003 `nidle`).
    IdleInstances(ResourceType),
    /// The resource would idle before the low water mark (seed 003 `shortfall`).
    Shortfall(ResourceType),
    /// The resource is above the low water mark but a step below the high one, and a
    /// project that was unreachable recently, or any project of a host that is often out
    /// of reach, can be asked to top it up (see `work_fetch::intermittent`).
    TopUp(ResourceType),
    /// A non-CPU-intensive project has no job left (seed 000).
    NonCpuIntensiveIdle,
    /// Seed 001: a project will starve within the connection period.
    Legacy(Urgency),
    /// Every resource has work beyond the low water mark.
    BufferFull,
    /// Work is needed for the resource but no project may be asked for it now.
    NoFetchableProject(ResourceType),
    /// The network mode is "never".
    NetworkSuspended,
    /// The computation mode is "never": work fetched now would only wait.
    ComputingSuspended,
}

impl FetchReason {
    /// The resource whose buffer triggered the request, where one did.
    pub fn resource(&self) -> Option<ResourceType> {
        match *self {
            FetchReason::IdleInstances(r)
            | FetchReason::Shortfall(r)
            | FetchReason::TopUp(r)
            | FetchReason::NoFetchableProject(r) => Some(r),
            FetchReason::NonCpuIntensiveIdle => Some(ResourceType::Cpu),
            FetchReason::Legacy(_) => Some(ResourceType::Cpu),
            FetchReason::BufferFull
            | FetchReason::NetworkSuspended
            | FetchReason::ComputingSuspended => None,
        }
    }
}

impl fmt::Display for FetchReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FetchReason::IdleInstances(r) => write!(f, "{r} instances are idle"),
            FetchReason::Shortfall(r) => {
                write!(f, "{r} would run out of work before the low water mark")
            }
            FetchReason::TopUp(r) => write!(
                f,
                "{r} is below the high water mark and a project that was unreachable \
                 recently (or the host, often out of reach) can be reached now"
            ),
            FetchReason::NonCpuIntensiveIdle => {
                f.write_str("a non-CPU-intensive project has no job left")
            }
            FetchReason::Legacy(Urgency::NeedWorkImmediately) => {
                f.write_str("a project is starved now (ETTPRC)")
            }
            FetchReason::Legacy(Urgency::NeedWork) => {
                f.write_str("a project will starve within the work buffer (ETTPRC)")
            }
            FetchReason::Legacy(Urgency::DontNeedWork) => {
                f.write_str("no project will starve within the work buffer (ETTPRC)")
            }
            FetchReason::BufferFull => {
                f.write_str("every resource has work beyond the low water mark")
            }
            FetchReason::NoFetchableProject(r) => write!(
                f,
                "{r} needs work but no project may be asked for it now (backed off, \
                 suspended, no new tasks, overworked, latency-limited or without {r} apps)"
            ),
            FetchReason::NetworkSuspended => f.write_str("network activity is suspended"),
            FetchReason::ComputingSuspended => f.write_str("computing is suspended"),
        }
    }
}

/// How one project looked to the work-fetch decision.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProjectFetchInfo {
    /// The project.
    pub project: ProjectId,
    /// Overall long-term debt, CPU-seconds (seed 003).
    pub overall_long_term_debt: f64,
    /// The project's shortfall per resource (from rr_sim).
    pub shortfall: ResourceMap<f64>,
    /// Backed off per resource.
    pub backed_off: ResourceMap<bool>,
    /// May supply work per resource.
    pub may_supply: ResourceMap<bool>,
    /// Seed 000 fetchable.
    pub fetchable: bool,
    /// Seed 000 overworked.
    pub overworked: bool,
    /// Seed 000 latency-limited.
    pub latency_limited: bool,
    /// A scheduler RPC to the project failed recently, or the host is often out of
    /// reach: its buffers are topped up whenever it can be reached.
    pub intermittent: bool,
    /// Per resource, the project holds as many nearly runnable jobs as the failsafe cap
    /// allows (`work_fetch::runnable_job_cap`): it is not asked for more.
    #[serde(default)]
    pub job_cap_reached: ResourceMap<bool>,
    /// The ranking score where the project was a candidate for a resource (higher is
    /// asked first): LTD + shortfall (`seed`), REC priority (`rec`), work request in
    /// CPU-seconds (`legacy`, CPU only).
    pub score: ResourceMap<Option<f64>>,
    /// It may be asked for work at all now: fetchable, not latency-limited, and
    /// CPU-intensive (a non-CPU-intensive project is asked only when out of work).
    #[serde(default)]
    pub askable: bool,
    /// Its resource share is above zero (a project without one is a backup).
    #[serde(default)]
    pub has_share: bool,
    /// Per resource, seed 003's per-resource "overworked": it ran more than a scheduling
    /// period ahead of its share there.
    #[serde(default)]
    pub overworked_for: ResourceMap<bool>,
    /// The project does not compete for processors (seed 000 non-CPU-intensive).
    #[serde(default)]
    pub non_cpu_intensive: bool,
    /// It holds a nearly runnable job, or one downloading.
    #[serde(default)]
    pub has_job: bool,
    /// Its REC priority, for the `rec` policy.
    #[serde(default)]
    pub rec_priority: Option<f64>,
}

/// The outcome of one work-fetch decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FetchDecision {
    /// The request to make, if any.
    pub request: Option<WorkRequest>,
    /// Why this request, or why none.
    pub reason: FetchReason,
    /// Per project (indexed by project id), what the decision saw.
    pub candidates: Vec<ProjectFetchInfo>,
}
