//! Link files (docs/design.md "Protocol facts", App API): in a slot directory, a file named by
//! the open name an app uses, holding `<soft_link>../../projects/NAME/FILE</soft_link>`,
//! the path of the real file relative to the slot. BOINC's API resolves an open name by
//! reading it; a file that is not a link file is the data itself.

use super::super::xml_tree::parse_document;
use quick_xml::escape::escape;

/// The text of a link file pointing at `target` (relative to the slot directory).
pub fn soft_link(target: &str) -> String {
    format!("<soft_link>{}</soft_link>\n", escape(target))
}

/// The target a link file's text names, or `None` if the text is not a link file.
pub fn parse_soft_link(text: &str) -> Option<String> {
    let root = parse_document(text).ok()?;
    (root.name == "soft_link" && root.children.is_empty())
        .then(|| root.text.trim().to_owned())
        .filter(|target| !target.is_empty())
}

/// The target of a link file from a slot directory to a project directory's file:
/// `../../` + the project directory (relative to the data directory) + the file name.
pub fn slot_to_project_path(project_dir: &str, file_name: &str) -> String {
    format!("../../{project_dir}/{file_name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let target = slot_to_project_path("projects/127.0.0.1_8088", "in_&_1");
        assert_eq!(target, "../../projects/127.0.0.1_8088/in_&_1");
        assert_eq!(parse_soft_link(&soft_link(&target)), Some(target));
    }

    #[test]
    fn data_is_not_a_link() {
        assert_eq!(parse_soft_link("hello world\n"), None);
        assert_eq!(parse_soft_link("<soft_link></soft_link>"), None);
        assert_eq!(parse_soft_link("<soft_link><x/></soft_link>"), None);
        assert_eq!(parse_soft_link("<data>1</data>"), None);
    }
}
