//! The account manager reply (`<acct_mgr_reply>`): the manager's name and URL-signing
//! key, an error if the request failed (`<error_num>` with `<error_msg>`, or the older
//! `<error>`), when to ask again (`<repeat_sec>`), messages for the user, data to send
//! back (`<opaque>`), preferences, and one `<account>` per project the host should be
//! attached to, each URL signed with the manager's key. A manager (`boinc-rs
//! project-server` in that role) writes it with [`write_acct_mgr_reply`].

use super::raw_element::raw_content;
use crate::protocol::error::{XmlError, XmlProblem};
use crate::protocol::xml_out::XmlOut;
use crate::protocol::xml_tree::{Element, parse_document};

/// One `<account>` of a reply.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AccountManagerAccount {
    /// The project's master URL.
    pub url: String,
    /// The manager's signature of the URL (hex lines, as BOINC writes signatures).
    pub url_signature: String,
    /// The account's authenticator (empty: the one the host has).
    pub authenticator: String,
    /// Detach from the project.
    pub detach: bool,
    /// Contact the project's scheduler now.
    pub update: bool,
    /// Set or clear "no new tasks".
    pub dont_request_more_work: Option<bool>,
    /// Detach once the project's tasks are done.
    pub detach_when_done: Option<bool>,
    /// Suspend or resume the project.
    pub suspend: Option<bool>,
    /// The project's resource share on this host.
    pub resource_share: Option<f64>,
}

/// An account manager's reply.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AccountManagerReply {
    /// The manager's name.
    pub name: String,
    /// BOINC's error number (0: none).
    pub error_num: i32,
    /// What went wrong, in words.
    pub error: Option<String>,
    /// Seconds until the next request.
    pub repeat_sec: Option<f64>,
    /// Messages for the user.
    pub messages: Vec<String>,
    /// Data to send back in the next request, as written.
    pub opaque: Option<String>,
    /// The key the URL signatures are checked with.
    pub signing_key: Option<String>,
    /// `<global_preferences>`'s content, as written (to save as global_prefs.xml).
    pub global_preferences: Option<String>,
    /// The host's venue.
    pub host_venue: Option<String>,
    /// The projects.
    pub accounts: Vec<AccountManagerAccount>,
}

fn optional_flag(element: &Element) -> Result<Option<bool>, XmlError> {
    element.flag().map(Some)
}

fn parse_account(element: &Element) -> Result<AccountManagerAccount, XmlError> {
    let mut account = AccountManagerAccount::default();
    for child in &element.children {
        match child.name.as_str() {
            "url" => account.url = child.string(),
            "url_signature" => account.url_signature = child.string(),
            "authenticator" => account.authenticator = child.string(),
            "detach" => account.detach = child.flag()?,
            "update" => account.update = child.flag()?,
            "dont_request_more_work" => account.dont_request_more_work = optional_flag(child)?,
            "detach_when_done" => account.detach_when_done = optional_flag(child)?,
            "suspend" => account.suspend = optional_flag(child)?,
            "resource_share" => account.resource_share = Some(child.non_negative_f64()?),
            _ => {}
        }
    }
    if account.url.is_empty() {
        return Err(element.error(XmlProblem::Missing("url")));
    }
    Ok(account)
}

/// Reads a reply; errors name it `acct_mgr_reply`, as the file BOINC keeps it in.
pub fn parse_acct_mgr_reply(text: &str) -> Result<AccountManagerReply, XmlError> {
    read_reply(text).map_err(|e| e.in_file("acct_mgr_reply"))
}

