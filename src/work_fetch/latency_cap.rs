//! How much work a project should be asked for at most: what its fair share of a
//! resource can finish within the time the project gives its jobs (its latency, seen on
//! its jobs as deadline − receipt).
//!
//! Seed 000's work fetch and seed 003's per-resource requests size a request by the
//! shortfall alone, and the project's server then sends as much as would meet the
//! deadlines if the whole host worked for it. For a project with short deadlines
//! (seed 000's scenario 1: 6-minute jobs due in an hour) that queue can be met only in
//! EDF mode, starving the other projects and missing deadlines at the slightest
//! disturbance. Capping the request at `share × latency` keeps such a project within
//! its share without ever running in EDF.

use crate::estimate::remaining_duration;
use crate::model::{ClientState, JobId, ProjectFacts, ProjectId, ResourceMap};
use crate::rr_sim::RrSimOutput;

/// Only this fraction of a project's latency is booked: the rest is slack for what the
/// estimates don't see (jobs longer than estimated, the scheduling period's rotation,
/// the time to report), so that a queue sized to the cap meets its deadlines without EDF.
pub(crate) const LATENCY_BOOKING: f64 = 0.5;

/// Per resource, the most instance-seconds worth asking `project` for: its fair-share
/// instances × [`LATENCY_BOOKING`] × its latency × the resource's availability, less
/// the work it already has queued there. Infinite where the latency or the share is not
/// known. `rr` is the round-robin simulation of this same `state`: the queued work is
/// read from its remaining durations.
pub(crate) fn latency_caps(
    state: &ClientState,
    facts: &[ProjectFacts],
    rr: &RrSimOutput,
    project: ProjectId,
) -> ResourceMap<f64> {
    let Some(latency) = facts.get(project.index()).map(|f| f.min_latency) else {
        return ResourceMap::from_fn(|_| f64::INFINITY);
    };
    let share = rr.projects.get(project.index()).map(|p| p.share).unwrap_or_default();
    let known = ResourceMap::from_fn(|r| latency[r].is_some() && share[r] > 0.0);
    if !known.0.iter().any(|&k| k) {
        return ResourceMap::from_fn(|_| f64::INFINITY);
    }
    let mut queued: ResourceMap<f64> = ResourceMap::default();
    for (index, job) in state.jobs.iter().enumerate() {
        if job.project != project {
            continue;
        }
        // A job the simulation took part in is nearly runnable, and the simulation
        // already estimated it: reuse that rather than estimating every queued job of
        // the project again on each call.
        let simulated = rr.jobs.get(index).filter(|sim| sim.simulated);
        let id = JobId::from_index(index);
        if simulated.is_none() && !state.job_nearly_runnable(id) {
            continue;
        }
        let Some(av) = job.app_version else { continue };
        let usage = state.app_version(av).usage;
        let resource = usage.main_resource();
        if known[resource] {
            let remaining = simulated
                .map_or_else(|| remaining_duration(state, id), |sim| sim.remaining_duration);
            queued[resource] += remaining * usage.main_usage();
        }
    }
    ResourceMap::from_fn(|r| match latency[r] {
        Some(latency) if known[r] => {
            let capacity =
                share[r] * LATENCY_BOOKING * latency * state.time_stats.available_frac(r);
            (capacity - queued[r]).max(0.0)
        }
        _ => f64::INFINITY,
    })
}
