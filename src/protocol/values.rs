//! Typed reading of element values as BOINC writes them (docs/design.md "Protocol facts"):
//! numbers such as `4e+09` or `1000000000.000000` with surrounding whitespace, flags that
//! are either `<flag/>` or `<flag>0|1</flag>`. Every failure is an [`XmlError`] carrying
//! the element and its line.

use super::error::{XmlError, XmlProblem};
use super::xml_tree::Element;

/// A value as quoted in an error message: long values (a hostile or corrupted file can
/// hold megabytes of text in one element) are cut so the message stays readable.
pub(crate) fn quoted_value(text: &str) -> String {
    const MAX_CHARS: usize = 60;
    match text.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}

impl Element {
    /// An error about this element.
    pub(crate) fn error(&self, problem: XmlProblem) -> XmlError {
        XmlError::in_element(self.line, &self.name, problem)
    }

    /// The element's text without surrounding whitespace.
    pub(crate) fn trimmed(&self) -> &str {
        self.text.trim()
    }

    /// The element's text, trimmed, as an owned string.
    pub(crate) fn string(&self) -> String {
        self.trimmed().to_owned()
    }

    /// The first child with a name.
    pub(crate) fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// A child that must be present.
    pub(crate) fn required_child(&self, name: &'static str) -> Result<&Element, XmlError> {
        self.child(name).ok_or_else(|| self.error(XmlProblem::Missing(name)))
    }

    /// A child whose trimmed text must be present and non-empty (a name or a reference).
    pub(crate) fn required_text(&self, name: &'static str) -> Result<&str, XmlError> {
        match self.child(name).map(Element::trimmed) {
            Some(text) if !text.is_empty() => Ok(text),
            _ => Err(self.error(XmlProblem::Missing(name))),
        }
    }

    /// A whole number that is zero or more and fits a `u64` (a database id).
    pub(crate) fn u64(&self) -> Result<u64, XmlError> {
        let value = self.i64()?;
        u64::try_from(value).map_err(|_| {
            self.error(XmlProblem::OutOfRange {
                value: quoted_value(self.trimmed()),
                expected: "a whole number, zero or more",
            })
        })
    }

    /// A finite number. Infinities and NaN would poison every estimate downstream.
    pub(crate) fn f64(&self) -> Result<f64, XmlError> {
        let text = self.trimmed();
        match text.parse::<f64>() {
            Ok(value) if value.is_finite() => Ok(value),
            _ => Err(self.error(XmlProblem::NotANumber(quoted_value(text)))),
        }
    }

    /// A finite number that is zero or more.
    pub(crate) fn non_negative_f64(&self) -> Result<f64, XmlError> {
        self.f64_in(0.0, f64::MAX, "zero or more")
    }

    /// A finite number within `[low, high]`; `expected` says so in words.
    pub(crate) fn f64_in(
        &self,
        low: f64,
        high: f64,
        expected: &'static str,
    ) -> Result<f64, XmlError> {
        let value = self.f64()?;
        if (low..=high).contains(&value) {
            Ok(value)
        } else {
            Err(self
                .error(XmlProblem::OutOfRange { value: quoted_value(self.trimmed()), expected }))
        }
    }

    /// A whole number. BOINC writes some counters with a fractional part of zeros
    /// (`100.000000`), which is accepted.
    pub(crate) fn i64(&self) -> Result<i64, XmlError> {
        let text = self.trimmed();
        if let Ok(value) = text.parse::<i64>() {
            return Ok(value);
        }
        // 2^63 as f64: the first float beyond i64's range.
        const I64_LIMIT: f64 = 9_223_372_036_854_775_808.0;
        match text.parse::<f64>() {
            Ok(value) if value.fract() == 0.0 && value.abs() < I64_LIMIT => Ok(value as i64),
            Ok(value) if value.is_finite() => {
                Err(self.error(XmlProblem::NotAnInteger(quoted_value(text))))
            }
            _ => Err(self.error(XmlProblem::NotANumber(quoted_value(text)))),
        }
    }

