//! A small element tree over quick-xml's event reader (docs/design.md "Protocol facts"). BOINC's
//! files are plain nested elements with text; the few attributes BOINC writes (a reply
//! message's `priority`, a preferences venue's `name`) are kept as written. The tree
//! keeps each element's line so that a bad value can be reported where it is, and the
//! span of its content so that an element BOINC passes on verbatim (project
//! preferences) can be taken as written. It is built without recursion under a depth
//! limit, so hostile input cannot exhaust the stack, and under a limit on each element's
//! text ([`MAX_ELEMENT_TEXT`]): no BOINC file or message holds megabytes in one element,
//! and a name of hundreds of megabytes would be copied into every label, trace event and
//! message.

use super::error::{XmlError, XmlProblem};
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};
use std::ops::Range;

/// No BOINC file nests more than a handful of levels; anything deeper is not one.
pub(crate) const MAX_DEPTH: usize = 64;

/// The most text one element of a state file, scheduler request or reply may hold, bytes. The
/// longest texts BOINC sends are a result's `<stderr_out>` (the client keeps at most
/// 64 KiB of it) and preferences; anything far beyond is not a genuine message.
pub const MAX_ELEMENT_TEXT: usize = 1 << 20;

/// One element: its name, its attributes, its own text (text and CDATA directly inside
/// it, joined), its child elements in document order, the line its start tag is on and
/// the byte ranges of its content (between its start and end tags) and of the whole
/// element (its tags included) in the parsed text.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Element {
    pub(crate) name: String,
    pub(crate) attributes: Vec<(String, String)>,
    pub(crate) text: String,
    pub(crate) children: Vec<Element>,
    pub(crate) line: usize,
    pub(crate) content: Range<usize>,
    pub(crate) outer: Range<usize>,
}

impl Element {
    /// An element read from `tag` at `line`, with no content yet.
    fn open(tag: &BytesStart<'_>, line: usize) -> Element {
        let name = String::from_utf8_lossy(tag.name().as_ref()).into_owned();
        // An attribute that can't be read carries nothing BOINC needs: it is left out
        // rather than making a state file unreadable.
        let attributes = tag
            .attributes()
            .filter_map(Result::ok)
            .map(|attribute| {
                let key = String::from_utf8_lossy(attribute.key.as_ref()).into_owned();
                let value = match attribute.unescape_value() {
                    Ok(value) => value.into_owned(),
                    Err(_) => String::from_utf8_lossy(&attribute.value).into_owned(),
                };
                (key, value)
            })
            .collect();
        Element { name, attributes, line, ..Element::default() }
    }

    /// The value of an attribute, if the element has it.
    pub(crate) fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    /// Adds text to the element's own text, within `limit` bytes.
    fn push_text(&mut self, text: &str, limit: usize) -> Result<(), XmlError> {
        if self.text.len() + text.len() > limit {
            return Err(XmlError::in_element(
                self.line,
                &self.name,
                XmlProblem::TextTooLong(limit),
            ));
        }
        self.text.push_str(text);
        Ok(())
    }
}

/// The text the offsets of a parsed tree refer to: the document without a leading byte
/// order mark (the reader skips one without counting it).
pub(crate) fn source_text(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// The element's content exactly as written in `text` (the document it was parsed
/// from): what BOINC passes on verbatim, such as a project's preferences.
pub(crate) fn raw_content<'t>(text: &'t str, element: &Element) -> &'t str {
    source_text(text).get(element.content.clone()).unwrap_or("")
}

/// Turns byte offsets into 1-based line numbers. Offsets arrive in increasing order while
/// reading, so counting newlines since the previous offset keeps the whole pass linear.
struct LineCounter<'a> {
    bytes: &'a [u8],
    offset: usize,
    line: usize,
}

impl<'a> LineCounter<'a> {
    fn new(text: &'a str) -> Self {
        LineCounter { bytes: text.as_bytes(), offset: 0, line: 1 }
    }

    fn line_at(&mut self, offset: u64) -> usize {
        let offset = usize::try_from(offset).unwrap_or(usize::MAX).min(self.bytes.len());
        if offset < self.offset {
            self.offset = 0;
            self.line = 1;
        }
        let newlines = self.bytes[self.offset..offset].iter().filter(|&&b| b == b'\n').count();
        self.line += newlines;
        self.offset = offset;
        self.line
    }
}

/// Parses a whole document (a state file) into its root element; an element with more
/// than [`MAX_ELEMENT_TEXT`] bytes of text is an error.
pub(crate) fn parse_document(text: &str) -> Result<Element, XmlError> {
    parse_with_text_limit(text, MAX_ELEMENT_TEXT)
}

