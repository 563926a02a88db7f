//! Verification, as the client does before it lets an executable run: the signature,
//! opened with the project's public key, must hold exactly the file's MD5 in ASCII hex
//! under PKCS#1 v1.5 type 1 padding.

use super::digest::{checksum_as_signed, md5_hex};
use super::error::CodeSigningError;
use super::public_key::CodeSignKey;
use super::signature::Signature;
use rsa::Pkcs1v15Sign;

/// Checks the signature of a file whose MD5 is `file_md5_hex` (32 hex digits, computed
/// by the caller from the bytes it holds, not taken from the server's word).
pub fn verify_file_signature(
    key: &CodeSignKey,
    signature: &Signature,
    file_md5_hex: &str,
) -> Result<(), CodeSigningError> {
    let digest = checksum_as_signed(file_md5_hex)?;
    key.rsa()
        .verify(Pkcs1v15Sign::new_unprefixed(), digest.as_bytes(), signature.as_bytes())
        .map_err(|_| CodeSigningError::BadSignature)
}

/// Checks the signature of a text (a new key signed with the old one, an account
/// manager's URL): the signature of the text's MD5.
pub fn verify_text_signature(
    key: &CodeSignKey,
    signature: &Signature,
    text: &str,
) -> Result<(), CodeSigningError> {
    verify_file_signature(key, signature, &md5_hex(text.as_bytes()))
}
