//! A project's public code-signing key (`<code_sign_key>`) in BOINC's text form: the
//! key's size in bits on the first line, then, as hex text ([`super::hex_text`]), the
//! modulus and the public exponent, each big-endian and left-padded with zeros to the
//! modulus's length (128 bytes for BOINC's 1024-bit keys, so 8 lines of hex), and a `.`
//! line.

use super::error::CodeSigningError;
use super::hex_text::{read_hex_text_at, write_hex_text};
use rsa::traits::PublicKeyParts;
use rsa::{BigUint, RsaPublicKey};

/// The smallest key accepted, bits: BOINC's own keys are 1024 bits, and anything
/// smaller is too weak to guard what a volunteer's computer runs.
pub const MIN_KEY_BITS: u32 = 1024;

/// The largest key accepted, bits (the RSA library's limit).
pub const MAX_KEY_BITS: u32 = 4096;

/// A project's public code-signing key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeSignKey {
    bits: u32,
    key: RsaPublicKey,
}

impl CodeSignKey {
    /// Reads a key from BOINC's text form (blank space around it is ignored).
    pub fn parse(text: &str) -> Result<CodeSignKey, CodeSigningError> {
        const WHAT: &str = "key";
        let (bits, data) = read_key_text(text, WHAT, |bits| 2 * field_width(bits))?;
        let half = data.len() / 2;
        let n = BigUint::from_bytes_be(&data[..half]);
        let e = BigUint::from_bytes_be(&data[half..]);
        CodeSignKey::from_parts(bits, n, e, WHAT)
    }

    /// The key as BOINC writes it: the bit count line, the hex lines, the `.` line, each
    /// ended by a newline. This exact text is what a key change's signature covers.
    pub fn to_text(&self) -> String {
        let width = field_width(self.bits);
        let mut data = padded(self.key.n(), width);
        data.extend(padded(self.key.e(), width));
        format!("{}\n{}", self.bits, write_hex_text(&data))
    }

    /// The key's size in bits.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// The RSA key.
    pub(super) fn rsa(&self) -> &RsaPublicKey {
        &self.key
    }

    /// A key of `bits` from its modulus and exponent, checked.
    pub(super) fn from_parts(
        bits: u32,
        n: BigUint,
        e: BigUint,
        what: &'static str,
    ) -> Result<CodeSignKey, CodeSigningError> {
        if n.bits() != bits as usize {
            return Err(CodeSigningError::ModulusSize { bits, modulus_bits: n.bits() });
        }
        let key = RsaPublicKey::new(n, e)
            .map_err(|e| CodeSigningError::InvalidKey { what, reason: e.to_string() })?;
        Ok(CodeSignKey { bits, key })
    }
}

/// Bytes each number of a key of `bits` takes in the text: the modulus's length
/// (BOINC's fixed 128 bytes for its 1024-bit keys).
pub(super) fn field_width(bits: u32) -> usize {
    (bits as usize).div_ceil(8)
}

/// A number as `width` big-endian bytes, zeros first (a number of a valid key never
/// exceeds its modulus's length).
pub(super) fn padded(number: &BigUint, width: usize) -> Vec<u8> {
    let bytes = number.to_bytes_be();
    let mut out = vec![0; width.saturating_sub(bytes.len())];
    out.extend_from_slice(&bytes);
    out
}

/// Reads a key's text: its size in bits (checked against the accepted range) and its
/// hex data, which must be `data_len(bits)` bytes long.
pub(super) fn read_key_text(
    text: &str,
    what: &'static str,
    data_len: fn(u32) -> usize,
) -> Result<(u32, Vec<u8>), CodeSigningError> {
    let trimmed = text.trim_start();
    if trimmed.trim().is_empty() {
        return Err(CodeSigningError::Empty { what });
    }
    let skipped = text.len() - trimmed.len();
    let line_end = trimmed.find('\n').unwrap_or(trimmed.len());
    let first_line = trimmed[..line_end].trim();
    let bits: u32 = first_line
        .parse()
        .ok()
        .filter(|_| first_line.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| CodeSigningError::BadKeySize {
            found: first_line.chars().take(40).collect(),
        })?;
    if !(MIN_KEY_BITS..=MAX_KEY_BITS).contains(&bits) {
        return Err(CodeSigningError::KeySizeOutOfRange {
            bits,
            min: MIN_KEY_BITS,
            max: MAX_KEY_BITS,
        });
    }
    let expected = data_len(bits);
    let data = read_hex_text_at(&trimmed[line_end..], skipped + line_end, what, expected)?;
    if data.len() != expected {
        return Err(CodeSigningError::WrongLength { what, bits, expected, found: data.len() });
    }
    Ok((bits, data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn keys_read_back_what_they_write(
            mut modulus in prop::collection::vec(any::<u8>(), 128..=128),
            exponent in prop::sample::select(vec![3u32, 17, 65537]),
            bigger in any::<bool>(),
        ) {
            if bigger {
                modulus.extend_from_within(..64);
            }
            modulus[0] |= 0x80;
            if let Some(last) = modulus.last_mut() {
                *last |= 1;
            }
            let bits = u32::try_from(modulus.len() * 8).expect("small");
            let n = BigUint::from_bytes_be(&modulus);
            let key = CodeSignKey::from_parts(bits, n, BigUint::from(exponent), "key")
                .expect("a well-formed key");
            let text = key.to_text();
            prop_assert_eq!(text.lines().count(), 2 + modulus.len() * 2 / 32);
            prop_assert_eq!(CodeSignKey::parse(&text), Ok(key.clone()));
            // Indented inside an XML element, with Windows line ends: the same key.
            let indented = format!("\n    {}", text.replace('\n', "\r\n"));
            prop_assert_eq!(CodeSignKey::parse(&indented), Ok(key));
        }
    }
}
