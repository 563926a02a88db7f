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
use crate::model::{ClientState, JobId, ProjectFacts, ProjectId, ResourceMap, ResourceType};
use crate::rr_sim::RrSimOutput;

/// Only this fraction of a project's latency is booked: the rest is slack for what the
/// estimates don't see (jobs longer than estimated, the scheduling period's rotation,
/// the time to report), so that a queue sized to the cap meets its deadlines without EDF.
pub(crate) const LATENCY_BOOKING: f64 = 0.5;

/// What a project may hold of one resource under the latency cap, and what it holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LatencyBooking {
    /// Instance-seconds its fair share can finish within [`LATENCY_BOOKING`] of its
    /// latency (infinite where the latency or the share is not known).
    pub capacity: f64,
    /// Instance-seconds of its nearly runnable jobs queued there.
    pub queued: f64,
    /// The capacity comes from the project's latency; otherwise (it has no job there to
    /// learn it from) it is a first request's worth (see [`latency_bookings`]).
    pub from_latency: bool,
}

impl LatencyBooking {
    /// The most instance-seconds worth asking for now.
    pub(crate) fn room(&self) -> f64 {
        if self.capacity.is_finite() {
            (self.capacity - self.queued).max(0.0)
        } else {
            f64::INFINITY
        }
    }

    /// Whether the cap keeps the project from holding its fair part of a full buffer
    /// (`share × buffer`, instance-seconds): it then runs dry between fetches made at
    /// the resource's low water mark, unless it is asked again as its own queue drains.
    pub(crate) fn binds(&self, share: f64, buffer: f64) -> bool {
        self.from_latency
            && self.capacity.is_finite()
            && share > 0.0
            && self.capacity < share * buffer
    }
}

/// Per resource, the most instance-seconds worth asking `project` for: its fair-share
/// instances (all of the resource's where its target there is none) ×
/// [`LATENCY_BOOKING`] × its latency × the resource's availability, less the work it
/// already has queued there. Infinite where the latency is not known. `rr` is the round-robin simulation of this same `state`: the queued work is
/// read from its remaining durations.
pub(crate) fn latency_caps(
    state: &ClientState,
    facts: &[ProjectFacts],
    rr: &RrSimOutput,
    project: ProjectId,
) -> ResourceMap<f64> {
    latency_bookings(state, facts, rr, project).map(|_, b| b.room())
}

