//! What the round-robin simulation reports: per job, per resource and per project (the
//! module documentation of [`crate::rr_sim`] says what each figure means).

use super::simulation::{EPSILON, NRESOURCES, Simulation, queue_project, queue_resource};
use crate::Time;
use crate::model::{ClientState, ResourceMap, ResourceType};
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
    /// Processing seconds the job still needs (the estimate the simulation started
    /// from), so that callers need not estimate it again.
    pub remaining_duration: f64,
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

impl Simulation {
    /// The simulation's findings, with job completions as absolute times, in the
    /// per-job and per-project tables of an earlier output (any contents are replaced).
    pub(super) fn output(
        &self,
        state: &ClientState,
        now: Time,
        mut jobs: Vec<JobSim>,
        mut projects: Vec<ProjectSim>,
    ) -> RrSimOutput {
        jobs.clear();
        jobs.resize(self.job_count, JobSim::default());
        projects.clear();
        projects.resize(state.projects.len(), ProjectSim::default());
        // The output is built only at the end, from its parts, so that it is written
        // once where it goes rather than copied there.
        let mut resources: ResourceMap<ResourceSim> = ResourceMap::default();
        for &j in &self.finished_at_start {
            let deadline = state.jobs[j].report_deadline;
            jobs[j] = JobSim {
                simulated: true,
                projected_completion: now,
                deadline_missed: now > deadline,
                remaining_duration: 0.0,
            };
        }
        // A job finishing just before its deadline on a host that is often off or offline
        // is likely to be reported late: it counts as missing once it would finish within
        // the margin a down spell rarely outlasts.
        let report_wait = state.time_stats.late_report_margin();
        for (job, origin) in self.jobs.iter().zip(&self.origins) {
            let projected_completion = if job.done { now + job.work } else { f64::INFINITY };
            let deadline_missed = !job.done || projected_completion > origin.deadline - report_wait;
            jobs[origin.job.index()] = JobSim {
                simulated: true,
                projected_completion,
                deadline_missed,
                remaining_duration: origin.initial_remaining,
            };
            if deadline_missed {
                let q = job.queue as usize;
                let resource = ResourceType::ALL[queue_resource(q)];
                resources[resource].deadlines_missed += 1;
                projects[queue_project(q)].deadlines_missed[resource] += 1;
            }
        }
        for (r, resource) in ResourceType::ALL.into_iter().enumerate() {
            let sim = &self.resources[r];
            let saturated_time = if sim.instances <= 0.0 {
                0.0
            } else {
                sim.saturated.unwrap_or(self.horizon).min(self.horizon)
            };
            let out_resource = &mut resources[resource];
            out_resource.instances = sim.instances;
            out_resource.shortfall = sim.shortfall;
            let nidle = (sim.instances - sim.initial_used).clamp(0.0, sim.instances);
            out_resource.nidle = if nidle > EPSILON { nidle } else { 0.0 };
            out_resource.saturated_time = saturated_time;
        }
        for (project, queues) in projects.iter_mut().zip(self.queues.chunks_exact(NRESOURCES)) {
            for (queue, resource) in queues.iter().zip(ResourceType::ALL) {
                project.shortfall[resource] = queue.shortfall;
                project.share[resource] = queue.share;
            }
        }
        RrSimOutput { jobs, resources, projects, horizon: self.horizon }
    }
}
