//! Code signing (docs/design.md "Protocol facts", "Files"): a project signs each executable
//! it serves with its private key; the client runs an executable only if its
//! `<file_signature>` verifies with the project's `<code_sign_key>`. The signature is
//! RSA PKCS#1 v1.5 (type 1 padding, no digest prefix) over the ASCII hex MD5 of the
//! file; keys and signatures travel in BOINC's hex text format. A project that changes
//! its key signs the new key with the old one (`<code_sign_key_signature>`), and the
//! client takes the new key only then.
//!
//! Pure: the caller reads the file and computes its MD5 ([`md5_hex`] for bytes in
//! memory); key generation, which needs randomness, is the project server's.

mod error;
mod hex_text;
mod key_rollover;
mod private_key;
mod public_key;
mod sign;
mod signature;
mod verify;

pub use error::CodeSigningError;
pub use key_rollover::{KeyUpdate, check_key_update, sign_key_update};
pub use private_key::CodeSignPrivateKey;
pub use public_key::{CodeSignKey, MAX_KEY_BITS, MIN_KEY_BITS};
pub use sign::{md5_hex, sign, sign_text};
pub use signature::Signature;
pub use verify::{verify_file_signature, verify_text_signature};
