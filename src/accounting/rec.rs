//! Recent estimated credit with a 10-day half-life (modern BOINC, `--policy rec`): the
//! peak flops × seconds a project's jobs have used, decaying exponentially, from which
//! the CPU scheduler's project priority follows.

use crate::Time;
use crate::model::{ClientState, ProjectId, ResourceMap, ResourceType};

/// REC halves every ten days, as in BOINC 8.
pub const REC_HALF_LIFE: f64 = 10.0 * 86_400.0;

/// BOINC's credit for one flop·second (`COBBLESTONE_SCALE`): a 1-GFLOPS processor earns
/// 200 credits a day.
pub const COBBLESTONE_SCALE: f64 = 200.0 / 86_400e9;

/// A project's REC on BOINC's scale: credit a day, averaged with the half-life, which is
/// what BOINC's tools show (the Manager's "Average work done"). The model keeps the
/// decayed flops·second sum, which orders projects the same way; over steps short
/// against the half-life BOINC's average is that sum × ln 2 × one day / half-life, in
/// credits.
pub fn rec_credit_per_day(rec: f64) -> f64 {
    rec * COBBLESTONE_SCALE * std::f64::consts::LN_2 * 86_400.0 / REC_HALF_LIFE
}

/// Priority of a project with no resource share (a "backup" project): below every
/// project with a share, so it only gets processors nobody else wants.
pub const ZERO_SHARE_PRIORITY: f64 = -1.0e9;

/// Decays every project's REC from its `rec_time` to `now` and adds the peak flops ×
/// seconds its running jobs used: `usage[p][R]` instance-seconds of resource R by
/// project p (index = project id) since the last update, each instance-second worth
/// `host.instance_flops(R)`. Projects beyond `usage` used nothing.
pub fn update_rec(state: &mut ClientState, usage: &[ResourceMap<f64>], now: Time) {
    let flops = ResourceMap::from_fn(|r| state.host.instance_flops(r));
    let mut last_decay: Option<(u64, f64)> = None;
    for (index, project) in state.projects.iter_mut().enumerate() {
        // A project never updated (rec_time 0) has nothing to decay yet; a clock that
        // went backwards must not make REC grow.
        let dt = if project.rec_time > 0.0 { (now - project.rec_time).max(0.0) } else { 0.0 };
        // The projects were mostly updated together, so most share one decay: the power
        // is taken again only for a different interval.
        let decay = match last_decay {
            Some((interval, decay)) if interval == dt.to_bits() => decay,
            _ => {
                let decay = 0.5_f64.powf(dt / REC_HALF_LIFE);
                last_decay = Some((dt.to_bits(), decay));
                decay
            }
        };
        let used: f64 = usage.get(index).map_or(0.0, |u| {
            ResourceType::ALL
                .into_iter()
                .map(|r| {
                    let seconds = u[r];
                    if seconds.is_finite() { seconds.max(0.0) * flops[r] } else { 0.0 }
                })
                .sum()
        });
        let rec = if project.rec.is_finite() { project.rec.max(0.0) } else { 0.0 };
        project.rec = rec * decay + used;
        project.rec_time = now;
    }
}

/// The priority BOINC 8 gives a project from its REC: `−(rec_p / Σrec) / (share_p /
/// Σshare)`, sums over the projects that are not suspended, 0 when `Σrec = 0`, and
/// [`ZERO_SHARE_PRIORITY`] (less the REC fraction) for a project without a share. The
/// greater, the sooner the project runs: a project that got less than its share of
/// the recent credit is less negative.
pub fn rec_priority(state: &ClientState, project: ProjectId) -> f64 {
    let counted = || state.projects.iter().filter(|p| !p.suspended);
    let rec_sum: f64 = counted().map(|p| p.rec.max(0.0)).sum();
    let share_sum: f64 = counted().map(|p| p.resource_share.max(0.0)).sum();
    let Some(p) = state.projects.get(project.index()) else { return 0.0 };
    let share = if p.suspended { 0.0 } else { p.resource_share.max(0.0) };
    priority_from(p.rec.max(0.0), rec_sum, share, share_sum)
}

