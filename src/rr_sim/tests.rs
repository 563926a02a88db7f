use super::test_support::{HOUR, StateBuilder, assert_close, cpu_usage, gpu_usage};
use super::*;
use crate::model::{JobId, JobState, ProjectFacts, ProjectId, ResourceType, ResourceUsage};

const CPU: ResourceType = ResourceType::Cpu;
const NVIDIA: ResourceType = ResourceType::Nvidia;

#[test]
fn seed_000_worked_example() {
    // Shares 2:1, two CPUs. 0–4 h: A1, A2, B1 all at 2/3; A2 ends at 4 h. 4–8 h: A1
    // and B1 at 1; A1 ends at 8 h. B1 outlasts the 10 h horizon.
    let mut b = StateBuilder::new(2);
    let a = b.project("A", 2.0);
    let bp = b.project("B", 1.0);
    let av_a = b.app_version(a, cpu_usage(1.0), 1e9);
    let av_b = b.app_version(bp, cpu_usage(1.0), 1e9);
    let a1 = b.job(a, av_a, (8.0 / 3.0 + 4.0) * HOUR, 100.0 * HOUR);
    let a2 = b.job(a, av_a, 8.0 / 3.0 * HOUR, 100.0 * HOUR);
    let b1 = b.job(bp, av_b, 12.0 * HOUR, 100.0 * HOUR);
    let out = b.simulate();
    assert_close!(out.horizon, 10.0 * HOUR);
    assert_close!(out.jobs[a2.index()].projected_completion, 4.0 * HOUR);
    assert_close!(out.jobs[a1.index()].projected_completion, 8.0 * HOUR);
    // B1: 8/3 + 4 h done by 8 h, then alone at rate 1.
    assert_close!(out.jobs[b1.index()].projected_completion, (12.0 + 4.0 / 3.0) * HOUR);
    assert_close!(out.projects[a.index()].shortfall[CPU], 4.0 * HOUR);
    assert_close!(out.projects[bp.index()].shortfall[CPU], 0.0);
    assert_close!(out.resources[CPU].shortfall, 2.0 * HOUR);
    assert_close!(out.projects[a.index()].share[CPU], 4.0 / 3.0);
    assert_close!(out.projects[bp.index()].share[CPU], 2.0 / 3.0);
    assert_close!(out.resources[CPU].nidle, 0.0);
    assert_close!(out.resources[CPU].saturated_time, 8.0 * HOUR);
    assert!(out.jobs.iter().all(|j| j.simulated && !j.deadline_missed));
}

#[test]
fn two_half_gpu_jobs_share_one_gpu() {
    let mut b = StateBuilder::new(2);
    b.gpus(NVIDIA, 1);
    let p = b.project("P", 1.0);
    let av = b.app_version(p, gpu_usage(0.25, 0.5), 1e10);
    let j1 = b.job(p, av, HOUR, 1e9);
    let j2 = b.job(p, av, HOUR, 1e9);
    let out = b.simulate();
    assert_close!(out.jobs[j1.index()].projected_completion, HOUR);
    assert_close!(out.jobs[j2.index()].projected_completion, HOUR);
    assert_close!(out.resources[NVIDIA].nidle, 0.0);
    assert_close!(out.resources[NVIDIA].saturated_time, HOUR);
    assert_close!(out.resources[NVIDIA].shortfall, 9.0 * HOUR);
    // The two GPU jobs hold half a CPU; the other 1.5 are idle.
    assert_close!(out.resources[CPU].nidle, 1.5);
}

#[test]
fn a_third_half_gpu_job_waits_its_turn() {
    let mut b = StateBuilder::new(2);
    b.gpus(NVIDIA, 1);
    let p = b.project("P", 1.0);
    let av = b.app_version(p, gpu_usage(0.25, 0.5), 1e10);
    let jobs: Vec<JobId> = (0..3).map(|_| b.job(p, av, HOUR, 1e9)).collect();
    let out = b.simulate();
    assert_close!(out.jobs[jobs[0].index()].projected_completion, HOUR);
    assert_close!(out.jobs[jobs[1].index()].projected_completion, HOUR);
    assert_close!(out.jobs[jobs[2].index()].projected_completion, 2.0 * HOUR);
    assert_close!(out.resources[NVIDIA].saturated_time, HOUR);
}

