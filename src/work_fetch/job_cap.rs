//! The failsafe cap on queued jobs: however wrong a project's estimates are (a flops
//! estimate a hundred million times too small makes every job look instant), a project
//! is not asked for a resource's work while it holds this many nearly runnable jobs for
//! it. BOINC's client keeps a cap for the same reason; without one the client fetches a
//! reply's worth of jobs a minute for ever, and its memory and every decision grow with
//! them. The cap grows with the resource's instances, so that a host with many CPUs and
//! short jobs is not held back, up to [`MAX_RUNNABLE_JOBS`].

use crate::model::{ClientState, ProjectFacts, ResourceMap};

/// The most nearly runnable jobs per project and resource before the project is no
/// longer asked for that resource's work, on any host.
pub const MAX_RUNNABLE_JOBS: usize = 1000;

/// Nearly runnable jobs per instance the cap allows below [`MAX_RUNNABLE_JOBS`]: a
/// queue of a hundred jobs for each instance is far beyond any work buffer of real jobs.
pub const RUNNABLE_JOBS_PER_INSTANCE: usize = 100;

/// The cap for one resource of `state`'s host (at least [`RUNNABLE_JOBS_PER_INSTANCE`]).
pub fn runnable_job_cap(state: &ClientState, resource: crate::model::ResourceType) -> usize {
    let instances = state.instances(resource).max(1) as usize;
    (RUNNABLE_JOBS_PER_INSTANCE * instances).min(MAX_RUNNABLE_JOBS)
}

/// [`runnable_job_cap`] of every resource.
pub(crate) fn job_caps(state: &ClientState) -> ResourceMap<usize> {
    ResourceMap::from_fn(|r| runnable_job_cap(state, r))
}

/// Per resource, whether the project (its `facts`) holds as many jobs as the cap
/// allows; `caps` are [`job_caps`], looked up once for many projects.
pub(crate) fn job_cap_reached_with(
    caps: &ResourceMap<usize>,
    facts: Option<&ProjectFacts>,
) -> ResourceMap<bool> {
    ResourceMap::from_fn(|r| facts.is_some_and(|f| f.nearly_runnable[r] as usize >= caps[r]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ResourceType;

    #[test]
    fn the_cap_is_per_resource_and_grows_with_the_instances() {
        let mut state = ClientState::default();
        state.host.p_ncpus = 4;
        assert_eq!(runnable_job_cap(&state, ResourceType::Cpu), 400);
        // A GPU type the host lacks still has the floor.
        assert_eq!(runnable_job_cap(&state, ResourceType::Nvidia), 100);
        let mut facts = ProjectFacts::default();
        facts.nearly_runnable[ResourceType::Cpu] = 400;
        facts.nearly_runnable[ResourceType::Nvidia] = 99;
        let reached = job_cap_reached_with(&job_caps(&state), Some(&facts));
        assert!(reached[ResourceType::Cpu]);
        assert!(!reached[ResourceType::Nvidia]);
        assert!(!job_cap_reached_with(&job_caps(&state), None)[ResourceType::Cpu]);
        state.host.p_ncpus = 64;
        assert_eq!(runnable_job_cap(&state, ResourceType::Cpu), MAX_RUNNABLE_JOBS);
    }
}
