//! Writing SVG text compactly and safely: coordinates to one decimal, names escaped.

use std::fmt::{self, Write};

/// A coordinate rounded to one decimal, written without a trailing `.0`.
pub(super) struct Coord(pub(super) f64);

impl fmt::Display for Coord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tenths = (self.0 * 10.0).round();
        if tenths == 0.0 {
            f.write_str("0")
        } else if tenths % 10.0 == 0.0 {
            write!(f, "{}", tenths / 10.0)
        } else {
            write!(f, "{:.1}", tenths / 10.0)
        }
    }
}

/// Text with XML's special characters escaped.
pub(super) struct Escaped<'a>(pub(super) &'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            match c {
                '&' => f.write_str("&amp;")?,
                '<' => f.write_str("&lt;")?,
                '>' => f.write_str("&gt;")?,
                '"' => f.write_str("&quot;")?,
                '\'' => f.write_str("&apos;")?,
                c if c.is_control() => f.write_char(' ')?,
                c => f.write_char(c)?,
            }
        }
        Ok(())
    }
}
