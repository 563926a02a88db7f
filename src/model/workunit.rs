//! Workunits and files (seed 000 note 2: the flops estimate lives on the workunit; seed
//! 004: files are what disk usage is made of).

use super::ids::{AppId, FileId, ProjectId};
use crate::Time;
use serde::{Deserialize, Serialize};

/// A use of a file by a workunit (its input), a job (its output) or an app version (its
/// executable and the files it brings): BOINC's `<file_ref>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileRef {
    /// The file.
    pub file: FileId,
    /// The name the app opens it by (`<open_name>`); empty: the file's own name.
    #[serde(default)]
    pub open_name: String,
    /// The app version's executable (`<main_program/>`).
    #[serde(default)]
    pub main_program: bool,
    /// Copied into the task's slot directory instead of linked (`<copy_file/>`).
    #[serde(default)]
    pub copy_file: bool,
}

impl FileRef {
    /// A plain reference to `file`, opened by its own name.
    pub fn new(file: FileId) -> FileRef {
        FileRef { file, open_name: String::new(), main_program: false, copy_file: false }
    }
}

/// The input side of a job: what to compute and the bounds on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workunit {
    /// The project.
    pub project: ProjectId,
    /// Name, unique within the project.
    pub name: String,
    /// The app.
    pub app: AppId,
    /// Estimated flops (`<rsc_fpops_est>`).
    pub rsc_fpops_est: f64,
    /// Flops after which the job is aborted (`<rsc_fpops_bound>`).
    pub rsc_fpops_bound: f64,
    /// Memory bound, bytes.
    pub rsc_memory_bound: f64,
    /// Disk bound, bytes.
    pub rsc_disk_bound: f64,
    /// Arguments the app is started with (`<command_line>`).
    #[serde(default)]
    pub command_line: String,
    /// Input files, with the names the app opens them by.
    pub input_files: Vec<FileRef>,
}

/// Where a file stands (BOINC's `<status>`; negative values are errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileStatus {
    /// Not yet downloaded (or output not yet produced).
    NotPresent,
    /// Present and verified.
    Present,
    /// Download or upload failed; the file is unusable.
    Error(i32),
}

/// A file a project asked the client to hold (`<file_info>` / `<file>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileInfo {
    /// The project.
    pub project: ProjectId,
    /// File name, unique within the project.
    pub name: String,
    /// Size in bytes (0 when not known yet).
    pub nbytes: f64,
    /// Largest size allowed for an output file (0: no limit).
    pub max_nbytes: f64,
    /// Expected MD5 of the content, hex.
    pub md5_cksum: String,
    /// The project's signature of an executable (`<file_signature>`, BOINC's hex text
    /// format), checked against the project's code-signing key before it may run.
    #[serde(default)]
    pub file_signature: Option<String>,
    /// Download/upload state.
    pub status: FileStatus,
    /// The file is an executable (must carry a signature).
    pub executable: bool,
    /// Keep the file after its jobs are gone (seed 004 "sticky").
    pub sticky: bool,
    /// Produced by a job, to be uploaded.
    pub upload_when_present: bool,
    /// Upload finished.
    pub uploaded: bool,
    /// A transfer failed temporarily and is waiting to be retried (seed 000 "deferred").
    pub transfer_deferred: bool,
    /// Download URLs.
    pub download_urls: Vec<String>,
    /// Upload URLs.
    pub upload_urls: Vec<String>,
    /// Deletion priority from the project's template (seed 004).
    pub priority: Option<i32>,
    /// Expiry in days from the project's template (seed 004).
    pub exp_days: Option<f64>,
    /// When the download finished (seed 004 ordering); 0 when unknown.
    pub download_time: Time,
    /// When a job last used the file (seed 004 LRU deletion); 0 when unknown, in which
    /// case the download time stands in for it.
    #[serde(default)]
    pub time_last_used: Time,
    /// Where the file's download or upload stands: retries, backoff, the URL to try
    /// next, bytes moved so far (BOINC's `<persistent_file_xfer>`).
    #[serde(default)]
    pub transfer: FileTransferState,
    /// One of the volunteer's own files, listed in the project's app_info.xml: never
    /// downloaded, never checked against a signature, never deleted by the client.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub anonymous_platform: bool,
}

/// One file's transfer across its attempts (BOINC's persistent file transfer): the
/// transfer policy (`crate::transfer`) reads and changes it; a saved state keeps it, so a
/// restarted client resumes where it was.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FileTransferState {
    /// Rounds of all the file's URLs that failed (the exponent of its backoff).
    pub retries: u32,
    /// When the transfer was first tried (0: never); a transfer that makes no progress
    /// for too long after it is given up.
    pub first_request_time: Time,
    /// Not tried again before this time (its backoff).
    pub next_request_time: Time,
    /// Which of the file's URLs the next attempt uses.
    pub url_index: u32,
    /// The URL the current round of attempts started at: coming back to it ends the
    /// round and backs the file off.
    pub round_start: u32,
    /// URLs of this round whose content was wrong (size or checksum): when every URL gave
    /// wrong content the file is given up.
    pub bad_content: u32,
    /// Bytes moved so far (a download's partial file, an upload's offset).
    pub bytes_done: f64,
    /// What went wrong last, for the user and the report to the project.
    pub last_error: String,
    /// An attempt is under way (the control loop's own bookkeeping, never saved).
    #[serde(default, skip_serializing)]
    pub in_flight: bool,
}

impl FileInfo {
    /// A file of `project` not yet on disk, with no transfer, flags or template values:
    /// what a `<file>` element starts as before its children are read.
    pub fn new(project: ProjectId, name: impl Into<String>, nbytes: f64) -> FileInfo {
        FileInfo {
            project,
            name: name.into(),
            nbytes,
            max_nbytes: 0.0,
            md5_cksum: String::new(),
            file_signature: None,
            status: FileStatus::NotPresent,
            executable: false,
            sticky: false,
            upload_when_present: false,
            uploaded: false,
            transfer_deferred: false,
            download_urls: Vec::new(),
            upload_urls: Vec::new(),
            priority: None,
            exp_days: None,
            download_time: 0.0,
            time_last_used: 0.0,
            transfer: FileTransferState::default(),
            anonymous_platform: false,
        }
    }
}