/// Parses a scheduler request or reply into its root element; an element with more than
/// [`MAX_ELEMENT_TEXT`] bytes of text is an error.
pub(crate) fn parse_message(text: &str) -> Result<Element, XmlError> {
    parse_with_text_limit(text, MAX_ELEMENT_TEXT)
}

fn parse_with_text_limit(text: &str, text_limit: usize) -> Result<Element, XmlError> {
    // The reader skips a byte order mark without counting it in its offsets; dropping it
    // here keeps those offsets aligned with the text the lines are counted in.
    let text = source_text(text);
    let mut reader = Reader::from_str(text);
    let config = reader.config_mut();
    config.check_end_names = true;
    config.expand_empty_elements = false;
    let mut lines = LineCounter::new(text);
    // Open elements, innermost last; the root is at the bottom.
    let mut open: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;

    loop {
        let start = reader.buffer_position();
        let event = match reader.read_event() {
            Ok(event) => event,
            Err(error) => {
                let line = lines.line_at(reader.error_position());
                return Err(XmlError::at_line(line, XmlProblem::Malformed(error.to_string())));
            }
        };
        match event {
            Event::Start(_) | Event::Empty(_) if root.is_some() => {
                return Err(XmlError::at_line(lines.line_at(start), XmlProblem::SecondRoot));
            }
            Event::Start(tag) => {
                let mut element = Element::open(&tag, lines.line_at(start));
                if open.len() >= MAX_DEPTH {
                    return Err(element.error(XmlProblem::TooDeep(MAX_DEPTH)));
                }
                let content_start = offset(reader.buffer_position());
                element.content = content_start..content_start;
                element.outer = offset(start)..content_start;
                open.push(element);
            }
            Event::Empty(tag) => {
                let mut element = Element::open(&tag, lines.line_at(start));
                element.outer = offset(start)..offset(reader.buffer_position());
                if open.len() >= MAX_DEPTH {
                    return Err(element.error(XmlProblem::TooDeep(MAX_DEPTH)));
                }
                attach(element, &mut open, &mut root);
            }
            Event::End(_) => {
                // The reader checks that end tags match; an end tag with nothing open is
                // reported by the reader as an error, so `pop` cannot come up empty here,
                // but an empty stack is still answered with an error rather than a panic.
                let Some(mut element) = open.pop() else {
                    return Err(XmlError::at_line(
                        lines.line_at(start),
                        XmlProblem::Malformed("an end tag with no matching start tag".into()),
                    ));
                };
                element.content.end = offset(start).max(element.content.start);
                element.outer.end = offset(reader.buffer_position()).max(element.content.end);
                attach(element, &mut open, &mut root);
            }
            Event::Text(text) => {
                // BOINC writes `&amp;` and friends but leaves other `&` sequences alone, and
                // so does its reader: keep text with an unknown entity as written.
                let content = match text.unescape() {
                    Ok(content) => content.into_owned(),
                    Err(_) => String::from_utf8_lossy(&text.into_inner()).into_owned(),
                };
                match open.last_mut() {
                    // The indentation between child elements carries nothing (values are
                    // read trimmed): not kept, so it counts against no limit.
                    Some(_) if content.trim().is_empty() => {}
                    Some(element) => element.push_text(&content, text_limit)?,
                    None => {
                        if !content
                            .trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
                            .is_empty()
                        {
                            return Err(XmlError::at_line(
                                lines.line_at(start),
                                XmlProblem::TextOutsideRoot,
                            ));
                        }
                    }
                }
            }
            Event::CData(data) => match open.last_mut() {
                Some(element) => {
                    element.push_text(&String::from_utf8_lossy(&data.into_inner()), text_limit)?
                }
                None => {
                    return Err(XmlError::at_line(
                        lines.line_at(start),
                        XmlProblem::TextOutsideRoot,
                    ));
                }
            },
            Event::Eof => break,
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }

    if let Some(unclosed) = open.last() {
        return Err(XmlError::in_element(unclosed.line, &unclosed.name, XmlProblem::Unclosed));
    }
    root.ok_or_else(|| XmlError::at_line(lines.line_at(u64::MAX), XmlProblem::NoRoot))
}

/// A reader position as an offset into the text.
fn offset(position: u64) -> usize {
    usize::try_from(position).unwrap_or(usize::MAX)
}

/// Hangs a finished element on its parent, or makes it the root.
fn attach(element: Element, open: &mut [Element], root: &mut Option<Element>) {
    match open.last_mut() {
        Some(parent) => parent.children.push(element),
        None => *root = Some(element),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_element_with_megabytes_of_text_is_refused() {
        let long = "x".repeat(MAX_ELEMENT_TEXT + 1);
        for text in
            [format!("<a>\n<name>{long}</name></a>"), format!("<a><b><![CDATA[{long}]]></b></a>")]
        {
            let err = parse_document(&text).expect_err("too long");
            assert!(matches!(err.problem, XmlProblem::TextTooLong(MAX_ELEMENT_TEXT)), "{err}");
        }
        let fits = format!("<a>{}</a>", "x".repeat(MAX_ELEMENT_TEXT));
        assert_eq!(parse_document(&fits).expect("at the limit").text.len(), MAX_ELEMENT_TEXT);
    }

    #[test]
    fn builds_tree_with_lines_text_and_cdata() {
        let root = parse_document(
            "<?xml version=\"1.0\"?>\n<a>\n  <b>1</b>\n  <c/>\n  <d><![CDATA[x<y]]> &amp; z</d>\n</a>\n",
        )
        .expect("well-formed");
        assert_eq!(root.name, "a");
        assert_eq!(root.line, 2);
        let names: Vec<_> = root.children.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["b", "c", "d"]);
        assert_eq!(root.children[0].text, "1");
        assert_eq!(root.children[0].line, 3);
        assert_eq!(root.children[1].line, 4);
        assert_eq!(root.children[2].text, "x<y & z");
    }

    #[test]
    fn byte_order_mark_is_not_text() {
        let root = parse_document("\u{feff}<?xml version=\"1.0\"?>\n<a/>").expect("bom");
        assert_eq!((root.name.as_str(), root.line), ("a", 2));
    }

    #[test]
    fn unknown_entity_is_kept_as_written() {
        let root = parse_document("<a>&nbsp;x</a>").expect("kept");
        assert_eq!(root.text, "&nbsp;x");
    }

    #[test]
    fn mismatched_end_tag_reports_its_line() {
        let error = parse_document("<a>\n<b>\n</c>\n</a>").expect_err("mismatched");
        assert_eq!(error.line, 3);
        assert!(matches!(error.problem, XmlProblem::Malformed(_)));
    }

    #[test]
    fn unclosed_element_reports_where_it_opened() {
        let error = parse_document("<a>\n<b>\n<c>1</c>\n").expect_err("unclosed");
        assert_eq!(error.line, 2);
        assert_eq!(error.element.as_deref(), Some("b"));
        assert_eq!(error.problem, XmlProblem::Unclosed);
    }

    #[test]
    fn depth_is_limited() {
        let deep = "<a>".repeat(MAX_DEPTH + 1);
        let error = parse_document(&deep).expect_err("too deep");
        assert_eq!(error.problem, XmlProblem::TooDeep(MAX_DEPTH));
        let fits = format!("{}{}", "<a>".repeat(MAX_DEPTH), "</a>".repeat(MAX_DEPTH));
        assert!(parse_document(&fits).is_ok());
    }

    #[test]
    fn attributes_and_raw_content_are_kept() {
        let text =
            "\u{feff}<a>\n<m priority=\"low\" x='1 &amp; 2'>hi</m><p><v name=\"w\">1</v> </p></a>";
        let root = parse_document(text).expect("well-formed");
        let message = &root.children[0];
        assert_eq!(message.attribute("priority"), Some("low"));
        assert_eq!(message.attribute("x"), Some("1 & 2"));
        assert_eq!(message.attribute("y"), None);
        assert_eq!(raw_content(text, &root.children[1]), "<v name=\"w\">1</v> ");
        assert_eq!(raw_content(text, message), "hi");
    }

    #[test]
    fn text_is_limited() {
        let fits = format!("<a>{}</a>", "x".repeat(MAX_ELEMENT_TEXT));
        assert_eq!(parse_message(&fits).expect("fits").text.len(), MAX_ELEMENT_TEXT);
        let long = format!("<a>\n<b>{}<![CDATA[y]]></b></a>", "x".repeat(MAX_ELEMENT_TEXT));
        let error = parse_message(&long).expect_err("too long");
        assert_eq!(error.problem, XmlProblem::TextTooLong(MAX_ELEMENT_TEXT));
        assert_eq!((error.line, error.element.as_deref()), (2, Some("b")));
        assert!(parse_document(&long).is_err(), "a state file holds no such element either");
    }

    #[test]
    fn text_outside_root_and_second_root_are_errors() {
        assert_eq!(
            parse_document("garbage").expect_err("text").problem,
            XmlProblem::TextOutsideRoot
        );
        assert_eq!(parse_document("<a/>\n<b/>").expect_err("two roots").line, 2);
        assert_eq!(parse_document("  \n ").expect_err("empty").problem, XmlProblem::NoRoot);
    }
}
