//! Errors from reading what an app leaves for the client (docs/design.md "Protocol facts",
//! App API): the text in a shared-memory channel and the files an app writes in its
//! slot. An app can write anything there, by mistake or on purpose; every problem is one
//! of these errors, never a panic, and the client keeps supervising the app.

use super::super::error::XmlError;
use thiserror::Error;

/// What an app left in a shared-memory channel or a slot file could not be read.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum AppMessageError {
    /// The channel's text has no terminating NUL byte within the channel.
    #[error(
        "the channel's text is not NUL-terminated within its {0} bytes; the app wrote past \
         its message or damaged the shared memory: the message is ignored"
    )]
    Unterminated(usize),
    /// The channel's text is not UTF-8 (BOINC's messages are ASCII).
    #[error(
        "the channel holds bytes that are not text; the app damaged the shared memory: the \
         message is ignored"
    )]
    NotText,
    /// The text is not the XML fragment a message is.
    #[error("the message is malformed ({0}): it is ignored")]
    Malformed(XmlError),
    /// A message the client would send does not fit a channel.
    #[error("a message of {len} bytes does not fit a channel's {max} bytes of text; shorten it")]
    TooLong {
        /// The message's length in bytes.
        len: usize,
        /// The most a channel holds (its size less the flag and NUL bytes).
        max: usize,
    },
    /// A slot file the app writes (finish or temporary-exit file) has no valid first line.
    #[error("{file} does not start with a whole number (found \"{found}\"): it is ignored")]
    BadExitFile {
        /// The file's name.
        file: &'static str,
        /// Its first line, cut short.
        found: String,
    },
}

impl From<XmlError> for AppMessageError {
    fn from(error: XmlError) -> Self {
        AppMessageError::Malformed(error)
    }
}
