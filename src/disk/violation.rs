//! Seed 004 "Violating User Disk Usage Preferences": `data_manager_poll`, run at the top
//! of the client's polling. Without a violation it does nothing (and lifts a suspension
//! it imposed). When BOINC uses more than Total_Limit it plans, stopping as soon as the
//! usage is back within the limit:
//!
//! 1. deleting from the offenders, greatest first, until none offends or none has a file
//!    left to delete;
//! 2. cycling through the projects deleting one file from each per round, in each
//!    project's deletion order, until only referenced files are left;
//! 3. cycling through the projects forgetting one result from each per round (oldest
//!    first) and deleting the files only it referred to. Files of running tasks, queued
//!    jobs and unreported results are never deleted, so the results step 3 may forget
//!    are those whose server ack has arrived: neither awaiting it nor computing.
//!
//! If the usage is still over the limit, all computation is suspended with a message
//! saying why and what the user can do; it resumes at the first poll that finds the
//! usage within the limit again.

use super::limits::BYTES_PER_GB;
use super::offender::greatest_offender;
use super::plan::{Deletion, DeletionPlan};
use crate::Time;
use crate::model::{ClientState, JobId, ProjectId};

/// What violation handling asks the caller to do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum DiskEffect {
    /// Delete a file.
    Delete(Deletion),
    /// Forget an acknowledged result (its record and its references).
    ForgetResult(JobId),
    /// Suspend all computation and show the user `message`.
    SuspendComputation {
        /// Why, and what to do about it.
        message: String,
    },
    /// Computation may resume: the usage is within the limit again.
    ResumeComputation,
}

/// One poll's result.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PollOutcome {
    /// The seed's return value: the limit is violated and nothing more can be freed
    /// (computation is suspended).
    pub violated: bool,
    /// The limit was exceeded when the poll started, whatever it then freed.
    pub found_violation: bool,
    /// The offenders when the poll started, while the limit was exceeded.
    pub offenders: Vec<ProjectId>,
    /// What to carry out, in order.
    pub effects: Vec<DiskEffect>,
}

/// The state `data_manager_poll` keeps between polls: whether it suspended computation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DataManager {
    suspended: bool,
}

impl DataManager {
    /// The data manager of a client whose computing is (or is not) suspended for lack
    /// of disk space, as its state says.
    pub fn with_suspension(suspended: bool) -> Self {
        DataManager { suspended }
    }

    /// Whether computation is suspended for lack of disk space.
    pub fn is_suspended(&self) -> bool {
        self.suspended
    }
}

/// Seed 004 `data_manager_poll` (see the module documentation).
pub fn data_manager_poll(
    manager: &mut DataManager,
    state: &ClientState,
    core_usage: f64,
    now: Time,
) -> PollOutcome {
    let mut plan = DeletionPlan::new(state, core_usage, now);
    let mut outcome = PollOutcome::default();
    if !plan.usage().is_violated() {
        if manager.suspended {
            manager.suspended = false;
            outcome.effects.push(DiskEffect::ResumeComputation);
        }
        return outcome;
    }
    outcome.found_violation = true;
    outcome.offenders = super::offender::offenders(plan.usage());
    let projects: Vec<ProjectId> = state.project_ids().collect();
    let mut forgotten = Vec::new();

    // Step 1: the offenders, greatest first.
    while plan.usage().is_violated() {
        let Some(offender) = greatest_offender(plan.usage(), |p| plan.has_candidate(p, None))
        else {
            break;
        };
        plan.delete_next(offender, None);
    }
    // Step 2: one file per project per round.
    while plan.usage().is_violated() && projects.iter().any(|&p| plan.has_candidate(p, None)) {
        for &project in &projects {
            if !plan.usage().is_violated() {
                break;
            }
            plan.delete_next(project, None);
        }
    }
    // Step 3: one acknowledged result per project per round.
    let mut acknowledged = acknowledged_results(state);
    while plan.usage().is_violated() && acknowledged.iter().any(|r| !r.is_empty()) {
        for results in &mut acknowledged {
            if !plan.usage().is_violated() {
                break;
            }
            if let Some(job) = results.pop() {
                forgotten.push(job);
                plan.forget_result(state, job);
            }
        }
    }

    let over = plan.usage().is_violated();
    let usage = plan.usage().all_projects_usage();
    let limit = plan.usage().limits.all_projects_limit;
    outcome.effects.extend(forgotten.into_iter().map(DiskEffect::ForgetResult));
    outcome.effects.extend(plan.into_deletions().into_iter().map(DiskEffect::Delete));
    if over {
        outcome.violated = true;
        if !manager.suspended {
            manager.suspended = true;
            outcome
                .effects
                .push(DiskEffect::SuspendComputation { message: suspension_message(usage, limit) });
        }
    } else if manager.suspended {
        manager.suspended = false;
        outcome.effects.push(DiskEffect::ResumeComputation);
    }
    outcome
}

/// Per project, its acknowledged results, the oldest (lowest id) last so `pop` takes it.
fn acknowledged_results(state: &ClientState) -> Vec<Vec<JobId>> {
    let mut results = vec![Vec::new(); state.projects.len()];
    for (index, record) in state.jobs.iter().enumerate().rev() {
        let job = JobId::from_index(index);
        if record.got_server_ack
            && let Some(list) = results.get_mut(record.project.index())
        {
            list.push(job);
        }
    }
    results
}

