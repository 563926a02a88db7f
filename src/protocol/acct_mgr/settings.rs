//! What a client keeps of the account manager it uses, in BOINC's two files of the
//! data directory: `acct_mgr_url.xml` (the manager: its name, URL and the key its
//! project URLs are signed with) and `acct_mgr_login.xml` (the volunteer's login name
//! and password hash, when the next request is due, and the manager's `<opaque>` data
//! to send back). Keeping them apart lets a volunteer hand a host a manager's URL file
//! without credentials, as BOINC's installers do.

use super::raw_element::raw_content;
use crate::Time;
use crate::protocol::error::{XmlError, XmlProblem};
use crate::protocol::xml_tree::parse_document;
use crate::protocol::xml_write::XmlWriter;

/// The manager's file in the data directory.
pub const ACCT_MGR_URL_FILE: &str = "acct_mgr_url.xml";
/// The login file in the data directory.
pub const ACCT_MGR_LOGIN_FILE: &str = "acct_mgr_login.xml";

/// The account manager a client uses and how it signs in.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AccountManagerSettings {
    /// The manager's URL (requests go to it + `rpc.php`).
    pub url: String,
    /// Its name, as its last reply gave it (the URL until then).
    pub name: String,
    /// The key the manager signs project URLs with, kept from its first reply: a later
    /// reply under another key is refused.
    pub signing_key: Option<String>,
    /// The volunteer's login name (empty: the URL file alone, no credentials yet).
    pub login_name: String,
    /// md5(password + lower-case login name), hex.
    pub password_hash: String,
    /// When the next request is due (0: at once).
    pub next_rpc_time: Time,
    /// The manager's `<opaque>` data from its last reply, as it came.
    pub opaque: String,
}

impl AccountManagerSettings {
    /// A manager joined with credentials: the first request is due at once.
    pub fn new(url: &str, login_name: &str, password_hash: &str) -> Self {
        AccountManagerSettings {
            url: url.to_string(),
            name: url.to_string(),
            login_name: login_name.to_string(),
            password_hash: password_hash.to_string(),
            ..AccountManagerSettings::default()
        }
    }

    /// Whether the client holds credentials to sign in with.
    pub fn have_credentials(&self) -> bool {
        !self.login_name.is_empty() && !self.password_hash.is_empty()
    }

    /// Reads the two files' texts (`login`: `None` when there is no login file).
    pub fn parse(url_file: &str, login_file: Option<&str>) -> Result<Self, XmlError> {
        let manager = parse_document(url_file).map_err(|e| e.in_file(ACCT_MGR_URL_FILE))?;
        if manager.name != "acct_mgr" {
            return Err(manager
                .error(XmlProblem::WrongRoot { expected: "acct_mgr" })
                .in_file(ACCT_MGR_URL_FILE));
        }
        let url = manager.required_text("url").map_err(|e| e.in_file(ACCT_MGR_URL_FILE))?;
        let mut settings = AccountManagerSettings {
            url: url.trim().to_string(),
            name: manager.child("name").map(|n| n.string()).unwrap_or_else(|| url.to_string()),
            signing_key: manager.child("signing_key").map(|k| k.string()),
            ..AccountManagerSettings::default()
        };
        let Some(login_file) = login_file else { return Ok(settings) };
        let login = parse_document(login_file).map_err(|e| e.in_file(ACCT_MGR_LOGIN_FILE))?;
        if login.name != "acct_mgr_login" {
            return Err(login
                .error(XmlProblem::WrongRoot { expected: "acct_mgr_login" })
                .in_file(ACCT_MGR_LOGIN_FILE));
        }
        for child in &login.children {
            match child.name.as_str() {
                "login" => settings.login_name = child.string(),
                "password_hash" => settings.password_hash = child.string(),
                "next_rpc_time" => {
                    settings.next_rpc_time =
                        child.non_negative_f64().map_err(|e| e.in_file(ACCT_MGR_LOGIN_FILE))?
                }
                _ => {}
            }
        }
        // An empty `<opaque>` (written as a blank line) is no data to send back.
        settings.opaque =
            raw_content(login_file, "opaque").filter(|o| !o.trim().is_empty()).unwrap_or_default();
        Ok(settings)
    }

    /// `acct_mgr_url.xml`.
    pub fn url_file(&self) -> String {
        let mut writer = XmlWriter::new();
        writer.open("acct_mgr");
        writer.text("name", &self.name);
        writer.text("url", &self.url);
        if let Some(key) = &self.signing_key {
            writer.text("signing_key", key);
        }
        writer.close("acct_mgr");
        writer.finish()
    }

    /// `acct_mgr_login.xml` (`None`: no credentials, no file).
    pub fn login_file(&self) -> Option<String> {
        if !self.have_credentials() {
            return None;
        }
        let mut writer = XmlWriter::new();
        writer.open("acct_mgr_login");
        writer.text("login", &self.login_name);
        writer.text("password_hash", &self.password_hash);
        writer.number("next_rpc_time", self.next_rpc_time);
        writer.verbatim("opaque", if self.opaque.is_empty() { "\n" } else { &self.opaque });
        writer.close("acct_mgr_login");
        Some(writer.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_read_back() {
        let mut settings =
            AccountManagerSettings::new("http://127.0.0.1:80/am/", "Ann & Co", "0123abcd");
        settings.name = "Manager <one>".into();
        settings.signing_key = Some("1024\nabcdef\n.".into());
        settings.next_rpc_time = 1_700_000_000.5;
        settings.opaque = "\n<host_id>42</host_id>\n".into();
        let url_file = settings.url_file();
        let login_file = settings.login_file().expect("credentials");
        let read = AccountManagerSettings::parse(&url_file, Some(&login_file)).expect("reads");
        assert_eq!(read, settings);
        // The URL file alone: a manager without credentials yet.
        let alone = AccountManagerSettings::parse(&url_file, None).expect("reads");
        assert!(!alone.have_credentials());
        assert_eq!(alone.url, settings.url);
        assert_eq!(alone.signing_key, settings.signing_key);
        // No opaque data: none read back either.
        settings.opaque.clear();
        let login_file = settings.login_file().expect("credentials");
        let read = AccountManagerSettings::parse(&url_file, Some(&login_file)).expect("reads");
        assert_eq!(read, settings);
    }

    #[test]
    fn damaged_files_are_errors_that_name_the_file() {
        for (url_file, login_file, named) in [
            ("<acct_mgr><name>x</name></acct_mgr>", None, ACCT_MGR_URL_FILE),
            ("<account/>", None, ACCT_MGR_URL_FILE),
            ("<acct_mgr><url>", None, ACCT_MGR_URL_FILE),
            (
                "<acct_mgr><url>http://a/</url></acct_mgr>",
                Some("<acct_mgr_login><next_rpc_time>-1</next_rpc_time></acct_mgr_login>"),
                ACCT_MGR_LOGIN_FILE,
            ),
            ("<acct_mgr><url>http://a/</url></acct_mgr>", Some("<x/>"), ACCT_MGR_LOGIN_FILE),
        ] {
            let error = AccountManagerSettings::parse(url_file, login_file).expect_err(url_file);
            assert!(error.to_string().contains(named), "{error}");
        }
    }
}
