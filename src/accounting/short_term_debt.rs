//! Short-term debt (seed 000 "debt", seed 001): the processing owed to each runnable
//! project, which the CPU scheduler starts its anticipated debts from.
//!
//! Work is measured across resources in CPU-equivalent seconds, `Σ_R usage(R) ×
//! relative_speed(R)`, the weighting seed 003 gives long-term debt, so a GPU project and
//! a CPU project are compared in the same unit. Over one period:
//!
//! - `A` = the work of all runnable projects; each runnable project P's debt grows by
//!   `A × share_P / Σshare` (what it should have got) and falls by its own work;
//! - a project without runnable jobs neither counts in the shares nor builds debt: its
//!   debt is reset to zero (seed 001);
//! - the debts of the runnable projects are normalised so the least is zero, and
//!   (`update_short_term_debt`, seed 000) capped at one day.
//!
//! Non-CPU-intensive projects are left out: their jobs always run and take no
//! processors, so nothing is owed to them.

use crate::model::{ClientState, ProjectFacts, ResourceMap, ResourceType, SECONDS_PER_DAY};

/// Seed 000: short-term debt is normalised to be no greater than one day.
pub const MAX_SHORT_TERM_DEBT: f64 = SECONDS_PER_DAY;

/// Updates short-term debt for a period of `dt` seconds that just ended, in which
/// project p (index = project id) used `usage[p][R]` instance-seconds of each resource
/// R; projects beyond `usage` used nothing. Seed 000: normalised to a minimum of zero
/// and a maximum of [`MAX_SHORT_TERM_DEBT`].
pub fn update_short_term_debt(
    state: &mut ClientState,
    facts: &[ProjectFacts],
    usage: &[ResourceMap<f64>],
    dt: f64,
) {
    update_debt(state, facts, usage, dt, Some(MAX_SHORT_TERM_DEBT));
}

/// Seed 001's debt: the same accounting as [`update_short_term_debt`] (normalised to a
/// minimum of zero), without the one-day cap.
pub fn update_legacy_debt(
    state: &mut ClientState,
    facts: &[ProjectFacts],
    usage: &[ResourceMap<f64>],
    dt: f64,
) {
    update_debt(state, facts, usage, dt, None);
}

/// CPU-equivalent seconds of a project's usage: each resource's instance-seconds
/// weighted by its `speed` relative to one CPU. Nonsense figures count as no work.
fn cpu_equivalent_seconds(speed: &ResourceMap<f64>, usage: &ResourceMap<f64>) -> f64 {
    ResourceType::ALL
        .into_iter()
        .map(|r| {
            let seconds = usage[r];
            if seconds.is_finite() { seconds.max(0.0) * speed[r] } else { 0.0 }
        })
        .sum()
}

