//! What a signature covers: the ASCII hex MD5 of a file (or of a text: a key, a URL),
//! lower-case, 32 digits, as BOINC signs and checks it.

use super::error::CodeSigningError;
use md5::{Digest, Md5};

/// The MD5 of `bytes` as 32 lowercase hex digits, as BOINC writes checksums.
pub fn md5_hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let digest = Md5::digest(bytes);
    let mut text = String::with_capacity(digest.len() * 2);
    for byte in digest {
        // Writing to a String cannot fail.
        let _ = write!(text, "{byte:02x}");
    }
    text
}

/// The text a file's signature covers, from its checksum (`md5_hex`, 32 hex digits, as
/// [`md5_hex`] gives, blank space around it ignored): BOINC signs the lowercase hex
/// digits. Anything else is an error, so no signature is ever checked (or made) over
/// text that is not a checksum.
pub fn checksum_as_signed(md5_hex: &str) -> Result<String, CodeSigningError> {
    let md5 = md5_hex.trim();
    if md5.len() == 32 && md5.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(md5.to_ascii_lowercase())
    } else {
        Err(CodeSigningError::BadMd5 { found: md5.chars().take(40).collect() })
    }
}
