//! Signing, which in boinc-rs only the project server does: its private keys in BOINC's
//! text form ([`CodeSignPrivateKey`]), made from the operating system's randomness, and
//! BOINC's signatures made with them — of an executable's MD5 ([`sign`]), of a text
//! ([`sign_text`]: a new key, an account manager's URL) and of a key change
//! ([`sign_key_update`]). The core (`boinc_core::protocol::code_signing`) only verifies;
//! it gives this module the key text format ([`boinc_core::protocol::code_signing::key_text`]).
//!
//! Whatever holds a private key decides what it signs: the project's code-signing key
//! signs only the executables it serves and its own next key; the account manager's key
//! signs only URLs the manager chose (never a text a request names).

mod error;
mod private_key;
mod sign;

pub use error::SigningError;
pub use private_key::CodeSignPrivateKey;
pub use sign::{sign, sign_key_update, sign_text};

#[cfg(test)]
mod tests;
