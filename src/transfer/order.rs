//! What crosses between the transfer policy and whoever moves the bytes: an attempt to
//! start ([`TransferOrder`]) and how it ended ([`TransferResult`]). An order names one
//! URL; trying the file's URLs in turn and backing off is the policy's business.

use crate::Time;
use crate::control::project_dir;
use crate::model::{FileId, ProjectId};
use serde::{Deserialize, Serialize};

/// Where downloads are written until they are verified, relative to the data
/// directory. Outside the projects' directories, so a task's slot can never link to a
/// file that has not passed its checks.
pub const STAGING_DIR: &str = "downloads";

/// Which way a file moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Direction {
    /// From the project to the client.
    Download,
    /// From the client to the project.
    Upload,
}

impl Direction {
    /// "download" or "upload", for messages.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Download => "download",
            Direction::Upload => "upload",
        }
    }
}

/// One attempt to move one file, as the policy wants it started now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransferOrder {
    /// The file.
    pub file: FileId,
    /// Its project.
    pub project: ProjectId,
    /// Which way.
    pub direction: Direction,
    /// The file's name.
    pub name: String,
    /// The URL this attempt uses.
    pub url: String,
    /// Where the file lives, relative to the data directory (`projects/NAME/FILE`).
    pub path: String,
    /// Where a download is written until it is verified, relative to the data
    /// directory (see [`STAGING_DIR`]); empty for an upload.
    pub staging_path: String,
    /// The size the project announced, bytes (0: not known).
    pub nbytes: f64,
    /// The most bytes the transfer may move: a download sending more is wrong, an
    /// upload of a larger file is refused by the project.
    pub max_nbytes: f64,
    /// The MD5 the project announced, hex (empty: none).
    pub md5_cksum: String,
    /// The file is an executable: once in place it may be run (BOINC's
    /// `<executable/>`), which only a checked signature allows.
    #[serde(default)]
    pub executable: bool,
    /// When the attempt started.
    pub started: Time,
    /// The preferences' rate limit for this direction when it started, bytes per second
    /// (`max_bytes_sec_down` or `max_bytes_sec_up`; 0: none), shared by every transfer
    /// of the direction.
    #[serde(default)]
    pub max_bytes_sec: f64,
}

impl TransferOrder {
    /// The path of `name` of the project at `master_url`, relative to the data
    /// directory.
    pub fn project_path(master_url: &str, name: &str) -> String {
        format!("{}/{name}", project_dir(master_url))
    }

    /// Where a download of `name` of the project at `master_url` is staged.
    pub fn staging_path_of(master_url: &str, name: &str) -> String {
        let project = project_dir(master_url);
        let project = project.rsplit('/').next().unwrap_or(&project);
        format!("{STAGING_DIR}/{project}/{name}")
    }
}

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TransferResult {
    /// A download arrived in its staging file: its size and MD5 as received, for the
    /// policy to check before the file is put in place.
    Downloaded {
        /// Bytes in the staging file.
        nbytes: f64,
        /// Their MD5, hex, computed by the client.
        md5: String,
    },
    /// A checked download was put in place.
    Installed,
    /// The project took an upload.
    Uploaded {
        /// The file's size.
        nbytes: f64,
        /// Its MD5, hex.
        md5: String,
    },
    /// The attempt failed.
    Failed(TransferFailure),
}

/// Why an attempt failed, as far as the policy needs to know.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransferFailure {
    /// What kind of failure: what the policy does next depends on it.
    pub kind: FailureKind,
    /// What happened, for the user (and, if the file is given up, the project).
    pub message: String,
    /// Bytes of the file moved so far, all attempts together (a partial download, the
    /// server's part of an upload).
    pub bytes_done: f64,
}

/// The kinds of failure the policy tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FailureKind {
    /// Worth trying again (the network, a timeout, a server error, an interrupted
    /// exchange, a full disk): the next URL, then a backoff.
    Transient,
    /// The server says the file cannot be had or will not be taken (not found, an
    /// upload refused): trying again will not help.
    Permanent,
    /// The bytes this URL sent are not the file (more than its size): another URL may
    /// have it right.
    BadContent,
    /// This host could not write or read the file (a full disk): no fault of the
    /// server's, so neither the file nor its project backs off; the file waits for room.
    Local,
}

/// BOINC's error numbers for what happens to files and the jobs that need them
/// (error_numbers.h): a file given up on carries one as its status, a job that ends
/// because of it reports one as its exit status.
pub mod error_codes {
    /// A download made no progress for too long, or the project does not have it.
    pub const ERR_GIVEUP_DOWNLOAD: i32 = -114;
    /// An upload made no progress for too long.
    pub const ERR_GIVEUP_UPLOAD: i32 = -115;
    /// A file's MD5 is not the one the project announced.
    pub const ERR_MD5_FAILED: i32 = -119;
    /// An executable's signature does not verify with the project's key.
    pub const ERR_RSA_FAILED: i32 = -120;
    /// An executable came without a signature (or the project has no key).
    pub const ERR_NO_SIGNATURE: i32 = -123;
    /// The project's upload handler refused an upload for good.
    pub const ERR_UPLOAD_PERMANENT: i32 = -128;
    /// A file is larger than the project allows.
    pub const ERR_FILE_TOO_BIG: i32 = -131;
    /// A job could not get its input or app files.
    pub const ERR_RESULT_DOWNLOAD: i32 = -186;
    /// A job's outputs could not be uploaded.
    pub const ERR_RESULT_UPLOAD: i32 = -187;
    /// A file's size is not the one the project announced.
    pub const ERR_WRONG_SIZE: i32 = -200;
}
