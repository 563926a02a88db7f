//! A straightforward re-statement of the model in the module documentation, to check
//! the event-driven simulation against: at every completion it recomputes every
//! allocation, active set and rate from scratch and moves every job on, O(jobs) per
//! step and O(jobs²) in all, fine for a few dozen jobs.

use super::gather::{job_usage, sane_weight};
use super::output::{JobSim, ProjectSim, RrSimOutput};
use super::simulation::{EPSILON, NRESOURCES};
use crate::Time;
use crate::accounting::fair_share::TargetAllocation;
use crate::estimate::remaining_duration;
use crate::model::{ClientState, JobId, ProjectId, ResourceMap, ResourceType};

struct RefJob {
    index: usize,
    project: usize,
    resource: usize,
    usage: f64,
    cpu: f64,
    remaining: f64,
    completed: Option<f64>,
}

/// Splits `capacity` among `(weight, demand)` pairs (see the module documentation).
fn water_fill(capacity: f64, claims: &[(f64, f64)]) -> Vec<f64> {
    let mut alloc = vec![0.0; claims.len()];
    let mut open: Vec<usize> = (0..claims.len()).filter(|&i| claims[i].1 > EPSILON).collect();
    let mut left = capacity;
    while !open.is_empty() && left > EPSILON {
        let total: f64 = open.iter().map(|&i| claims[i].0).sum();
        let fair = |i: usize| {
            if total <= 0.0 { left / open.len() as f64 } else { left * claims[i].0 / total }
        };
        let settled: Vec<usize> =
            open.iter().copied().filter(|&i| claims[i].1 <= fair(i) + EPSILON).collect();
        if settled.is_empty() {
            for &i in &open {
                alloc[i] = fair(i);
            }
            break;
        }
        for &i in &settled {
            alloc[i] = claims[i].1;
            left -= claims[i].1;
        }
        left = left.max(0.0);
        open.retain(|i| !settled.contains(i));
    }
    alloc
}

