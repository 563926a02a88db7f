//! Seed 001's work fetch for `--policy legacy`: min_results, ETTPRC (estimated time to
//! project result count), the urgency levels and the work request that brings each
//! project's queue to twice the connection period. CPU only, as the seed knew no GPUs.

use super::request::{FetchReason, ProjectFetchInfo, ResourceRequest, Urgency, WorkRequest};
use crate::model::{ClientState, Job, ResourceMap, ResourceType};
use serde::{Deserialize, Serialize};

/// Seed 001's figures for every project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LegacyWorkRequests {
    /// The overall urgency.
    pub urgency: Urgency,
    /// Per project (by id): ETTPRC(P, min_results(P) − 1), seconds; infinite for a
    /// project with no share (it never starves, it is never owed anything).
    pub time_to_starvation: Vec<f64>,
    /// Per project: the work request, CPU-seconds (0 when urgency is DONT_NEED_WORK).
    pub work_request: Vec<f64>,
}

/// Seed 001 "estimated_cpu_time": remaining flops / one CPU's flops. The workunit's
/// estimate stands in for the full duration estimate of `estimate.rs` (seed 001 knew
/// nothing better); a started job counts only the fraction left.
fn estimated_cpu_time(state: &ClientState, job: &Job) -> f64 {
    let flops = state.workunit(job.workunit).rsc_fpops_est;
    let flops = if flops.is_finite() { flops.max(0.0) } else { 0.0 };
    let done = job.task.as_ref().map_or(0.0, |t| t.fraction_done.clamp(0.0, 1.0));
    let p_fpops = if state.host.p_fpops > 0.0 { state.host.p_fpops } else { 1e9 };
    flops * (1.0 - done) / p_fpops
}

/// Computes seed 001's compute_work_request() for every project, with T = the low water
/// mark (work_buf_min). The result sets are the projects' nearly runnable CPU jobs
/// (seed 001 says runnable; counting jobs still downloading keeps a project from
/// fetching again while its new jobs download).
pub fn legacy_work_requests(state: &ClientState) -> LegacyWorkRequests {
    let n = state.projects.len();
    let mut queues: Vec<Vec<(f64, f64)>> = vec![Vec::new(); n];
    for id in state.job_ids() {
        let job = state.job(id);
        let Some(version) = job.app_version else { continue };
        if state.app_version(version).usage.main_resource() != ResourceType::Cpu
            || !state.job_nearly_runnable(id)
        {
            continue;
        }
        if let Some(queue) = queues.get_mut(job.project.index()) {
            queue.push((job.report_deadline, estimated_cpu_time(state, job)));
        }
    }
    let total_share = state.total_share(|_| true);
    let ncpus = f64::from(state.ncpus());
    let active_frac = state.time_stats.available_frac(ResourceType::Cpu);
    let t = state.prefs.work_buf_min();
    let mut urgency = Urgency::DontNeedWork;
    let mut time_to_starvation = vec![f64::INFINITY; n];
    let mut work_request = vec![0.0; n];
    for (index, queue) in queues.iter_mut().enumerate() {
        let share = state.projects[index].resource_share.max(0.0);
        if total_share <= 0.0 || share <= 0.0 {
            continue;
        }
        let share_fraction = share / total_share;
        let avg_proc_rate = share_fraction * ncpus * active_frac;
        let min_results = (ncpus * share_fraction).ceil() as usize;
        // ETTPRC(P, k): skip the k jobs with the latest deadlines (they are run last).
        queue.sort_by(|a, b| b.0.total_cmp(&a.0));
        let skip = min_results.saturating_sub(1);
        let ettprc: f64 = queue.iter().skip(skip).map(|&(_, cpu)| cpu / avg_proc_rate).sum();
        time_to_starvation[index] = ettprc;
        if ettprc < t {
            urgency = urgency.max(if ettprc == 0.0 {
                Urgency::NeedWorkImmediately
            } else {
                Urgency::NeedWork
            });
            work_request[index] = ((2.0 * t - ettprc) * avg_proc_rate).max(0.0);
        }
    }
    if urgency == Urgency::DontNeedWork {
        work_request.iter_mut().for_each(|w| *w = 0.0);
    }
    LegacyWorkRequests { urgency, time_to_starvation, work_request }
}

