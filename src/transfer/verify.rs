//! Whether a download is the file the project announced (docs/design.md "Protocol facts",
//! Files): its size is `<nbytes>`, its MD5 is `<md5_cksum>`, and an executable's
//! `<file_signature>` verifies with the project's pinned `<code_sign_key>` over the MD5
//! the client computed itself. An executable is not even downloaded without a signature
//! and a key to check it with: a client that runs unsigned code is a security hole. Nor
//! is a file announced larger than its own `<max_nbytes>` or than all the disk space
//! BOINC may use (seed 004's all-projects limit): it could never be kept. cc_config's
//! `<dont_check_file_sizes>` leaves the size unchecked (the checksum still is).

use super::order::error_codes::{
    ERR_FILE_TOO_BIG, ERR_MD5_FAILED, ERR_NO_SIGNATURE, ERR_RSA_FAILED, ERR_WRONG_SIZE,
};
use crate::disk::BYTES_PER_GB;
use crate::model::{ClientState, FileId};
use crate::protocol::code_signing::{CodeSignKey, Signature, verify_file_signature};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a download is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Rejection {
    /// Its size is not the announced one.
    WrongSize {
        /// Bytes announced.
        expected: u64,
        /// Bytes received.
        received: u64,
    },
    /// Its MD5 is not the announced one.
    WrongChecksum {
        /// The MD5 announced.
        expected: String,
        /// The MD5 of what came.
        received: String,
    },
    /// An executable without a signature, or a project without a key to check one.
    Unsigned {
        /// What is missing.
        reason: String,
    },
    /// An executable whose signature does not verify with the project's key.
    BadSignature {
        /// What the check found.
        reason: String,
    },
    /// A file announced larger than it may be: over its own `max_nbytes`
    /// (`of_disk: false`) or over all the disk space BOINC may use (`of_disk: true`).
    TooBig {
        /// Bytes announced (`<nbytes>`).
        nbytes: u64,
        /// The bound it is over.
        limit: u64,
        /// Whether the bound is the disk's rather than the file's own.
        of_disk: bool,
    },
}

impl Rejection {
    /// BOINC's error number for the file.
    pub fn code(&self) -> i32 {
        match self {
            Rejection::WrongSize { .. } => ERR_WRONG_SIZE,
            Rejection::WrongChecksum { .. } => ERR_MD5_FAILED,
            Rejection::Unsigned { .. } => ERR_NO_SIGNATURE,
            Rejection::BadSignature { .. } => ERR_RSA_FAILED,
            Rejection::TooBig { .. } => ERR_FILE_TOO_BIG,
        }
    }

    /// Whether another URL's copy could be right: a wrong size or checksum may be one
    /// server's damaged copy; a signature problem is the project's own.
    pub fn other_copies_may_be_right(&self) -> bool {
        matches!(self, Rejection::WrongSize { .. } | Rejection::WrongChecksum { .. })
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::WrongSize { expected, received } => {
                write!(f, "{received} bytes came where the project announced {expected}")
            }
            Rejection::WrongChecksum { expected, received } => write!(
                f,
                "its MD5 is {received} where the project announced {expected}: the copy is damaged"
            ),
            Rejection::Unsigned { reason } | Rejection::BadSignature { reason } => {
                f.write_str(reason)
            }
            Rejection::TooBig { nbytes, limit, of_disk: false } => write!(
                f,
                "the project announced {nbytes} bytes, more than the {limit} it allows the \
                 file (max_nbytes): its description is wrong, tell the project"
            ),
            Rejection::TooBig { nbytes, limit, of_disk: true } => write!(
                f,
                "the file has {nbytes} bytes, more than the {limit} BOINC may use on this \
                 disk: give BOINC more disk space in the computing preferences"
            ),
        }
    }
}

