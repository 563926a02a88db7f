//! Why a key could not be made or read, or a signature not made.

use boinc_core::protocol::code_signing::CodeSigningError;
use thiserror::Error;

/// A signing failure.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SigningError {
    /// The key's text, or what was to be signed, is not as BOINC writes it.
    #[error(transparent)]
    Key(#[from] CodeSigningError),
    /// No key could be made.
    #[error(
        "no key could be made ({reason}); the operating system's randomness is needed: \
         check that /dev/urandom is readable"
    )]
    Generation {
        /// What the RSA library reported.
        reason: String,
    },
    /// The private key could not sign.
    #[error("signing failed ({reason}); the private key is damaged: generate a new one")]
    Failed {
        /// What the RSA library reported.
        reason: String,
    },
}
