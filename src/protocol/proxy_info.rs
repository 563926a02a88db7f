//! `<proxy_info>` (docs/design.md "Protocol facts"): read from cc_config.xml's
//! `<options>` and from a GUI RPC `set_proxy_settings`, written in BOINC's fields and
//! order for `get_proxy_settings`, and put into a cc_config.xml's text, where BOINC keeps
//! the proxy the Manager's dialog sets, leaving every other byte of the file as the
//! user wrote it.

use super::error::{XmlError, XmlProblem};
use super::values::quoted_value;
use super::xml_out::XmlOut;
use super::xml_tree::{Element, parse_document, source_text};
use crate::model::{DEFAULT_PROXY_PORT, ProxyInfo};

/// The longest host, user name, password or no-proxy list kept, bytes.
const MAX_PROXY_TEXT: usize = 4096;

/// A `<proxy_info>` element into a [`ProxyInfo`]; unknown children are skipped, as
/// BOINC skips them.
pub(crate) fn read_proxy_info(element: &Element) -> Result<ProxyInfo, XmlError> {
    let mut info = ProxyInfo::default();
    for child in &element.children {
        match child.name.as_str() {
            "use_http_proxy" => info.use_http_proxy = child.flag()?,
            "use_socks_proxy" => info.use_socks_proxy = child.flag()?,
            "use_http_auth" => info.use_http_auth = child.flag()?,
            "socks5_remote_dns" => info.socks5_remote_dns = child.flag()?,
            "no_autodetect" => info.no_autodetect = child.flag()?,
            "http_server_name" => info.http_server_name = text(child)?,
            "http_server_port" => info.http_server_port = port(child)?,
            "http_user_name" => info.http_user_name = text(child)?,
            "http_user_passwd" => info.http_user_passwd = text(child)?,
            "socks_server_name" => info.socks_server_name = text(child)?,
            "socks_server_port" => info.socks_server_port = port(child)?,
            "socks5_user_name" => info.socks5_user_name = text(child)?,
            "socks5_user_passwd" => info.socks5_user_passwd = text(child)?,
            "no_proxy" => info.no_proxy = text(child)?,
            _ => {}
        }
    }
    Ok(info)
}

/// A `<proxy_info>` document (what `set_proxy_settings` carries) into a [`ProxyInfo`].
pub fn parse_proxy_info(text: &str) -> Result<ProxyInfo, XmlError> {
    let root = parse_document(text)?;
    if root.name != "proxy_info" {
        return Err(root.error(XmlProblem::WrongRoot { expected: "proxy_info" }));
    }
    read_proxy_info(&root)
}

/// `<proxy_info>` as BOINC writes it (in its GUI RPC reply and in cc_config.xml): the
/// flags that are set, then every field.
pub(crate) fn write_proxy_info(out: &mut XmlOut, info: &ProxyInfo) {
    out.start("proxy_info");
    out.flag("use_http_proxy", info.use_http_proxy);
    out.flag("use_socks_proxy", info.use_socks_proxy);
    out.flag("use_http_auth", info.use_http_auth);
    out.text("socks_server_name", &info.socks_server_name);
    out.int("socks_server_port", info.socks_server_port);
    out.text("http_server_name", &info.http_server_name);
    out.int("http_server_port", info.http_server_port);
    out.text("socks5_user_name", &info.socks5_user_name);
    out.text("socks5_user_passwd", &info.socks5_user_passwd);
    out.bit("socks5_remote_dns", info.socks5_remote_dns);
    out.text("http_user_name", &info.http_user_name);
    out.text("http_user_passwd", &info.http_user_passwd);
    out.text("no_proxy", &info.no_proxy);
    out.bit("no_autodetect", info.no_autodetect);
    out.end("proxy_info");
}

/// `cc_config` (a cc_config.xml's text, empty when there is none) with its
/// `<options>`' `<proxy_info>` replaced by `info`, or added (with `<options>` when it has
/// none). A text that is not a `<cc_config>` document is an error and nothing is changed.
pub fn with_proxy_info(cc_config: &str, info: &ProxyInfo) -> Result<String, XmlError> {
    let mut out = XmlOut::new();
    write_proxy_info(&mut out, info);
    let element = String::from_utf8_lossy(&out.finish()).into_owned();
    if cc_config.trim().is_empty() {
        return Ok(format!("<cc_config>\n<options>\n{element}</options>\n</cc_config>\n"));
    }
    let text = source_text(cc_config);
    let root = parse_document(text)?;
    if root.name != "cc_config" {
        return Err(root.error(XmlProblem::WrongRoot { expected: "cc_config" }));
    }
    let splice = |range: std::ops::Range<usize>, with: &str| {
        format!("{}{with}{}", &text[..range.start], &text[range.end..])
    };
    let options = root.children.iter().find(|child| child.name == "options");
    Ok(match options {
        Some(options) => match options.children.iter().find(|child| child.name == "proxy_info") {
            Some(old) => splice(old.outer.clone(), element.trim_end()),
            // `<options/>`: written out whole.
            None if options.content.is_empty() => {
                splice(options.outer.clone(), &format!("<options>\n{element}</options>"))
            }
            None => splice(options.content.start..options.content.start, &format!("\n{element}")),
        },
        None if !root.content.is_empty() => splice(
            root.content.start..root.content.start,
            &format!("\n<options>\n{element}</options>"),
        ),
        // `<cc_config/>` or `<cc_config></cc_config>`.
        None => splice(
            root.outer.clone(),
            &format!("<cc_config>\n<options>\n{element}</options>\n</cc_config>"),
        ),
    })
}

