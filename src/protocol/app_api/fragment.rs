//! The shared-memory messages are XML fragments without a root (`<heartbeat/><wss>…
//! </wss>`): they are read as the children of a root element added around them.

use super::super::xml_tree::{Element, parse_document};
use super::error::AppMessageError;

/// Reads a message's elements (the children of the returned element).
pub(super) fn parse_fragment(text: &str) -> Result<Element, AppMessageError> {
    Ok(parse_document(&format!("<message>{text}</message>"))?)
}

/// Formats a number as BOINC's messages do (`%e`: six digits after the point).
pub(super) fn number(value: f64) -> String {
    format!("{value:.6e}")
}
