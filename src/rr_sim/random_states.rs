//! Random states: the simulation's invariants, and its agreement with the from-scratch
//! reference model.

use super::reference_model;
use super::simulate::RrSimScratch;
use super::simulation::Simulation;
use super::test_support::{HOUR, StateBuilder, assert_close, close, cpu_usage, gpu_usage};
use crate::model::{ProjectFacts, ProjectId, ResourceType};
use proptest::prelude::*;

const CPU: ResourceType = ResourceType::Cpu;
const NVIDIA: ResourceType = ResourceType::Nvidia;

/// A random state: a few projects with CPU, multithread and GPU apps and jobs.
#[derive(Debug, Clone)]
struct Scenario {
    ncpus: u32,
    ngpus: u32,
    shares: Vec<f64>,
    /// (project, kind, seconds, deadline hours, running)
    jobs: Vec<(usize, u8, f64, f64, bool)>,
    gpu_cpus: f64,
    active_frac: f64,
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (1u32..9, 0u32..3, prop::collection::vec(0.0f64..4.0, 1..5), 0.0f64..1.0, 0.1f64..1.0)
        .prop_flat_map(|(ncpus, ngpus, shares, gpu_cpus, active_frac)| {
            let n = shares.len();
            let job = (0..n, 0u8..4, 60.0f64..200_000.0, 0.0f64..200.0, any::<bool>());
            prop::collection::vec(job, 0..40).prop_map(move |jobs| Scenario {
                ncpus,
                ngpus,
                shares: shares.clone(),
                jobs,
                gpu_cpus,
                active_frac,
            })
        })
}

