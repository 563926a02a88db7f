//! A project's account file (`account_<host>_<port>.xml` in BOINC's data directory,
//! fixtures/boinc-7.20.5/state): the master URL and the authenticator every scheduler
//! request carries, which the real client keeps there rather than in
//! client_state.xml, and the project preferences, kept verbatim.

use super::error::{XmlError, XmlProblem};
use super::xml_tree::{parse_document, raw_content};
use super::xml_write::XmlWriter;
use serde::{Deserialize, Serialize};

/// An attached project's account.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Account {
    /// The project's master URL (`<master_url>`).
    pub master_url: String,
    /// The account's key (`<authenticator>`).
    pub authenticator: String,
    /// The project's name, when the file has it (`<project_name>`).
    pub project_name: Option<String>,
    /// The project preferences, verbatim (the content of `<project_preferences>`).
    pub project_preferences: Option<String>,
}

/// Reads an account file; `name` is the file name errors are reported under.
pub fn parse_account(text: &str, name: &str) -> Result<Account, XmlError> {
    let root = parse_document(text).map_err(|e| e.in_file(name))?;
    if root.name != "account" {
        return Err(root.error(XmlProblem::WrongRoot { expected: "account" }).in_file(name));
    }
    let mut account = Account {
        master_url: root.required_text("master_url").map_err(|e| e.in_file(name))?.to_owned(),
        authenticator: root.required_text("authenticator").map_err(|e| e.in_file(name))?.to_owned(),
        ..Account::default()
    };
    for child in &root.children {
        match child.name.as_str() {
            "project_name" => account.project_name = Some(child.string()),
            "project_preferences" => {
                account.project_preferences = Some(raw_content(text, child).to_owned())
            }
            _ => {}
        }
    }
    Ok(account)
}

/// Writes an account file as the real client does (fixtures/boinc-7.20.5/state/
/// account_127.0.0.1_8088.xml): the master URL, the authenticator, the project's name
/// when known, and the project preferences verbatim (empty when there are none).
pub fn write_account(account: &Account) -> String {
    let mut writer = XmlWriter::new();
    writer.open("account");
    writer.text("master_url", &account.master_url);
    writer.text("authenticator", &account.authenticator);
    if let Some(name) = &account.project_name {
        writer.text("project_name", name);
    }
    writer.verbatim("project_preferences", account.project_preferences.as_deref().unwrap_or("\n"));
    writer.close("account");
    writer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_it_writes() {
        let mut account = Account {
            master_url: "http://127.0.0.1:8088/".into(),
            authenticator: "0123<&>".into(),
            project_name: Some("A & B".into()),
            project_preferences: Some("\n<resource_share>50</resource_share>\n".into()),
        };
        assert_eq!(parse_account(&write_account(&account), "a.xml"), Ok(account.clone()));
        account.project_name = None;
        account.project_preferences = None;
        let read = parse_account(&write_account(&account), "a.xml").expect("reads");
        assert_eq!(read.project_preferences.as_deref(), Some("\n"));
        assert_eq!(
            (read.master_url, read.authenticator),
            (account.master_url, account.authenticator)
        );
    }

    #[test]
    fn account_file_of_the_real_client() {
        let account = parse_account(
            "<account>\n    <master_url>http://127.0.0.1:8088/</master_url>\n    \
             <authenticator>0123</authenticator>\n<project_preferences>\n</project_preferences>\n\
             </account>\n",
            "account.xml",
        )
        .expect("valid");
        assert_eq!(account.master_url, "http://127.0.0.1:8088/");
        assert_eq!(account.authenticator, "0123");
        assert_eq!(account.project_preferences.as_deref(), Some("\n"));
        let error = parse_account("<account><master_url>u</master_url></account>", "a.xml")
            .expect_err("no authenticator");
        assert_eq!(
            (error.file.as_str(), error.problem),
            ("a.xml", XmlProblem::Missing("authenticator"))
        );
    }
}
