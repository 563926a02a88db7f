//! Seed 004 "Scheduling Server Changes" and "Calculating free space": the three amounts of
//! free space a scheduler request to a project carries — the free space, the free space
//! if the client deleted from offending projects, and the free space if it also deleted
//! from the requesting project itself — so the server can size its reply.
//!
//! The seed's `potentially_free(p)` sums every expendable file of an offender; boinc-rs
//! counts what `get_more_disk_space` would actually take: the offender's files in its
//! deletion order until it no longer offends. A server that trusted the larger sum could
//! send files the client would then fail to associate. The requesting project's own
//! share follows the seed: its lowest-priority and expired expendable files.

use super::deletion_policy::P_LOW;
use super::limits::DiskUsage;
use super::offender::offenders;
use super::plan::DeletionPlan;
use crate::Time;
use crate::model::{ClientState, ProjectId};
use serde::{Deserialize, Serialize};

/// The three free-space figures for one project's scheduler request, bytes (never
/// negative; each at least the one before).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct FreeSpaceFigures {
    /// 1. The free space (`anything_free`).
    pub free: f64,
    /// 2. The free space once files are deleted from the offending projects.
    pub free_after_offenders: f64,
    /// 3. The free space once files are also deleted from the project itself.
    pub free_after_offenders_and_self: f64,
}

/// The figures for a request to `project`. `core_usage` is what the client itself uses.
pub fn free_space_figures(
    state: &ClientState,
    project: ProjectId,
    core_usage: f64,
    now: Time,
) -> FreeSpaceFigures {
    free_space_report(state, project, core_usage, now).1
}

/// The usage and limits now, and the figures for a request to `project`: what a
/// scheduler request reports (BOINC's three usage figures come from the first).
pub fn free_space_report(
    state: &ClientState,
    project: ProjectId,
    core_usage: f64,
    now: Time,
) -> (DiskUsage, FreeSpaceFigures) {
    if state.files.is_empty() {
        // Nothing could be deleted: the later figures are the first (a request is made
        // at every RPC, so this common case skips planning).
        let usage = DiskUsage::measure(state, core_usage);
        let free = usage.free_space().max(0.0);
        let figures = FreeSpaceFigures {
            free,
            free_after_offenders: free,
            free_after_offenders_and_self: free,
        };
        return (usage, figures);
    }
    let mut plan = DeletionPlan::new(state, core_usage, now);
    let measured = plan.usage().clone();
    let free = plan.usage().free_space().max(0.0);
    for offender in offenders(plan.usage()).into_iter().filter(|&p| p != project) {
        while plan.usage().overage(offender) > 0.0 && plan.delete_next(offender, None).is_some() {}
    }
    let free_after_offenders = plan.usage().free_space().max(free);
    let own: f64 = plan
        .remaining(project)
        .filter(|c| c.priority <= P_LOW || c.expired)
        .map(|c| c.nbytes)
        .sum();
    let figures = FreeSpaceFigures {
        free,
        free_after_offenders,
        free_after_offenders_and_self: (free_after_offenders + own).max(free_after_offenders),
    };
    (measured, figures)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::limits::BYTES_PER_GB;
    use crate::disk::tests_support::DiskStateBuilder;

    const GB: f64 = BYTES_PER_GB;

    #[test]
    fn three_figures() {
        let mut b = DiskStateBuilder::new(&[75.0, 25.0]);
        b.state.prefs.disk_max_used_gb = 10.0;
        // A: 4 GB (1 GB of it needed by a queued job, 1 GB of high priority); B: 5 GB,
        // 2.5 GB over its share. 1 GB is free.
        let needed = b.file(0, GB, true, 1.0);
        b.job(0, &[needed], &[], false);
        let high = b.file(0, GB, true, 1.0);
        b.state.files[high.index()].priority = Some(5);
        b.file(0, 2.0 * GB, true, 1.0);
        for day in 0..5 {
            b.file(1, GB, true, f64::from(day) + 1.0);
        }
        let figures = free_space_figures(&b.state, ProjectId(0), 0.0, 10.0);
        assert_eq!(figures.free / GB, 1.0);
        // B down to 2.5 GB in whole files: 3 GB more.
        assert_eq!(figures.free_after_offenders / GB, 4.0);
        // A's own low-priority expendable file: 2 GB more.
        assert_eq!(figures.free_after_offenders_and_self / GB, 6.0);
        // For B nobody else offends; its own five files could go.
        let for_b = free_space_figures(&b.state, ProjectId(1), 0.0, 10.0);
        assert_eq!(for_b.free_after_offenders / GB, 1.0);
        assert_eq!(for_b.free_after_offenders_and_self / GB, 6.0);
    }

    #[test]
    fn without_files_the_three_figures_are_the_free_space() {
        let mut b = DiskStateBuilder::new(&[1.0, 1.0]);
        b.state.prefs.disk_max_used_gb = 2.0;
        let figures = free_space_figures(&b.state, ProjectId(0), 0.0, 10.0);
        assert_eq!(figures.free, figures.free_after_offenders);
        assert_eq!(figures.free, figures.free_after_offenders_and_self);
        let planned = DeletionPlan::new(&b.state, 0.0, 10.0).usage().free_space().max(0.0);
        assert_eq!(figures.free, planned);
    }

    #[test]
    fn a_violation_reports_no_negative_space() {
        let mut b = DiskStateBuilder::new(&[1.0]);
        b.state.prefs.disk_max_used_gb = 1.0;
        let needed = b.file(0, 3.0 * GB, true, 1.0);
        b.job(0, &[needed], &[], false);
        let figures = free_space_figures(&b.state, ProjectId(0), 0.0, 10.0);
        assert_eq!(
            figures,
            FreeSpaceFigures {
                free: 0.0,
                free_after_offenders: 0.0,
                free_after_offenders_and_self: 0.0
            }
        );
    }
}
