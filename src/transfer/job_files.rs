//! Jobs and their files (seed 000's result states; BOINC's result life cycle): a job
//! that arrived waits (`New`, then `FilesDownloading`) until its workunit's input files
//! and its app version's files are all present and verified, and can then run
//! (`FilesDownloaded`); a finished job whose outputs the project wants back uploads them
//! (`FilesUploading`) and is ready to report once the project took them all
//! (`FilesUploaded`). A file given up on ends every job that needs it, in an error the
//! project is told about with BOINC's exit status and the reason.

use super::order::error_codes::{
    ERR_FILE_TOO_BIG, ERR_GIVEUP_DOWNLOAD, ERR_GIVEUP_UPLOAD, ERR_MD5_FAILED, ERR_NO_SIGNATURE,
    ERR_RSA_FAILED, ERR_UPLOAD_PERMANENT, ERR_WRONG_SIZE,
};
use super::order::error_codes::{ERR_RESULT_DOWNLOAD, ERR_RESULT_UPLOAD};
use crate::Time;
use crate::model::{ClientState, FileId, FileStatus, JobId, JobState};
use crate::protocol::describe_file_error;
use serde::{Deserialize, Serialize};

/// What moving jobs on changed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JobChanges {
    /// Jobs whose files are all present now: they can run.
    pub ready: Vec<JobId>,
    /// Jobs whose outputs were all taken: ready to report.
    pub reportable: Vec<JobId>,
    /// Jobs ended because a file they need was given up on (ready to report, in error).
    pub failed: Vec<JobId>,
}

impl JobChanges {
    /// Adds `other`'s changes to these.
    pub fn extend(&mut self, other: JobChanges) {
        self.ready.extend(other.ready);
        self.reportable.extend(other.reportable);
        self.failed.extend(other.failed);
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.ready.is_empty() && self.reportable.is_empty() && self.failed.is_empty()
    }
}

/// The files job `id` needs before it can run: its workunit's inputs, then its app
/// version's files.
pub fn needed_files(state: &ClientState, id: JobId) -> impl Iterator<Item = FileId> + '_ {
    let job = state.job(id);
    let inputs = state.workunits.get(job.workunit.index()).map_or(&[][..], |w| &w.input_files);
    let version = job.app_version.and_then(|v| state.app_versions.get(v.index()));
    let app_files = version.map_or(&[][..], |v| &v.files);
    inputs.iter().chain(app_files).map(|reference| reference.file)
}

/// Whether job `id` is waiting for its files.
pub fn waits_for_files(state: &ClientState, id: JobId) -> bool {
    let job = state.job(id);
    !job.ready_to_report && matches!(job.state, JobState::New | JobState::FilesDownloading)
}

/// Moves the jobs waiting for their files on at `now`: those needing a file given up
/// on end in an error, those whose files are all present can run. `touching` limits the
/// look to the jobs that need that file.
pub fn advance_downloading_jobs(
    state: &mut ClientState,
    touching: Option<FileId>,
    now: Time,
) -> JobChanges {
    let mut changes = JobChanges::default();
    for index in 0..state.jobs.len() {
        let id = JobId::from_index(index);
        if !waits_for_files(state, id)
            || touching.is_some_and(|file| !needed_files(state, id).any(|f| f == file))
        {
            continue;
        }
        let mut all_present = true;
        let mut given_up = None;
        for file in needed_files(state, id) {
            match state.files.get(file.index()).map(|f| f.status) {
                Some(FileStatus::Present) => {}
                Some(FileStatus::Error(code)) => {
                    given_up = Some((file, code));
                    break;
                }
                Some(FileStatus::NotPresent) | None => all_present = false,
            }
        }
        if let Some((file, code)) = given_up {
            let app_file = state.job(id).app_version.is_some_and(|v| {
                state
                    .app_versions
                    .get(v.index())
                    .is_some_and(|v| v.files.iter().any(|r| r.file == file))
            });
            let what = if app_file {
                "app_version download error: couldn't get input files"
            } else {
                "WU download error: couldn't get input files"
            };
            let report = file_error_report(state, file, code, what);
            end_in_error(state, id, JobState::ComputeError, ERR_RESULT_DOWNLOAD, report, now);
            changes.failed.push(id);
        } else if all_present {
            state.jobs[index].state = JobState::FilesDownloaded;
            changes.ready.push(id);
        }
    }
    changes
}

