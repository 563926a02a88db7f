//! The client's data directory, as the disk manager (seed 004) acts on it: the size of a
//! project's file, deleting one, and the space on the disk that holds the directory.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Total size and free space of the disk holding the data directory, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DiskSpace {
    /// The disk's size.
    pub total: f64,
    /// What is free on it (for an unprivileged user).
    pub free: f64,
}

/// Why the data directory could not be read or changed.
#[derive(Debug, thiserror::Error)]
pub enum FileSystemError {
    /// A file name that would leave its project's directory (`..`, `/`, empty): the state
    /// or a server's reply named it, and nothing is done with it.
    #[error(
        "file name {name:?} of project {project} is not a plain name; nothing was done with it (the client state or the project's reply is damaged)"
    )]
    NotAPlainName {
        /// The project's master URL.
        project: String,
        /// The name as given.
        name: String,
    },
    /// The operating system refused.
    #[error(
        "could not {operation} {path}: {source}; check the data directory's permissions and the disk"
    )]
    Io {
        /// What was being done.
        operation: &'static str,
        /// The path.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
}

/// The client's data directory. Projects are named by master URL, as their directories
/// are on disk.
pub trait FileSystem: Send + Sync {
    /// Bytes the project's file takes; `None` when it does not exist.
    fn size(&self, project_url: &str, name: &str) -> Result<Option<f64>, FileSystemError>;
    /// Deletes the project's file; whether it existed.
    fn delete(&self, project_url: &str, name: &str) -> Result<bool, FileSystemError>;
    /// The disk holding the data directory.
    fn disk_space(&self) -> Result<DiskSpace, FileSystemError>;
}
