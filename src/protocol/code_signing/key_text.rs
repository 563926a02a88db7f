//! BOINC's text form of RSA keys, as both its public (`<code_sign_key>`,
//! `code_sign_public`) and private (`code_sign_private`) keys are written: the key's size
//! in bits on the first line, then the key's numbers as hex text (lines of 32 bytes as
//! lowercase hex digit pairs, then a `.` line), each number big-endian and zero-padded to
//! a fixed width that follows from the key's size.
//!
//! The core reads public keys with this; the project server, which alone holds private
//! keys and signs, writes and reads its private keys with it. Nothing here signs.

use super::error::CodeSigningError;
use super::hex_text::{read_hex_text_at, write_hex_text};
use super::public_key::{MAX_KEY_BITS, MIN_KEY_BITS};

/// Bytes each modulus-sized number of a key of `bits` takes in the text: the modulus's
/// length (BOINC's fixed 128 bytes for its 1024-bit keys).
pub fn field_width(bits: u32) -> usize {
    (bits as usize).div_ceil(8)
}

/// A number given as big-endian bytes, as `width` bytes with zeros first. A number of a
/// valid key never exceeds its field; one that does is returned whole, and the text's
/// length check refuses it when read back.
pub fn padded(number_be: &[u8], width: usize) -> Vec<u8> {
    let mut out = vec![0; width.saturating_sub(number_be.len())];
    out.extend_from_slice(number_be);
    out
}

/// A key's text: the size line, then `data` (the key's numbers, each already
/// [`padded`] to its field) as hex lines and the `.` line, each ended by a newline.
pub fn write_key_text(bits: u32, data: &[u8]) -> String {
    format!("{bits}\n{}", write_hex_text(data))
}

/// Reads a key's text: its size in bits (checked against the accepted range,
/// [`MIN_KEY_BITS`] to [`MAX_KEY_BITS`]) and its hex data, which must be
/// `data_len(bits)` bytes long. Blank space before the size line is ignored (a key is
/// often indented inside an XML element). `what` names the key in errors ("key",
/// "private key").
pub fn read_key_text(
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

    #[test]
    fn numbers_are_padded_to_their_field_and_read_back() {
        assert_eq!(field_width(1024), 128);
        assert_eq!(field_width(1025), 129);
        assert_eq!(padded(&[1, 2], 4), [0, 0, 1, 2]);
        assert_eq!(padded(&[1, 2, 3], 2), [1, 2, 3]);
        let data: Vec<u8> = (0..=255).collect();
        let text = write_key_text(1024, &data);
        assert!(text.starts_with("1024\n0001"));
        assert!(text.ends_with("\n.\n"));
        assert_eq!(read_key_text(&format!("\n  {text}"), "key", |_| 256), Ok((1024, data)));
        assert_eq!(
            read_key_text(&text, "key", |_| 255),
            Err(CodeSigningError::TooLong { what: "key", limit: 255 })
        );
        assert_eq!(
            read_key_text(&text, "key", |_| 300),
            Err(CodeSigningError::WrongLength {
                what: "key",
                bits: 1024,
                expected: 300,
                found: 256
            })
        );
    }
}
