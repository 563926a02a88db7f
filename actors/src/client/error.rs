//! What can go wrong with an embedded client.

use crate::journal::JournalError;
use serde::{Deserialize, Serialize};

/// What went wrong with an embedded client.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
pub enum ClientError {
    /// No client state was given to the builder.
    #[error(
        "no client state: give the builder one with .state(...) (e.g. a scenario's client_state.xml)"
    )]
    NoState,
    /// A user action named a project the client does not know.
    #[error("no project named or with master URL '{0}'; `boinc-rs explain` lists the projects")]
    UnknownProject(String),
    /// A user action named a task the client does not know.
    #[error("no task (job) named '{0}'")]
    UnknownTask(String),
    /// The client's actors stopped (the run ended or the System was stopped).
    #[error("the client has stopped: {0}")]
    Stopped(String),
    /// The journal could not be written.
    #[error("journal: {0}")]
    Journal(String),
}

impl From<JournalError> for ClientError {
    fn from(error: JournalError) -> Self {
        ClientError::Journal(error.to_string())
    }
}