/// Seed 001's choice: the project that may be asked with the largest work request.
pub(crate) fn choose_legacy(
    cpu_usable: bool,
    legacy: Option<&LegacyWorkRequests>,
    candidates: &mut [ProjectFetchInfo],
) -> (Option<WorkRequest>, FetchReason) {
    let Some(legacy) = legacy.filter(|_| cpu_usable) else {
        return (None, FetchReason::BufferFull);
    };
    if legacy.urgency == Urgency::DontNeedWork {
        return (None, FetchReason::BufferFull);
    }
    let mut best: Option<(f64, usize)> = None;
    for info in candidates.iter_mut() {
        let cpu = ResourceType::Cpu;
        if !info.askable
            || info.backed_off[cpu]
            || info.job_cap_reached[cpu]
            || !info.may_supply[cpu]
        {
            continue;
        }
        let request = legacy.work_request.get(info.project.index()).copied().unwrap_or(0.0);
        info.score[cpu] = Some(request);
        if request > 0.0 && best.is_none_or(|(b, _)| request > b) {
            best = Some((request, info.project.index()));
        }
    }
    match best {
        Some((seconds, index)) => {
            let mut resources = ResourceMap::<ResourceRequest>::default();
            resources[ResourceType::Cpu] =
                ResourceRequest { req_seconds: seconds, req_ninstances: 0.0 };
            let request = WorkRequest {
                project: candidates[index].project,
                resources,
                work_req_seconds: seconds,
            };
            (Some(request), FetchReason::Legacy(legacy.urgency))
        }
        None => (None, FetchReason::NoFetchableProject(ResourceType::Cpu)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        ActiveTask, AppId, AppVersion, AppVersionId, Project, ProjectId, ResourceUsage, Workunit,
        WorkunitId,
    };

    /// Adds a CPU job of `cpu_seconds` (on a 1 GFLOPS CPU) with a deadline.
    fn add_job(state: &mut ClientState, project: u32, cpu_seconds: f64, deadline: f64) {
        let wu = WorkunitId::from_index(state.workunits.len());
        state.workunits.push(Workunit {
            project: ProjectId(project),
            name: format!("wu{}", wu.0),
            app: AppId(0),
            rsc_fpops_est: cpu_seconds * 1e9,
            rsc_fpops_bound: cpu_seconds * 1e10,
            rsc_memory_bound: 0.0,
            rsc_disk_bound: 0.0,
            command_line: String::new(),
            input_files: Vec::new(),
        });
        let name = format!("job{}", wu.0);
        let version = AppVersionId(project);
        state.jobs.push(Job::downloaded(ProjectId(project), name, wu, version, 0.0, deadline));
    }

    fn state(ncpus: u32, shares: &[f64]) -> ClientState {
        let mut state = ClientState::default();
        state.host.p_ncpus = ncpus;
        state.host.p_fpops = 1e9;
        for (i, &share) in shares.iter().enumerate() {
            let id = ProjectId::from_index(i);
            state.projects.push(Project::new(format!("p{i}"), format!("http://p{i}/"), share));
            let usage = ResourceUsage { avg_ncpus: 1.0, coprocessor: None };
            state.app_versions.push(AppVersion::new(id, AppId(0), 1, "", usage, 1e9));
        }
        state
    }

    /// Seed 001 worked through: 2 CPUs, equal shares, T = 0.1 day = 8640 s, so each
    /// project processes at 1 CPU-second per second and needs min_results = 1.
    #[test]
    fn ettprc_example() {
        let mut state = state(2, &[1.0, 1.0]);
        add_job(&mut state, 0, 3600.0, 5e4);
        add_job(&mut state, 0, 1800.0, 9e4);
        let legacy = legacy_work_requests(&state);
        let t = 8640.0;
        // P0: ETTPRC(P0, 0) = 5400 < T: NEED_WORK, asks (2T − 5400) × 1.
        assert_eq!(legacy.time_to_starvation[0], 5400.0);
        assert_eq!(legacy.work_request[0], 2.0 * t - 5400.0);
        // P1 has nothing: starved now.
        assert_eq!(legacy.time_to_starvation[1], 0.0);
        assert_eq!(legacy.work_request[1], 2.0 * t);
        assert_eq!(legacy.urgency, Urgency::NeedWorkImmediately);

        // P1 gets a long job: nobody starves within T and nobody asks.
        add_job(&mut state, 1, 20_000.0, 9e4);
        add_job(&mut state, 0, 20_000.0, 9e4);
        let legacy = legacy_work_requests(&state);
        assert_eq!(legacy.urgency, Urgency::DontNeedWork);
        assert_eq!(legacy.work_request, vec![0.0, 0.0]);
    }

    /// With 4 CPUs and equal shares each project needs 2 jobs, so ETTPRC skips the job
    /// with the latest deadline; a half-done job counts half.
    #[test]
    fn ettprc_skips_latest_deadlines_and_counts_progress() {
        let mut state = state(4, &[1.0, 1.0]);
        add_job(&mut state, 0, 4000.0, 1e4);
        add_job(&mut state, 0, 1e6, 1e5);
        add_job(&mut state, 0, 2000.0, 2e4);
        let mut task = ActiveTask::new(0);
        task.fraction_done = 0.5;
        state.jobs[2].task = Some(task);
        let legacy = legacy_work_requests(&state);
        // avg_proc_rate = 0.5 × 4 = 2; (4000 + 1000) / 2 = 2500.
        assert_eq!(legacy.time_to_starvation[0], 2500.0);
        assert_eq!(legacy.urgency, Urgency::NeedWorkImmediately);
        assert_eq!(legacy.work_request[0], (2.0 * 8640.0 - 2500.0) * 2.0);
    }

    #[test]
    fn zero_share_project_never_starves() {
        let state = state(1, &[0.0, 1.0]);
        let legacy = legacy_work_requests(&state);
        assert_eq!(legacy.time_to_starvation[0], f64::INFINITY);
        assert_eq!(legacy.work_request[0], 0.0);
        assert!(legacy.work_request[1] > 0.0);
    }
}
