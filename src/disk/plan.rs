//! The working state every seed-004 procedure deletes against: the usage and limits,
//! each project's expendable files in deletion-policy order, and the deletions planned
//! so far. Planning on a copy keeps the core pure (the caller deletes) and lets a
//! procedure that fails (`associate_file` returning false) drop its plan whole.

use super::deletion_policy::{DeletionCandidate, DeletionReason, deletion_orders};
use super::limits::DiskUsage;
use super::references::FileReferences;
use crate::Time;
use crate::model::{ClientState, FileId, JobId, ProjectId};

/// One planned deletion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Deletion {
    /// The file to delete.
    pub file: FileId,
    /// Its project.
    pub project: ProjectId,
    /// Bytes it frees.
    pub nbytes: f64,
    /// Why it was chosen before the project's other files.
    pub reason: DeletionReason,
}

/// Deletions planned against a snapshot of the state.
#[derive(Debug, Clone)]
pub struct DeletionPlan {
    usage: DiskUsage,
    references: FileReferences,
    /// Per project, its expendable files in deletion order.
    candidates: Vec<Vec<DeletionCandidate>>,
    /// Per project, whether each candidate is already planned.
    taken: Vec<Vec<bool>>,
    /// Per project, every candidate before this one is taken.
    first_left: Vec<usize>,
    deletions: Vec<Deletion>,
    now: Time,
}

impl DeletionPlan {
    /// A plan with nothing deleted yet. `core_usage` is what the client itself uses.
    pub fn new(state: &ClientState, core_usage: f64, now: Time) -> DeletionPlan {
        let usage = DiskUsage::measure(state, core_usage);
        let references = FileReferences::of(state);
        let candidates = deletion_orders(state, &references, now);
        let taken = candidates.iter().map(|c| vec![false; c.len()]).collect();
        let first_left = vec![0; candidates.len()];
        DeletionPlan {
            usage,
            references,
            candidates,
            taken,
            first_left,
            deletions: Vec::new(),
            now,
        }
    }

    /// Usage and limits after the deletions planned so far.
    pub fn usage(&self) -> &DiskUsage {
        &self.usage
    }

    /// The deletions planned so far, in order.
    pub fn deletions(&self) -> &[Deletion] {
        &self.deletions
    }

    /// The planned deletions, in order.
    pub fn into_deletions(self) -> Vec<Deletion> {
        self.deletions
    }

    /// The project's candidates not yet planned, in deletion order.
    pub fn remaining(&self, project: ProjectId) -> impl Iterator<Item = &DeletionCandidate> {
        let index = project.index();
        let start = self.first_left.get(index).copied().unwrap_or(0);
        let candidates = self.candidates.get(index).map_or(&[][..], |c| &c[start..]);
        let taken = self.taken.get(index).map_or(&[][..], |t| &t[start..]);
        candidates.iter().zip(taken).filter(|(_, taken)| !**taken).map(|(c, _)| c)
    }

    /// Whether the project has a file left that may go at `max_priority` (`None`: any).
    pub fn has_candidate(&self, project: ProjectId, max_priority: Option<i32>) -> bool {
        self.remaining(project).any(|c| max_priority.is_none_or(|m| c.deletable_at(m)))
    }

    /// Plans the deletion of the project's next file that may go at `max_priority`
    /// (`None`: any priority); returns the bytes freed, `None` when no file may go.
    pub fn delete_next(&mut self, project: ProjectId, max_priority: Option<i32>) -> Option<f64> {
        let index = project.index();
        let start = *self.first_left.get(index)?;
        let position = (start..self.candidates[index].len()).find(|&i| {
            !self.taken[index][i]
                && max_priority.is_none_or(|m| self.candidates[index][i].deletable_at(m))
        })?;
        self.taken[index][position] = true;
        while self.first_left[index] < self.taken[index].len()
            && self.taken[index][self.first_left[index]]
        {
            self.first_left[index] += 1;
        }
        let candidate = self.candidates[index][position];
        Some(self.plan(candidate))
    }

    /// Seed 004 violation step 3: forgets an acknowledged result and plans the deletion
    /// of every file only it referred to; returns the bytes freed.
    pub fn forget_result(&mut self, state: &ClientState, job: JobId) -> f64 {
        let released = self.references.forget_result(state, job);
        let mut freed = 0.0;
        for file in released {
            if super::limits::occupies_disk(state.file(file)) {
                let candidate = DeletionCandidate::of(state, file, self.now);
                if candidate.nbytes > 0.0 {
                    freed += self.plan(candidate);
                }
            }
        }
        freed
    }

    fn plan(&mut self, candidate: DeletionCandidate) -> f64 {
        self.usage.remove(candidate.project, candidate.nbytes);
        self.deletions.push(Deletion {
            file: candidate.file,
            project: candidate.project,
            nbytes: candidate.nbytes,
            reason: candidate.reason,
        });
        candidate.nbytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::deletion_policy::{P_HIGH, P_LOW};
    use crate::disk::tests_support::DiskStateBuilder;

    #[test]
    fn deletes_in_order_respecting_the_priority_ceiling() {
        let mut b = DiskStateBuilder::new(&[1.0]);
        let high = b.file(0, 5.0, true, 1.0);
        let low = b.file(0, 7.0, true, 2.0);
        b.state.files[high.index()].priority = Some(P_HIGH);
        let mut plan = DeletionPlan::new(&b.state, 0.0, 10.0);
        assert_eq!(plan.usage().all_projects_usage(), 12.0);
        // Least recently used would take `high` first, but the ceiling skips it.
        assert_eq!(plan.delete_next(ProjectId(0), Some(P_LOW)), Some(7.0));
        assert_eq!(plan.delete_next(ProjectId(0), Some(P_LOW)), None);
        assert!(plan.has_candidate(ProjectId(0), None));
        assert_eq!(plan.delete_next(ProjectId(0), None), Some(5.0));
        assert!(!plan.has_candidate(ProjectId(0), None));
        assert_eq!(plan.usage().all_projects_usage(), 0.0);
        let files: Vec<FileId> = plan.deletions().iter().map(|d| d.file).collect();
        assert_eq!(files, vec![low, high]);
        assert_eq!(plan.delete_next(ProjectId(3), None), None);
    }

    #[test]
    fn forgetting_an_acknowledged_result_frees_its_files() {
        let mut b = DiskStateBuilder::new(&[1.0]);
        let shared = b.file(0, 4.0, true, 1.0);
        let own = b.file(0, 6.0, false, 1.0);
        let first = b.job(0, &[shared, own], &[], true);
        let second = b.job(0, &[shared], &[], true);
        let mut plan = DeletionPlan::new(&b.state, 0.0, 10.0);
        assert!(!plan.has_candidate(ProjectId(0), None));
        assert_eq!(plan.forget_result(&b.state, first), 6.0);
        assert_eq!(plan.forget_result(&b.state, second), 4.0);
        assert_eq!(plan.usage().all_projects_usage(), 0.0);
    }
}
