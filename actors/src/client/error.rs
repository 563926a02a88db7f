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
    /// A user action could not be applied.
    #[error("{0}")]
    Action(#[from] boinc_core::control::UserActionError),
    /// The client was started where it cannot run (e.g. `spawn` outside an actix System).
    #[error(
        "no actix System or tokio LocalSet is running on this thread: call `spawn` inside one, or `start` to give the client its own thread"
    )]
    NoRuntime,
    /// An actor the client cannot do without kept failing: the client stopped.
    #[error("the client gave up: {0}")]
    GaveUp(String),
    /// The client's actors stopped (the run ended or the System was stopped).
    #[error("the client has stopped: {0}")]
    Stopped(String),
    /// A realtime factor that cannot pace a run.
    #[error("a realtime factor must be a number greater than 0, not {0}")]
    BadPace(f64),
    /// The journal could not be written.
    #[error("journal: {0}")]
    Journal(String),
}

impl From<JournalError> for ClientError {
    fn from(error: JournalError) -> Self {
        ClientError::Journal(error.to_string())
    }
}