/// Whether `file` may be downloaded at all: it must not be announced larger than its
/// own `max_nbytes` or than the disk space BOINC may ever use, and an executable needs a
/// signature and its project a key to check it with.
pub fn check_before_download(state: &ClientState, file: FileId) -> Result<(), Rejection> {
    let record = state.file(file);
    if record.max_nbytes > 0.0 && record.nbytes > record.max_nbytes {
        return Err(Rejection::TooBig {
            nbytes: record.nbytes as u64,
            limit: record.max_nbytes as u64,
            of_disk: false,
        });
    }
    let room = disk_room(state);
    if record.nbytes.is_finite() && record.nbytes > room {
        return Err(Rejection::TooBig {
            nbytes: record.nbytes as u64,
            limit: room as u64,
            of_disk: true,
        });
    }
    if !record.executable {
        return Ok(());
    }
    if record.file_signature.as_deref().is_none_or(|s| s.trim().is_empty()) {
        return Err(Rejection::Unsigned {
            reason: "missing signature: the project sent the executable without a \
                     <file_signature>, so it is never run"
                .into(),
        });
    }
    if state.project(record.project).code_sign_key.as_deref().is_none_or(|k| k.trim().is_empty()) {
        return Err(Rejection::Unsigned {
            reason: "the project has no code-signing key to check its executables with, so \
                     they are never run"
                .into(),
        });
    }
    Ok(())
}

/// The most bytes BOINC may ever use on this host by the preferences
/// (`disk_max_used_gb`, `disk_max_used_pct` of the disk; infinite when neither limits
/// it). The free space is left out: a disk full for now is no reason to give a file up.
fn disk_room(state: &ClientState) -> f64 {
    let positive = |x: f64| x.is_finite() && x > 0.0;
    let prefs = &state.prefs;
    let mut room = f64::INFINITY;
    if positive(prefs.disk_max_used_gb) {
        room = room.min(prefs.disk_max_used_gb * BYTES_PER_GB);
    }
    if positive(state.host.d_total) && positive(prefs.disk_max_used_pct) {
        room = room.min(state.host.d_total * prefs.disk_max_used_pct.min(100.0) / 100.0);
    }
    room
}

/// Whether a download of `file` that brought `nbytes` bytes whose MD5 is `md5` (computed
/// by the client) is the file the project announced.
pub fn verify_download(
    state: &ClientState,
    file: FileId,
    nbytes: u64,
    md5: &str,
) -> Result<(), Rejection> {
    let record = state.file(file);
    // `dont_check_file_sizes`: the checksum alone says whether the file is right.
    if record.nbytes > 0.0 && nbytes as f64 != record.nbytes && !state.config.dont_check_file_sizes
    {
        return Err(Rejection::WrongSize { expected: record.nbytes as u64, received: nbytes });
    }
    if !record.md5_cksum.is_empty() && !record.md5_cksum.trim().eq_ignore_ascii_case(md5) {
        return Err(Rejection::WrongChecksum {
            expected: record.md5_cksum.trim().to_owned(),
            received: md5.to_owned(),
        });
    }
    if !record.executable {
        return Ok(());
    }
    check_before_download(state, file)?;
    let key = state.project(record.project).code_sign_key.as_deref().unwrap_or_default();
    let signature = record.file_signature.as_deref().unwrap_or_default();
    let key = CodeSignKey::parse(key).map_err(|error| Rejection::BadSignature {
        reason: format!("the project's code-signing key cannot be read: {error}"),
    })?;
    let signature = Signature::parse(signature).map_err(|error| Rejection::BadSignature {
        reason: format!("the executable's signature cannot be read: {error}"),
    })?;
    verify_file_signature(&key, &signature, md5)
        .map_err(|error| Rejection::BadSignature { reason: error.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FileInfo, Project, ProjectId};

    #[test]
    fn a_wrong_size_is_rejected_unless_sizes_go_unchecked() {
        let mut state = ClientState::default();
        state.projects.push(Project::new("p", "http://p/", 100.0));
        let mut file = FileInfo::new(ProjectId(0), "in.dat", 10.0);
        file.md5_cksum = "abc".into();
        state.files.push(file);
        let id = FileId(0);
        assert_eq!(
            verify_download(&state, id, 12, "abc"),
            Err(Rejection::WrongSize { expected: 10, received: 12 })
        );
        state.config.dont_check_file_sizes = true;
        assert_eq!(verify_download(&state, id, 12, "abc"), Ok(()));
        assert!(
            matches!(verify_download(&state, id, 12, "abd"), Err(Rejection::WrongChecksum { .. })),
            "the checksum still counts"
        );
    }
}