fn read_reply(text: &str) -> Result<AccountManagerReply, XmlError> {
    let root = parse_document(text)?;
    if root.name != "acct_mgr_reply" {
        return Err(root.error(XmlProblem::Missing("acct_mgr_reply")));
    }
    let mut reply = AccountManagerReply::default();
    for child in &root.children {
        match child.name.as_str() {
            "name" => reply.name = child.string(),
            "error_num" => reply.error_num = child.i32()?,
            "error_msg" | "error" => {
                let text = child.string();
                if !text.is_empty() {
                    reply.error = Some(text);
                }
            }
            "repeat_sec" => reply.repeat_sec = Some(child.non_negative_f64()?),
            "message" => reply.messages.push(child.string()),
            "signing_key" => reply.signing_key = Some(child.string()),
            "host_venue" => reply.host_venue = Some(child.string()),
            "account" => reply.accounts.push(parse_account(child)?),
            _ => {}
        }
    }
    reply.opaque = raw_content(text, "opaque");
    reply.global_preferences =
        root.child("global_preferences").and_then(|_| raw_content(text, "global_preferences"));
    Ok(reply)
}

/// The reply's XML, as managers write it: the URL signatures and the signing key as
/// BOINC's hex lines, `<opaque>` and `<global_preferences>` as given (they must be
/// well-formed XML content), an account's optional settings only when set.
pub fn write_acct_mgr_reply(reply: &AccountManagerReply) -> String {
    let mut out = XmlOut::new();
    out.start("acct_mgr_reply");
    out.text("name", &reply.name);
    if reply.error_num != 0 {
        out.int("error_num", reply.error_num);
    }
    if let Some(error) = &reply.error {
        out.text("error_msg", error);
    }
    if let Some(repeat) = reply.repeat_sec {
        out.real("repeat_sec", repeat);
    }
    for message in &reply.messages {
        out.text("message", message);
    }
    if let Some(key) = &reply.signing_key {
        out.text("signing_key", &format!("\n{}\n", key.trim()));
    }
    if let Some(opaque) = &reply.opaque {
        out.raw("opaque", opaque);
    }
    if let Some(preferences) = &reply.global_preferences {
        out.raw("global_preferences", preferences);
    }
    if let Some(venue) = &reply.host_venue {
        out.text("host_venue", venue);
    }
    for account in &reply.accounts {
        out.start("account");
        out.text("url", &account.url);
        out.text("url_signature", &format!("\n{}\n", account.url_signature.trim()));
        if !account.authenticator.is_empty() {
            out.text("authenticator", &account.authenticator);
        }
        out.flag("detach", account.detach);
        out.flag("update", account.update);
        let settings = [
            ("dont_request_more_work", account.dont_request_more_work),
            ("detach_when_done", account.detach_when_done),
            ("suspend", account.suspend),
        ];
        for (name, value) in settings {
            if let Some(value) = value {
                out.bit(name, value);
            }
        }
        if let Some(share) = account.resource_share {
            out.real("resource_share", share);
        }
        out.end("account");
    }
    out.end("acct_mgr_reply");
    String::from_utf8_lossy(&out.finish()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply in the shape Science United sends: name, key, repeat_sec, accounts.
    const REPLY: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>
<acct_mgr_reply>
<name>Science United</name>
<signing_key>
1024
c28356930cc691fccb2f8f5cf1dbc64480d648dc1c6c8cc25b2206106d5589f9
.
</signing_key>
<repeat_sec>86400</repeat_sec>
<message>Welcome</message>
<opaque>
<host_id>42</host_id>
</opaque>
<global_preferences>
<work_buf_min_days>0.5</work_buf_min_days>
</global_preferences>
<account>
<url>http://einstein.phys.uwm.edu/</url>
<url_signature>
5a1b
.
</url_signature>
<authenticator>abc123</authenticator>
<update/>
<resource_share>50</resource_share>
<dont_request_more_work>0</dont_request_more_work>
</account>
<account>
<url>http://gone.example/</url>
<url_signature>77
.</url_signature>
<detach/>
</account>
</acct_mgr_reply>
";

    #[test]
    fn a_full_reply() {
        let reply = parse_acct_mgr_reply(REPLY).expect("readable");
        assert_eq!(reply.name, "Science United");
        assert_eq!(reply.repeat_sec, Some(86400.0));
        assert_eq!(reply.messages, ["Welcome"]);
        assert!(reply.signing_key.as_deref().is_some_and(|k| k.starts_with("1024\n")));
        assert_eq!(reply.opaque.as_deref(), Some("\n<host_id>42</host_id>\n"));
        assert!(
            reply
                .global_preferences
                .as_deref()
                .is_some_and(|p| p.contains("<work_buf_min_days>0.5"))
        );
        assert_eq!(reply.accounts.len(), 2);
        let einstein = &reply.accounts[0];
        assert_eq!(einstein.url, "http://einstein.phys.uwm.edu/");
        assert_eq!(einstein.url_signature, "5a1b\n.");
        assert_eq!(einstein.authenticator, "abc123");
        assert!(einstein.update && !einstein.detach);
        assert_eq!(einstein.resource_share, Some(50.0));
        assert_eq!(einstein.dont_request_more_work, Some(false));
        assert_eq!(einstein.detach_when_done, None);
        assert!(reply.accounts[1].detach);
    }

    /// The error replies managers send: `<error_num>` with `<error_msg>`, or `<error>`.
    #[test]
    fn error_replies() {
        let reply = parse_acct_mgr_reply(
            "<acct_mgr_reply>\n    <error_num>-206</error_num>\n    <error_msg>bad password</error_msg>\n</acct_mgr_reply>\n",
        )
        .expect("readable");
        assert_eq!((reply.error_num, reply.error.as_deref()), (-206, Some("bad password")));
        let older =
            parse_acct_mgr_reply("<acct_mgr_reply><error>no such account</error></acct_mgr_reply>")
                .expect("readable");
        assert_eq!(older.error.as_deref(), Some("no such account"));
    }

    #[test]
    fn broken_replies_are_errors() {
        assert!(parse_acct_mgr_reply("<html>oops</html>").is_err());
        assert!(
            parse_acct_mgr_reply("<acct_mgr_reply><account><detach/></account></acct_mgr_reply>")
                .is_err()
        );
        assert!(parse_acct_mgr_reply("<acct_mgr_reply>").is_err());
        let error =
            parse_acct_mgr_reply("<acct_mgr_reply><repeat_sec>soon</repeat_sec></acct_mgr_reply>")
                .expect_err("not a number");
        assert_eq!(error.file, "acct_mgr_reply");
    }

    /// What a manager writes, a client reads back the same.
    #[test]
    fn written_replies_read_back() {
        let full = parse_acct_mgr_reply(REPLY).expect("readable");
        let mut error = AccountManagerReply {
            name: "M".into(),
            error_num: -206,
            error: Some("bad password <for> ann".into()),
            ..AccountManagerReply::default()
        };
        for reply in [&full, &error] {
            let text = write_acct_mgr_reply(reply);
            assert_eq!(&parse_acct_mgr_reply(&text).expect(&text), reply, "{text}");
        }
        error.accounts.push(AccountManagerAccount {
            url: "http://p/".into(),
            url_signature: "ab\n.".into(),
            suspend: Some(true),
            detach_when_done: Some(false),
            ..AccountManagerAccount::default()
        });
        let text = write_acct_mgr_reply(&error);
        assert!(text.contains("<suspend>1</suspend>") && !text.contains("<detach/>"), "{text}");
        assert_eq!(parse_acct_mgr_reply(&text).expect(&text), error);
    }

    /// Found by fuzzing (fuzz target acct_mgr_reply): a reply that starts with a byte
    /// order mark had its `<opaque>` and `<global_preferences>` cut three bytes early,
    /// and the client sent the manager back markup that was not well-formed.
    #[test]
    fn a_reply_after_a_byte_order_mark() {
        let text = format!("\u{feff}{REPLY}");
        let reply = parse_acct_mgr_reply(&text).expect("readable");
        assert_eq!(reply, parse_acct_mgr_reply(REPLY).expect("readable"));
        assert_eq!(reply.opaque.as_deref(), Some("\n<host_id>42</host_id>\n"));
        let written = write_acct_mgr_reply(&reply);
        assert_eq!(parse_acct_mgr_reply(&written).expect(&written), reply);
    }
}
