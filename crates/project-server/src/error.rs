//! Why the project server cannot start or keep its records.

use std::path::PathBuf;
use thiserror::Error;

/// A project server failure.
#[derive(Debug, Error)]
pub enum ProjectServerError {
    /// A file or directory in the project directory could not be used.
    #[error("{}: {source}; check that the directory exists and is writable", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The project's records could not be read.
    #[error(
        "{}: {reason}; the records are damaged: restore them from a backup, or move the \
         file away to start the project afresh (its jobs and accounts are then forgotten)",
        path.display()
    )]
    DamagedRecords {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The code-signing key could not be read or made.
    #[error(
        "{}: {reason}; restore the key file, or move the keys directory away to make a \
         new key (clients attached to the project must then be reset)",
        path.display()
    )]
    Key {
        /// The key file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The account manager's signing key could not be read or made.
    #[error(
        "{}: {reason}; restore the key file, or move it away to make a new key (hosts \
         that joined the account manager must then join it again)",
        path.display()
    )]
    AccountManagerKey {
        /// The key file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// An app to serve cannot be used.
    #[error("{}: {reason}", path.display())]
    App {
        /// The executable.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The server cannot listen.
    #[error(
        "cannot listen on {address}: {source}; choose another port with --port, or stop \
         the program that holds it"
    )]
    Bind {
        /// The address.
        address: String,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The records could not be written in time.
    #[error("the project's records could not be saved: {0}; check the disk")]
    NotSaved(String),
}

impl ProjectServerError {
    /// An I/O error on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| ProjectServerError::Io { path, source }
    }
}
