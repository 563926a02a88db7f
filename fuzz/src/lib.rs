//! What the fuzz targets share (docs/fuzzing.md): arbitrary bytes as the text a parser
//! takes, and the round-trip oracle. A target fails when a parser panics, runs out of
//! the memory or time libFuzzer allows it, or, where boinc-rs also writes the format,
//! when what it read does not read back the same after boinc-rs wrote it.

use std::borrow::Cow;
use std::fmt::{Debug, Display};

/// The input as text: invalid UTF-8 replaced, as a reader that decodes lossily sees it
/// (the parsers that take `&str` are handed text their callers decoded).
pub fn text(data: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// Whether boinc-rs's writers put every character read from `text` down as it is. XML
/// 1.0 cannot carry control characters other than tab and line ends, nor U+FFFE and
/// U+FFFF: the writers put U+FFFD in their place (protocol/xml_write.rs), so that what a
/// hostile peer sent cannot make a file or message boinc-rs writes unreadable. A
/// character reference (`&#3;`) may stand for one of them.
pub fn written_unchanged(text: &str) -> bool {
    !text.contains("&#")
        && text.chars().all(|c| {
            matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{fffe}' && c != '\u{ffff}')
        })
}

/// The round-trip oracle. `read`, the value parsed from the fuzzer's input, written by
/// boinc-rs and parsed again, must be read back; when the writer puts the input's
/// characters down unchanged (`exact`), read back equal, so a writer that loses or
/// changes a field is caught. Otherwise the writer replaced characters it cannot write,
/// and what it wrote must be settled: written again, the same text.
pub fn assert_round_trip<T, E>(
    exact: bool,
    read: &T,
    write: impl Fn(&T) -> String,
    parse: impl Fn(&str) -> Result<T, E>,
) where
    T: PartialEq + Debug,
    E: Display,
{
    let written = write(read);
    let again = match parse(&written) {
        Ok(again) => again,
        Err(error) => {
            panic!("what boinc-rs wrote does not read back: {error}\nwritten:\n{written}")
        }
    };
    if exact {
        assert!(
            again == *read,
            "read back differently\nread: {read:?}\nwritten:\n{written}\nread again: {again:?}"
        );
    } else {
        let rewritten = write(&again);
        assert!(
            rewritten == written,
            "written differently the second time\nwritten:\n{written}\nthen:\n{rewritten}"
        );
    }
}

/// The round trip of a text format over the fuzzer's input: `parse` on the input as
/// text and, when it reads a value, [`assert_round_trip`] through `write`.
pub fn check_text_format<T, E>(
    data: &[u8],
    parse: impl Fn(&str) -> Result<T, E>,
    write: impl Fn(&T) -> String,
) where
    T: PartialEq + Debug,
    E: Display,
{
    let text = text(data);
    if let Ok(value) = parse(&text) {
        assert_round_trip(written_unchanged(&text), &value, write, parse);
    }
}

/// For parsers that cannot fail: their result as a `Result` for [`assert_round_trip`].
pub fn always<T>(value: T) -> Result<T, std::convert::Infallible> {
    Ok(value)
}
