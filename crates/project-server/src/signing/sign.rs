//! Signing, as a project does for each executable it serves: RSA PKCS#1 v1.5 (type 1
//! padding, no digest prefix) over the ASCII hex MD5 of the file. Deterministic: the
//! same key and checksum always give the same signature. The client checks it with
//! `boinc_core::protocol::code_signing::verify_file_signature`.

use super::error::SigningError;
use super::private_key::CodeSignPrivateKey;
use boinc_core::protocol::code_signing::{CodeSignKey, Signature, checksum_as_signed, md5_hex};
use rsa::Pkcs1v15Sign;

/// A file's signature from its MD5 (`md5_hex`, 32 hex digits, as
/// `boinc_core::protocol::code_signing::md5_hex` gives).
pub fn sign(key: &CodeSignPrivateKey, md5_hex: &str) -> Result<Signature, SigningError> {
    let digest = checksum_as_signed(md5_hex)?;
    let bytes = key
        .rsa()
        .sign(Pkcs1v15Sign::new_unprefixed(), digest.as_bytes())
        .map_err(|e| SigningError::Failed { reason: e.to_string() })?;
    Ok(Signature::from_bytes(bytes))
}

/// The signature of a text (BOINC signs a new key, or an account manager a URL, this
/// way): the signature of the text's MD5. The caller must have chosen the text itself:
/// with a code-signing key, a signature of a text is a signature of any file with the
/// same MD5.
pub fn sign_text(key: &CodeSignPrivateKey, text: &str) -> Result<Signature, SigningError> {
    sign(key, &md5_hex(text.as_bytes()))
}

/// A change of code-signing key: the signature of `new_key` made with the old private
/// key, sent as `<code_sign_key_signature>` to clients that hold the old key
/// (`boinc_core::protocol::code_signing::check_key_update` is the client's side).
pub fn sign_key_update(
    old_key: &CodeSignPrivateKey,
    new_key: &CodeSignKey,
) -> Result<Signature, SigningError> {
    sign_text(old_key, &new_key.to_text())
}
