//! A project's web RPCs for attaching as a volunteer (docs/design.md "Protocol facts",
//! web RPCs): `lookup_account.php` and `create_account.php` answer `<account_out>` with
//! the account's key (its authenticator) or `<error>` with BOINC's error number and
//! message; `get_project_config.php` answers `<project_config>`. The client reads them
//! (from any server: bounded, never trusted) and passes them on to a GUI RPC client in
//! the same elements; the project server writes them.

use super::error::{XmlError, XmlProblem};
use super::list_counts::ListCounts;
use super::xml_out::XmlOut;
use super::xml_tree::{Element, parse_document};

/// The largest web RPC answer read, bytes: these are a few lines.
pub const MAX_WEB_RPC_REPLY: usize = 64 * 1024;
/// The most platforms a project configuration may list.
const MAX_PLATFORMS: usize = 256;

/// BOINC's `ERR_DB_NOT_FOUND`: no account with that e-mail address.
pub const ERR_DB_NOT_FOUND: i32 = -136;
/// BOINC's `ERR_DB_NOT_UNIQUE`: an account with that e-mail address exists.
pub const ERR_DB_NOT_UNIQUE: i32 = -137;
/// BOINC's `ERR_BAD_PASSWD`: the password is wrong.
pub const ERR_BAD_PASSWD: i32 = -206;
/// BOINC's `ERR_BAD_EMAIL_ADDR`.
pub const ERR_BAD_EMAIL_ADDR: i32 = -205;
/// BOINC's `ERR_ACCT_CREATION_DISABLED`.
pub const ERR_ACCT_CREATION_DISABLED: i32 = -208;
/// BOINC's `ERR_IN_PROGRESS`: the web RPC has not answered yet.
pub const ERR_IN_PROGRESS: i32 = -204;
/// BOINC's `ERR_XML_PARSE`: the answer was not one.
pub const ERR_XML_PARSE: i32 = -112;
/// BOINC's `ERR_GETHOSTBYNAME`-like transport failure; BOINC's `ERR_HTTP_TRANSIENT`.
pub const ERR_HTTP_TRANSIENT: i32 = -184;

/// What `lookup_account.php` or `create_account.php` answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountOut {
    /// The account's key.
    Authenticator(String),
    /// The project refused, with BOINC's error number and its message.
    Error {
        /// BOINC's error number (negative).
        number: i32,
        /// What the project said.
        message: String,
    },
}

/// A project's configuration (`get_project_config.php`): what a volunteer needs to
/// attach.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProjectConfig {
    /// The project's name.
    pub name: String,
    /// Its master URL.
    pub master_url: String,
    /// Where its web RPCs are (usually the master URL).
    pub web_rpc_url_base: String,
    /// The shortest password it takes.
    pub min_passwd_length: u32,
    /// Accounts are made on its web site only.
    pub account_creation_disabled: bool,
    /// Accounts are named by user name rather than e-mail address.
    pub uses_username: bool,
    /// The platforms it has apps for.
    pub platforms: Vec<String>,
    /// The project refused (an `<error>` instead of the configuration).
    pub error: Option<(i32, String)>,
}

fn error_of(root: &Element) -> Result<(i32, String), XmlError> {
    let number = match root.child("error_num") {
        Some(number) => number.i32()?,
        None => -1,
    };
    let message = root.child("error_msg").map(Element::string).unwrap_or_default();
    Ok((number, message))
}

/// Reads `lookup_account.php`'s or `create_account.php`'s answer.
pub fn read_account_out(text: &str) -> Result<AccountOut, XmlError> {
    if text.len() > MAX_WEB_RPC_REPLY {
        return Err(XmlError::in_element(
            1,
            "account_out",
            XmlProblem::TextTooLong(MAX_WEB_RPC_REPLY),
        ));
    }
    let root = parse_document(text)?;
    match root.name.as_str() {
        "account_out" => match root.child("error_num") {
            Some(_) => {
                let (number, message) = error_of(&root)?;
                Ok(AccountOut::Error { number, message })
            }
            None => Ok(AccountOut::Authenticator(root.required_text("authenticator")?.to_owned())),
        },
        "error" => {
            let (number, message) = error_of(&root)?;
            Ok(AccountOut::Error { number, message })
        }
        _ => Err(root.error(XmlProblem::WrongRoot { expected: "account_out" })),
    }
}

