//! The raw text of an element: an account manager's `<opaque>` and
//! `<global_preferences>` are kept as written, to be sent back or saved unchanged.

use quick_xml::Reader;
use quick_xml::events::Event;

/// The first `<name>` element's content as written (between its tags), found with
/// quick-xml's reader; `None` when there is none or the text is not well-formed there.
pub(crate) fn raw_content(text: &str, name: &str) -> Option<String> {
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
}