fn suspension_message(usage: f64, limit: f64) -> String {
    format!(
        "Computation suspended: BOINC's projects use {:.2} GB of disk but the disk \
         preferences allow them {:.2} GB, and every remaining file belongs to a running \
         task, a queued job or a result not yet reported. Allow more disk space \
         (disk_max_used_gb, disk_max_used_pct, disk_min_free_gb), free space on the disk, \
         or let tasks finish and report; computation resumes once usage is within the limit.",
        usage / BYTES_PER_GB,
        limit / BYTES_PER_GB
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::limits::DiskUsage;
    use crate::disk::tests_support::DiskStateBuilder;
    use crate::model::FileStatus;

    const GB: f64 = BYTES_PER_GB;

    fn deleted(outcome: &PollOutcome) -> Vec<(ProjectId, f64)> {
        outcome
            .effects
            .iter()
            .filter_map(|e| match e {
                DiskEffect::Delete(d) => Some((d.project, d.nbytes / GB)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn no_violation_no_action() {
        let mut b = DiskStateBuilder::new(&[1.0, 1.0]);
        b.state.prefs.disk_max_used_gb = 4.0;
        b.file(0, GB, true, 1.0);
        let mut manager = DataManager::default();
        assert_eq!(data_manager_poll(&mut manager, &b.state, 0.0, 10.0), PollOutcome::default());
    }

    #[test]
    fn the_offender_goes_first_until_usage_is_within_the_limit() {
        let mut b = DiskStateBuilder::new(&[1.0, 1.0]);
        b.state.prefs.disk_max_used_gb = 4.0;
        // Limits 2 + 2 GB; A uses 4, B 2: 2 GB over, A offends by 2.
        for day in 0..4 {
            b.file(0, GB, true, f64::from(day) + 1.0);
        }
        b.file(1, GB, true, 1.0);
        b.file(1, GB, true, 2.0);
        let mut manager = DataManager::default();
        let outcome = data_manager_poll(&mut manager, &b.state, 0.0, 10.0);
        assert!(outcome.found_violation && !outcome.violated);
        assert_eq!(outcome.offenders, vec![ProjectId(0)]);
        assert_eq!(deleted(&outcome), vec![(ProjectId(0), 1.0), (ProjectId(0), 1.0)]);
    }

    #[test]
    fn step_two_deletes_from_projects_within_their_share() {
        let mut b = DiskStateBuilder::new(&[1.0, 1.0]);
        b.state.prefs.disk_max_used_gb = 2.0;
        // A offends with a queued job's 3 GB, which must stay; B is within its 1 GB.
        let queued = b.file(0, 3.0 * GB, true, 1.0);
        b.job(0, &[queued], &[], false);
        b.file(1, 0.5 * GB, true, 1.0);
        b.file(1, 0.5 * GB, true, 2.0);
        let mut manager = DataManager::default();
        let outcome = data_manager_poll(&mut manager, &b.state, 0.0, 10.0);
        assert_eq!(deleted(&outcome), vec![(ProjectId(1), 0.5), (ProjectId(1), 0.5)]);
        assert!(outcome.violated);
    }

    #[test]
    fn acknowledged_results_are_forgotten_and_their_files_deleted() {
        let mut b = DiskStateBuilder::new(&[1.0]);
        b.state.prefs.disk_max_used_gb = 1.0;
        let input = b.file(0, 2.0 * GB, false, 1.0);
        let acked = b.job(0, &[input], &[], true);
        let mut manager = DataManager::default();
        let outcome = data_manager_poll(&mut manager, &b.state, 0.0, 10.0);
        assert!(!outcome.violated);
        assert_eq!(outcome.effects[0], DiskEffect::ForgetResult(acked));
        assert_eq!(deleted(&outcome), vec![(ProjectId(0), 2.0)]);
    }

    #[test]
    fn suspends_when_nothing_more_can_go_and_resumes_within_the_limit() {
        let mut b = DiskStateBuilder::new(&[1.0, 1.0]);
        b.state.prefs.disk_max_used_gb = 1.0;
        let queued = b.file(0, 2.0 * GB, true, 1.0);
        b.job(0, &[queued], &[], false);
        let loose = b.file(1, GB, true, 1.0);
        let mut manager = DataManager::default();
        let outcome = data_manager_poll(&mut manager, &b.state, 0.0, 10.0);
        assert!(outcome.violated && manager.is_suspended());
        assert_eq!(deleted(&outcome), vec![(ProjectId(1), 1.0)]);
        let Some(DiskEffect::SuspendComputation { message }) = outcome.effects.last() else {
            panic!("expected a suspension, got {:?}", outcome.effects);
        };
        assert!(message.contains("2.00 GB") && message.contains("1.00 GB"), "{message}");
        // Still over, nothing new: no second suspension message.
        b.state.files[loose.index()].status = FileStatus::NotPresent;
        let again = data_manager_poll(&mut manager, &b.state, 0.0, 20.0);
        assert!(again.violated && again.effects.is_empty());
        // The user allows more: computation resumes.
        b.state.prefs.disk_max_used_gb = 3.0;
        assert!(!DiskUsage::measure(&b.state, 0.0).is_violated());
        let resumed = data_manager_poll(&mut manager, &b.state, 0.0, 30.0);
        assert_eq!(resumed.effects, vec![DiskEffect::ResumeComputation]);
        assert!(!manager.is_suspended());
    }
}