/// Whether job `id` has outputs the project wants back that are not uploaded yet.
pub fn has_outputs_to_upload(state: &ClientState, id: JobId) -> bool {
    state.job(id).output_files.iter().any(|reference| {
        state
            .files
            .get(reference.file.index())
            .is_some_and(|f| f.upload_when_present && !f.uploaded)
    })
}

/// Job `id`'s app finished and its outputs are in the project's directory (the process
/// host checked they are all there): they are present.
pub fn outputs_produced(state: &mut ClientState, id: JobId) {
    for index in 0..state.jobs[id.index()].output_files.len() {
        let file = state.jobs[id.index()].output_files[index].file;
        if let Some(file) = state.files.get_mut(file.index())
            && file.status == FileStatus::NotPresent
        {
            file.status = FileStatus::Present;
        }
    }
}

/// Moves the jobs uploading their outputs on at `now`: those with an output given up on
/// end in an upload error, those whose outputs were all taken are ready to report.
/// `touching` limits the look to the jobs that produced that file.
pub fn advance_uploading_jobs(
    state: &mut ClientState,
    touching: Option<FileId>,
    now: Time,
) -> JobChanges {
    let mut changes = JobChanges::default();
    for index in 0..state.jobs.len() {
        let id = JobId::from_index(index);
        let job = &state.jobs[index];
        if job.state != JobState::FilesUploading
            || touching.is_some_and(|file| !job.output_files.iter().any(|r| r.file == file))
        {
            continue;
        }
        let given_up = job.output_files.iter().find_map(|reference| {
            match state.files.get(reference.file.index()).map(|f| f.status) {
                Some(FileStatus::Error(code)) => Some((reference.file, code)),
                _ => None,
            }
        });
        if let Some((file, code)) = given_up {
            let report = file_error_report(state, file, code, "upload failure");
            end_in_error(state, id, JobState::UploadFailed, ERR_RESULT_UPLOAD, report, now);
            changes.failed.push(id);
        } else if !has_outputs_to_upload(state, id) {
            let job = &mut state.jobs[index];
            job.state = JobState::FilesUploaded;
            job.ready_to_report = true;
            changes.reportable.push(id);
        }
    }
    changes
}

/// Ends job `id` in `state` with BOINC's `exit_status` and `report` added to what it
/// tells the project.
fn end_in_error(
    state: &mut ClientState,
    id: JobId,
    job_state: JobState,
    exit_status: i32,
    report: String,
    now: Time,
) {
    let job = &mut state.jobs[id.index()];
    job.state = job_state;
    job.exit_status = exit_status;
    job.ready_to_report = true;
    job.completed_time = now;
    job.end_task();
    if !job.stderr_out.is_empty() && !job.stderr_out.ends_with('\n') {
        job.stderr_out.push('\n');
    }
    job.stderr_out.push_str(&report);
}

/// What the project is told about a job that ended because of `file`: BOINC's
/// `<file_xfer_error>` after a line saying what failed.
fn file_error_report(state: &ClientState, file: FileId, code: i32, what: &str) -> String {
    let record = &state.files[file.index()];
    let message = if record.transfer.last_error.is_empty() {
        error_name(code).to_owned()
    } else {
        record.transfer.last_error.clone()
    };
    format!("{what}:\n{}", describe_file_error(&record.name, code, error_name(code), &message))
}

/// BOINC's short name of a transfer error number.
pub fn error_name(code: i32) -> &'static str {
    match code {
        ERR_GIVEUP_DOWNLOAD => "giveup on download",
        ERR_GIVEUP_UPLOAD => "giveup on upload",
        ERR_MD5_FAILED => "MD5 check failed",
        ERR_RSA_FAILED => "RSA key check failed",
        ERR_NO_SIGNATURE => "no signature",
        ERR_UPLOAD_PERMANENT => "permanent upload error",
        ERR_FILE_TOO_BIG => "file too big",
        ERR_WRONG_SIZE => "wrong size",
        _ => "file transfer error",
    }
}