#[test]
fn multithread_job_fills_all_cpus() {
    let mut b = StateBuilder::new(4);
    let p = b.project("P", 1.0);
    let av = b.app_version(p, cpu_usage(4.0), 4e9);
    let j = b.job(p, av, HOUR, 1e9);
    let out = b.simulate();
    assert_close!(out.jobs[j.index()].projected_completion, HOUR);
    assert_close!(out.resources[CPU].nidle, 0.0);
    assert_close!(out.resources[CPU].shortfall, 4.0 * 9.0 * HOUR);
}

#[test]
fn multithread_job_larger_than_the_host_runs_alone() {
    let mut b = StateBuilder::new(2);
    let p = b.project("P", 1.0);
    let av = b.app_version(p, cpu_usage(8.0), 8e9);
    let j = b.job(p, av, HOUR, 1e9);
    let out = b.simulate();
    assert_close!(out.jobs[j.index()].projected_completion, HOUR);
    assert_close!(out.resources[CPU].nidle, 0.0);
}

#[test]
fn cpus_held_by_gpu_jobs_are_not_shortfall() {
    // One CPU, held entirely by a GPU job for 2 h: the CPU job waits, and the CPU
    // counts as busy meanwhile.
    let mut b = StateBuilder::new(1);
    b.gpus(NVIDIA, 1);
    let p = b.project("P", 1.0);
    let gpu = b.app_version(p, gpu_usage(1.0, 1.0), 1e10);
    let cpu = b.app_version(p, cpu_usage(1.0), 1e9);
    let g = b.job(p, gpu, 2.0 * HOUR, 1e9);
    let c = b.job(p, cpu, HOUR, 1e9);
    let out = b.simulate();
    assert_close!(out.jobs[g.index()].projected_completion, 2.0 * HOUR);
    assert_close!(out.jobs[c.index()].projected_completion, 3.0 * HOUR);
    assert_close!(out.resources[CPU].nidle, 0.0);
    assert_close!(out.resources[CPU].shortfall, 7.0 * HOUR);
    assert_close!(out.projects[p.index()].shortfall[CPU], 7.0 * HOUR);
    assert_close!(out.resources[NVIDIA].shortfall, 8.0 * HOUR);
    assert_close!(out.resources[CPU].saturated_time, 3.0 * HOUR);
}

#[test]
fn deadline_misses_are_counted_per_job_project_and_resource() {
    let mut b = StateBuilder::new(1);
    let p = b.project("P", 1.0);
    let q = b.project("Q", 1.0);
    let av = b.app_version(p, cpu_usage(1.0), 1e9);
    let avq = b.app_version(q, cpu_usage(1.0), 1e9);
    // P's jobs run one at a time in its half of the CPU: 2 h and 4 h.
    let first = b.job(p, av, HOUR, 2.5 * HOUR);
    let second = b.job(p, av, HOUR, 2.5 * HOUR);
    let other = b.job(q, avq, 10.0 * HOUR, 100.0 * HOUR);
    let out = b.simulate();
    assert_close!(out.jobs[first.index()].projected_completion, 2.0 * HOUR);
    assert_close!(out.jobs[second.index()].projected_completion, 4.0 * HOUR);
    assert!(!out.jobs[first.index()].deadline_missed);
    assert!(out.jobs[second.index()].deadline_missed);
    assert!(!out.jobs[other.index()].deadline_missed);
    assert_eq!(out.projects[p.index()].deadlines_missed[CPU], 1);
    assert_eq!(out.projects[p.index()].total_deadlines_missed(), 1);
    assert_eq!(out.projects[q.index()].total_deadlines_missed(), 0);
    assert_eq!(out.resources[CPU].deadlines_missed, 1);
}

