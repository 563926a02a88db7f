//! The disk manager carried out on the client's state (seed 004 "Violating User Disk
//! Usage Preferences" and "associate_file", as the client applies them): the plans of
//! [`data_manager_poll`] and [`associate_file`] become changes to the file records and
//! the run mode, returned in the order they happened so that the caller removes the
//! deleted files from its disk (the live client, through its file system) or records
//! them (the emulator, in its figures and trace). The live client and the emulator
//! share this so that a deletion the emulator measures is the one the client makes.

use super::associate::associate_file;
use super::limits::{DiskUsage, occupies_disk};
use super::plan::Deletion;
use super::references::FileReferences;
use super::violation::{DataManager, DiskEffect, data_manager_poll};
use crate::Time;
use crate::model::{ClientState, FileId, FileStatus, JobId, ProjectId, RunMode};

/// What a poll changed, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum DiskChange {
    /// The project was over its limit when the poll found the disk limit exceeded.
    Violation {
        /// The offending project.
        project: ProjectId,
        /// Its usage then, bytes.
        usage: f64,
        /// Its limit, bytes.
        limit: f64,
    },
    /// The file's record now says it is not present: the caller removes it.
    Deleted(Deletion),
    /// All computation is suspended: usage is over the limit and nothing more can go.
    Suspended {
        /// Why, and what the user can do.
        message: String,
    },
    /// Computation is back to the run mode it had before the suspension.
    Resumed,
}

/// The data manager's memory between polls and what it applies to the state.
#[derive(Debug, Clone)]
pub struct DiskControl {
    manager: DataManager,
    /// Files arrived or left since the last poll: only then can the usage have changed.
    changed: bool,
}

impl DiskControl {
    /// The control of a client whose state is `state` (its first poll always runs; a
    /// suspension the state records is lifted by it once space has returned).
    pub fn new(state: &ClientState) -> Self {
        let suspended = state.run_mode_before_disk_suspension.is_some();
        DiskControl { manager: DataManager::with_suspension(suspended), changed: true }
    }

    /// Files arrived or left outside this control (a download, an app's output).
    pub fn files_changed(&mut self) {
        self.changed = true;
    }

    /// Whether files arrived or left since the last poll.
    pub fn has_changes(&self) -> bool {
        self.changed
    }

    /// Whether computation is suspended for lack of disk space.
    pub fn is_suspended(&self) -> bool {
        self.manager.is_suspended()
    }

    /// Seed 004's `data_manager_poll`, when files arrived or left since the last one:
    /// deletions are marked in the state, acknowledged results forgotten, computation
    /// suspended or resumed. `core_usage` is what the client itself takes, bytes.
    pub fn poll(&mut self, state: &mut ClientState, core_usage: f64, now: Time) -> Vec<DiskChange> {
        if !self.changed {
            return Vec::new();
        }
        self.changed = false;
        let outcome = data_manager_poll(&mut self.manager, state, core_usage, now);
        let mut changes = Vec::with_capacity(outcome.offenders.len() + outcome.effects.len());
        if outcome.found_violation {
            let usage = DiskUsage::measure(state, core_usage);
            changes.extend(outcome.offenders.iter().map(|&project| DiskChange::Violation {
                project,
                usage: usage.project_usage.get(project.index()).copied().unwrap_or(0.0),
                limit: usage.limits.project_limit(project),
            }));
        }
        for effect in outcome.effects {
            match effect {
                DiskEffect::Delete(deletion) => {
                    self.mark_deleted(state, deletion.file);
                    changes.push(DiskChange::Deleted(deletion));
                }
                DiskEffect::ForgetResult(job) => forget_references(state, job),
                DiskEffect::SuspendComputation { message } => {
                    state.run_mode_before_disk_suspension.get_or_insert(state.run_mode);
                    state.run_mode = RunMode::Never;
                    changes.push(DiskChange::Suspended { message });
                }
                DiskEffect::ResumeComputation => {
                    if let Some(mode) = state.run_mode_before_disk_suspension.take() {
                        state.run_mode = mode;
                    }
                    changes.push(DiskChange::Resumed);
                }
            }
        }
        changes
    }

    /// A file lands on disk: it is associated with its project first (seed 004
    /// `associate_file`, which may delete other files to make room; their records are
    /// marked and returned for the caller to remove). When it cannot be associated it
    /// lands all the same, since its job needs it, and the next poll handles the
    /// violation.
    pub fn arrive(
        &mut self,
        state: &mut ClientState,
        file: FileId,
        core_usage: f64,
        now: Time,
    ) -> Vec<Deletion> {
        let deletions = associate_file(state, file, core_usage, now)
            .map(|association| association.deletions)
            .unwrap_or_default();
        for deletion in &deletions {
            self.mark_deleted(state, deletion.file);
        }
        if let Some(info) = state.files.get_mut(file.index()) {
            info.status = FileStatus::Present;
            info.download_time = now;
            info.time_last_used = now;
        }
        self.changed = true;
        deletions
    }

