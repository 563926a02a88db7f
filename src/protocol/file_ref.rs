//! `<file_ref>` (docs/design.md "Protocol facts", "App API"): how an app version, a workunit
//! or a result names a file and the name the app opens it by, as scheduler replies and
//! state files write it.

use super::error::XmlError;
use super::xml_tree::Element;
use super::xml_write::XmlWriter;
use serde::{Deserialize, Serialize};

/// A use of a file, by the file's name.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FileReference {
    /// The file (`<file_name>`).
    pub file_name: String,
    /// The name the app opens it by (`<open_name>`; empty: the file's own name).
    pub open_name: String,
    /// The app version's executable (`<main_program/>`).
    pub main_program: bool,
    /// Copied into the slot directory rather than linked (`<copy_file/>`).
    pub copy_file: bool,
}

impl FileReference {
    /// Reads a `<file_ref>`; it must name its file.
    pub(crate) fn parse(element: &Element) -> Result<FileReference, XmlError> {
        let mut reference = FileReference {
            file_name: element.required_text("file_name")?.to_owned(),
            ..FileReference::default()
        };
        for child in &element.children {
            match child.name.as_str() {
                "open_name" => reference.open_name = child.string(),
                "main_program" => reference.main_program = child.flag()?,
                "copy_file" => reference.copy_file = child.flag()?,
                _ => {}
            }
        }
        Ok(reference)
    }

    /// Writes the `<file_ref>`.
    pub(crate) fn write(&self, writer: &mut XmlWriter) {
        writer.open("file_ref");
        writer.text("file_name", &self.file_name);
        writer.text_if_any("open_name", &self.open_name);
        writer.empty_if("main_program", self.main_program);
        writer.empty_if("copy_file", self.copy_file);
        writer.close("file_ref");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::xml_tree::parse_document;

    #[test]
    fn reads_what_it_writes() {
        let reference = FileReference {
            file_name: "in_B".into(),
            open_name: "in".into(),
            main_program: false,
            copy_file: true,
        };
        let mut writer = XmlWriter::new();
        reference.write(&mut writer);
        let element = parse_document(&writer.finish()).expect("well-formed");
        assert_eq!(FileReference::parse(&element), Ok(reference));
        let nameless =
            parse_document("<file_ref><open_name>x</open_name></file_ref>").expect("xml");
        assert!(FileReference::parse(&nameless).is_err());
    }
}
