//! Which files are still needed (seed 004: "Provide disk space for completed results /
//! active results / queued results"; violation handling step 2 stops at "only referenced
//! files", step 3 releases results that are neither awaiting their server ack nor part
//! of a computation).
//!
//! A file is *needed*, and never planned for deletion, when a job that the server has
//! not acknowledged refers to it (its workunit's input or its own output: this covers
//! running tasks, queued jobs and unreported results), when it is an app's executable
//! (app versions refer to it; the model keeps no link from versions to files), when it
//! is one of the volunteer's own files (app_info.xml), or when
//! it is an output still waiting for its upload. A file referred to only by
//! acknowledged results is *referenced* but not needed: the client forgets such results
//! (step 3), after which the file may go.

use crate::model::{ClientState, FileId, FileRef, JobId};

/// The references held on every file of a state.
#[derive(Debug, Clone, PartialEq)]
pub struct FileReferences {
    /// By file index: some reason forbids deleting it.
    needed: Vec<bool>,
    /// By file index: references from acknowledged results still on record.
    acknowledged: Vec<u32>,
}

impl FileReferences {
    /// Counts the references of every file of `state`.
    pub fn of(state: &ClientState) -> FileReferences {
        let nfiles = state.files.len();
        let mut needed: Vec<bool> = state
            .files
            .iter()
            .map(|f| f.executable || f.anonymous_platform || (f.upload_when_present && !f.uploaded))
            .collect();
        let mut acknowledged = vec![0u32; nfiles];
        for job in &state.jobs {
            for file in job_files(state, job.workunit.index(), &job.output_files) {
                if job.got_server_ack {
                    acknowledged[file.index()] += 1;
                } else {
                    needed[file.index()] = true;
                }
            }
        }
        FileReferences { needed, acknowledged }
    }

    /// Whether deleting the file would take something a task, a queued job, an unreported
    /// result or an app needs (also true for an id the state doesn't hold).
    pub fn is_needed(&self, file: FileId) -> bool {
        self.needed.get(file.index()).copied().unwrap_or(true)
    }

    /// Whether anything still refers to the file (needed, or an acknowledged result).
    pub fn is_referenced(&self, file: FileId) -> bool {
        self.is_needed(file) || self.acknowledged.get(file.index()).is_some_and(|&n| n > 0)
    }

    /// Forgets an acknowledged result's references (seed 004 violation step 3); returns
    /// the files nothing refers to any more. A result not yet acknowledged is left alone:
    /// its files stay needed.
    pub fn forget_result(&mut self, state: &ClientState, job: JobId) -> Vec<FileId> {
        let Some(record) = state.jobs.get(job.index()).filter(|j| j.got_server_ack) else {
            return Vec::new();
        };
        let mut released = Vec::new();
        for file in job_files(state, record.workunit.index(), &record.output_files) {
            let count = &mut self.acknowledged[file.index()];
            if *count > 0 {
                *count -= 1;
                if *count == 0 && !self.needed[file.index()] {
                    released.push(file);
                }
            }
        }
        released
    }
}

/// A job's files: its workunit's inputs, then its outputs; ids outside the state are
/// skipped (a corrupt reference protects nothing and deletes nothing).
fn job_files<'s>(
    state: &'s ClientState,
    workunit: usize,
    outputs: &'s [FileRef],
) -> impl Iterator<Item = FileId> + 's {
    let inputs = state.workunits.get(workunit).map_or(&[][..], |w| &w.input_files[..]);
    inputs.iter().chain(outputs).map(|r| r.file).filter(|f| f.index() < state.files.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::tests_support::DiskStateBuilder;

    #[test]
    fn unacknowledged_jobs_need_their_files_acknowledged_ones_only_refer() {
        let mut b = DiskStateBuilder::new(&[1.0]);
        let queued_input = b.file(0, 10.0, true, 0.0);
        let running_output = b.file(0, 10.0, false, 0.0);
        let acked_input = b.file(0, 10.0, true, 0.0);
        let loose = b.file(0, 10.0, true, 0.0);
        b.job(0, &[queued_input], &[], false);
        b.running_job(0, &[], &[running_output]);
        let acked = b.job(0, &[acked_input], &[], true);
        let state = b.state;
        let mut refs = FileReferences::of(&state);
        assert!(refs.is_needed(queued_input));
        assert!(refs.is_needed(running_output));
        assert!(!refs.is_needed(acked_input));
        assert!(refs.is_referenced(acked_input));
        assert!(!refs.is_referenced(loose));
        assert!(refs.is_needed(FileId(99)));
        assert_eq!(refs.forget_result(&state, acked), vec![acked_input]);
        assert!(!refs.is_referenced(acked_input));
        // Forgetting a result the server has not acknowledged releases nothing.
        assert!(refs.forget_result(&state, JobId(0)).is_empty());
        assert!(refs.is_needed(queued_input));
    }

    /// The volunteer's own files (app_info.xml) are theirs: never planned for deletion,
    /// even with nothing referring to them.
    #[test]
    fn the_volunteers_own_files_are_needed() {
        let mut b = DiskStateBuilder::new(&[1.0]);
        let own = b.file(0, 10.0, true, 0.0);
        let mut state = b.state;
        assert!(!FileReferences::of(&state).is_needed(own));
        state.files[own.index()].anonymous_platform = true;
        assert!(FileReferences::of(&state).is_needed(own));
    }
}