    /// A whole number that fits an `i32`.
    pub(crate) fn i32(&self) -> Result<i32, XmlError> {
        let value = self.i64()?;
        i32::try_from(value).map_err(|_| {
            self.error(XmlProblem::OutOfRange {
                value: quoted_value(self.trimmed()),
                expected: "between -2147483648 and 2147483647",
            })
        })
    }

    /// A whole number that is zero or more and fits a `u32`.
    pub(crate) fn u32(&self) -> Result<u32, XmlError> {
        let value = self.i64()?;
        u32::try_from(value).map_err(|_| {
            self.error(XmlProblem::OutOfRange {
                value: quoted_value(self.trimmed()),
                expected: "a whole number between 0 and 4294967295",
            })
        })
    }

    /// A whole number within `min..=max` (`expected` says the range in words).
    pub(crate) fn u32_in(
        &self,
        min: u32,
        max: u32,
        expected: &'static str,
    ) -> Result<u32, XmlError> {
        let value = self.i64()?;
        u32::try_from(value).ok().filter(|v| (min..=max).contains(v)).ok_or_else(|| {
            self.error(XmlProblem::OutOfRange { value: quoted_value(self.trimmed()), expected })
        })
    }

    /// A BOINC flag: `<flag/>` or empty text is set, otherwise a number (non-zero set,
    /// as BOINC reads it) or `true`/`false`.
    pub(crate) fn flag(&self) -> Result<bool, XmlError> {
        let text = self.trimmed();
        if text.is_empty() || text.eq_ignore_ascii_case("true") {
            return Ok(true);
        }
        if text.eq_ignore_ascii_case("false") {
            return Ok(false);
        }
        text.parse::<i64>()
            .map(|value| value != 0)
            .map_err(|_| self.error(XmlProblem::NotAFlag(quoted_value(text))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn element(text: &str) -> Element {
        Element { name: "x".into(), text: text.into(), line: 7, ..Element::default() }
    }

    #[test]
    fn numbers_in_boinc_spellings() {
        assert_eq!(element("4e+09").f64(), Ok(4e9));
        assert_eq!(element(" 1000000000.000000\n").f64(), Ok(1e9));
        assert_eq!(element("28.8e12").f64(), Ok(28.8e12));
        assert_eq!(element("-1.000000").f64(), Ok(-1.0));
    }

    #[test]
    fn bad_numbers_name_element_and_line() {
        let error = element("abc").f64().expect_err("not a number");
        assert_eq!(error.line, 7);
        assert_eq!(error.element.as_deref(), Some("x"));
        assert_eq!(error.problem, XmlProblem::NotANumber("abc".into()));
        assert!(element("inf").f64().is_err());
        assert!(element("NaN").f64().is_err());
        assert!(element("").f64().is_err());
        assert!(element("-1").non_negative_f64().is_err());
    }

    #[test]
    fn integers() {
        assert_eq!(element("100").u32(), Ok(100));
        assert_eq!(element("100.000000").u32(), Ok(100));
        assert_eq!(
            element("1.5").i64().expect_err("fraction").problem,
            XmlProblem::NotAnInteger("1.5".into())
        );
        assert_eq!(
            element("abc").u32().expect_err("text").problem,
            XmlProblem::NotANumber("abc".into())
        );
        assert!(element("-1").u32().is_err());
        assert!(element("1e30").i64().is_err());
        assert_eq!(element("-186").i32(), Ok(-186));
        assert!(element("4294967296").i32().is_err());
    }

    #[test]
    fn long_values_are_cut_in_messages() {
        let long = "9".repeat(1000) + "x";
        let error = element(&long).f64().expect_err("not a number");
        assert_eq!(error.problem, XmlProblem::NotANumber(format!("{}...", "9".repeat(60))));
        assert_eq!(quoted_value("ééé"), "ééé");
    }

    #[test]
    fn flags() {
        assert_eq!(element("").flag(), Ok(true));
        assert_eq!(element("1").flag(), Ok(true));
        assert_eq!(element(" 0 ").flag(), Ok(false));
        assert_eq!(element("2").flag(), Ok(true));
        assert!(element("yes please").flag().is_err());
    }
}