/// Writes an `<account_out>` (a project's answer with the key) or an `<error>`.
pub fn write_account_out(answer: &AccountOut) -> String {
    let mut out = XmlOut::new();
    match answer {
        AccountOut::Authenticator(authenticator) => {
            out.start("account_out");
            out.text("authenticator", authenticator);
            out.end("account_out");
        }
        AccountOut::Error { number, message } => write_error(&mut out, *number, message),
    }
    String::from_utf8_lossy(&out.finish()).into_owned()
}

fn write_error(out: &mut XmlOut, number: i32, message: &str) {
    out.start("error");
    out.int("error_num", number);
    out.text("error_msg", message);
    out.end("error");
}

/// Reads `get_project_config.php`'s answer.
pub fn read_project_config(text: &str) -> Result<ProjectConfig, XmlError> {
    if text.len() > MAX_WEB_RPC_REPLY {
        return Err(XmlError::in_element(
            1,
            "project_config",
            XmlProblem::TextTooLong(MAX_WEB_RPC_REPLY),
        ));
    }
    let root = parse_document(text)?;
    if root.name == "error" {
        return Ok(ProjectConfig { error: Some(error_of(&root)?), ..ProjectConfig::default() });
    }
    if root.name != "project_config" {
        return Err(root.error(XmlProblem::WrongRoot { expected: "project_config" }));
    }
    let mut config = ProjectConfig::default();
    for child in &root.children {
        match child.name.as_str() {
            "name" => config.name = child.string(),
            "master_url" => config.master_url = child.string(),
            "web_rpc_url_base" => config.web_rpc_url_base = child.string(),
            "min_passwd_length" => config.min_passwd_length = child.u32()?,
            "account_creation_disabled" => config.account_creation_disabled = child.flag()?,
            "uses_username" => config.uses_username = child.flag()?,
            "error_num" => config.error = Some(error_of(&root)?),
            "platforms" => {
                let mut counted = ListCounts::default();
                for platform in child.children.iter().filter(|p| p.name == "platform") {
                    counted.check(platform, "platform", MAX_PLATFORMS)?;
                    if let Some(name) = platform.child("platform_name") {
                        config.platforms.push(name.string());
                    }
                }
            }
            _ => {}
        }
    }
    Ok(config)
}

/// Writes a `<project_config>` as BOINC projects do (or an `<error>` for a refusal).
pub fn write_project_config(config: &ProjectConfig) -> String {
    let mut out = XmlOut::new();
    if let Some((number, message)) = &config.error {
        write_error(&mut out, *number, message);
        return String::from_utf8_lossy(&out.finish()).into_owned();
    }
    out.start("project_config");
    out.text("name", &config.name);
    out.text("master_url", &config.master_url);
    out.text("web_rpc_url_base", &config.web_rpc_url_base);
    out.int("min_passwd_length", config.min_passwd_length);
    out.flag("account_creation_disabled", config.account_creation_disabled);
    out.flag("uses_username", config.uses_username);
    out.start("platforms");
    for platform in &config.platforms {
        out.start("platform");
        out.text("platform_name", platform);
        out.end("platform");
    }
    out.end("platforms");
    out.end("project_config");
    String::from_utf8_lossy(&out.finish()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_answers_read_back() {
        for answer in [
            AccountOut::Authenticator("0123abcd".into()),
            AccountOut::Error { number: ERR_BAD_PASSWD, message: "bad password".into() },
        ] {
            assert_eq!(read_account_out(&write_account_out(&answer)).expect("read"), answer);
        }
        // A BOINC project's error answer.
        let boinc = "<error>\n<error_num>-136</error_num>\n<error_msg>No such account</error_msg>\n</error>";
        assert_eq!(
            read_account_out(boinc).expect("read"),
            AccountOut::Error { number: ERR_DB_NOT_FOUND, message: "No such account".into() }
        );
        assert!(read_account_out("<account_out></account_out>").is_err(), "no key");
        assert!(read_account_out("<html>").is_err());
        assert!(read_account_out(&" ".repeat(MAX_WEB_RPC_REPLY + 1)).is_err());
    }

    #[test]
    fn project_configs_read_back() {
        let config = ProjectConfig {
            name: "P".into(),
            master_url: "http://p/".into(),
            web_rpc_url_base: "http://p/".into(),
            min_passwd_length: 6,
            account_creation_disabled: false,
            uses_username: false,
            platforms: vec!["x86_64-pc-linux-gnu".into()],
            error: None,
        };
        assert_eq!(read_project_config(&write_project_config(&config)).expect("read"), config);
        let refused =
            ProjectConfig { error: Some((-1, "down".into())), ..ProjectConfig::default() };
        assert_eq!(read_project_config(&write_project_config(&refused)).expect("read"), refused);
    }
}
