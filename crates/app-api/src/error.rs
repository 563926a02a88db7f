//! Why an app could not start talking to its client.

use std::path::PathBuf;

/// An app's side of BOINC's API could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum AppApiError {
    /// `init_data.xml` is there but cannot be read.
    #[error("cannot read {path}: {reason}; the client wrote a damaged file: report it")]
    InitData {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The shared-memory file cannot be mapped.
    #[error(
        "cannot map the shared-memory file {path}: {source}; the client did not set up the slot"
    )]
    SharedMemory {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Another instance of the app holds the slot's lock.
    #[error("another instance of the app is running in this slot")]
    SlotLocked,
    /// The API's thread could not be started.
    #[error("cannot start the API thread: {0}")]
    Thread(#[source] std::io::Error),
}