    /// The client forgets acknowledged results (BOINC's clean-up after the server's
    /// ack); files nothing refers to any more are no longer present unless sticky.
    /// Returns the files that went, for the caller to remove.
    pub fn forget_acknowledged(&mut self, state: &mut ClientState) -> Vec<FileId> {
        let acknowledged: Vec<JobId> = state
            .job_ids()
            .filter(|&j| {
                let job = state.job(j);
                job.got_server_ack
                    && (!job.output_files.is_empty()
                        || !state.workunit(job.workunit).input_files.is_empty())
            })
            .collect();
        if acknowledged.is_empty() {
            return Vec::new();
        }
        for job in acknowledged {
            forget_references(state, job);
        }
        let references = FileReferences::of(state);
        let mut gone = Vec::new();
        for (index, file) in state.files.iter_mut().enumerate() {
            let id = FileId::from_index(index);
            if occupies_disk(file) && !file.sticky && !references.is_referenced(id) {
                file.status = FileStatus::NotPresent;
                self.changed = true;
                gone.push(id);
            }
        }
        gone
    }

    fn mark_deleted(&mut self, state: &mut ClientState, file: FileId) {
        if let Some(info) = state.files.get_mut(file.index()) {
            info.status = FileStatus::NotPresent;
        }
        self.changed = true;
    }
}

/// Drops an acknowledged result's references to its files.
fn forget_references(state: &mut ClientState, job: JobId) {
    let Some(record) = state.jobs.get_mut(job.index()) else { return };
    record.output_files.clear();
    let workunit = record.workunit;
    // The workunit's inputs go with its last job the server has not yet acknowledged.
    let still_used = state.jobs.iter().any(|j| j.workunit == workunit && !j.got_server_ack);
    if !still_used && let Some(workunit) = state.workunits.get_mut(workunit.index()) {
        workunit.input_files.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::limits::BYTES_PER_GB;
    use crate::disk::tests_support::DiskStateBuilder;
    use crate::protocol::{ClientVersion, StateFileOrigin, parse_client_state, write_client_state};

    /// The soak's disk-full episode (docs/soak.md): the client was killed while the
    /// disk manager had computing suspended; restarted after space returned, it must
    /// compute again, in the user's own run mode.
    #[test]
    fn a_disk_suspension_survives_a_restart_and_ends_when_space_returns() {
        let mut b = DiskStateBuilder::new(&[1.0]);
        b.state.run_mode = RunMode::Auto;
        b.state.prefs.disk_max_used_gb = 1.0;
        let queued = b.file(0, 2.0 * BYTES_PER_GB, true, 1.0);
        b.job(0, &[queued], &[], false);
        let mut control = DiskControl::new(&b.state);
        let changes = control.poll(&mut b.state, 0.0, 10.0);
        assert!(matches!(changes.last(), Some(DiskChange::Suspended { .. })), "{changes:?}");
        assert_eq!(b.state.run_mode, RunMode::Never);

        // kill -9, space back, a new client on the state as it was.
        let mut state = b.state.clone();
        assert_eq!(state.run_mode_before_disk_suspension, Some(RunMode::Auto));
        state.prefs.disk_max_used_gb = 3.0;
        let mut control = DiskControl::new(&state);
        assert_eq!(control.poll(&mut state, 0.0, 20.0), vec![DiskChange::Resumed]);
        assert_eq!(state.run_mode, RunMode::Auto);
        assert_eq!(state.run_mode_before_disk_suspension, None);
    }

    #[test]
    fn the_state_file_keeps_a_disk_suspension_apart_from_the_users_run_mode() {
        let origin = StateFileOrigin {
            platform: "x86_64-pc-linux-gnu",
            version: ClientVersion { major: 8, minor: 0, release: 0 },
        };
        for before in [None, Some(RunMode::Always), Some(RunMode::Auto)] {
            let state = ClientState {
                run_mode: if before.is_some() { RunMode::Never } else { RunMode::Auto },
                run_mode_before_disk_suspension: before,
                ..ClientState::default()
            };
            let text = write_client_state(&state, &origin);
            let read = parse_client_state(&text, "client_state.xml").expect("it reads");
            assert_eq!(read.run_mode, state.run_mode);
            assert_eq!(read.run_mode_before_disk_suspension, before);
        }
    }
}
