//! What the end of a transfer attempt does to the state (BOINC's persistent file
//! transfer): a download is checked before it is put in place, and once in place the
//! jobs waiting for it may run; an upload taken lets its job be reported; a transient
//! failure moves on to the file's next URL and, once a round of them failed, backs the
//! file (and maybe its project) off; a failure that trying again cannot mend gives the
//! file up, which ends the jobs that need it.

use super::backoff::{
    TRANSFER_GIVE_UP_AFTER, file_retry_delay, project_transfer_failed, project_transfer_succeeded,
};
use super::job_files::{JobChanges, advance_downloading_jobs, advance_uploading_jobs};
use super::order::error_codes::{ERR_GIVEUP_DOWNLOAD, ERR_GIVEUP_UPLOAD};
use super::order::{Direction, FailureKind, TransferFailure, TransferOrder, TransferResult};
use super::verify::verify_download;
use crate::Time;
use crate::model::{
    ClientState, FileId, FileStatus, FileTransferState, ProjectId, TransferBackoff,
};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// What becomes of a download's staged bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StagedDownload {
    /// Kept: the next attempt resumes from them (or there are none).
    Keep,
    /// They passed the checks: put them in place, then report
    /// [`TransferResult::Installed`] (or the failure to do so).
    Install,
    /// They are not the file: delete them, never resume from them.
    Discard,
}

/// A line for the user about a file's transfer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransferNotice {
    /// The project.
    pub project: ProjectId,
    /// What happened.
    pub text: String,
    /// Something went wrong for good (not a retry or a success).
    pub error: bool,
}

/// What an attempt's end changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settlement {
    /// What to do with a download's staged bytes.
    pub staged: StagedDownload,
    /// Jobs that may run now, may be reported now, or ended in an error.
    pub changes: JobChanges,
    /// Lines for the user.
    pub notices: Vec<TransferNotice>,
    /// When the file is tried again, if it is.
    pub retry_at: Option<Time>,
}

impl Settlement {
    fn new(staged: StagedDownload) -> Self {
        Settlement { staged, changes: JobChanges::default(), notices: Vec::new(), retry_at: None }
    }
}

/// Takes the end of `order`'s attempt, `result`, into `state` at `now`; `rng` draws the
/// backoffs.
pub fn settle_transfer(
    state: &mut ClientState,
    order: &TransferOrder,
    result: TransferResult,
    now: Time,
    rng: &mut impl Rng,
) -> Settlement {
    let file = order.file;
    let known = state
        .files
        .get(file.index())
        .is_some_and(|f| f.project == order.project && f.name == order.name);
    if !known {
        // The file was forgotten meanwhile (its project detached): its bytes go.
        return Settlement::new(StagedDownload::Discard);
    }
    if matches!(state.files[file.index()].status, FileStatus::Error(_)) {
        // Given up meanwhile (the user aborted the transfer): what came is not used.
        state.files[file.index()].transfer.in_flight = false;
        return Settlement::new(StagedDownload::Discard);
    }
    let direction = order.direction;
    match result {
        TransferResult::Downloaded { nbytes, md5 } => {
            match verify_download(state, file, nbytes as u64, &md5) {
                // Still in flight until it is in place.
                Ok(()) => Settlement::new(StagedDownload::Install),
                Err(rejection) => {
                    let mut settlement = Settlement::new(StagedDownload::Discard);
                    let record = &mut state.files[file.index()];
                    record.transfer.in_flight = false;
                    record.transfer.bytes_done = 0.0;
                    let message = format!("{} of {}: {rejection}", direction.name(), order.name);
                    if rejection.other_copies_may_be_right() {
                        bad_copy(
                            state,
                            order,
                            rejection.code(),
                            message,
                            now,
                            rng,
                            &mut settlement,
                        );
                    } else {
                        give_up(
                            state,
                            file,
                            direction,
                            rejection.code(),
                            message,
                            now,
                            &mut settlement,
                        );
                    }
                    settlement
                }
            }
        }
        TransferResult::Installed => {
            let mut settlement = Settlement::new(StagedDownload::Keep);
            let record = &mut state.files[file.index()];
            record.status = FileStatus::Present;
            record.download_time = now;
            record.transfer_deferred = false;
            record.transfer = FileTransferState::default();
            project_transfer_succeeded(backoff_of(state, order.project, direction));
            settlement.changes = advance_downloading_jobs(state, Some(file), now);
            settlement
        }
        TransferResult::Uploaded { nbytes, md5 } => {
            let mut settlement = Settlement::new(StagedDownload::Keep);
            let record = &mut state.files[file.index()];
            record.uploaded = true;
            record.nbytes = nbytes;
            record.md5_cksum = md5;
            record.transfer_deferred = false;
            record.transfer = FileTransferState::default();
            project_transfer_succeeded(backoff_of(state, order.project, direction));
            settlement.changes = advance_uploading_jobs(state, Some(file), now);
            settlement
        }
        TransferResult::Failed(failure) => failed(state, order, failure, now, rng),
    }
}