fn update_debt(
    state: &mut ClientState,
    facts: &[ProjectFacts],
    usage: &[ResourceMap<f64>],
    dt: f64,
    cap: Option<f64>,
) {
    // No time has passed: there is no period to account for.
    if dt.is_nan() || dt <= 0.0 {
        return;
    }
    // Each project's membership and work are worked out where they are needed rather
    // than listed first: accounting runs at every decision, and the lists were its
    // allocations (the figures are the same whenever they are computed).
    let nprojects = state.projects.len();
    let speed = ResourceMap::from_fn(|r| state.host.relative_speed(r));
    let member = |state: &ClientState, p: usize| {
        facts.get(p).is_some_and(ProjectFacts::runnable) && !state.projects[p].non_cpu_intensive
    };
    let work = |p: usize| usage.get(p).map_or(0.0, |u| cpu_equivalent_seconds(&speed, u));
    let members = (0..nprojects).filter(|&p| member(state, p)).count();
    let total_work: f64 = (0..nprojects).filter(|&p| member(state, p)).map(work).sum();
    let total_share: f64 = (0..nprojects)
        .filter(|&p| member(state, p))
        .map(|p| state.projects[p].resource_share.max(0.0))
        .sum();
    let mut min = f64::INFINITY;
    for p in 0..nprojects {
        let is_member = member(state, p);
        let project = &mut state.projects[p];
        if !is_member {
            project.short_term_debt = 0.0;
            continue;
        }
        // With no shares at all among the runnable projects, they are owed equally.
        let fraction = if total_share > 0.0 {
            project.resource_share.max(0.0) / total_share
        } else {
            1.0 / members as f64
        };
        let debt = if project.short_term_debt.is_finite() { project.short_term_debt } else { 0.0 };
        project.short_term_debt = debt + total_work * fraction - work(p);
        min = min.min(project.short_term_debt);
    }
    if min.is_finite() {
        for p in 0..nprojects {
            if member(state, p) {
                let project = &mut state.projects[p];
                let normalised = project.short_term_debt - min;
                project.short_term_debt = cap.map_or(normalised, |c| normalised.min(c));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu_sched::test_support::{StateBuilder, cpu, gpu};
    use crate::model::ProjectFacts;
    use proptest::prelude::*;

    fn cpu_usage(seconds: f64) -> ResourceMap<f64> {
        let mut u = ResourceMap::default();
        u[ResourceType::Cpu] = seconds;
        u
    }

    /// Two runnable projects A (75 %) and B (25 %), one job each.
    fn seed_001_example() -> crate::model::ClientState {
        let mut b = StateBuilder::new(2);
        let a = b.project("A", 75.0);
        let bp = b.project("B", 25.0);
        let va = b.app_version(a, cpu(1.0));
        let vb = b.app_version(bp, cpu(1.0));
        b.job(a, va, 0.0, 1e6);
        b.job(bp, vb, 0.0, 1e6);
        b.build()
    }

    #[test]
    fn seed_001_worked_example() {
        let mut state = seed_001_example();
        let facts = ProjectFacts::gather(&state);
        // Start B high enough that normalisation leaves both changes visible.
        state.projects[1].short_term_debt = 1000.0;
        update_legacy_debt(
            &mut state,
            &facts,
            &[cpu_usage(25.0 * 60.0), cpu_usage(15.0 * 60.0)],
            2400.0,
        );
        // A: −25 + 30 = +5 min → 300; B: 1000 − 15 + 10 min = 700; normalised by −300.
        assert!((state.projects[0].short_term_debt - 0.0).abs() < 1e-9);
        assert!((state.projects[1].short_term_debt - 400.0).abs() < 1e-9);

        let mut state = seed_001_example();
        update_short_term_debt(
            &mut state,
            &facts,
            &[cpu_usage(25.0 * 60.0), cpu_usage(15.0 * 60.0)],
            2400.0,
        );
        // From zero: A +5 min, B −5 min; normalised so B = 0, A = 10 min.
        assert!((state.projects[0].short_term_debt - 600.0).abs() < 1e-9);
        assert_eq!(state.projects[1].short_term_debt, 0.0);
    }

    #[test]
    fn debt_is_capped_at_one_day_but_legacy_debt_is_not() {
        let mut state = seed_001_example();
        let facts = ProjectFacts::gather(&state);
        let usage = [cpu_usage(0.0), cpu_usage(200_000.0)];
        update_short_term_debt(&mut state, &facts, &usage, 200_000.0);
        assert_eq!(state.projects[0].short_term_debt, MAX_SHORT_TERM_DEBT);
        assert_eq!(state.projects[1].short_term_debt, 0.0);
        let mut state = seed_001_example();
        update_legacy_debt(&mut state, &facts, &usage, 200_000.0);
        // A +150,000, B +50,000 − 200,000: normalised A = 300,000, B = 0.
        assert!((state.projects[0].short_term_debt - 300_000.0).abs() < 1e-6);
    }

    #[test]
    fn project_without_runnable_jobs_is_reset_and_left_out_of_the_shares() {
        let mut b = StateBuilder::new(2);
        let a = b.project("A", 50.0);
        let bp = b.project("B", 50.0);
        b.project("idle", 100.0);
        let va = b.app_version(a, cpu(1.0));
        let vb = b.app_version(bp, cpu(1.0));
        b.job(a, va, 0.0, 1e6);
        b.job(bp, vb, 0.0, 1e6);
        let mut state = b.build();
        state.projects[2].short_term_debt = 5000.0;
        let facts = ProjectFacts::gather(&state);
        update_short_term_debt(&mut state, &facts, &[cpu_usage(100.0), cpu_usage(0.0)], 100.0);
        assert_eq!(state.projects[2].short_term_debt, 0.0);
        // A got all 100 s but was owed 50: A −50, B +50 → normalised 0 and 100.
        assert_eq!(state.projects[0].short_term_debt, 0.0);
        assert!((state.projects[1].short_term_debt - 100.0).abs() < 1e-9);
    }

    #[test]
    fn gpu_work_counts_at_its_relative_speed() {
        let mut b = StateBuilder::new(1).gpus(ResourceType::Nvidia, 1);
        let a = b.project("cpu", 50.0);
        let g = b.project("gpu", 50.0);
        let va = b.app_version(a, cpu(1.0));
        let vg = b.app_version(g, gpu(ResourceType::Nvidia, 0.0, 1.0));
        b.job(a, va, 0.0, 1e6);
        b.job(g, vg, 0.0, 1e6);
        let mut state = b.build();
        let facts = ProjectFacts::gather(&state);
        let mut gpu_usage = ResourceMap::default();
        gpu_usage[ResourceType::Nvidia] = 100.0;
        // The GPU is worth 10 CPUs: 1000 CPU-equivalent s against 100.
        update_short_term_debt(&mut state, &facts, &[cpu_usage(100.0), gpu_usage], 100.0);
        assert!((state.projects[0].short_term_debt - 900.0).abs() < 1e-6);
        assert_eq!(state.projects[1].short_term_debt, 0.0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn debts_are_normalised_and_bounded(
            shares in proptest::collection::vec(0.0f64..200.0, 1..6),
            runnable in proptest::collection::vec(any::<bool>(), 6),
            debts in proptest::collection::vec(-1e6f64..1e6, 6),
            used in proptest::collection::vec(0.0f64..1e6, 6),
        ) {
            let mut b = StateBuilder::new(4);
            for (i, &share) in shares.iter().enumerate() {
                let p = b.project(&format!("p{i}"), share);
                let v = b.app_version(p, cpu(1.0));
                if runnable[i] {
                    b.job(p, v, 0.0, 1e6);
                }
            }
            let mut state = b.build();
            for (i, project) in state.projects.iter_mut().enumerate() {
                project.short_term_debt = debts[i];
            }
            let facts = ProjectFacts::gather(&state);
            let usage: Vec<_> = used.iter().map(|&s| cpu_usage(s)).collect();
            update_short_term_debt(&mut state, &facts, &usage, 3600.0);
            let mut min = f64::INFINITY;
            for (i, project) in state.projects.iter().enumerate() {
                prop_assert!((0.0..=MAX_SHORT_TERM_DEBT).contains(&project.short_term_debt));
                if runnable[i] {
                    min = min.min(project.short_term_debt);
                } else {
                    prop_assert_eq!(project.short_term_debt, 0.0);
                }
            }
            if runnable[..shares.len()].iter().any(|&r| r) {
                prop_assert_eq!(min, 0.0);
            }
        }
    }
}
