//! A small element tree over quick-xml's event reader (DESIGN.md "Protocol facts"). BOINC's
//! files are plain nested elements with text; attributes carry nothing the model needs.
//! The tree keeps each element's line so that a bad value can be reported where it is,
//! and it is built without recursion under a depth limit, so hostile input cannot
//! exhaust the stack.

use super::error::{XmlError, XmlProblem};
use quick_xml::Reader;
use quick_xml::events::Event;

/// No BOINC file nests more than a handful of levels; anything deeper is not one.
pub(crate) const MAX_DEPTH: usize = 64;

/// The most text one element may hold: BOINC's longest texts (a result's `<stderr_out>`)
/// are cut at 64 KiB; a name of hundreds of megabytes would be copied into every label,
/// trace event and message.
pub(crate) const MAX_TEXT_BYTES: usize = 1 << 20;

/// One element: its name, its own text (text and CDATA directly inside it, joined), its
/// child elements in document order and the line its start tag is on.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Element {
    pub(crate) name: String,
    pub(crate) text: String,
    pub(crate) children: Vec<Element>,
    pub(crate) line: usize,
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

/// Parses a whole document into its root element.
pub(crate) fn parse_document(text: &str) -> Result<Element, XmlError> {
    // The reader skips a byte order mark without counting it in its offsets; dropping it
    // here keeps those offsets aligned with the text the lines are counted in.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
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
                let line = lines.line_at(start);
                let name = String::from_utf8_lossy(tag.name().as_ref()).into_owned();
                if open.len() >= MAX_DEPTH {
                    return Err(XmlError::in_element(line, &name, XmlProblem::TooDeep(MAX_DEPTH)));
                }
                open.push(Element { name, text: String::new(), children: Vec::new(), line });
            }
            Event::Empty(tag) => {
                let line = lines.line_at(start);
                let name = String::from_utf8_lossy(tag.name().as_ref()).into_owned();
                if open.len() >= MAX_DEPTH {
                    return Err(XmlError::in_element(line, &name, XmlProblem::TooDeep(MAX_DEPTH)));
                }
                let element = Element { name, text: String::new(), children: Vec::new(), line };
                attach(element, &mut open, &mut root);
            }
            Event::End(_) => {
                // The reader checks that end tags match; an end tag with nothing open is
                // reported by the reader as an error, so `pop` cannot come up empty here,
                // but an empty stack is still answered with an error rather than a panic.
                let Some(element) = open.pop() else {
                    return Err(XmlError::at_line(
                        lines.line_at(start),
                        XmlProblem::Malformed("an end tag with no matching start tag".into()),
                    ));
                };
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
                    Some(element) => {
                        if element.text.len() + content.len() > MAX_TEXT_BYTES {
                            return Err(element.error(XmlProblem::TooLong(MAX_TEXT_BYTES)));
                        }
                        element.text.push_str(&content)
                    }
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
                    let content = String::from_utf8_lossy(&data.into_inner()).into_owned();
                    if element.text.len() + content.len() > MAX_TEXT_BYTES {
                        return Err(element.error(XmlProblem::TooLong(MAX_TEXT_BYTES)));
                    }
                    element.text.push_str(&content)
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
        let long = "x".repeat(MAX_TEXT_BYTES + 1);
        for text in
            [format!("<a>\n<name>{long}</name></a>"), format!("<a><b><![CDATA[{long}]]></b></a>")]
        {
            let err = parse_document(&text).expect_err("too long");
            assert!(matches!(err.problem, XmlProblem::TooLong(MAX_TEXT_BYTES)), "{err}");
        }
        let fits = format!("<a>{}</a>", "x".repeat(MAX_TEXT_BYTES));
        assert_eq!(parse_document(&fits).expect("at the limit").text.len(), MAX_TEXT_BYTES);
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
    fn text_outside_root_and_second_root_are_errors() {
        assert_eq!(
            parse_document("garbage").expect_err("text").problem,
            XmlProblem::TextOutsideRoot
        );
        assert_eq!(parse_document("<a/>\n<b/>").expect_err("two roots").line, 2);
        assert_eq!(parse_document("  \n ").expect_err("empty").problem, XmlProblem::NoRoot);
    }
}
