//! Seed 004 "Adding a file to a project": `get_more_disk_space` and `associate_file`, as
//! the seed's pseudo code has them.
//!
//! `get_more_disk_space(p, space_needed)`: if the free space already exceeds the need,
//! done. Otherwise, with every project unchecked and the deletion priority at P_LOW,
//! until enough space is free: take the greatest unchecked offender; if there is none,
//! or it is `p` itself, raise the priority one step (failing past P_HIGH) and look at
//! every project again; else mark it checked and delete its files at or below the
//! priority (expired ones always) until it no longer offends.
//!
//! `associate_file(fip)`: if `get_more_disk_space` succeeds the file fits; otherwise
//! delete the project's own expendable files until it fits; if even that does not make
//! room, the file cannot be associated. A failed association deletes nothing: the
//! deletions it tried would not make the file fit, so they are dropped with the plan.

use super::deletion_policy::{P_HIGH, P_LOW};
use super::error::DiskError;
use super::limits::occupies_disk;
use super::offender::greatest_offender;
use super::plan::{Deletion, DeletionPlan};
use crate::Time;
use crate::model::{ClientState, FileId, ProjectId};

/// What associating a file needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Association {
    /// The file fits once `deletions` are carried out.
    pub associated: bool,
    /// The files to delete first, in order (empty when not associated).
    pub deletions: Vec<Deletion>,
}

/// Makes `space_needed` bytes free for `project` by deleting from offenders (seed 004
/// pseudo code); returns whether the space is free in `plan` now.
pub fn get_more_disk_space(plan: &mut DeletionPlan, project: ProjectId, space_needed: f64) -> bool {
    if !space_needed.is_finite() {
        return false;
    }
    let mut total_space = plan.usage().free_space();
    if total_space > space_needed {
        return true;
    }
    let nprojects = plan.usage().project_usage.len();
    let mut checked = vec![false; nprojects];
    let mut priority = P_LOW;
    while total_space < space_needed {
        match greatest_offender(plan.usage(), |q| !checked[q.index()]) {
            Some(offender) if offender != project => {
                checked[offender.index()] = true;
                while plan.usage().overage(offender) > 0.0 {
                    match plan.delete_next(offender, Some(priority)) {
                        Some(freed) => total_space += freed,
                        None => break,
                    }
                }
            }
            _ => {
                if priority >= P_HIGH {
                    return false;
                }
                priority += 1;
                checked.fill(false);
            }
        }
    }
    true
}