fn build(s: &Scenario) -> StateBuilder {
    let mut b = StateBuilder::new(s.ncpus);
    if s.ngpus > 0 {
        b.gpus(NVIDIA, s.ngpus);
    }
    b.state.time_stats.active_frac = s.active_frac;
    let mut versions = Vec::new();
    for (i, &share) in s.shares.iter().enumerate() {
        let p = b.project(&format!("P{i}"), share);
        versions.push([
            b.app_version(p, cpu_usage(1.0), 1e9),
            b.app_version(p, cpu_usage(f64::from(s.ncpus.min(4))), 4e9),
            b.app_version(p, gpu_usage(s.gpu_cpus, 1.0), 1e10),
            b.app_version(p, gpu_usage(s.gpu_cpus, 0.5), 1e10),
        ]);
    }
    for &(p, kind, seconds, deadline_hours, running) in &s.jobs {
        let av = versions[p][usize::from(kind)];
        let id = b.job(ProjectId::from_index(p), av, seconds, deadline_hours * HOUR);
        if running {
            let mut task = crate::model::ActiveTask::new(0);
            task.scheduler_state = crate::model::SchedulerState::Running;
            task.elapsed_time = seconds / 3.0;
            task.fraction_done = 0.3;
            b.state.jobs[id.index()].task = Some(task);
        }
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Buffers, a target allocation and an output left by a simulation of another state
    /// (other projects, shares, hosts) change nothing in the next simulation.
    #[test]
    fn reused_buffers_give_the_fresh_simulation(first in scenario(), second in scenario()) {
        let (first, second) = (build(&first), build(&second));
        let mut scratch = RrSimScratch::default();
        let facts = ProjectFacts::gather(&first.state);
        let earlier = super::simulate_with_scratch(&first.state, &facts, 0.0, &mut scratch);
        scratch.recycle_output(earlier);
        let facts = ProjectFacts::gather(&second.state);
        let reused = super::simulate_with_scratch(&second.state, &facts, 0.0, &mut scratch);
        prop_assert_eq!(reused, super::simulate(&second.state, &facts, 0.0));
    }

    #[test]
    fn shortfall_and_nidle_stay_in_range(s in scenario()) {
        let b = build(&s);
        let facts = ProjectFacts::gather(&b.state);
        let mut sim = Simulation::new(&b.state, &facts, &mut RrSimScratch::default());
        sim.run();
        let out = sim.output(&b.state, 0.0, Vec::new(), Vec::new());
        for (r, res) in out.resources.iter() {
            prop_assert!(res.shortfall >= 0.0 && res.shortfall.is_finite(), "{r}");
            prop_assert!(res.shortfall <= res.instances * out.horizon * (1.0 + 1e-9));
            prop_assert!(res.nidle >= 0.0 && res.nidle <= res.instances, "{r}");
            prop_assert!(res.saturated_time >= 0.0 && res.saturated_time <= out.horizon);
            // The initial assignment never overcommits, beyond the CPUs GPU jobs hold.
            let allowance = if r == CPU { sim.coprocessor_cpus_at_start() } else { 0.0 };
            let initial = sim.resources[r.index()].initial_used;
            prop_assert!(
                initial <= res.instances.max(allowance) + 1e-6,
                "{r}: {initial} > {}", res.instances
            );
        }
        for project in &out.projects {
            for (_, &shortfall) in project.shortfall.iter() {
                prop_assert!(shortfall >= 0.0 && shortfall.is_finite());
            }
        }
        for job in &out.jobs {
            prop_assert!(job.simulated);
            prop_assert!(job.projected_completion >= 0.0);
        }
    }

    #[test]
    fn busy_instances_leave_no_shortfall(
        ncpus in 1u32..9,
        shares in prop::collection::vec(0.1f64..4.0, 1..5),
        extra in 0usize..5,
    ) {
        // Every project has at least as many long single-CPU jobs as there are CPUs.
        let mut b = StateBuilder::new(ncpus);
        let mut projects = Vec::new();
        for (i, &share) in shares.iter().enumerate() {
            let p = b.project(&format!("P{i}"), share);
            let av = b.app_version(p, cpu_usage(1.0), 1e9);
            for k in 0..(ncpus as usize + extra) {
                b.job(p, av, 20.0 * HOUR + k as f64, 1e12);
            }
            projects.push(p);
        }
        let out = b.simulate();
        prop_assert!(out.resources[CPU].shortfall.abs() < 1e-6);
        prop_assert!(out.resources[CPU].nidle.abs() < 1e-9);
        prop_assert!(close(out.resources[CPU].saturated_time, out.horizon));
        for p in projects {
            prop_assert!(out.projects[p.index()].shortfall[CPU] < 1e-6);
        }
    }
}

impl Simulation {
    /// CPUs the coprocessor jobs held after the initial assignment (tests only; they
    /// only change after the first event).
    fn coprocessor_cpus_at_start(&self) -> f64 {
        self.resources[CPU.index()].initial_used
            - self.resources[CPU.index()]
                .queues
                .iter()
                .map(|&q| self.queues[q as usize].alloc)
                .sum::<f64>()
    }
}

/// A project's only GPU job finishes inside the horizon: from then on the CPUs it
/// held are no longer the project's, and its CPU shortfall counts again.
#[test]
fn drained_gpu_queue_releases_its_projects_cpus() {
    let s = Scenario {
        ncpus: 1,
        ngpus: 1,
        shares: vec![0.87, 2.2, 1.98],
        jobs: vec![(0, 3, 45_000.0, 81.0, true)],
        gpu_cpus: 0.64,
        active_frac: 0.22,
    };
    let b = build(&s);
    let out = b.simulate();
    let done = out.jobs[0].projected_completion;
    assert!(done < out.horizon, "{done}");
    let share = out.projects[0].share[CPU];
    assert!(share > 0.0 && share < s.gpu_cpus);
    assert_close!(out.projects[0].shortfall[CPU], share * (out.horizon - done));
    let reference = reference_model::simulate(&b.state, 0.0);
    assert_close!(out.projects[0].shortfall[CPU], reference.projects[0].shortfall[CPU]);
}

fn relatively_close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// The event-driven simulation agrees with the from-scratch reference.
    #[test]
    fn simulation_matches_reference(s in scenario(), zero_share in prop::option::of(0usize..4)) {
        let mut s = s;
        if let Some(p) = zero_share.filter(|&p| p < s.shares.len()) {
            s.shares[p] = 0.0;
        }
        let b = build(&s);
        let fast = b.simulate();
        let slow = reference_model::simulate(&b.state, 0.0);
        for (id, (f, r)) in fast.jobs.iter().zip(&slow.jobs).enumerate() {
            prop_assert_eq!(f.simulated, r.simulated, "job {}", id);
            prop_assert!(
                relatively_close(f.projected_completion, r.projected_completion),
                "job {}: {} vs {}", id, f.projected_completion, r.projected_completion
            );
            prop_assert_eq!(f.deadline_missed, r.deadline_missed, "job {}", id);
        }
        let horizon_scale = |x: f64| x / fast.horizon.max(1.0);
        for ((resource, f), (_, r)) in fast.resources.iter().zip(slow.resources.iter()) {
            prop_assert_eq!(f.deadlines_missed, r.deadlines_missed, "{}", resource);
            prop_assert!(
                relatively_close(horizon_scale(f.shortfall), horizon_scale(r.shortfall)),
                "{} shortfall {} vs {}", resource, f.shortfall, r.shortfall
            );
            prop_assert!(relatively_close(f.nidle, r.nidle), "{} nidle", resource);
            prop_assert!(
                relatively_close(horizon_scale(f.saturated_time), horizon_scale(r.saturated_time)),
                "{} saturated {} vs {}", resource, f.saturated_time, r.saturated_time
            );
        }
        for (p, (f, r)) in fast.projects.iter().zip(&slow.projects).enumerate() {
            prop_assert_eq!(f.deadlines_missed, r.deadlines_missed, "project {}", p);
            for ((resource, fs), (_, rs)) in f.shortfall.iter().zip(r.shortfall.iter()) {
                prop_assert!(
                    relatively_close(horizon_scale(*fs), horizon_scale(*rs)),
                    "project {} {} shortfall {} vs {}", p, resource, fs, rs
                );
            }
            prop_assert_eq!(f.share, r.share);
        }
    }
}
