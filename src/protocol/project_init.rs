//! `project_init.xml` (docs/design.md "Protocol facts", attaching): a file an installer
//! leaves in the data directory naming a project to attach to, with its name, a team
//! and, for a one-click attach, the account's key. GUI RPC `get_project_init_status`
//! shows it to the Manager's wizard; with a key, the client attaches at start.

use super::error::{XmlError, XmlProblem};
use super::xml_tree::parse_document;

/// What `project_init.xml` says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProjectInit {
    /// The project's master URL.
    pub url: String,
    /// Its name.
    pub name: String,
    /// The team to join.
    pub team_name: String,
    /// The account's key (empty: the volunteer logs in or makes an account).
    pub account_key: String,
    /// Set by an installer that ships one project.
    pub embedded: bool,
}

/// Reads `project_init.xml`; a file without a URL names no project.
pub fn read_project_init(text: &str) -> Result<ProjectInit, XmlError> {
    let root = parse_document(text)?;
    if root.name != "project_init" {
        return Err(root.error(XmlProblem::WrongRoot { expected: "project_init" }));
    }
    let text_of = |name: &str| root.child(name).map(|e| e.string()).unwrap_or_default();
    let init = ProjectInit {
        url: root.required_text("url")?.to_owned(),
        name: text_of("name"),
        team_name: text_of("team_name"),
        account_key: text_of("account_key"),
        embedded: root.child("embedded").is_some(),
    };
    Ok(init)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_an_installers_file() {
        let text = "<project_init>\n<url>http://p/</url>\n<name>P</name>\n\
                    <account_key>abc</account_key>\n</project_init>";
        let init = read_project_init(text).expect("read");
        assert_eq!((init.url.as_str(), init.name.as_str()), ("http://p/", "P"));
        assert_eq!(init.account_key, "abc");
        assert!(read_project_init("<project_init/>").is_err(), "no URL");
        assert!(read_project_init("<nonsense/>").is_err());
    }
}
