//! A project's public code-signing key (`<code_sign_key>`) in BOINC's text form
//! ([`super::key_text`]): the key's size in bits on the first line, then, as hex text, the
//! modulus and the public exponent, each big-endian and left-padded with zeros to the
//! modulus's length (128 bytes for BOINC's 1024-bit keys, so 8 lines of hex), and a `.`
//! line.

use super::error::CodeSigningError;
use super::key_text::{field_width, padded, read_key_text, write_key_text};
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
        CodeSignKey::from_parts(bits, &data[..half], &data[half..], WHAT)
    }

    /// The key as BOINC writes it: the bit count line, the hex lines, the `.` line, each
    /// ended by a newline. This exact text is what a key change's signature covers.
    pub fn to_text(&self) -> String {
        let width = field_width(self.bits);
        let mut data = padded(&self.key.n().to_bytes_be(), width);
        data.extend(padded(&self.key.e().to_bytes_be(), width));
        write_key_text(self.bits, &data)
    }

    /// The key's size in bits.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// The RSA key.
    pub(super) fn rsa(&self) -> &RsaPublicKey {
        &self.key
    }

    /// A key of `bits` from its modulus and public exponent (big-endian bytes, leading
    /// zeros allowed), checked: the modulus must have exactly `bits` bits and the two
    /// must make an RSA public key. `what` names the key in errors ("key", "private key":
    /// the project server makes a private key's public half with this).
    pub fn from_parts(
        bits: u32,
        modulus_be: &[u8],
        exponent_be: &[u8],
        what: &'static str,
    ) -> Result<CodeSignKey, CodeSigningError> {
        let n = BigUint::from_bytes_be(modulus_be);
        let e = BigUint::from_bytes_be(exponent_be);
        if n.bits() != bits as usize {
            return Err(CodeSigningError::ModulusSize { bits, modulus_bits: n.bits() });
        }
        let key = RsaPublicKey::new(n, e)
            .map_err(|e| CodeSigningError::InvalidKey { what, reason: e.to_string() })?;
        Ok(CodeSignKey { bits, key })
    }
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
            let key = CodeSignKey::from_parts(bits, &modulus, &exponent.to_be_bytes(), "key")
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