#[test]
fn on_a_host_often_out_of_reach_a_job_finishing_near_its_deadline_is_endangered() {
    // One CPU, a 2-hour job due in 5 hours: on time on a host always in reach.
    let mut b = StateBuilder::new(1);
    let p = b.project("A", 1.0);
    let av = b.app_version(p, cpu_usage(1.0), 1e9);
    let job = b.job(p, av, 2.0 * HOUR, 5.0 * HOUR);
    assert!(!b.simulate().jobs[job.index()].deadline_missed);
    // Offline half the time in 3-hour spells: finished 3 hours early it may still wait
    // past its deadline for a connection.
    b.state.time_stats.connected_frac = 0.5;
    b.state.time_stats.connected_lambda = Some(3.0 * HOUR);
    assert!(b.state.time_stats.late_report_margin() > 3.0 * HOUR);
    let out = b.simulate();
    assert!(out.jobs[job.index()].deadline_missed);
    assert_eq!(out.projects[p.index()].deadlines_missed[ResourceType::Cpu], 1);
}

#[test]
fn jobs_without_instances_never_finish() {
    let mut b = StateBuilder::new(1);
    let p = b.project("P", 1.0);
    let av = b.app_version(p, gpu_usage(0.5, 1.0), 1e10);
    let j = b.job(p, av, HOUR, 1e12);
    let out = b.simulate();
    assert!(out.jobs[j.index()].simulated);
    assert_eq!(out.jobs[j.index()].projected_completion, f64::INFINITY);
    assert!(out.jobs[j.index()].deadline_missed);
    assert_eq!(out.resources[NVIDIA].deadlines_missed, 1);
    // The stuck GPU job holds no CPU.
    assert_close!(out.resources[CPU].nidle, 1.0);
    assert_close!(out.resources[NVIDIA].nidle, 0.0);
}

#[test]
fn availability_slows_jobs_down() {
    let mut b = StateBuilder::new(1);
    b.state.time_stats.on_frac = 0.8;
    b.state.time_stats.active_frac = 0.5;
    let p = b.project("P", 1.0);
    let av = b.app_version(p, cpu_usage(1.0), 1e9);
    let j = b.job(p, av, 2.0 * HOUR, 1e12);
    let out = b.simulate();
    assert_close!(out.jobs[j.index()].projected_completion, 5.0 * HOUR);
    assert_close!(out.resources[CPU].shortfall, 5.0 * HOUR);
}

#[test]
fn project_without_gpu_app_gets_no_gpu_share() {
    let mut b = StateBuilder::new(1);
    b.gpus(NVIDIA, 1);
    let gpu_project = b.project("G", 1.0);
    let cpu_project = b.project("C", 1.0);
    b.app_version(gpu_project, gpu_usage(0.1, 1.0), 1e10);
    let av = b.app_version(cpu_project, cpu_usage(1.0), 1e9);
    b.state.projects[cpu_project.index()].resources[NVIDIA].no_apps = true;
    b.job(cpu_project, av, 100.0 * HOUR, 1e12);
    let out = b.simulate();
    assert_close!(out.projects[gpu_project.index()].share[NVIDIA], 1.0);
    assert_close!(out.projects[cpu_project.index()].share[NVIDIA], 0.0);
    assert_close!(out.projects[gpu_project.index()].shortfall[NVIDIA], 10.0 * HOUR);
    assert_close!(out.projects[cpu_project.index()].shortfall[NVIDIA], 0.0);
    assert_close!(out.resources[NVIDIA].shortfall, 10.0 * HOUR);
    assert_close!(out.resources[NVIDIA].nidle, 1.0);
    assert_close!(out.resources[NVIDIA].saturated_time, 0.0);
    // The GPU project has no CPU app version and no CPU job: no CPU share either.
    assert_close!(out.projects[gpu_project.index()].share[CPU], 0.0);
    assert_close!(out.projects[cpu_project.index()].share[CPU], 1.0);
}

