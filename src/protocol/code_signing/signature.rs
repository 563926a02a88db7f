//! A signature in BOINC's hex text (`<file_signature>`, `<code_sign_key_signature>`):
//! the RSA signature's bytes, as long as the key's modulus, as hex lines and a `.` line.

use super::error::CodeSigningError;
use super::hex_text::{read_hex_text, write_hex_text};
use super::key_text::field_width;
use super::public_key::MAX_KEY_BITS;

const WHAT: &str = "signature";

/// An RSA signature.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Signature {
    bytes: Vec<u8>,
}

impl Signature {
    /// Reads a signature from BOINC's hex text (blank space around it is ignored). Its
    /// length is checked against the key when it is verified.
    pub fn parse(text: &str) -> Result<Signature, CodeSigningError> {
        if text.trim().is_empty() {
            return Err(CodeSigningError::Empty { what: WHAT });
        }
        let bytes = read_hex_text(text.trim(), WHAT, field_width(MAX_KEY_BITS))?;
        Ok(Signature { bytes })
    }

    /// The signature as BOINC writes it (hex lines, a `.` line, a newline).
    pub fn to_text(&self) -> String {
        write_hex_text(&self.bytes)
    }

    /// The signature's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// A signature of these bytes, as an RSA library produced them (the project server
    /// wraps what it signs in this). Its length is checked against the key when it is
    /// verified.
    pub fn from_bytes(bytes: Vec<u8>) -> Signature {
        Signature { bytes }
    }
}
