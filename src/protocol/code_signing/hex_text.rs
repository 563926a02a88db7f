//! BOINC's hex text (its crypto library's printed form of keys and signatures): bytes as
//! lowercase hex digit pairs, 32 bytes to a line, then a line holding `.`, so a reader
//! knows where the data ends without knowing its length.
//!
//! Reading is lenient where BOINC's own texts vary (upper-case digits, blank space and
//! `\r` around and between pairs, the whole text indented inside an XML element) and
//! strict where damage hides: an odd digit, any other character, a missing `.` line or
//! text after it is an error, and the data is bounded.

use super::error::CodeSigningError;

/// Bytes per line, as BOINC prints them.
const BYTES_PER_LINE: usize = 32;

/// The bytes as BOINC's hex text: lines of 64 lowercase hex digits (the last may be
/// shorter), then `.` and a newline.
pub(super) fn write_hex_text(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2 + bytes.len() / BYTES_PER_LINE + 3);
    for line in bytes.chunks(BYTES_PER_LINE) {
        for byte in line {
            text.push(char::from(DIGITS[usize::from(byte >> 4)]));
            text.push(char::from(DIGITS[usize::from(byte & 0xf)]));
        }
        text.push('\n');
    }
    text.push_str(".\n");
    text
}

/// Reads hex text up to its `.` line: at most `limit` bytes; `what` names the text in
/// errors. Returns the bytes.
pub(super) fn read_hex_text(
    text: &str,
    what: &'static str,
    limit: usize,
) -> Result<Vec<u8>, CodeSigningError> {
    read_hex_text_at(text, 0, what, limit)
}

/// As [`read_hex_text`], for text that starts at byte `offset` of a larger one (errors
/// give positions in the larger text).
pub(super) fn read_hex_text_at(
    text: &str,
    offset: usize,
    what: &'static str,
    limit: usize,
) -> Result<Vec<u8>, CodeSigningError> {
    let mut bytes = Vec::new();
    let mut high: Option<u8> = None;
    for (at, c) in text.char_indices() {
        if c == '.' {
            if high.is_some() {
                return Err(CodeSigningError::OddHexDigits { what });
            }
            if !text[at + 1..].trim().is_empty() {
                return Err(CodeSigningError::TrailingText { what });
            }
            return Ok(bytes);
        }
        if c.is_ascii_whitespace() {
            if high.is_some() {
                return Err(CodeSigningError::OddHexDigits { what });
            }
            continue;
        }
        let Some(digit) = c.to_digit(16) else {
            return Err(CodeSigningError::NotHex { what, at: offset + at, found: c });
        };
        // A hex digit is below 16.
        let digit = digit as u8;
        match high.take() {
            None => high = Some(digit),
            Some(h) => {
                if bytes.len() == limit {
                    return Err(CodeSigningError::TooLong { what, limit });
                }
                bytes.push(h << 4 | digit);
            }
        }
    }
    if high.is_some() {
        return Err(CodeSigningError::OddHexDigits { what });
    }
    Err(CodeSigningError::Unterminated { what })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lines_of_thirty_two_bytes_then_a_dot() {
        let bytes: Vec<u8> = (0..40).collect();
        let text = write_hex_text(&bytes);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0].len(), 64);
        assert!(lines[0].starts_with("000102"));
        assert_eq!(lines[1], "2021222324252627");
        assert_eq!(lines[2], ".");
        assert_eq!(write_hex_text(&[]), ".\n");
    }

    #[test]
    fn damage_is_an_error() {
        fn read(text: &str) -> Result<Vec<u8>, CodeSigningError> {
            read_hex_text(text, "signature", 8)
        }
        assert_eq!(read(" AB cd\r\n0f\n.\n"), Ok(vec![0xab, 0xcd, 0x0f]));
        assert_eq!(read("abc\n."), Err(CodeSigningError::OddHexDigits { what: "signature" }));
        assert_eq!(read("a bc\n."), Err(CodeSigningError::OddHexDigits { what: "signature" }));
        assert_eq!(
            read("ab\nzz\n."),
            Err(CodeSigningError::NotHex { what: "signature", at: 3, found: 'z' })
        );
        assert_eq!(read("abcd\n"), Err(CodeSigningError::Unterminated { what: "signature" }));
        assert_eq!(read("ab\n.\nab"), Err(CodeSigningError::TrailingText { what: "signature" }));
        assert_eq!(
            read(&"00".repeat(9)),
            Err(CodeSigningError::TooLong { what: "signature", limit: 8 })
        );
        assert_eq!(
            read("é\n."),
            Err(CodeSigningError::NotHex { what: "signature", at: 0, found: 'é' })
        );
    }

    proptest! {
        #[test]
        fn reads_what_it_writes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            let text = write_hex_text(&bytes);
            prop_assert_eq!(read_hex_text(&text, "signature", 300), Ok(bytes));
        }

        #[test]
        fn any_text_reads_or_errs(text in "[0-9a-fA-F. \n\rxyé]{0,200}") {
            let _ = read_hex_text(&text, "key", 64);
        }
    }
}
