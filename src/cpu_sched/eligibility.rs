//! Which jobs the scheduler and enforcement may give processors to at all (seed 000
//! "Result states": runnable), with the user's run modes and the host's usable GPUs.

use crate::model::{ClientState, Job, JobId, ResourceUsage, RunMode};

/// What the job occupies while it runs; `None` for a job without a known app version.
pub(crate) fn job_usage(state: &ClientState, id: JobId) -> Option<&ResourceUsage> {
    let version = state.job(id).app_version?;
    state.app_versions.get(version.index()).map(|v| &v.usage)
}

/// Whether the job may hold processors now: it is runnable (seed 000), computing is not
/// suspended by the run mode, and a GPU job's GPU type is usable and not suspended by
/// the GPU mode.
pub(crate) fn job_may_run(state: &ClientState, id: JobId) -> bool {
    may_run(state, state.job(id))
}

/// [`job_may_run`] of a job record at hand.
pub(crate) fn may_run(state: &ClientState, job: &Job) -> bool {
    if state.run_mode == RunMode::Never || !state.job_is_runnable(job) {
        return false;
    }
    let Some(version) = job.app_version.and_then(|v| state.app_versions.get(v.index())) else {
        return false;
    };
    let resource = version.usage.main_resource();
    !resource.is_gpu() || (state.gpu_mode != RunMode::Never && state.instances(resource) > 0)
}

/// Whether the job belongs to a non-CPU-intensive project or app: such jobs always run
/// and don't count against the processors. The app is taken from the job's app version
/// (the workunit's app), which the caller has at hand already.
pub(crate) fn job_is_non_cpu_intensive(state: &ClientState, id: JobId) -> bool {
    let job = state.job(id);
    state.project(job.project).non_cpu_intensive
        || job
            .app_version
            .and_then(|v| state.app_versions.get(v.index()))
            .and_then(|v| state.apps.get(v.app.index()))
            .is_some_and(|a| a.non_cpu_intensive)
}
