//! Downloads and uploads of project files (docs/design.md "Protocol facts", Files; the
//! policy is the core's [`boinc_core::transfer`]). A file transfer carries out one
//! attempt of a [`TransferOrder`] at a time: a download goes into the order's staging
//! file, resuming from the bytes already there, and comes back with what it received
//! (size and MD5) for the core to check before [`FileTransfer::install`] puts it in
//! place; an upload sends the file by the data server protocol, from where the server's
//! copy stops. Progress is reported as it goes; every way an attempt can fail is a
//! [`TransferError`] whose kind the policy acts on.

use super::transport::EffectFuture;
use boinc_core::transfer::{FailureKind, TransferOrder};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// How far an attempt has come.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TransferProgress {
    /// Bytes of the file moved so far (with those of earlier attempts).
    pub bytes: u64,
    /// The file's size, when known.
    pub total: Option<u64>,
    /// Bytes per second over this attempt.
    pub rate: f64,
}

/// Called as an attempt moves bytes (at most a few times a second).
pub type ProgressSink = Box<dyn FnMut(TransferProgress)>;

/// What an attempt achieved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Transferred {
    /// The whole download is in the staging file: its size and MD5 (hex), computed
    /// over the bytes written.
    Downloaded {
        /// Bytes.
        nbytes: u64,
        /// MD5, hex.
        md5: String,
    },
    /// The project took the upload: the file's size and MD5.
    Uploaded {
        /// Bytes.
        nbytes: u64,
        /// MD5, hex.
        md5: String,
    },
}

/// Why a transfer attempt failed. [`TransferError::kind`] says what the policy makes of
/// it.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
pub enum TransferError {
    /// No connection could be made.
    #[error("cannot reach {url}: {reason}; the transfer is retried later")]
    Connect {
        /// Where.
        url: String,
        /// What the network said.
        reason: String,
    },
    /// The server sent nothing, or too little, for too long (cc_config's
    /// `http_transfer_timeout` and `http_transfer_timeout_bps`).
    #[error("{url} stalled ({reason}); the transfer is retried later")]
    Stalled {
        /// Where.
        url: String,
        /// Which limit was hit.
        reason: String,
    },
    /// The exchange broke off (connection reset, body cut short).
    #[error("the transfer from {url} broke off after {bytes} bytes ({reason}); it resumes later")]
    Interrupted {
        /// Where.
        url: String,
        /// Bytes of the file held so far.
        bytes: u64,
        /// What happened.
        reason: String,
    },
    /// The server answered with an HTTP error.
    #[error("{url} answered HTTP {status}")]
    Http {
        /// Where.
        url: String,
        /// The status code.
        status: u16,
    },
    /// The server refused a resumed download's range: the partial copy was dropped and
    /// the next attempt starts over.
    #[error("{url} refused to resume the download (HTTP 416); it starts over")]
    RangeRefused {
        /// Where.
        url: String,
    },
    /// More bytes came than the file may have.
    #[error("{url} sent more than the {limit} bytes the file may have: the copy is refused")]
    TooLarge {
        /// Where.
        url: String,
        /// The most bytes accepted.
        limit: u64,
    },
    /// The project's upload handler refused the upload for good.
    #[error("the upload handler at {url} refused the file: {message}")]
    Refused {
        /// Where.
        url: String,
        /// What it said.
        message: String,
    },
    /// The upload handler did not take the upload now, or answered something that is
    /// not a data server reply.
    #[error("the upload handler at {url} did not take the file ({message}); retried later")]
    NotTaken {
        /// Where.
        url: String,
        /// What it said.
        message: String,
    },
    /// The file to upload is larger than the project accepts.
    #[error("{path} has {nbytes} bytes, more than the {limit} the project accepts")]
    FileTooBig {
        /// The file.
        path: PathBuf,
        /// Its size.
        nbytes: u64,
        /// The project's limit.
        limit: u64,
    },
    /// The file is not a regular file (a link, a pipe, a device: what an app could plant
    /// in the project directory); it is never followed or sent.
    #[error(
        "{path} is not a regular file (an app may have put a link there): it is not \
         transferred; reset the project if this repeats"
    )]
    NotAFile {
        /// The file.
        path: PathBuf,
    },
    /// The order names a path outside the data directory (never carried out).
    #[error("{path} is not a path inside the data directory: the transfer is refused")]
    UnsafePath {
        /// The path as ordered.
        path: String,
    },
    /// Reading or writing the file failed.
    #[error("{path}: {reason}; check the disk, the transfer is retried later")]
    Disk {
        /// The file.
        path: PathBuf,
        /// What the system said.
        reason: String,
    },
}

impl TransferError {
    /// What the policy makes of the failure.
    pub fn kind(&self) -> FailureKind {
        match self {
            TransferError::Http { status: 404 | 410, .. }
            | TransferError::Refused { .. }
            | TransferError::FileTooBig { .. }
            | TransferError::NotAFile { .. }
            | TransferError::UnsafePath { .. } => FailureKind::Permanent,
            TransferError::TooLarge { .. } => FailureKind::BadContent,
            TransferError::Connect { .. }
            | TransferError::Stalled { .. }
            | TransferError::Interrupted { .. }
            | TransferError::Http { .. }
            | TransferError::RangeRefused { .. }
            | TransferError::NotTaken { .. } => FailureKind::Transient,
            // This host's disk, not the server: no backoff counts against the server.
            TransferError::Disk { .. } => FailureKind::Local,
        }
    }
}

/// Moves project files.
pub trait FileTransfer: Send + Sync {
    /// Downloads `order`'s file from its URL into its staging file, resuming from what
    /// is there; reports progress to `progress`.
    fn download(
        &self,
        order: &TransferOrder,
        progress: ProgressSink,
    ) -> EffectFuture<Result<Transferred, TransferError>>;
    /// Uploads `order`'s file to its URL, from where the server's copy stops.
    fn upload(
        &self,
        order: &TransferOrder,
        progress: ProgressSink,
    ) -> EffectFuture<Result<Transferred, TransferError>>;
    /// Puts a checked download in place (its staging file becomes the project's file).
    fn install(&self, order: &TransferOrder) -> Result<(), TransferError>;
    /// Deletes a download's staging file: its bytes are not the file and are never
    /// resumed from.
    fn discard(&self, order: &TransferOrder) -> Result<(), TransferError>;
}
