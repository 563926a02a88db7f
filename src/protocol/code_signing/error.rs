//! Why a code-signing key or signature was refused. Keys and signatures come from
//! project servers and state files: every problem is an error naming what is wrong and
//! what to do, never a panic.

use thiserror::Error;

/// A key or signature that cannot be read, or a signature that does not verify.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CodeSigningError {
    /// The text is empty.
    #[error(
        "the {what} is empty; the project sent none: ask the project to sign its files, \
         or reset the project"
    )]
    Empty {
        /// "key", "private key" or "signature".
        what: &'static str,
    },
    /// A key's first line is not its size in bits.
    #[error(
        "the key's first line must be its size in bits, found {found:?}; this is not a \
         BOINC code-signing key: check that the right key was given"
    )]
    BadKeySize {
        /// The line as found (cut short).
        found: String,
    },
    /// A key's size is outside what is accepted.
    #[error(
        "the key has {bits} bits; keys of {min} to {max} bits are accepted: generate a \
         new key of BOINC's 1024 bits"
    )]
    KeySizeOutOfRange {
        /// The size the key gives.
        bits: u32,
        /// The smallest size accepted.
        min: u32,
        /// The largest size accepted.
        max: u32,
    },
    /// A character that is not part of BOINC's hex text.
    #[error(
        "byte {at} of the {what} is {found:?}, not a hex digit; BOINC writes keys and \
         signatures as lines of hex digit pairs ended by a '.' line: the text is damaged"
    )]
    NotHex {
        /// "key", "private key" or "signature".
        what: &'static str,
        /// Byte offset in the text.
        at: usize,
        /// The character found.
        found: char,
    },
    /// A hex digit without its pair.
    #[error("the {what} has an odd number of hex digits; the text is damaged or cut short")]
    OddHexDigits {
        /// "key", "private key" or "signature".
        what: &'static str,
    },
    /// The hex text does not end with its `.` line.
    #[error("the {what} does not end with BOINC's '.' line; the text was cut short")]
    Unterminated {
        /// "key", "private key" or "signature".
        what: &'static str,
    },
    /// Something follows the `.` line.
    #[error("the {what} has text after its '.' line; the text is damaged")]
    TrailingText {
        /// "key", "private key" or "signature".
        what: &'static str,
    },
    /// More hex data than any accepted key or signature holds.
    #[error(
        "the {what} holds more than {limit} bytes; no accepted key or signature is that \
         large: the text is not a BOINC {what}"
    )]
    TooLong {
        /// "key", "private key" or "signature".
        what: &'static str,
        /// The most bytes accepted.
        limit: usize,
    },
    /// The hex data is not as long as the key's size requires.
    #[error(
        "a {bits}-bit {what} holds {expected} bytes, this one {found}; the text is damaged \
         or cut short"
    )]
    WrongLength {
        /// "key" or "private key".
        what: &'static str,
        /// The size the key gives.
        bits: u32,
        /// Bytes expected.
        expected: usize,
        /// Bytes found.
        found: usize,
    },
    /// The modulus is not as long as the key says.
    #[error(
        "the key says it has {bits} bits but its modulus has {modulus_bits}; the key is \
         damaged: ask the project for its key again (reset the project)"
    )]
    ModulusSize {
        /// The size the key gives.
        bits: u32,
        /// The modulus's bit length.
        modulus_bits: usize,
    },
    /// The numbers do not make an RSA key.
    #[error("the {what} is not a valid RSA key ({reason}); the key is damaged")]
    InvalidKey {
        /// "key" or "private key".
        what: &'static str,
        /// What the RSA library found wrong.
        reason: String,
    },
    /// What should be a file's MD5 is not 32 hex digits.
    #[error(
        "{found:?} is not an MD5 checksum (32 hex digits); the file's checksum must be \
         computed before its signature is checked"
    )]
    BadMd5 {
        /// The text given.
        found: String,
    },
    /// A signature that does not verify.
    #[error(
        "the signature does not verify with the project's code-signing key: the file was \
         altered or not signed by the project, and is not used; if the project changed its \
         key, reset the project"
    )]
    BadSignature,
    /// A reply offers a new key without the old key's signature of it.
    #[error(
        "the project offered a new code-signing key without a signature by its current \
         key; the new key is refused and the current one kept: if the project really \
         changed its key, reset the project"
    )]
    MissingKeySignature,
    /// A reply offers a new key whose signature does not verify with the old key.
    #[error(
        "the project's new code-signing key is not signed by its current key; the new key \
         is refused and the current one kept: if the project really changed its key, \
         reset the project"
    )]
    BadKeySignature,
}