/// [`rec_priority`] of every project, indexed by project id, with the sums taken once.
pub fn rec_priorities(state: &ClientState) -> Vec<f64> {
    let counted = || state.projects.iter().filter(|p| !p.suspended);
    let rec_sum: f64 = counted().map(|p| p.rec.max(0.0)).sum();
    let share_sum: f64 = counted().map(|p| p.resource_share.max(0.0)).sum();
    state
        .projects
        .iter()
        .map(|p| {
            let share = if p.suspended { 0.0 } else { p.resource_share.max(0.0) };
            priority_from(p.rec.max(0.0), rec_sum, share, share_sum)
        })
        .collect()
}

/// The priority formula of [`rec_priority`], with the sums given.
pub(crate) fn priority_from(rec: f64, rec_sum: f64, share: f64, share_sum: f64) -> f64 {
    let rec_fraction = if rec_sum > 0.0 { rec / rec_sum } else { 0.0 };
    if share <= 0.0 || share_sum <= 0.0 {
        return ZERO_SHARE_PRIORITY - rec_fraction;
    }
    -rec_fraction / (share / share_sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu_sched::test_support::StateBuilder;

    fn usage_cpu(seconds: f64) -> ResourceMap<f64> {
        let mut u = ResourceMap::default();
        u[ResourceType::Cpu] = seconds;
        u
    }

    #[test]
    fn rec_halves_after_one_half_life() {
        let mut b = StateBuilder::new(1);
        b.project("a", 100.0);
        let mut state = b.build();
        state.projects[0].rec = 8.0e12;
        state.projects[0].rec_time = 1000.0;
        update_rec(&mut state, &[], 1000.0 + REC_HALF_LIFE);
        assert!((state.projects[0].rec - 4.0e12).abs() < 1.0);
        update_rec(&mut state, &[], 1000.0 + 3.0 * REC_HALF_LIFE);
        assert!((state.projects[0].rec - 1.0e12).abs() < 1.0);
        assert_eq!(state.projects[0].rec_time, 1000.0 + 3.0 * REC_HALF_LIFE);
    }

    #[test]
    fn rec_adds_peak_flops_seconds_of_every_resource() {
        let mut b = StateBuilder::new(2).gpus(ResourceType::Nvidia, 1);
        b.project("a", 100.0);
        let mut state = b.build();
        let mut u = usage_cpu(100.0);
        u[ResourceType::Nvidia] = 10.0;
        update_rec(&mut state, &[u], 50.0);
        // 100 CPU-s × 1e9 + 10 GPU-s × (0.2 × 5e10).
        assert!((state.projects[0].rec - (1e11 + 1e11)).abs() < 1.0);
    }

    #[test]
    fn priority_favours_the_project_behind_its_share() {
        let mut b = StateBuilder::new(1);
        b.project("a", 100.0);
        b.project("b", 100.0);
        b.project("c", 200.0);
        let mut state = b.build();
        state.projects[0].rec = 3.0;
        state.projects[1].rec = 1.0;
        state.projects[2].rec = 4.0;
        let pa = rec_priority(&state, ProjectId(0));
        let pb = rec_priority(&state, ProjectId(1));
        let pc = rec_priority(&state, ProjectId(2));
        // a: -(3/8)/(1/4) = -1.5; b: -0.5; c: -(4/8)/(1/2) = -1.
        assert!((pa + 1.5).abs() < 1e-12 && (pb + 0.5).abs() < 1e-12 && (pc + 1.0).abs() < 1e-12);
        assert!(pb > pc && pc > pa);
    }

    #[test]
    fn priority_is_zero_without_rec_and_lowest_without_share() {
        let mut b = StateBuilder::new(1);
        b.project("a", 100.0);
        b.project("backup", 0.0);
        let mut state = b.build();
        assert_eq!(rec_priority(&state, ProjectId(0)), 0.0);
        assert!(rec_priority(&state, ProjectId(1)) <= ZERO_SHARE_PRIORITY);
        state.projects[0].rec = 1.0;
        assert!(rec_priority(&state, ProjectId(1)) < rec_priority(&state, ProjectId(0)));
    }

    #[test]
    fn suspended_projects_do_not_count_in_the_sums() {
        let mut b = StateBuilder::new(1);
        b.project("a", 100.0);
        b.project("b", 100.0);
        let mut state = b.build();
        state.projects[0].rec = 1.0;
        state.projects[1].rec = 1.0;
        state.projects[1].suspended = true;
        assert!((rec_priority(&state, ProjectId(0)) + 1.0).abs() < 1e-12);
    }
}
