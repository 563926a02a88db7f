//! Code signing (docs/design.md "Protocol facts", "Files"), the client's side: a project signs
//! each executable it serves with its private key; the client runs an executable only if
//! its `<file_signature>` verifies with the project's `<code_sign_key>`. The signature is
//! RSA PKCS#1 v1.5 (type 1 padding, no digest prefix) over the ASCII hex MD5 of the
//! file; keys and signatures travel in BOINC's hex text format. A project that changes
//! its key signs the new key with the old one (`<code_sign_key_signature>`), and the
//! client takes the new key only then. An account manager signs the URLs it hands out
//! the same way, with a key of its own.
//!
//! Verification only: the core holds no private key and cannot sign. Signing, private
//! keys and key generation (which needs randomness) are the project server's
//! (`boinc-project-server`), which writes its keys in the text format of [`key_text`].
//!
//! Pure: the caller reads the file and computes its MD5 ([`md5_hex`] for bytes in
//! memory).

mod digest;
mod error;
mod hex_text;
mod key_rollover;
pub mod key_text;
mod public_key;
mod signature;
mod verify;

pub use digest::{checksum_as_signed, md5_hex};
pub use error::CodeSigningError;
pub use key_rollover::{KeyUpdate, check_key_update};
pub use public_key::{CodeSignKey, MAX_KEY_BITS, MIN_KEY_BITS};
pub use signature::Signature;
pub use verify::{verify_file_signature, verify_text_signature};
