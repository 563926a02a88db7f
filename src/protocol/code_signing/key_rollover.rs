//! A project's change of code-signing key, as BOINC does it: the client pins the first
//! key a project sends; a reply with another key is taken only with a
//! `<code_sign_key_signature>` of the new key's text (as BOINC writes it,
//! [`CodeSignKey::to_text`]) made with the pinned key. The project side (the project
//! server's, which alone signs) signs the new key with the old private key once, when it
//! changes keys, and sends that signature to clients that still hold the old key.

use super::error::CodeSigningError;
use super::public_key::CodeSignKey;
use super::signature::Signature;
use super::verify::verify_text_signature;

/// What to do with the key a reply offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyUpdate {
    /// No key was pinned: pin this one.
    Pin(CodeSignKey),
    /// The same key as the pinned one: nothing changes.
    Unchanged,
    /// A new key, signed by the pinned one: pin it in place of the old.
    Replace(CodeSignKey),
}

/// Decides on the key a reply offers (`offered`, with its `signature` when the reply
/// has one) given the key pinned for the project. A different key without a valid
/// signature by the pinned key is an error, and the pinned key stays.
pub fn check_key_update(
    pinned: Option<&CodeSignKey>,
    offered: CodeSignKey,
    signature: Option<&Signature>,
) -> Result<KeyUpdate, CodeSigningError> {
    let Some(pinned) = pinned else {
        return Ok(KeyUpdate::Pin(offered));
    };
    if *pinned == offered {
        return Ok(KeyUpdate::Unchanged);
    }
    let signature = signature.ok_or(CodeSigningError::MissingKeySignature)?;
    verify_text_signature(pinned, signature, &offered.to_text())
        .map_err(|_| CodeSigningError::BadKeySignature)?;
    Ok(KeyUpdate::Replace(offered))
}