fn failed(
    state: &mut ClientState,
    order: &TransferOrder,
    failure: TransferFailure,
    now: Time,
    rng: &mut impl Rng,
) -> Settlement {
    let mut settlement = Settlement::new(StagedDownload::Keep);
    let direction = order.direction;
    let message =
        format!("{} of {} from {}: {}", direction.name(), order.name, order.url, failure.message);
    let transfer = &mut state.files[order.file.index()].transfer;
    transfer.in_flight = false;
    match failure.kind {
        FailureKind::Transient => {
            // The give-up clock runs from the last byte moved.
            if failure.bytes_done > transfer.bytes_done || transfer.first_request_time <= 0.0 {
                transfer.first_request_time = now;
            }
            transfer.bytes_done = failure.bytes_done;
            if now - transfer.first_request_time > TRANSFER_GIVE_UP_AFTER {
                let message = format!("{message}; no progress for 90 days");
                give_up(
                    state,
                    order.file,
                    direction,
                    give_up_code(direction),
                    message,
                    now,
                    &mut settlement,
                );
            } else {
                transfer.last_error = message;
                next_url(state, order, now, rng, &mut settlement);
            }
        }
        FailureKind::Local => {
            // The bytes held so far stay; the next attempt comes when the disk has room.
            transfer.bytes_done = failure.bytes_done.max(0.0);
            transfer.last_error = message;
        }
        FailureKind::BadContent => {
            settlement.staged = StagedDownload::Discard;
            transfer.bytes_done = 0.0;
            let code = super::order::error_codes::ERR_FILE_TOO_BIG;
            bad_copy(state, order, code, message, now, rng, &mut settlement);
        }
        FailureKind::Permanent => {
            give_up(
                state,
                order.file,
                direction,
                give_up_code(direction),
                message,
                now,
                &mut settlement,
            );
        }
    }
    settlement
}

/// This URL's copy is not the file: the next URL is tried, unless every URL of the
/// round gave a bad copy (then the file is given up, with `code`).
fn bad_copy(
    state: &mut ClientState,
    order: &TransferOrder,
    code: i32,
    message: String,
    now: Time,
    rng: &mut impl Rng,
    settlement: &mut Settlement,
) {
    let urls = urls_of(state, order.file, order.direction);
    let transfer = &mut state.files[order.file.index()].transfer;
    transfer.bad_content = transfer.bad_content.saturating_add(1);
    if transfer.bad_content as usize >= urls {
        give_up(state, order.file, order.direction, code, message, now, settlement);
    } else {
        transfer.last_error = message;
        next_url(state, order, now, rng, settlement);
    }
}

