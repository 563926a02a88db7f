//! File transfers, the policy (docs/design.md "Protocol facts", Files; BOINC's persistent
//! file transfers; seed 002 "Minimum RPC time" for what a failed download does to its
//! project): which downloads and uploads start now within the limits of cc_config,
//! what an attempt's end does (a download checked for size, checksum and signature
//! before it is put in place; retries over the file's URLs, per-file and per-project
//! backoff; files given up), and how jobs move through their file states. Pure: the
//! runtime moves the bytes ([`TransferOrder`] out, [`TransferResult`] back) and the
//! control loop ([`crate::control::ClientControl`]) calls these.

mod backoff;
mod job_files;
mod order;
mod plan;
mod settle;
mod verify;

pub use backoff::{
    PROJECT_BACKOFF_AFTER, TRANSFER_GIVE_UP_AFTER, TRANSFER_RETRY_MAX, TRANSFER_RETRY_MIN,
    file_retry_delay, project_may_transfer, project_transfer_failed, project_transfer_succeeded,
};
pub use job_files::{
    JobChanges, advance_downloading_jobs, advance_uploading_jobs, error_name,
    has_outputs_to_upload, needed_files, outputs_produced, waits_for_files,
};
pub use order::{
    Direction, FailureKind, STAGING_DIR, TransferFailure, TransferOrder, TransferResult,
    error_codes,
};
pub use plan::{FULL_DISK_RECHECK, TransferPlan, plan_transfers};
pub use settle::{Settlement, StagedDownload, TransferNotice, settle_transfer};
pub use verify::{Rejection, check_before_download, verify_download};

#[cfg(test)]
mod tests;
