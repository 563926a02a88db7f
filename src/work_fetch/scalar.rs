//! Seed 000's scalar work-fetch sizes ("Work-fetch policy": work_request_size), kept so
//! `explain` can show what the pre-GPU client would have asked each project for, next to
//! the per-resource request of seed 003.

use crate::Time;
use crate::model::{ClientState, ProjectFacts, ProjectId, ResourceType};
use crate::rr_sim::RrSimOutput;

/// Seed 000 work_request_size(P) for every project (indexed by id), in normalised
/// CPU-seconds, from the CPU shortfalls of the round-robin simulation:
///
/// - a suspended, deferred (min_rpc_time in the future), overworked or no-new-work
///   project gets 0, any other its shortfall(P);
/// - if there is a total shortfall and every size is 0, every project that is none of
///   those four gets 1; if still every size is 0, every project that is not suspended,
///   deferred or no-new-work (overworked allowed) gets 1;
/// - the positive sizes are then rescaled to sum to total_shortfall, proportional to
///   the projects' resource shares (equally if none of them has a share);
/// - a non-CPU-intensive project (not suspended, deferred or no-new-work) gets 1 if it
///   has no nearly runnable job, else 0, outside the normalisation.
///
/// Divide by the project's share fraction to get the request in project-normalised
/// time: [`project_normalised_work_request`].
pub fn scalar_work_request_sizes(state: &ClientState, rr: &RrSimOutput, now: Time) -> Vec<f64> {
    let cpu = ResourceType::Cpu;
    let blocked = |p: ProjectId, count_overworked: bool| {
        let project = state.project(p);
        project.suspended
            || project.min_rpc_time > now
            || project.dont_request_more_work
            || project.rpc_in_flight
            || (count_overworked && state.project_overworked(p))
    };
    let cpu_intensive = |p: ProjectId| !state.project(p).non_cpu_intensive;
    let mut sizes: Vec<f64> = state
        .project_ids()
        .map(|p| {
            if !cpu_intensive(p) || blocked(p, true) {
                0.0
            } else {
                rr.projects.get(p.index()).map_or(0.0, |s| s.shortfall[cpu].max(0.0))
            }
        })
        .collect();
    let total_shortfall = rr.resources[cpu].shortfall.max(0.0);
    if total_shortfall > 0.0 {
        for count_overworked in [true, false] {
            if sizes.iter().all(|&s| s == 0.0) {
                for p in state.project_ids() {
                    if cpu_intensive(p) && !blocked(p, count_overworked) {
                        sizes[p.index()] = 1.0;
                    }
                }
            }
        }
        let positive = |p: &ProjectId| sizes[p.index()] > 0.0;
        let included: Vec<ProjectId> = state.project_ids().filter(positive).collect();
        if !included.is_empty() {
            let total_share: f64 =
                included.iter().map(|&p| state.project(p).resource_share.max(0.0)).sum();
            for &p in &included {
                let share = state.project(p).resource_share.max(0.0);
                sizes[p.index()] = if total_share > 0.0 {
                    total_shortfall * share / total_share
                } else {
                    total_shortfall / included.len() as f64
                };
            }
        }
    }
    if state.projects.iter().any(|p| p.non_cpu_intensive) {
        let mut has_job = vec![false; state.projects.len()];
        for id in state.job_ids() {
            if state.job_nearly_runnable(id) {
                if let Some(flag) = has_job.get_mut(state.job(id).project.index()) {
                    *flag = true;
                }
            }
        }
        for p in state.project_ids() {
            if !cpu_intensive(p) {
                let idle = !has_job[p.index()] && !blocked(p, false);
                sizes[p.index()] = if idle { 1.0 } else { 0.0 };
            }
        }
    }
    sizes
}

