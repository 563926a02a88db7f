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

    fn after_reply(&mut self, state: &mut ClientState, _new_jobs: &[JobId], now: Time) {
        // The new jobs' files come by download, associated as they arrive; what the
        // server acknowledged goes now.
        for file in self.control.forget_acknowledged(state) {
            self.remove(state, file);
        }
        self.poll(state, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::data_directory::DataDirectory;
    use boinc_core::model::{FileInfo, Project, ProjectId};

    #[test]
    fn a_file_over_the_limit_is_deleted_from_the_disk_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let url = "http://127.0.0.1:1/p/";
        let project_dir = dir.path().join("projects/127.0.0.1_1_p");
        std::fs::create_dir_all(&project_dir).unwrap();
        let mut state = ClientState::default();
        state.projects.push(Project::new("p", url, 1.0));
        for (name, nbytes) in [("old", 3e6), ("new", 3e6)] {
            std::fs::write(project_dir.join(name), vec![0u8; nbytes as usize]).unwrap();
            let mut info = FileInfo::new(ProjectId(0), name, nbytes);
            info.status = FileStatus::Present;
            info.sticky = true;
            state.files.push(info);
        }
        state.files[0].time_last_used = 10.0;
        state.files[1].time_last_used = 20.0;
        state.prefs.disk_max_used_gb = 0.005;
        let data: Arc<dyn FileSystem> = Arc::new(DataDirectory::new(dir.path()));
        let mut disk = LiveDisk::new(&state, data);
        disk.poll(&mut state, 100.0);
        assert_eq!(state.files[0].status, FileStatus::NotPresent, "least recently used goes");
        assert!(!project_dir.join("old").exists());
        assert_eq!(state.files[1].status, FileStatus::Present);
        assert!(project_dir.join("new").exists());
        assert!(state.host.d_total > 0.0);
    }
}