fn text(child: &Element) -> Result<String, XmlError> {
    let value = child.string();
    if value.len() > MAX_PROXY_TEXT {
        return Err(child.error(XmlProblem::OutOfRange {
            value: quoted_value(&value),
            expected: "at most 4096 bytes",
        }));
    }
    Ok(value)
}

/// A port; BOINC's 0 (never set) is its default port.
fn port(child: &Element) -> Result<u16, XmlError> {
    match child.u32_in(0, 65_535, "a port between 1 and 65535")? {
        0 => Ok(DEFAULT_PROXY_PORT),
        port => Ok(port as u16),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::read_cc_config;

    fn socks() -> ProxyInfo {
        ProxyInfo {
            use_socks_proxy: true,
            socks_server_name: "127.0.0.1".into(),
            socks_server_port: 1080,
            socks5_user_name: "me".into(),
            socks5_user_passwd: "p<&>w".into(),
            no_proxy: "a.org,b.org".into(),
            ..ProxyInfo::default()
        }
    }

    #[test]
    fn what_is_written_reads_back_the_same() {
        let mut out = XmlOut::new();
        write_proxy_info(&mut out, &socks());
        let text = String::from_utf8(out.finish()).expect("utf-8");
        assert!(text.starts_with("<proxy_info>\n    <use_socks_proxy/>\n"), "{text}");
        assert_eq!(parse_proxy_info(&text).expect("reads"), socks());
    }

    #[test]
    fn the_proxy_goes_into_cc_config_and_the_rest_stays_as_written() {
        let original = "<?xml version=\"1.0\"?>\n<!-- mine -->\n<cc_config>\n  <log_flags>\n    \
                        <task/>\n  </log_flags>\n  <options>\n    <ncpus>3</ncpus>\n    \
                        <proxy_info><use_http_proxy/><http_server_name>old</http_server_name>\
                        </proxy_info>\n  </options>\n</cc_config>\n";
        let changed = with_proxy_info(original, &socks()).expect("a cc_config");
        assert!(changed.starts_with("<?xml version=\"1.0\"?>\n<!-- mine -->\n"), "{changed}");
        assert!(!changed.contains("old"), "{changed}");
        let (config, problems) = read_cc_config(&changed, "cc_config.xml").expect("reads");
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(config.ncpus, Some(3));
        assert_eq!(config.log_flags, ["task"]);
        assert_eq!(*config.proxy, socks());
        // Set again: still one element.
        let again = with_proxy_info(&changed, &ProxyInfo::default()).expect("a cc_config");
        assert_eq!(again.matches("<proxy_info>").count(), 1, "{again}");
        assert_eq!(*read_cc_config(&again, "c").expect("reads").0.proxy, ProxyInfo::default());
    }

    #[test]
    fn a_cc_config_without_options_or_with_none_at_all_gets_them() {
        for original in [
            "",
            "<cc_config/>",
            "<cc_config></cc_config>",
            "<cc_config>\n<log_flags/>\n</cc_config>",
            "<cc_config><options/></cc_config>",
            "<cc_config><options><ncpus>2</ncpus></options></cc_config>",
        ] {
            let changed = with_proxy_info(original, &socks()).expect("a cc_config");
            let (config, problems) = read_cc_config(&changed, "c").expect("reads");
            assert!(problems.is_empty(), "{original}: {problems:?}");
            assert_eq!(*config.proxy, socks(), "{original} became {changed}");
        }
        assert!(with_proxy_info("<global_preferences/>", &socks()).is_err());
        assert!(with_proxy_info("<cc_config><options>", &socks()).is_err());
    }

    #[test]
    fn bad_values_are_errors_and_a_zero_port_is_the_default() {
        assert!(
            parse_proxy_info("<proxy_info><http_server_port>70000</http_server_port></proxy_info>")
                .is_err()
        );
        assert!(
            parse_proxy_info("<proxy_info><use_http_proxy>maybe</use_http_proxy></proxy_info>")
                .is_err()
        );
        let long = format!("<proxy_info><no_proxy>{}</no_proxy></proxy_info>", "a".repeat(5000));
        assert!(parse_proxy_info(&long).is_err());
        let zero =
            parse_proxy_info("<proxy_info><socks_server_port>0</socks_server_port></proxy_info>");
        assert_eq!(zero.expect("reads").socks_server_port, DEFAULT_PROXY_PORT);
        assert!(parse_proxy_info("<other/>").is_err());
    }
}
