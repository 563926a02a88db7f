//! Writing BOINC XML (GUI RPC replies and requests, account manager requests; docs/design.md
//! "Protocol facts") with quick-xml's writer: one element per line, indented, numbers
//! as BOINC prints them (`%f`: six decimals), flags as empty elements. The real tools
//! read these line by line or element by element; both work when every element sits on
//! a line of its own.

use quick_xml::Writer;
use quick_xml::events::{BytesCData, BytesEnd, BytesStart, BytesText, Event};

/// A document being written.
pub(crate) struct XmlOut {
    writer: Writer<Vec<u8>>,
}

impl XmlOut {
    /// An empty document, indented as BOINC indents its replies.
    pub(crate) fn new() -> Self {
        XmlOut { writer: Writer::new_with_indent(Vec::new(), b' ', 4) }
    }

    fn event<'a>(&mut self, event: impl Into<Event<'a>>) {
        // The writer writes into a Vec, which never fails.
        let _ = self.writer.write_event(event);
    }

    /// Opens `<name>`.
    pub(crate) fn start(&mut self, name: &str) {
        self.event(Event::Start(BytesStart::new(name)));
    }

    /// Closes `</name>`.
    pub(crate) fn end(&mut self, name: &str) {
        self.event(Event::End(BytesEnd::new(name)));
    }

    /// `<name>text</name>`, the text escaped; an empty text still keeps both tags on
    /// one line, as BOINC writes them.
    pub(crate) fn text(&mut self, name: &str, text: &str) {
        self.start(name);
        self.event(Event::Text(BytesText::new(text)));
        self.end(name);
    }

    /// `<name>value</name>` with six decimals (BOINC's `%f`). A value that is not finite
    /// is written as 0: the real tools read numbers with `atof`, and no reply field
    /// means anything when infinite.
    pub(crate) fn real(&mut self, name: &str, value: f64) {
        let value = if value.is_finite() { value } else { 0.0 };
        self.text(name, &format!("{value:.6}"));
    }

    /// `<name>value</name>` for a whole number.
    pub(crate) fn int(&mut self, name: &str, value: impl Into<i64>) {
        self.text(name, &value.into().to_string());
    }

    /// `<name>0</name>` or `<name>1</name>`.
    pub(crate) fn bit(&mut self, name: &str, value: bool) {
        self.text(name, if value { "1" } else { "0" });
    }

    /// `<name/>` when `set`; nothing otherwise (BOINC's way of writing flags).
    pub(crate) fn flag(&mut self, name: &str, set: bool) {
        if set {
            self.event(Event::Empty(BytesStart::new(name)));
        }
    }

    /// `<name><![CDATA[\ntext\n]]></name>`: free text that may hold markup (message
    /// bodies). A `]]>` inside the text is split across two sections, so nothing a
    /// project writes can end the section early.
    pub(crate) fn cdata(&mut self, name: &str, text: &str) {
        self.start(name);
        let wrapped = format!("\n{text}\n");
        for section in BytesCData::escaped(&wrapped) {
            self.event(Event::CData(section));
        }
        self.end(name);
    }

    /// `<name>content</name>` with `content` written as it is: XML kept from a document
    /// that was well-formed (an account manager's `<opaque>` data), sent back unchanged.
    pub(crate) fn raw(&mut self, name: &str, content: &str) {
        self.start(name);
        self.event(Event::Text(BytesText::from_escaped(content)));
        self.end(name);
    }

    /// `xml` written as it is, where the writer stands: an element a client sent
    /// (a configuration file's root) passed on whole.
    pub(crate) fn raw_xml(&mut self, xml: &str) {
        self.event(Event::Text(BytesText::from_escaped(xml)));
    }

    /// The document, ending with a newline as every BOINC reply body does.
    pub(crate) fn finish(self) -> Vec<u8> {
        let mut body = self.writer.into_inner();
        if !body.is_empty() {
            body.push(b'\n');
        }
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(write: impl FnOnce(&mut XmlOut)) -> String {
        let mut out = XmlOut::new();
        write(&mut out);
        String::from_utf8(out.finish()).expect("utf-8")
    }

    #[test]
    fn nested_elements_one_per_line() {
        let text = written(|out| {
            out.start("cc_status");
            out.int("task_mode", 2);
            out.real("task_mode_delay", 0.0);
            out.text("empty", "");
            out.flag("suspended_via_gui", true);
            out.flag("never_written", false);
            out.end("cc_status");
        });
        assert_eq!(
            text,
            "<cc_status>\n    <task_mode>2</task_mode>\n    \
             <task_mode_delay>0.000000</task_mode_delay>\n    <empty></empty>\n    \
             <suspended_via_gui/>\n</cc_status>\n"
        );
    }

    #[test]
    fn text_is_escaped_and_numbers_are_finite() {
        let text = written(|out| {
            out.text("project_url", "http://x/?a=1&b=<2>");
            out.real("inf", f64::INFINITY);
        });
        assert!(text.contains("http://x/?a=1&amp;b=&lt;2&gt;"), "{text}");
        assert!(text.contains("<inf>0.000000</inf>"), "{text}");
    }

    #[test]
    fn cdata_cannot_be_closed_by_its_text() {
        let text = written(|out| out.cdata("body", "a ]]> b"));
        assert!(!text.contains("a ]]> b"), "{text}");
        assert!(text.starts_with("<body><![CDATA[\na ]]"), "{text}");
    }
}