/// Seed 003's example: A has GPU jobs only, B has CPU and GPU jobs, equal shares, the
/// GPU twice as fast as the CPU. The shares are the cross-resource target (A 75% of
/// the GPU, B the CPU and 25% of the GPU), not half the GPU each, and with nothing
/// queued each project's shortfall is its share over the horizon.
#[test]
fn shares_span_resources_in_seed_003_example() {
    let mut b = StateBuilder::new(1);
    b.gpus(NVIDIA, 1);
    assert_close!(b.state.host.relative_speed(NVIDIA), 2.0);
    let a = b.project("A", 1.0);
    let bp = b.project("B", 1.0);
    b.app_version(a, gpu_usage(0.1, 1.0), 2e9);
    b.app_version(bp, gpu_usage(0.1, 1.0), 2e9);
    b.app_version(bp, cpu_usage(1.0), 1e9);
    let out = b.simulate();
    let share = |p: ProjectId, r| out.projects[p.index()].share[r];
    assert_close!(share(a, NVIDIA), 0.75);
    assert_close!(share(a, CPU), 0.0);
    assert_close!(share(bp, NVIDIA), 0.25);
    assert_close!(share(bp, CPU), 1.0);
    assert_close!(out.projects[a.index()].shortfall[NVIDIA], 0.75 * out.horizon);
    assert_close!(out.projects[bp.index()].shortfall[NVIDIA], 0.25 * out.horizon);
    assert_close!(out.projects[bp.index()].shortfall[CPU], out.horizon);
}

#[test]
fn suspended_and_no_new_work_projects_do_not_count_for_shares() {
    let mut b = StateBuilder::new(2);
    let p = b.project("P", 1.0);
    let q = b.project("Q", 1.0);
    let r = b.project("R", 2.0);
    for id in [p, q, r] {
        b.app_version(id, cpu_usage(1.0), 1e9);
    }
    b.state.projects[q.index()].dont_request_more_work = true;
    b.state.projects[r.index()].suspended = true;
    let out = b.simulate();
    assert_close!(out.projects[p.index()].share[CPU], 2.0);
    assert_close!(out.projects[q.index()].share[CPU], 0.0);
    assert_close!(out.projects[r.index()].share[CPU], 0.0);
}

#[test]
fn running_jobs_go_first_then_earliest_deadline() {
    let mut b = StateBuilder::new(1);
    let p = b.project("P", 1.0);
    let av = b.app_version(p, cpu_usage(1.0), 1e9);
    let late = b.job(p, av, HOUR, 50.0 * HOUR);
    let early = b.job(p, av, HOUR, 10.0 * HOUR);
    let running = b.job(p, av, HOUR, 90.0 * HOUR);
    let mut task = crate::model::ActiveTask::new(0);
    task.scheduler_state = crate::model::SchedulerState::Running;
    b.state.jobs[running.index()].task = Some(task);
    let out = b.simulate();
    assert_close!(out.jobs[running.index()].projected_completion, HOUR);
    assert_close!(out.jobs[early.index()].projected_completion, 2.0 * HOUR);
    assert_close!(out.jobs[late.index()].projected_completion, 3.0 * HOUR);
}

#[test]
fn zero_share_project_gets_only_leftovers() {
    let mut b = StateBuilder::new(2);
    let p = b.project("P", 1.0);
    let z = b.project("Z", 0.0);
    let avp = b.app_version(p, cpu_usage(1.0), 1e9);
    let avz = b.app_version(z, cpu_usage(1.0), 1e9);
    let pj = b.job(p, avp, HOUR, 1e9);
    let z1 = b.job(z, avz, HOUR, 1e9);
    let z2 = b.job(z, avz, HOUR, 1e9);
    let out = b.simulate();
    // P can use one CPU only; Z gets the other.
    assert_close!(out.jobs[pj.index()].projected_completion, HOUR);
    assert_close!(out.jobs[z1.index()].projected_completion, HOUR);
    assert_close!(out.jobs[z2.index()].projected_completion, 2.0 * HOUR);
    assert_close!(out.projects[z.index()].share[CPU], 0.0);
}

