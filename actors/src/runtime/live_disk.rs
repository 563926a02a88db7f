//! The disk manager of a live client (seed 004): the core's
//! [`DiskControl`] decides on the client state, and what it deletes is removed from
//! the data directory through the [`FileSystem`] effect. The host's free space is
//! measured on the real disk at every poll, so the limits that depend on it
//! (`disk_min_free_gb`, `disk_max_used_pct`) follow what else fills the disk.

use crate::effects::{DiskManager, FileSystem};
use boinc_core::Time;
use boinc_core::disk::{DiskChange, DiskControl};
use boinc_core::model::{ClientState, FileId, FileStatus, JobId};
use std::sync::Arc;

/// The live disk manager.
pub struct LiveDisk {
    control: DiskControl,
    file_system: Arc<dyn FileSystem>,
}

impl LiveDisk {
    /// The manager of a client whose state is `state`, acting on `file_system`.
    pub fn new(state: &ClientState, file_system: Arc<dyn FileSystem>) -> Self {
        LiveDisk { control: DiskControl::new(state), file_system }
    }

    /// Removes a file the manager let go from the disk. A failure leaves the record
    /// saying it is gone (the space is BOINC's to reclaim at the next poll) and says so.
    fn remove(&self, state: &ClientState, file: FileId) {
        let Some(info) = state.files.get(file.index()) else { return };
        let Some(project) = state.projects.get(info.project.index()) else { return };
        if let Err(error) = self.file_system.delete(&project.master_url, &info.name) {
            tracing::warn!(file = %info.name, %error, "the disk manager could not delete a file");
        }
    }

    /// The host's disk figures from the real disk.
    fn measure(&self, state: &mut ClientState) {
        match self.file_system.disk_space() {
            Ok(space) => {
                state.host.d_total = space.total;
                state.host.d_free = space.free;
            }
            Err(error) => {
                tracing::warn!(%error, "the disk's free space is unknown; limits use the last figures")
            }
        }
    }
}

impl DiskManager for LiveDisk {
    fn job_finished(&mut self, state: &mut ClientState, job: JobId, now: Time) {
        let Some(record) = state.jobs.get(job.index()) else { return };
        let outputs: Vec<FileId> = record.output_files.iter().map(|r| r.file).collect();
        let inputs: Vec<FileId> = state
            .workunits
            .get(record.workunit.index())
            .map(|w| w.input_files.iter().map(|r| r.file).collect())
            .unwrap_or_default();
        for file in inputs {
            if let Some(info) = state.files.get_mut(file.index()) {
                info.time_last_used = now;
            }
        }
        for file in outputs {
            let Some(info) = state.files.get(file.index()) else { continue };
            let Some(project) = state.projects.get(info.project.index()) else { continue };
            match self.file_system.size(&project.master_url, &info.name) {
                Ok(Some(nbytes)) => {
                    let info = &mut state.files[file.index()];
                    info.nbytes = nbytes;
                    info.status = FileStatus::Present;
                    info.time_last_used = now;
                }
                Ok(None) => {}
                Err(error) => tracing::warn!(%error, "an output file could not be measured"),
            }
        }
        self.control.files_changed();
    }

    fn poll(&mut self, state: &mut ClientState, now: Time) {
        self.measure(state);
        // Downloads, apps and the user change the disk behind the manager's back: a
        // live client polls every time.
        self.control.files_changed();
        for change in self.control.poll(state, 0.0, now) {
            match change {
                DiskChange::Deleted(deletion) => {
                    tracing::info!(
                        file = %state.file(deletion.file).name,
                        nbytes = deletion.nbytes,
                        reason = %deletion.reason,
                        "deleted to stay within the disk limits"
                    );
                    self.remove(state, deletion.file);
                }
                DiskChange::Violation { project, usage, limit } => tracing::warn!(
                    project = %state.project(project).name,
                    usage,
                    limit,
                    "a project uses more disk than its share of the limit"
                ),
                DiskChange::Suspended { message } => {
                    tracing::warn!(%message, "computing suspended")
                }
                DiskChange::Resumed => {
                    tracing::info!("disk usage within the limits: computing resumed")
                }
            }
        }
    }

    fn measure(&mut self, state: &mut ClientState) {
        LiveDisk::measure(self, state);
    }

    fn after_reply(&mut self, state: &mut ClientState, _new_jobs: &[JobId], now: Time) {
        // The new jobs' files come by download, associated as they arrive; what the
        // server acknowledged goes now.
        for file in self.control.forget_acknowledged(state) {
            self.remove(state, file);
        }
        self.poll(state, now);
    }
}
