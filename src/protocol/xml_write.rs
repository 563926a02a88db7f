//! Writing BOINC XML (docs/design.md "Protocol facts") with quick-xml's writer: elements with
//! text, numbers, flags, CDATA and content passed on verbatim, indented as BOINC indents.
//!
//! Numbers are written as the real client writes them (`%f`: six decimals) whenever that
//! reads back as the same value, and otherwise in the shortest form that does, so what
//! boinc-rs writes always reads back to the value it holds. Text is escaped; characters
//! XML 1.0 cannot carry (control characters other than tab and line ends) are written as
//! U+FFFD, so a hostile app's stderr cannot make a request unreadable.

use quick_xml::Writer;
use quick_xml::events::{BytesCData, BytesEnd, BytesStart, BytesText, Event};
use std::borrow::Cow;

/// An XML document being written into memory.
pub(crate) struct XmlWriter {
    writer: Writer<Vec<u8>>,
}

/// A number as BOINC writes it, or in the shortest form that reads back exactly. A value
/// that is not finite (which no reader accepts) is written as 0.
pub(crate) fn format_number(value: f64) -> String {
    if !value.is_finite() {
        return "0".to_owned();
    }
    let boinc = format!("{value:.6}");
    if boinc.parse::<f64>() == Ok(value) { boinc } else { value.to_string() }
}

/// Text XML 1.0 can carry: characters it forbids become U+FFFD.
pub(crate) fn xml_safe(text: &str) -> Cow<'_, str> {
    let allowed = |c: char| {
        matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{fffe}' && c != '\u{ffff}')
    };
    if text.chars().all(allowed) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.chars().map(|c| if allowed(c) { c } else { '\u{fffd}' }).collect())
    }
}

// Every write goes into a `Vec<u8>`, which cannot fail: the writer's `io::Result`s are
// dropped for that reason alone.
impl XmlWriter {
    /// An empty document, indented by four spaces per level.
    pub(crate) fn new() -> Self {
        XmlWriter { writer: Writer::new_with_indent(Vec::new(), b' ', 4) }
    }

    /// Opens `<name>`.
    pub(crate) fn open(&mut self, name: &str) {
        let _ = self.writer.write_event(Event::Start(BytesStart::new(name)));
    }

    /// Closes `</name>`.
    pub(crate) fn close(&mut self, name: &str) {
        let _ = self.writer.write_event(Event::End(BytesEnd::new(name)));
    }

    /// `<name>text</name>`, escaped.
    pub(crate) fn text(&mut self, name: &str, text: &str) {
        let text = xml_safe(text);
        let _ = self.writer.create_element(name).write_text_content(BytesText::new(&text));
    }

    /// `<name attr="value">text</name>`.
    pub(crate) fn text_with_attribute(&mut self, name: &str, attribute: (&str, &str), text: &str) {
        let text = xml_safe(text);
        let value = xml_safe(attribute.1);
        let _ = self
            .writer
            .create_element(name)
            .with_attribute((attribute.0, value.as_ref()))
            .write_text_content(BytesText::new(&text));
    }

    /// `<name>text</name>` when there is text.
    pub(crate) fn text_if_any(&mut self, name: &str, text: &str) {
        if !text.is_empty() {
            self.text(name, text);
        }
    }

    /// `<name>number</name>`.
    pub(crate) fn number(&mut self, name: &str, value: f64) {
        self.text(name, &format_number(value));
    }

    /// `<name>number</name>` when there is one.
    pub(crate) fn number_if_any(&mut self, name: &str, value: Option<f64>) {
        if let Some(value) = value {
            self.number(name, value);
        }
    }

    /// `<name>integer</name>`.
    pub(crate) fn integer(&mut self, name: &str, value: impl std::fmt::Display) {
        self.text(name, &value.to_string());
    }

    /// `<name>0</name>` or `<name>1</name>`: the form BOINC uses where a flag is always
    /// written.
    pub(crate) fn flag(&mut self, name: &str, value: bool) {
        self.text(name, if value { "1" } else { "0" });
    }

    /// `<name/>` when `value` holds: the form BOINC uses for flags that are usually off.
    pub(crate) fn empty_if(&mut self, name: &str, value: bool) {
        if value {
            let _ = self.writer.create_element(name).write_empty();
        }
    }

    /// An element whose text is a block BOINC writes on lines of its own (keys and
    /// signatures): `<name>\ntext\n</name>`.
    pub(crate) fn block(&mut self, name: &str, text: &str) {
        self.text(name, &format!("\n{}\n", text.trim()));
    }

    /// An element holding text in CDATA sections (an app's stderr), after the elements
    /// `before` writes: `<name>…<![CDATA[\ntext\n]]></name>`. Text containing `]]>` is
    /// split over several sections, as XML requires.
    pub(crate) fn cdata(&mut self, name: &str, before: impl FnOnce(&mut Self), text: &str) {
        self.open(name);
        before(self);
        let text = xml_safe(text);
        let content = format!("\n{}\n", text.trim_matches('\n'));
        let _ = self.writer.write_indent();
        for section in BytesCData::escaped(&content) {
            let _ = self.writer.write_event(Event::CData(section));
        }
        self.close(name);
    }

    /// `<name>` + content written verbatim + `</name>`: what BOINC passes on as it came
    /// (preferences). The content must be well-formed XML; the caller checked it when
    /// it was read.
    pub(crate) fn verbatim(&mut self, name: &str, content: &str) {
        self.open(name);
        // Text that is already markup: written as it is, and the end tag follows it
        // directly (the writer indents no end tag after text).
        let _ = self.writer.write_event(Event::Text(BytesText::from_escaped(content)));
        self.close(name);
    }

    /// The document as text.
    pub(crate) fn finish(self) -> String {
        let mut bytes = self.writer.into_inner();
        bytes.push(b'\n');
        // Only `&str`s went in, so the bytes are UTF-8.
        String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_boinc_writes_them_when_exact() {
        assert_eq!(format_number(1.0), "1.000000");
        assert_eq!(format_number(103680.0), "103680.000000");
        assert_eq!(format_number(0.92014), "0.920140");
        assert_eq!(format_number(1.0 / 3.0), (1.0f64 / 3.0).to_string());
        assert_eq!(format_number(1e-9), "0.000000001");
        assert_eq!(format_number(f64::NAN), "0");
        for value in [1.0 / 3.0, 1e300, -2.5e-7, 1795247974.585973, 5e-324] {
            assert_eq!(format_number(value).parse::<f64>(), Ok(value));
        }
    }

    #[test]
    fn text_is_escaped_and_made_xml_safe() {
        let mut writer = XmlWriter::new();
        writer.open("r");
        writer.text("a", "x < y & \"z\"\u{1}");
        writer.cdata("s", |w| w.text("v", "1"), "bad ]]> end");
        writer.verbatim("p", "<q>1</q>");
        writer.close("r");
        let text = writer.finish();
        assert!(text.contains("<a>x &lt; y &amp; &quot;z&quot;\u{fffd}</a>"), "{text}");
        assert!(text.contains("<p><q>1</q></p>"), "{text}");
        let root = crate::protocol::xml_tree::parse_document(&text).expect("well-formed");
        assert_eq!(root.children[1].text.trim(), "bad ]]> end");
    }
}