/// Per resource, what `project` may hold under the latency cap and what it holds (see
/// [`latency_caps`]). Where the project has no unreported job on a resource, its latency
/// there is unknown: it is asked for at most its share of the low-water buffer, enough
/// to learn how soon it wants its jobs back. Asking a project with one-hour deadlines for
/// a whole buffer because none of its jobs is on hand would fill the queue with work
/// that can only miss.
pub(crate) fn latency_bookings(
    state: &ClientState,
    facts: &[ProjectFacts],
    rr: &RrSimOutput,
    project: ProjectId,
) -> ResourceMap<LatencyBooking> {
    let unknown = LatencyBooking { capacity: f64::INFINITY, queued: 0.0, from_latency: false };
    let Some(latency) = facts.get(project.index()).map(|f| f.min_latency) else {
        return ResourceMap::from_fn(|_| unknown);
    };
    // A project the fair-share target gives none of a resource is asked for it only
    // when the resource needs work no one else supplies: what it can finish in time
    // there is what the whole resource can.
    let target = rr.projects.get(project.index()).map(|p| p.share).unwrap_or_default();
    let share = ResourceMap::from_fn(|r| {
        if target[r] > 0.0 { target[r] } else { f64::from(state.instances(r)) }
    });
    let known = ResourceMap::from_fn(|r| latency[r].is_some() && share[r] > 0.0);
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
    let available = |r: ResourceType| state.time_stats.available_frac(r);
    ResourceMap::from_fn(|r| match latency[r] {
        Some(latency) if known[r] => LatencyBooking {
            capacity: share[r] * LATENCY_BOOKING * latency * available(r),
            queued: queued[r],
            from_latency: true,
        },
        None if share[r] > 0.0 && target[r] > 0.0 => LatencyBooking {
            capacity: share[r] * state.prefs.work_buf_min() * available(r),
            queued: 0.0,
            from_latency: false,
        },
        _ => unknown,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ProjectFacts;
    use crate::rr_sim::test_support::{HOUR, StateBuilder, cpu_usage};

    /// Two CPUs, two equal projects: `short` with jobs due in `latency` hours, `long`
    /// with a day's latency.
    fn two_projects(short_jobs: usize, latency: f64) -> (StateBuilder, ProjectId, ProjectId) {
        let mut b = StateBuilder::new(2);
        b.horizon_hours(10.0);
        let short = b.project("short", 1.0);
        let long = b.project("long", 1.0);
        let short_app = b.app_version(short, cpu_usage(1.0), 1e9);
        let long_app = b.app_version(long, cpu_usage(1.0), 1e9);
        for _ in 0..short_jobs {
            b.job(short, short_app, 0.5 * HOUR, latency * HOUR);
        }
        b.job(long, long_app, 5.0 * HOUR, 24.0 * HOUR);
        (b, short, long)
    }

    fn bookings(b: &StateBuilder, project: ProjectId) -> ResourceMap<LatencyBooking> {
        let facts = ProjectFacts::gather(&b.state);
        let rr = b.simulate();
        latency_bookings(&b.state, &facts, &rr, project)
    }

    #[test]
    fn the_cap_is_what_the_share_finishes_in_half_the_latency() {
        // Two jobs of half an hour due in 4 hours, one CPU's share: 2 CPU-hours may be
        // held, one is.
        let (b, short, _) = two_projects(2, 4.0);
        let booking = bookings(&b, short)[ResourceType::Cpu];
        assert!(booking.from_latency);
        // Jobs are received one second apart, so the shortest latency is a second short.
        let latency = 4.0 * HOUR - 1.0;
        assert!((booking.capacity - 1.0 * LATENCY_BOOKING * latency).abs() < 1e-6);
        assert!((booking.queued - 1.0 * HOUR).abs() < 1e-6);
        assert!((booking.room() - (LATENCY_BOOKING * latency - 1.0 * HOUR)).abs() < 1e-6);
        // It cannot hold its share of a full 10-hour buffer: the cap binds.
        assert!(booking.binds(1.0, 10.0 * HOUR));
        assert!(!booking.binds(1.0, 1.0 * HOUR));
    }

    #[test]
    fn without_a_job_to_learn_the_latency_from_a_first_request_is_small() {
        let (b, short, _) = two_projects(0, 4.0);
        let booking = bookings(&b, short)[ResourceType::Cpu];
        assert!(!booking.from_latency);
        assert_eq!(booking.queued, 0.0);
        let first = 1.0 * b.state.prefs.work_buf_min();
        assert!((booking.capacity - first).abs() < 1e-6, "{booking:?}");
        // Nothing is known to bind it: it is not a reason to top up.
        assert!(!booking.binds(1.0, 10.0 * HOUR));
    }

    #[test]
    fn a_project_the_target_gives_nothing_is_capped_by_the_whole_resource() {
        let (mut b, short, long) = two_projects(2, 4.0);
        b.state.projects[long.index()].resource_share = 0.0;
        // "long" has no share: the target gives all of the CPUs to "short".
        let facts = ProjectFacts::gather(&b.state);
        let rr = b.simulate();
        assert_eq!(rr.projects[long.index()].share[ResourceType::Cpu], 0.0);
        let booking = latency_bookings(&b.state, &facts, &rr, long)[ResourceType::Cpu];
        let latency = 24.0 * HOUR - 2.0;
        assert!((booking.capacity - 2.0 * LATENCY_BOOKING * latency).abs() < 1e-6, "{booking:?}");
        assert!(rr.projects[short.index()].share[ResourceType::Cpu] > 1.99);
    }
}