#[test]
fn non_cpu_intensive_and_unrunnable_jobs_are_left_out() {
    let mut b = StateBuilder::new(1);
    let p = b.project("P", 1.0);
    let av = b.app_version(p, cpu_usage(1.0), 1e9);
    let j = b.job(p, av, HOUR, 1e9);
    let done = b.job(p, av, HOUR, 1e9);
    b.state.jobs[done.index()].state = JobState::FilesUploaded;
    b.state.apps[0].non_cpu_intensive = true;
    let out = b.simulate();
    assert!(!out.jobs[j.index()].simulated);
    assert!(!out.jobs[done.index()].simulated);
    assert_close!(out.resources[CPU].shortfall, 10.0 * HOUR);
}

#[test]
fn empty_state_is_all_shortfall() {
    let b = StateBuilder::new(3);
    let out = b.simulate();
    assert!(out.jobs.is_empty());
    assert_close!(out.resources[CPU].shortfall, 30.0 * HOUR);
    assert_close!(out.resources[CPU].nidle, 3.0);
    assert_close!(out.resources[CPU].saturated_time, 0.0);
    assert_close!(out.resources[NVIDIA].instances, 0.0);
}

#[test]
fn ten_thousand_jobs_all_finish() {
    let mut b = StateBuilder::new(64);
    b.gpus(NVIDIA, 4);
    let mut versions = Vec::new();
    for i in 0..20 {
        let p = b.project(&format!("P{i}"), 1.0 + i as f64);
        versions.push((
            p,
            b.app_version(p, cpu_usage(1.0), 1e9),
            b.app_version(p, gpu_usage(0.5, 1.0), 1e10),
        ));
    }
    for k in 0..10_000usize {
        let (p, cpu, gpu) = versions[k % 20];
        let av = if k % 10 == 0 { gpu } else { cpu };
        b.job(p, av, 1000.0 + (k * 7919 % 50_000) as f64, (k % 500) as f64 * HOUR);
    }
    let facts = ProjectFacts::gather(&b.state);
    let out = simulate(&b.state, &facts, 0.0);
    assert!(out.jobs.iter().all(|j| j.simulated && j.projected_completion.is_finite()));
    assert!(out.resources[CPU].deadlines_missed > 0);
    // Far more work than the horizon: everything stays busy.
    assert_close!(out.resources[CPU].shortfall, 0.0);
    assert_close!(out.resources[NVIDIA].shortfall, 0.0);
    assert_close!(out.resources[CPU].nidle, 0.0);
    // Nothing runs faster than the CPUs allow: the CPU work takes at least its total
    // over 64 CPUs (less the CPUs the GPU jobs hold at the start).
    let (mut cpu_work, mut last) = (0.0, 0.0f64);
    for (id, job) in b.state.jobs.iter().enumerate() {
        if b.state.app_version(job.app_version.unwrap()).usage.coprocessor.is_none() {
            cpu_work += crate::estimate::remaining_duration(&b.state, JobId::from_index(id));
            last = last.max(out.jobs[id].projected_completion);
        }
    }
    assert!(last >= cpu_work / 64.0 * (1.0 - 1e-9), "{last} < {}", cpu_work / 64.0);
}

#[test]
fn rounding_residue_of_the_shares_is_neither_idle_nor_shortfall() {
    // Twenty projects with uneven shares on 64 CPUs, each with more than enough
    // single-thread work: the allocations are sums of share fractions, which need
    // not add back to exactly 64. No instance is idle and nothing is short; a
    // residue at rounding level would have the client ask for work every poll.
    let mut b = StateBuilder::new(64);
    let shares = [100.0, 50.0, 200.0, 25.0, 100.0, 150.0, 75.0, 100.0, 300.0, 10.0];
    for k in 0..20 {
        let p = b.project(&format!("q{k:02}"), shares[k % shares.len()]);
        let v = b.app_version(p, ResourceUsage { avg_ncpus: 1.0, coprocessor: None }, 1e9);
        for _ in 0..12 {
            b.job(p, v, 20.0 * HOUR, 1e9);
        }
    }
    let out = b.simulate();
    assert_eq!(out.resources[ResourceType::Cpu].nidle, 0.0);
    assert_eq!(out.resources[ResourceType::Cpu].shortfall, 0.0);
    assert!(out.projects.iter().all(|p| p.shortfall[ResourceType::Cpu] == 0.0));
}
