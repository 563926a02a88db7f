//! Topping up the buffers of intermittently reachable projects: an addition to seed
//! 002's low and high water marks ("Work fetch": fetch when a resource falls below
//! `work_buf_min`, then fill it to `work_buf_min + work_buf_additional`).
//!
//! The hysteresis between the two marks saves RPCs, and costs nothing when a project
//! can be reached at any time: it is asked again once the low mark is crossed. A
//! project whose server was down recently is different. When it goes down again, the
//! work the client holds is all its instances will get until the client reaches it
//! again, and the hysteresis means that holding sits anywhere between the two marks.
//! For such a project the client asks again while it can be reached, as soon as the
//! resource has fallen a small step below the high mark, so that an outage finds the
//! buffer nearly full. The step scales with the buffer and the number of instances, so
//! a host with many CPUs and short jobs does not call the server for every job.
//!
//! A host that is itself often off or offline is the same for every project: each
//! spell out of reach ends the fetching until the next one, so all its projects are
//! topped up while it can reach them.

use crate::Time;
use crate::model::{ClientState, Project, ResourceType, SECONDS_PER_DAY};

/// A failed scheduler RPC (or master-page fetch) this recent marks a project as
/// intermittently reachable: long enough to cover a week-day/weekend rhythm of
/// outages, short enough that one bad evening does not change the client's habits
/// for good.
pub const INTERMITTENT_MEMORY: f64 = 3.0 * SECONDS_PER_DAY;

/// The top-up step as a fraction of `work_buf_additional`: a resource is topped up
/// once this much of the span between the two water marks is free, per instance.
pub const TOP_UP_FRACTION: f64 = 0.1;

/// Whether `project` failed a scheduler RPC or master-page fetch within
/// [`INTERMITTENT_MEMORY`] before `now`.
pub fn intermittent(project: &Project, now: Time) -> bool {
    project.last_rpc_failure.is_some_and(|failed| now - failed <= INTERMITTENT_MEMORY)
}

/// Whether the host itself is out of reach often enough that a job may well be reported
/// late ([`crate::model::TimeStats::late_report_margin`] is not zero): its spells off or
/// offline then cut every project off in turn.
pub fn host_intermittent(state: &ClientState) -> bool {
    state.time_stats.late_report_margin() > 0.0
}

/// The shortfall (instance-seconds) from which an intermittent project is asked to top
/// up `resource`; infinite when the preferences leave no span between the water marks
/// (the low mark is then also the high one, and seed 002's rule already fetches there).
pub fn top_up_threshold(state: &ClientState, resource: ResourceType) -> f64 {
    let span = state.prefs.work_buf_total() - state.prefs.work_buf_min();
    if span <= 0.0 {
        return f64::INFINITY;
    }
    TOP_UP_FRACTION * span * f64::from(state.instances(resource).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_remembered_for_the_memory_and_no_longer() {
        let mut project = Project::new("g", "http://g/", 100.0);
        assert!(!intermittent(&project, 1000.0));
        project.last_rpc_failure = Some(1000.0);
        assert!(intermittent(&project, 1000.0));
        assert!(intermittent(&project, 1000.0 + INTERMITTENT_MEMORY));
        assert!(!intermittent(&project, 1000.0 + INTERMITTENT_MEMORY + 1.0));
    }

    #[test]
    fn the_step_scales_with_the_span_and_the_instances() {
        let mut state = ClientState::default();
        state.host.p_ncpus = 8;
        state.prefs.work_buf_min_days = 0.1;
        state.prefs.work_buf_additional_days = 0.25;
        let step = top_up_threshold(&state, ResourceType::Cpu);
        assert!((step - 0.1 * 0.25 * SECONDS_PER_DAY * 8.0).abs() < 1e-6);
        state.prefs.work_buf_additional_days = 0.0;
        assert_eq!(top_up_threshold(&state, ResourceType::Cpu), f64::INFINITY);
    }
}