/// Seed 000's note: the RPC's `work_req` is in project-normalised time, i.e. the
/// normalised size divided by the project's resource-share fraction among the
/// potentially runnable projects. A project without a share fraction (zero share, or
/// not potentially runnable with nobody else) keeps the size as it is.
pub fn project_normalised_work_request(
    state: &ClientState,
    facts: &[ProjectFacts],
    project: ProjectId,
    size: f64,
    now: Time,
) -> f64 {
    let potentially_runnable = |p: ProjectId| {
        facts.get(p.index()).is_some_and(|f| state.project_potentially_runnable(p, f, now))
    };
    let total = state.total_share(|p| p == project || potentially_runnable(p));
    let share = state.project(project).resource_share.max(0.0);
    if total > 0.0 && share > 0.0 { size / (share / total) } else { size }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Project;
    use crate::rr_sim::ProjectSim;

    fn state_with_shares(shares: &[f64]) -> ClientState {
        let mut state = ClientState::default();
        for (i, &share) in shares.iter().enumerate() {
            state.projects.push(Project::new(format!("p{i}"), format!("http://p{i}/"), share));
        }
        state
    }

    #[test]
    fn seed_000_processing_rate_example() {
        // Seed 000 "Project-normalized CPU time": 1 GFLOPS CPUs, share fraction 0.5,
        // on-fraction 0.8, active-fraction 0.9: 0.36 GFLOPS per CPU, so a request for
        // 1000 project-normalised seconds asks for at least 360 GFLOPs.
        let mut state = state_with_shares(&[100.0, 100.0]);
        state.host.p_fpops = 1e9;
        state.time_stats.on_frac = 0.8;
        state.time_stats.active_frac = 0.9;
        let facts = ProjectFacts::gather(&state);
        let rate = state.host.p_fpops
            * state.time_stats.available_frac(ResourceType::Cpu)
            * (state.projects[0].resource_share / state.total_share(|_| true));
        assert!((rate - 0.36e9).abs() < 1.0);
        // 500 normalised seconds are 1000 project-normalised ones at a 0.5 share...
        let request = project_normalised_work_request(&state, &facts, ProjectId(0), 500.0, 0.0);
        assert!((request - 1000.0).abs() < 1e-9);
        // ...and worth 360 GFLOPs at that rate.
        assert!((request * rate - 360e9).abs() < 1e3);
    }

    fn rr_with_shortfalls(total: f64, per_project: &[f64]) -> RrSimOutput {
        let mut rr = RrSimOutput { horizon: 86_400.0, ..RrSimOutput::default() };
        rr.resources[ResourceType::Cpu].shortfall = total;
        rr.projects = per_project
            .iter()
            .map(|&s| {
                let mut p = ProjectSim::default();
                p.shortfall[ResourceType::Cpu] = s;
                p
            })
            .collect();
        rr
    }

    #[test]
    fn sizes_sum_to_total_shortfall_in_proportion_to_share() {
        let mut state = state_with_shares(&[3.0, 1.0, 4.0, 2.0]);
        state.projects[2].suspended = true;
        let rr = rr_with_shortfalls(1000.0, &[10.0, 500.0, 800.0, 0.0]);
        let sizes = scalar_work_request_sizes(&state, &rr, 0.0);
        // p2 is suspended and p3 has no shortfall: p0 and p1 split 3:1.
        assert_eq!(sizes, vec![750.0, 250.0, 0.0, 0.0]);
    }

    #[test]
    fn all_zero_falls_back_to_one_then_includes_overworked() {
        let mut state = state_with_shares(&[1.0, 1.0, 2.0]);
        state.projects[0].dont_request_more_work = true;
        let rr = rr_with_shortfalls(600.0, &[0.0, 0.0, 0.0]);
        assert_eq!(scalar_work_request_sizes(&state, &rr, 0.0), vec![0.0, 200.0, 400.0]);

        // Both remaining projects overworked: the second fallback lets them in.
        for p in [1, 2] {
            state.projects[p].resources[ResourceType::Cpu].long_term_debt = -1e6;
        }
        assert_eq!(scalar_work_request_sizes(&state, &rr, 0.0), vec![0.0, 200.0, 400.0]);

        // Deferred too: nobody.
        state.projects[1].min_rpc_time = 100.0;
        state.projects[2].min_rpc_time = 100.0;
        assert_eq!(scalar_work_request_sizes(&state, &rr, 0.0), vec![0.0, 0.0, 0.0]);
    }

    #[test]
    fn no_total_shortfall_keeps_raw_sizes() {
        let state = state_with_shares(&[1.0, 1.0]);
        let rr = rr_with_shortfalls(0.0, &[0.0, 0.0]);
        assert_eq!(scalar_work_request_sizes(&state, &rr, 0.0), vec![0.0, 0.0]);
    }

    #[test]
    fn non_cpu_intensive_project_asks_for_one_second_when_empty() {
        let mut state = state_with_shares(&[1.0, 1.0]);
        state.projects[1].non_cpu_intensive = true;
        let rr = rr_with_shortfalls(100.0, &[100.0, 0.0]);
        assert_eq!(scalar_work_request_sizes(&state, &rr, 0.0), vec![100.0, 1.0]);
    }

    #[test]
    fn project_normalised_request_divides_by_share_fraction() {
        let state = state_with_shares(&[1.0, 3.0]);
        let facts = ProjectFacts::gather(&state);
        let request = project_normalised_work_request(&state, &facts, ProjectId(0), 100.0, 0.0);
        assert!((request - 400.0).abs() < 1e-9);
    }
}
