//! Weighted round-robin simulation (seed 000 "Round-robin simulation", seed 003 "RR
//! simulation", 6.4 notes 6): simulates running the nearly-runnable jobs with each
//! project getting its resource share of each processing resource, and reports which
//! jobs would miss their deadlines, the shortfall per resource and per project over the
//! work-buffer horizon, the idle instances now, and how long each resource stays busy.

use crate::Time;
use crate::model::{ClientState, ProjectFacts, ResourceMap};
use serde::Serialize;

/// What the simulation says about one job.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct JobSim {
    /// The job took part in the simulation (it is nearly runnable).
    pub simulated: bool,
    /// When the simulation finishes it (absolute time; infinite if it never progresses).
    pub projected_completion: Time,
    /// seed 000 deadline_missed(R): the projected completion is after the deadline.
    pub deadline_missed: bool,
}

/// What the simulation says about one processing resource.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ResourceSim {
    /// Instances the client may use.
    pub instances: f64,
    /// Idle instance-seconds over the work-buffer horizon (seed 003 `shortfall`), counting
    /// CPUs held by coprocessor jobs as busy (6.4 note 6).
    pub shortfall: f64,
    /// Instances idle right after the initial job assignment (seed 003 `nidle`).
    pub nidle: f64,
    /// Seconds from now until the first instance becomes idle (the resource stays
    /// saturated until then); the horizon or more when it never idles within it.
    pub saturated_time: f64,
    /// Jobs of this resource that would miss their deadlines.
    pub deadlines_missed: u32,
}

/// What the simulation says about one project.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ProjectSim {
    /// seed 000 deadlines_missed(P), per resource.
    pub deadlines_missed: ResourceMap<u32>,
    /// seed 003 per-project shortfall, instance-seconds over the horizon, per resource.
    pub shortfall: ResourceMap<f64>,
    /// Instances of each resource the project's share entitles it to (seed 003 `share`).
    pub share: ResourceMap<f64>,
}

impl ProjectSim {
    /// Deadline misses over all resources.
    pub fn total_deadlines_missed(&self) -> u32 {
        self.deadlines_missed.0.iter().sum()
    }
}

/// The complete result of one round-robin simulation.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct RrSimOutput {
    /// Per job, indexed by job id (every job has an entry).
    pub jobs: Vec<JobSim>,
    /// Per processing resource.
    pub resources: ResourceMap<ResourceSim>,
    /// Per project, indexed by project id.
    pub projects: Vec<ProjectSim>,
    /// The horizon the shortfalls are measured over, seconds (the high water mark).
    pub horizon: f64,
}

/// Runs the simulation for the state at `now`.
pub fn simulate(state: &ClientState, facts: &[ProjectFacts], now: Time) -> RrSimOutput {
    let _ = (state, facts, now);
    todo!("rr_sim implementation")
}
