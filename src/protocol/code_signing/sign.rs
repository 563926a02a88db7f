//! Signing, as a project does for each executable it serves: RSA PKCS#1 v1.5 (type 1
//! padding, no digest prefix) over the ASCII hex MD5 of the file. Deterministic: the
//! same key and checksum always give the same signature.

use super::error::CodeSigningError;
use super::private_key::CodeSignPrivateKey;
use super::signature::Signature;
use md5::{Digest, Md5};
use rsa::Pkcs1v15Sign;

/// The MD5 of `bytes` as 32 lowercase hex digits, as BOINC writes checksums.
pub fn md5_hex(bytes: &[u8]) -> String {
    hex_of(&Md5::digest(bytes))
}

/// Lowercase hex of a digest.
fn hex_of(digest: &[u8]) -> String {
    use std::fmt::Write;
    let mut text = String::with_capacity(digest.len() * 2);
    for byte in digest {
        // Writing to a String cannot fail.
        let _ = write!(text, "{byte:02x}");
    }
    text
}

/// A file's signature from its MD5 (`md5_hex`, 32 hex digits, as [`md5_hex`] gives).
pub fn sign(key: &CodeSignPrivateKey, md5_hex: &str) -> Result<Signature, CodeSigningError> {
    let digest = checked_md5(md5_hex)?;
    let bytes = key
        .rsa()
        .sign(Pkcs1v15Sign::new_unprefixed(), digest.as_bytes())
        .map_err(|e| CodeSigningError::SigningFailed { reason: e.to_string() })?;
    Ok(Signature::from_bytes(bytes))
}

/// The signature of a text (BOINC signs a new key, or an account manager a URL, this
/// way): the signature of the text's MD5.
pub fn sign_text(key: &CodeSignPrivateKey, text: &str) -> Result<Signature, CodeSigningError> {
    sign(key, &md5_hex(text.as_bytes()))
}

/// The checksum as signed: BOINC signs the lowercase hex digits.
pub(super) fn checked_md5(md5_hex: &str) -> Result<String, CodeSigningError> {
    let md5 = md5_hex.trim();
    if md5.len() == 32 && md5.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(md5.to_ascii_lowercase())
    } else {
        Err(CodeSigningError::BadMd5 { found: md5.chars().take(40).collect() })
    }
}