/// Moves the file on to its next URL, at once; back at the URL the round started from,
/// the round failed: the file (and maybe its project) backs off.
fn next_url(
    state: &mut ClientState,
    order: &TransferOrder,
    now: Time,
    rng: &mut impl Rng,
    settlement: &mut Settlement,
) {
    let urls = urls_of(state, order.file, order.direction).max(1) as u32;
    let record = &mut state.files[order.file.index()];
    let transfer = &mut record.transfer;
    transfer.url_index = (transfer.url_index + 1) % urls;
    if transfer.url_index != transfer.round_start % urls {
        transfer.next_request_time = now;
        settlement.retry_at = Some(now);
        return;
    }
    transfer.retries = transfer.retries.saturating_add(1);
    transfer.bad_content = 0;
    let delay = file_retry_delay(transfer.retries, rng);
    transfer.next_request_time = now + delay;
    record.transfer_deferred = true;
    settlement.retry_at = Some(now + delay);
    settlement.notices.push(TransferNotice {
        project: order.project,
        text: format!(
            "Backing off {} on {}: {}",
            duration_text(delay),
            order.direction.name(),
            transfer.last_error
        ),
        error: false,
    });
    project_transfer_failed(backoff_of(state, order.project, order.direction), now, rng);
}

/// Gives `file` up with BOINC's error `code`: the jobs that need it end in an error
/// (the caller's next look at them), and the user is told, in so many words when the
/// file is an app version's (that version's jobs are abandoned).
pub(super) fn give_up(
    state: &mut ClientState,
    file: FileId,
    direction: Direction,
    code: i32,
    message: String,
    now: Time,
    settlement: &mut Settlement,
) {
    let record = &mut state.files[file.index()];
    record.status = FileStatus::Error(code);
    record.transfer_deferred = false;
    record.transfer.in_flight = false;
    record.transfer.last_error.clone_from(&message);
    let project = record.project;
    let name = record.name.clone();
    settlement.notices.push(TransferNotice {
        project,
        text: format!("Giving up on {}", message),
        error: true,
    });
    if direction == Direction::Download {
        for version in state.app_versions.iter().filter(|v| v.files.iter().any(|r| r.file == file))
        {
            let app = state.apps.get(version.app.index()).map_or("?", |a| a.name.as_str());
            settlement.notices.push(TransferNotice {
                project,
                text: format!(
                    "App version {app} {} rejected: its file {name} cannot be used ({message}); \
                     its tasks end in an error and are reported to the project",
                    version.version_num
                ),
                error: true,
            });
        }
        settlement.changes.extend(advance_downloading_jobs(state, Some(file), now));
    } else {
        settlement.changes.extend(advance_uploading_jobs(state, Some(file), now));
    }
}

fn give_up_code(direction: Direction) -> i32 {
    match direction {
        Direction::Download => ERR_GIVEUP_DOWNLOAD,
        Direction::Upload => ERR_GIVEUP_UPLOAD,
    }
}

/// How many URLs `file` has in `direction`.
pub(super) fn urls_of(state: &ClientState, file: FileId, direction: Direction) -> usize {
    let record = state.file(file);
    match direction {
        Direction::Download => record.download_urls.len(),
        Direction::Upload => record.upload_urls.len(),
    }
}

/// The project's backoff in `direction`.
pub(super) fn backoff_of(
    state: &mut ClientState,
    project: ProjectId,
    direction: Direction,
) -> &mut TransferBackoff {
    let backoffs = &mut state.projects[project.index()].transfer_backoff;
    match direction {
        Direction::Download => &mut backoffs.download,
        Direction::Upload => &mut backoffs.upload,
    }
}

/// A delay as a person reads it ("3 min 20 s").
fn duration_text(seconds: f64) -> String {
    let total = seconds.round().max(0.0) as u64;
    match (total / 3600, total % 3600 / 60, total % 60) {
        (0, 0, s) => format!("{s} s"),
        (0, m, s) => format!("{m} min {s} s"),
        (h, m, _) => format!("{h} h {m} min"),
    }
}
