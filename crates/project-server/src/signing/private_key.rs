//! A private key in BOINC's text form (the file a BOINC project keeps as
//! `code_sign_private`; the account manager's key uses it too): the size in bits on the
//! first line, then as hex text the modulus, the public exponent and the private exponent
//! (each the modulus's length), the two primes, their CRT exponents and the CRT
//! coefficient `q⁻¹ mod p` (each half the modulus's length, rounded up), all big-endian
//! and zero-padded, and a `.` line.

use super::error::SigningError;
use boinc_core::protocol::code_signing::key_text::{
    field_width, padded, read_key_text, write_key_text,
};
use boinc_core::protocol::code_signing::{
    CodeSignKey, CodeSigningError, MAX_KEY_BITS, MIN_KEY_BITS,
};
use rsa::traits::{PrivateKeyParts, PublicKeyParts};
use rsa::{BigUint, RsaPrivateKey};

const WHAT: &str = "private key";

/// The size of the keys made, bits (BOINC's).
const KEY_BITS: usize = 1024;

/// A private key that signs (a project's code-signing key, an account manager's key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeSignPrivateKey {
    bits: u32,
    key: RsaPrivateKey,
    public: CodeSignKey,
}

/// Bytes each prime-sized number of a key of `bits` takes.
fn prime_width(bits: u32) -> usize {
    field_width(bits).div_ceil(2)
}

/// Bytes of a private key's hex data: three modulus-sized numbers, five prime-sized.
fn data_len(bits: u32) -> usize {
    3 * field_width(bits) + 5 * prime_width(bits)
}

/// The public half of a key with modulus `n` and exponent `e`.
fn public_half(bits: u32, n: &BigUint, e: &BigUint) -> Result<CodeSignKey, CodeSigningError> {
    CodeSignKey::from_parts(bits, &n.to_bytes_be(), &e.to_bytes_be(), WHAT)
}

impl CodeSignPrivateKey {
    /// A new key of BOINC's 1024 bits from the operating system's randomness.
    pub fn generate() -> Result<CodeSignPrivateKey, SigningError> {
        let key = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, KEY_BITS)
            .map_err(|e| SigningError::Generation { reason: e.to_string() })?;
        Ok(CodeSignPrivateKey::from_rsa(key)?)
    }

    /// A key from the RSA library's (a freshly generated one); it must have two primes
    /// and a size in the accepted range.
    pub fn from_rsa(key: RsaPrivateKey) -> Result<CodeSignPrivateKey, CodeSigningError> {
        let bits = u32::try_from(key.n().bits()).unwrap_or(u32::MAX);
        if !(MIN_KEY_BITS..=MAX_KEY_BITS).contains(&bits) {
            return Err(CodeSigningError::KeySizeOutOfRange {
                bits,
                min: MIN_KEY_BITS,
                max: MAX_KEY_BITS,
            });
        }
        let public = public_half(bits, key.n(), key.e())?;
        let narrow = prime_width(bits);
        let primes_fit = key.primes().iter().all(|p| p.bits().div_ceil(8) <= narrow);
        if key.primes().len() != 2 || !primes_fit {
            return Err(CodeSigningError::InvalidKey {
                what: WHAT,
                reason: "BOINC keys have two primes of half the modulus's size".into(),
            });
        }
        Ok(CodeSignPrivateKey { bits, key, public })
    }

    /// Reads a key from BOINC's text form. The stored CRT values are recomputed from
    /// the primes rather than trusted.
    pub fn parse(text: &str) -> Result<CodeSignPrivateKey, CodeSigningError> {
        let (bits, data) = read_key_text(text, WHAT, data_len)?;
        let (wide, narrow) = (field_width(bits), prime_width(bits));
        let number = |start: usize, len: usize| BigUint::from_bytes_be(&data[start..start + len]);
        let n = number(0, wide);
        let e = number(wide, wide);
        let d = number(2 * wide, wide);
        let p = number(3 * wide, narrow);
        let q = number(3 * wide + narrow, narrow);
        let public = public_half(bits, &n, &e)?;
        let key = RsaPrivateKey::from_components(n, e, d, vec![p, q])
            .map_err(|e| CodeSigningError::InvalidKey { what: WHAT, reason: e.to_string() })?;
        Ok(CodeSignPrivateKey { bits, key, public })
    }

    /// The key as BOINC writes it.
    pub fn to_text(&self) -> String {
        let (wide, narrow) = (field_width(self.bits), prime_width(self.bits));
        let key = &self.key;
        let one = BigUint::from(1u32);
        let primes = key.primes();
        let (p, q) = (&primes[0], &primes[1]);
        let dp = key.d() % (p - &one);
        let dq = key.d() % (q - &one);
        let coefficient = key.crt_coefficient().unwrap_or_default();
        let mut data = Vec::with_capacity(data_len(self.bits));
        for number in [key.n(), key.e(), key.d()] {
            data.extend(padded(&number.to_bytes_be(), wide));
        }
        for number in [p, q, &dp, &dq, &coefficient] {
            data.extend(padded(&number.to_bytes_be(), narrow));
        }
        write_key_text(self.bits, &data)
    }

    /// The public half, which the project sends as its `<code_sign_key>` (the account
    /// manager as its `<signing_key>`).
    pub fn public_key(&self) -> &CodeSignKey {
        &self.public
    }

    /// The RSA key.
    pub(super) fn rsa(&self) -> &RsaPrivateKey {
        &self.key
    }
}