/// Plans room for a file of the state (seed 004 `associate_file`). A file already on
/// disk is counted in its project's usage and needs nothing.
pub fn associate_file(
    state: &ClientState,
    file: FileId,
    core_usage: f64,
    now: Time,
) -> Result<Association, DiskError> {
    let info = state
        .files
        .get(file.index())
        .ok_or(DiskError::UnknownFile { file: file.index(), nfiles: state.files.len() })?;
    if occupies_disk(info) {
        return Ok(Association { associated: true, deletions: Vec::new() });
    }
    let needed = super::limits::sane_bytes(info.nbytes);
    let mut plan = DeletionPlan::new(state, core_usage, now);
    if get_more_disk_space(&mut plan, info.project, needed) {
        return Ok(Association { associated: true, deletions: plan.into_deletions() });
    }
    while plan.usage().free_space() < needed {
        if plan.delete_next(info.project, None).is_none() {
            return Ok(Association { associated: false, deletions: Vec::new() });
        }
    }
    Ok(Association { associated: true, deletions: plan.into_deletions() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::limits::{BYTES_PER_GB, DiskUsage};
    use crate::disk::references::FileReferences;
    use crate::disk::tests_support::DiskStateBuilder;
    use crate::model::FileStatus;
    use proptest::prelude::*;

    const GB: f64 = BYTES_PER_GB;

    /// Seed 004's example: A and B with shares 75 % and 25 % of a 10 GB limit.
    fn seventy_five_twenty_five() -> DiskStateBuilder {
        let mut b = DiskStateBuilder::new(&[75.0, 25.0]);
        b.state.prefs.disk_max_used_gb = 10.0;
        b
    }

    fn usage(b: &DiskStateBuilder) -> DiskUsage {
        DiskUsage::measure(&b.state, 0.0)
    }

    fn gb(x: f64) -> f64 {
        (x / GB * 1e6).round() / 1e6
    }

    #[test]
    fn seventy_five_twenty_five_limits() {
        let b = seventy_five_twenty_five();
        let u = usage(&b);
        assert_eq!(u.limits.project_limit(ProjectId(0)), 7.5 * GB);
        assert_eq!(u.limits.project_limit(ProjectId(1)), 2.5 * GB);
    }

    #[test]
    fn a_new_file_of_a_within_its_share_is_made_room_for_by_deleting_from_b() {
        let mut b = seventy_five_twenty_five();
        // A uses 5 GB (under its 7.5), B 5 GB (over its 2.5): the disk is full.
        for day in 0..5 {
            b.file(0, GB, true, 1.0 + f64::from(day));
            b.file(1, GB, true, 1.0 + f64::from(day));
        }
        let new = b.file(0, 2.0 * GB, false, 0.0);
        b.state.files[new.index()].status = FileStatus::NotPresent;
        let association = associate_file(&b.state, new, 0.0, 100.0).expect("known file");
        assert!(association.associated);
        // B is deleted from until it no longer offends: down to its 2.5 GB share, whole
        // files, oldest first.
        assert!(association.deletions.iter().all(|d| d.project == ProjectId(1)));
        let freed: f64 = association.deletions.iter().map(|d| d.nbytes).sum();
        assert_eq!(gb(freed), 3.0);
    }

    #[test]
    fn unused_share_is_borrowed_without_deleting() {
        let mut b = seventy_five_twenty_five();
        // A uses 1 GB of its 7.5; B already uses 6 GB, more than its 2.5 GB share.
        b.file(0, GB, true, 1.0);
        for _ in 0..6 {
            b.file(1, GB, true, 1.0);
        }
        let new = b.file(1, 2.0 * GB, false, 0.0);
        b.state.files[new.index()].status = FileStatus::NotPresent;
        let association = associate_file(&b.state, new, 0.0, 10.0).expect("known file");
        assert_eq!(association, Association { associated: true, deletions: Vec::new() });
        assert_eq!(gb(usage(&b).free_space()), 3.0);
    }

    #[test]
    fn the_greatest_offender_pays_for_its_own_file() {
        let mut b = seventy_five_twenty_five();
        // B offends by 6.5 GB and fills the disk; its next file must come out of its own.
        b.file(0, GB, true, 1.0);
        for day in 0..9 {
            b.file(1, GB, true, 1.0 + f64::from(day));
        }
        let new = b.file(1, GB, false, 0.0);
        b.state.files[new.index()].status = FileStatus::NotPresent;
        let association = associate_file(&b.state, new, 0.0, 10.0).expect("known file");
        assert!(association.associated);
        assert_eq!(association.deletions.len(), 1);
        assert_eq!(association.deletions[0].project, ProjectId(1));
    }

    #[test]
    fn priority_is_raised_step_by_step() {
        let mut b = seventy_five_twenty_five();
        b.state.projects[1].deletion_policy.priority = true;
        for _ in 0..5 {
            b.file(0, GB, true, 1.0);
        }
        let medium = b.file(1, 2.0 * GB, true, 1.0);
        let high = b.file(1, 2.0 * GB, true, 2.0);
        let low = b.file(1, GB, true, 3.0);
        b.state.files[medium.index()].priority = Some(3);
        b.state.files[high.index()].priority = Some(5);
        let new = b.file(0, 2.0 * GB, false, 0.0);
        b.state.files[new.index()].status = FileStatus::NotPresent;
        let association = associate_file(&b.state, new, 0.0, 10.0).expect("known file");
        assert!(association.associated);
        let deleted: Vec<FileId> = association.deletions.iter().map(|d| d.file).collect();
        // P_LOW frees 1 GB, not enough; at priority 3 the medium file goes and B no
        // longer offends; the high-priority file stays.
        assert_eq!(deleted, vec![low, medium]);
    }

    #[test]
    fn a_file_that_cannot_fit_deletes_nothing() {
        let mut b = seventy_five_twenty_five();
        let needed = b.file(0, 9.0 * GB, true, 1.0);
        b.job(0, &[needed], &[], false);
        b.file(1, GB, true, 1.0);
        let new = b.file(1, 2.0 * GB, false, 0.0);
        b.state.files[new.index()].status = FileStatus::NotPresent;
        let association = associate_file(&b.state, new, 0.0, 10.0).expect("known file");
        assert_eq!(association, Association { associated: false, deletions: Vec::new() });
        assert_eq!(
            associate_file(&b.state, FileId(99), 0.0, 10.0),
            Err(DiskError::UnknownFile { file: 99, nfiles: b.state.files.len() })
        );
    }

    /// A random state: two or three projects, files of random size, some referred to by
    /// a queued, running or unreported job, some acknowledged, a new file to associate.
    fn random_state() -> impl Strategy<Value = (DiskStateBuilder, FileId)> {
        (
            prop::collection::vec(1.0..100.0f64, 2..=3),
            prop::collection::vec((0usize..3, 1u32..40, 0u8..5, 1i32..=5, 0.0..100.0f64), 1..25),
            (0usize..3, 1u32..60),
            1.0..80.0f64,
        )
            .prop_map(|(shares, files, (new_project, new_size), limit)| {
                let mut b = DiskStateBuilder::new(&shares);
                b.state.prefs.disk_max_used_gb = limit;
                let nprojects = shares.len();
                for (project, size, use_kind, priority, downloaded) in files {
                    let project = project % nprojects;
                    let file = b.file(project, f64::from(size) * GB, true, downloaded + 1.0);
                    b.state.files[file.index()].priority = Some(priority);
                    match use_kind {
                        0 => {
                            b.job(project, &[file], &[], false);
                        }
                        1 => {
                            b.running_job(project, &[], &[file]);
                        }
                        2 => {
                            b.job(project, &[file], &[], true);
                        }
                        _ => {}
                    }
                }
                let new = b.file(new_project % nprojects, f64::from(new_size) * GB, false, 0.0);
                b.state.files[new.index()].status = FileStatus::NotPresent;
                (b, new)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn association_keeps_within_the_limit_and_never_deletes_what_is_needed(
            (b, new) in random_state()
        ) {
            let state = &b.state;
            let before = DiskUsage::measure(state, 0.0);
            let references = FileReferences::of(state);
            let association = associate_file(state, new, 0.0, 200.0).expect("known file");
            for deletion in &association.deletions {
                prop_assert!(!references.is_referenced(deletion.file));
                prop_assert!(occupies_disk(state.file(deletion.file)));
            }
            let freed: f64 = association.deletions.iter().map(|d| d.nbytes).sum();
            let after = before.all_projects_usage() - freed + state.file(new).nbytes;
            if association.associated {
                prop_assert!(after <= before.limits.all_projects_limit * (1.0 + 1e-12));
            } else {
                prop_assert!(association.deletions.is_empty());
            }
        }
    }
}
