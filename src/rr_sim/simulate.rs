//! The entry points of the round-robin simulation, and the buffers a caller may keep
//! between simulations.

use super::allocation::Claim;
use super::gather::{Gathered, VersionFacts};
use super::output::{JobSim, ProjectSim, RrSimOutput};
use super::queue::Queue;
use super::simulation::{JobOrigin, NRESOURCES, SimJob, Simulation};
use crate::Time;
use crate::accounting::fair_share::TargetCache;
use crate::model::{ClientState, ProjectFacts};

/// Runs the simulation for the state at `now` (see the module documentation for the
/// model). `facts` are the [`ProjectFacts`] of the same state; they only size the
/// buffers. Completion times in the output are absolute; every job has an entry, and
/// those that took no part are left at `JobSim::default()`.
pub fn simulate(state: &ClientState, facts: &[ProjectFacts], now: Time) -> RrSimOutput {
    simulate_with_scratch(state, facts, now, &mut RrSimScratch::default())
}

/// [`simulate`] working in buffers kept from an earlier simulation: a caller that
/// simulates at every decision (the client's control loop) allocates them once instead
/// of once per decision. The result does not depend on what the scratch held.
pub fn simulate_with_scratch(
    state: &ClientState,
    facts: &[ProjectFacts],
    now: Time,
    scratch: &mut RrSimScratch,
) -> RrSimOutput {
    let mut simulation = Simulation::new(state, facts, scratch);
    simulation.run();
    let output = simulation.output(
        state,
        now,
        std::mem::take(&mut scratch.spare_jobs),
        std::mem::take(&mut scratch.spare_projects),
    );
    simulation.recycle(scratch);
    output
}

/// The buffers of one round-robin simulation, for [`simulate_with_scratch`]: empty
/// between simulations, with the capacity the last one needed.
#[derive(Debug, Default)]
pub struct RrSimScratch {
    pub(super) gathered: Vec<Gathered>,
    pub(super) sorted: Vec<u128>,
    pub(super) queue_counts: Vec<usize>,
    pub(super) fill: Vec<usize>,
    pub(super) versions: Vec<Option<VersionFacts>>,
    pub(super) project_included: Vec<bool>,
    pub(super) jobs: Vec<SimJob>,
    pub(super) origins: Vec<JobOrigin>,
    pub(super) finished_at_start: Vec<usize>,
    pub(super) queues: Vec<Queue>,
    pub(super) resource_queues: [Vec<u32>; NRESOURCES],
    pub(super) event_times: Vec<u64>,
    pub(super) event_queues: Vec<u32>,
    pub(super) dirty: Vec<u32>,
    pub(super) unsettled: Vec<Claim>,
    /// The projects' shares of the resources, recomputed only when they change.
    pub(super) target: TargetCache,
    /// The per-job and per-project tables of an output no longer needed, which the next
    /// one reuses (only they: the rest of an output is small, and copying it whole would
    /// cost more than it saves).
    pub(super) spare_jobs: Vec<JobSim>,
    pub(super) spare_projects: Vec<ProjectSim>,
}

impl RrSimScratch {
    /// Keeps the buffers of an output the caller is done with for the next simulation.
    pub fn recycle_output(&mut self, output: RrSimOutput) {
        self.spare_jobs = output.jobs;
        self.spare_projects = output.projects;
    }
}

/// A clone starts with empty buffers: what they hold between simulations means nothing.
impl Clone for RrSimScratch {
    fn clone(&self) -> Self {
        RrSimScratch::default()
    }
}