pub(super) fn simulate(state: &ClientState, now: Time) -> RrSimOutput {
    let horizon = state.prefs.work_buf_total().max(0.0);
    let nprojects = state.projects.len();
    let instances: Vec<f64> =
        ResourceType::ALL.iter().map(|&r| f64::from(state.instances(r))).collect();
    let availability: Vec<f64> =
        ResourceType::ALL.iter().map(|&r| state.time_stats.available_frac(r)).collect();
    let mut out = RrSimOutput {
        jobs: vec![JobSim::default(); state.jobs.len()],
        resources: ResourceMap::default(),
        projects: vec![ProjectSim::default(); nprojects],
        horizon,
    };
    let mut jobs = Vec::new();
    for id in state.job_ids() {
        let job = state.job(id);
        let Some(av) = job.app_version.map(|v| state.app_version(v)) else { continue };
        if !state.job_nearly_runnable(id)
            || state.project(job.project).non_cpu_intensive
            || state.app(av.app).non_cpu_intensive
        {
            continue;
        }
        let remaining = remaining_duration(state, id);
        if remaining <= 0.0 {
            out.jobs[id.index()] = JobSim {
                simulated: true,
                projected_completion: now,
                deadline_missed: now > job.report_deadline,
                remaining_duration: 0.0,
            };
            continue;
        }
        let resource = av.usage.main_resource();
        let cpu = if resource.is_gpu() { av.usage.avg_ncpus.max(0.0) } else { 0.0 };
        jobs.push(RefJob {
            index: id.index(),
            project: job.project.index(),
            resource: resource.index(),
            usage: job_usage(av.usage.main_usage(), instances[resource.index()]),
            cpu,
            remaining,
            completed: None,
        });
    }
    // Each queue in its order: running first, earliest deadline, first received.
    let key = |j: &RefJob| {
        let job = &state.jobs[j.index];
        (!job.is_running(), job.report_deadline, job.received_time, j.index)
    };
    jobs.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        (ka.0.cmp(&kb.0))
            .then(ka.1.total_cmp(&kb.1))
            .then(ka.2.total_cmp(&kb.2))
            .then(ka.3.cmp(&kb.3))
    });
    let has_jobs = |p: usize, r: usize| jobs.iter().any(|j| j.project == p && j.resource == r);
    let target = TargetAllocation::for_state(state, |p, r| {
        let project = state.project(p);
        let prsc = &project.resources[r];
        !project.suspended
            && !project.dont_request_more_work
            && !project.non_cpu_intensive
            && !prsc.no_apps
            && (prsc.has_app_version || has_jobs(p.index(), r.index()))
    });
    let share =
        |p: usize, r: usize| target.instances(ProjectId::from_index(p), ResourceType::ALL[r]);

    let mut t = 0.0;
    let mut saturated: [Option<f64>; NRESOURCES] = [None; NRESOURCES];
    let mut first = true;
    loop {
        // Allocations, GPUs first: their jobs' CPUs come off the CPU.
        let mut alloc = vec![[0.0; NRESOURCES]; nprojects];
        let mut rate = vec![[0.0; NRESOURCES]; nprojects];
        let mut active = vec![false; jobs.len()];
        let mut held_cpus = vec![0.0; nprojects];
        let mut used = [0.0; NRESOURCES];
        for r in [1, 2, 3, 0] {
            let capacity = if r == 0 {
                (instances[0] - held_cpus.iter().sum::<f64>()).max(0.0)
            } else {
                instances[r]
            };
            let claims: Vec<(f64, f64)> = (0..nprojects)
                .map(|p| {
                    let demand: f64 = jobs
                        .iter()
                        .filter(|j| j.completed.is_none() && j.project == p && j.resource == r)
                        .map(|j| j.usage)
                        .sum();
                    (sane_weight(state.projects[p].resource_share), demand.min(capacity))
                })
                .collect();
            let shares = water_fill(capacity, &claims);
            for p in 0..nprojects {
                alloc[p][r] = shares[p];
                let (mut usage, mut cpu) = (0.0, 0.0);
                for (i, j) in jobs.iter().enumerate() {
                    if j.completed.is_none()
                        && j.project == p
                        && j.resource == r
                        && usage < shares[p] - EPSILON
                    {
                        active[i] = true;
                        usage += j.usage;
                        cpu += j.cpu;
                    }
                }
                rate[p][r] = if usage > EPSILON { (shares[p] / usage).min(1.0) } else { 0.0 };
                if r != 0 {
                    held_cpus[p] += rate[p][r] * cpu;
                }
                used[r] += shares[p];
            }
        }
        used[0] += held_cpus.iter().sum::<f64>();
        for r in 0..NRESOURCES {
            if saturated[r].is_none() && used[r] < instances[r] - EPSILON {
                saturated[r] = Some(t);
            }
        }
        if first {
            for (r, resource) in ResourceType::ALL.into_iter().enumerate() {
                out.resources[resource].nidle = (instances[r] - used[r]).clamp(0.0, instances[r]);
            }
            first = false;
        }
        let speed = |j: &RefJob| rate[j.project][j.resource] * availability[j.resource];
        let step = jobs
            .iter()
            .enumerate()
            .filter(|&(i, j)| active[i] && speed(j) > 0.0)
            .map(|(_, j)| j.remaining / speed(j))
            .fold(f64::INFINITY, f64::min);
        // Shortfalls over [t, t + step] ∩ [0, horizon].
        let span = (t + step).min(horizon) - t.min(horizon);
        if span > 0.0 {
            for (r, resource) in ResourceType::ALL.into_iter().enumerate() {
                let idle = instances[r] - used[r].min(instances[r]);
                out.resources[resource].shortfall += span * idle.max(0.0);
                for p in 0..nprojects {
                    let used = alloc[p][r] + if r == 0 { held_cpus[p] } else { 0.0 };
                    out.projects[p].shortfall[resource] += span * (share(p, r) - used).max(0.0);
                }
            }
        }
        if !step.is_finite() {
            break;
        }
        t += step;
        for (i, j) in jobs.iter_mut().enumerate() {
            if !active[i] {
                continue;
            }
            let s = rate[j.project][j.resource] * availability[j.resource];
            let before = j.remaining;
            j.remaining -= s * step;
            if s > 0.0 && (j.remaining / s - 0.0).abs() <= 1e-9 * before.max(1.0) {
                j.completed = Some(t);
            }
        }
    }
    for j in &jobs {
        let deadline = state.jobs[j.index].report_deadline - state.time_stats.late_report_margin();
        let projected_completion = j.completed.map_or(f64::INFINITY, |c| now + c);
        let deadline_missed = j.completed.is_none() || projected_completion > deadline;
        out.jobs[j.index] = JobSim {
            simulated: true,
            projected_completion,
            deadline_missed,
            remaining_duration: remaining_duration(state, JobId::from_index(j.index)),
        };
        if deadline_missed {
            let resource = ResourceType::ALL[j.resource];
            out.resources[resource].deadlines_missed += 1;
            out.projects[j.project].deadlines_missed[resource] += 1;
        }
    }
    for (r, resource) in ResourceType::ALL.into_iter().enumerate() {
        let sim = &mut out.resources[resource];
        sim.instances = instances[r];
        sim.saturated_time =
            if instances[r] <= 0.0 { 0.0 } else { saturated[r].unwrap_or(horizon).min(horizon) };
        for p in 0..nprojects {
            out.projects[p].share[resource] = share(p, r);
        }
    }
    out
}
