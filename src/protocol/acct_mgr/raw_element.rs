//! The raw text of an element: an account manager's `<opaque>` and
//! `<global_preferences>` are kept as written, to be sent back or saved unchanged.

use crate::protocol::xml_tree::source_text;
use quick_xml::Reader;
use quick_xml::events::Event;

/// The first `<name>` element's content as written (between its tags), found with
/// quick-xml's reader; `None` when there is none or the text is not well-formed there.
pub(crate) fn raw_content(text: &str, name: &str) -> Option<String> {
    // The reader skips a leading byte order mark without counting it: its positions are
    // offsets into the text after the mark.
    let text = source_text(text);
    let mut reader = Reader::from_str(text);
    loop {
        match reader.read_event() {
            Ok(Event::Start(tag)) if tag.name().as_ref() == name.as_bytes() => {
                let span = reader.read_to_end(tag.name()).ok()?;
                let start = usize::try_from(span.start).ok()?;
                let end = usize::try_from(span.end).ok()?;
                return text.get(start..end).map(str::to_string);
            }
            Ok(Event::Empty(tag)) if tag.name().as_ref() == name.as_bytes() => {
                return Some(String::new());
            }
            Ok(Event::Eof) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_as_written() {
        let text = "<r><a>1</a><opaque>\n<x y=\"1\">&amp;</x>\n</opaque></r>";
        assert_eq!(raw_content(text, "opaque").as_deref(), Some("\n<x y=\"1\">&amp;</x>\n"));
        assert_eq!(raw_content("<r><opaque/></r>", "opaque").as_deref(), Some(""));
        assert_eq!(raw_content("<r><a/></r>", "opaque"), None);
        assert_eq!(raw_content("<r><opaque><x></opaque></r>", "opaque"), None);
    }

    /// Found by fuzzing (fuzz target acct_mgr_reply): after a byte order mark the
    /// content was cut three bytes early, so the `<opaque>` sent back to the manager was
    /// not well-formed.
    #[test]
    fn content_after_a_byte_order_mark() {
        let text = "\u{feff}<r><opaque>\n<host_id>42</host_id>\n</opaque></r>";
        assert_eq!(raw_content(text, "opaque").as_deref(), Some("\n<host_id>42</host_id>\n"));
        let text = "\u{feff}<r><global_preferences>é<a/></global_preferences></r>";
        assert_eq!(raw_content(text, "global_preferences").as_deref(), Some("é<a/>"));
    }
}
