//! Reading one GUI RPC request (docs/design.md "Protocol facts", GUI RPC): the text between
//! the connection's terminators, `<boinc_gui_rpc_request>` around one operation. What
//! the real client answers to requests that are not one (no wrapper, an empty wrapper,
//! an unknown operation) is in the fixture gui_rpc_edge_cases.txt; this reader gives
//! the same answers. Any bytes are accepted: a request is parsed without recursion
//! under the XML tree's depth limit, and nothing in it can make the reader panic.

use super::operation::{
    AccountManagerTarget, AccountRequest, ModeChange, Operation, ProjectAction, ResultAction,
    TransferAction,
};
use crate::model::RunMode;
use crate::protocol::xml_tree::{Element, parse_document, raw_content};

/// The element every request is wrapped in.
const WRAPPER: &str = "boinc_gui_rpc_request";

/// What a client asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `<auth1/>`: the first step of authentication, asking for a nonce.
    Auth1,
    /// `<auth2>`: the second step, with md5(nonce + password) in lowercase hex.
    Auth2 {
        /// The hash the client computed (empty if it sent none).
        nonce_hash: String,
    },
    /// An operation, or the reason its arguments are not usable. The operation's
    /// access rule applies before its arguments are looked at: a client that may not
    /// ask for it is told so, whatever it sent.
    Operation {
        /// Whether the operation needs authentication.
        access: super::operation::Access,
        /// The operation, or what is wrong with its arguments.
        operation: Result<Operation, ArgumentError>,
    },
    /// No `<boinc_gui_rpc_request>` element: the real client answers "missing request".
    Missing,
    /// An operation the server does not know; the text names it as the real client
    /// does (`bogus_op/` for `<bogus_op/>`, `/boinc_gui_rpc_request` for an empty wrapper).
    Unrecognized(String),
    /// The request is not well-formed XML.
    Malformed(String),
}

/// What is wrong with an operation's arguments; the message is the one BOINC's client
/// sends back in `<error>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentError {
    /// No `<project_url>`.
    #[error("Missing project URL")]
    MissingProjectUrl,
    /// No `<name>` in a result operation.
    #[error("Missing result name")]
    MissingResultName,
    /// A mode request without `<always/>`, `<auto/>`, `<never/>` or `<restore/>`.
    #[error("Missing mode")]
    MissingMode,
    /// `project_attach` without a URL.
    #[error("Missing URL")]
    MissingUrl,
    /// `project_attach` without an authenticator.
    #[error("Missing authenticator")]
    MissingAuthenticator,
    /// A file transfer operation without `<filename>`.
    #[error("Missing filename")]
    MissingFilename,
    /// `acct_mgr_rpc` without its URL, name and password.
    #[error("bad arg")]
    BadAccountManagerArguments,
}

/// Reads one request (the bytes before the terminator).
pub fn parse_request(bytes: &[u8]) -> Request {
    let text = String::from_utf8_lossy(bytes);
    let Some(start) = text.find(&format!("<{WRAPPER}")) else {
        return Request::Missing;
    };
    let source = &text[start..];
    let root = match parse_document(source) {
        Ok(root) => root,
        Err(error) => return Request::Malformed(error.problem.to_string()),
    };
    if root.name != WRAPPER {
        return Request::Missing;
    }
    let Some(op) = root.children.first() else {
        return Request::Unrecognized(format!("/{WRAPPER}"));
    };
    match op.name.as_str() {
        "auth1" => Request::Auth1,
        "auth2" => Request::Auth2 { nonce_hash: text_of(op, "nonce_hash").unwrap_or_default() },
        name => match operation(name, op, source) {
            Some(operation) => {
                let access = match &operation {
                    Ok(operation) => operation.access(),
                    // Only control operations have arguments that can be wrong.
                    Err(_) => super::operation::Access::Control,
                };
                Request::Operation { access, operation }
            }
            None if op.children.is_empty() && op.text.trim().is_empty() => {
                Request::Unrecognized(format!("{name}/"))
            }
            None => Request::Unrecognized(name.to_string()),
        },
    }
}

/// The trimmed text of a child element, if there is one.
fn text_of(element: &Element, name: &str) -> Option<String> {
    element.child(name).map(Element::string)
}

/// A child's number; absent or unreadable counts as 0, as BOINC's `parse_int` leaves it.
fn number_of(element: &Element, name: &str) -> u64 {
    element
        .child(name)
        .and_then(|child| child.trimmed().parse::<f64>().ok())
        .filter(|value| value.is_finite() && *value > 0.0)
        .map_or(0, |value| value.min(u64::MAX as f64) as u64)
}

/// A child flag: `<name/>` or `<name>1</name>`.
fn flag_of(element: &Element, name: &str) -> bool {
    element.child(name).is_some_and(|child| child.flag().unwrap_or(false))
}

fn mode_change(op: &Element) -> Result<ModeChange, ArgumentError> {
    let duration = op
        .child("duration")
        .and_then(|d| d.trimmed().parse::<f64>().ok())
        .filter(|d| d.is_finite() && *d > 0.0)
        .unwrap_or(0.0);
    let mode = if op.child("always").is_some() {
        Some(RunMode::Always)
    } else if op.child("never").is_some() {
        Some(RunMode::Never)
    } else if op.child("auto").is_some() {
        Some(RunMode::Auto)
    } else if op.child("restore").is_some() {
        None
    } else {
        return Err(ArgumentError::MissingMode);
    };
    Ok(ModeChange { mode, duration })
}

fn project(op: &Element, action: ProjectAction) -> Result<Operation, ArgumentError> {
    let master_url = text_of(op, "project_url").ok_or(ArgumentError::MissingProjectUrl)?;
    Ok(Operation::Project { action, master_url })
}

fn result(op: &Element, action: ResultAction) -> Result<Operation, ArgumentError> {
    let project_url = text_of(op, "project_url").ok_or(ArgumentError::MissingProjectUrl)?;
    let name = text_of(op, "name").ok_or(ArgumentError::MissingResultName)?;
    Ok(Operation::Result { action, project_url, name })
}

fn file_transfer(op: &Element, action: TransferAction) -> Result<Operation, ArgumentError> {
    let project_url = text_of(op, "project_url").ok_or(ArgumentError::MissingProjectUrl)?;
    let filename = text_of(op, "filename").ok_or(ArgumentError::MissingFilename)?;
    Ok(Operation::FileTransfer { action, project_url, filename })
}

fn project_attach(op: &Element) -> Result<Operation, ArgumentError> {
    let master_url = text_of(op, "project_url").ok_or(ArgumentError::MissingUrl)?;
    let authenticator = text_of(op, "authenticator")
        .filter(|a| !a.is_empty())
        .ok_or(ArgumentError::MissingAuthenticator)?;
    let project_name = text_of(op, "project_name").unwrap_or_default();
    Ok(Operation::ProjectAttach { master_url, authenticator, project_name })
}

fn account_manager_rpc(op: &Element) -> Result<Operation, ArgumentError> {
    if flag_of(op, "use_config_file") {
        return Ok(Operation::AccountManagerRpc(AccountManagerTarget::Configured));
    }
    match (text_of(op, "url"), text_of(op, "name"), text_of(op, "password")) {
        (Some(url), Some(name), Some(password)) => {
            Ok(Operation::AccountManagerRpc(AccountManagerTarget::Account { url, name, password }))
        }
        _ => Err(ArgumentError::BadAccountManagerArguments),
    }
}

fn account_request(op: &Element) -> Result<AccountRequest, ArgumentError> {
    Ok(AccountRequest {
        url: text_of(op, "url").ok_or(ArgumentError::MissingUrl)?,
        email_addr: text_of(op, "email_addr").unwrap_or_default(),
        passwd_hash: text_of(op, "passwd_hash").unwrap_or_default(),
        user_name: text_of(op, "user_name").unwrap_or_default(),
        team_name: text_of(op, "team_name").unwrap_or_default(),
    })
}

/// The element `name` inside `op` as written in `source` (start and end tags
/// included), or an empty text when `op` has none.
fn element_text(source: &str, op: &Element, name: &str) -> String {
    match op.child(name) {
        Some(child) => format!("<{name}>{}</{name}>", raw_content(source, child)),
        None => String::new(),
    }
}

/// The operation named `name`, with its arguments read from `op` (in `source`, the
/// request's text); `None` for a name the protocol does not have.
fn operation(name: &str, op: &Element, source: &str) -> Option<Result<Operation, ArgumentError>> {
    let simple = |operation: Operation| Some(Ok(operation));
    match name {
        "lookup_account" => Some(account_request(op).map(Operation::LookupAccount)),
        "lookup_account_poll" => simple(Operation::LookupAccountPoll),
        "create_account" => Some(account_request(op).map(Operation::CreateAccount)),
        "create_account_poll" => simple(Operation::CreateAccountPoll),
        "get_project_config" => Some(
            text_of(op, "url")
                .ok_or(ArgumentError::MissingUrl)
                .map(|url| Operation::GetProjectConfig { url }),
        ),
        "get_project_config_poll" => simple(Operation::GetProjectConfigPoll),
        "get_project_init_status" => simple(Operation::GetProjectInitStatus),
        "get_cc_config" => simple(Operation::GetCcConfig),
        "set_cc_config" => {
            simple(Operation::SetCcConfig { text: element_text(source, op, "cc_config") })
        }
        "get_app_config" => Some(
            text_of(op, "url")
                .ok_or(ArgumentError::MissingUrl)
                .map(|url| Operation::GetAppConfig { url }),
        ),
        "set_app_config" => Some(text_of(op, "url").ok_or(ArgumentError::MissingUrl).map(|url| {
            Operation::SetAppConfig { url, text: element_text(source, op, "app_config") }
        })),
        "get_global_prefs_file" => simple(Operation::GetGlobalPrefsFile),
        "get_global_prefs_working" => simple(Operation::GetGlobalPrefsWorking),
        "get_global_prefs_override" => simple(Operation::GetGlobalPrefsOverride),
        "set_global_prefs_override" => simple(Operation::SetGlobalPrefsOverride {
            text: element_text(source, op, "global_preferences"),
        }),
        "get_proxy_settings" => simple(Operation::GetProxySettings),
        "set_proxy_settings" => {
            simple(Operation::SetProxySettings { text: element_text(source, op, "proxy_info") })
        }
        "run_benchmarks" => simple(Operation::RunBenchmarks),
        "network_available" => simple(Operation::NetworkAvailable),
        "report_device_status" => simple(Operation::ReportDeviceStatus),
        "project_detach_when_done" => Some(project(op, ProjectAction::DetachWhenDone)),
        "project_dont_detach_when_done" => Some(project(op, ProjectAction::DontDetachWhenDone)),
        "exchange_versions" => simple(Operation::ExchangeVersions),
        "get_state" => simple(Operation::GetState),
        "get_results" => simple(Operation::GetResults { active_only: flag_of(op, "active_only") }),
        "get_old_results" => simple(Operation::GetOldResults),
        "get_project_status" => simple(Operation::GetProjectStatus),
        "get_simple_gui_info" => simple(Operation::GetSimpleGuiInfo),
        "get_screensaver_tasks" => simple(Operation::GetScreensaverTasks),
        "get_cc_status" => simple(Operation::GetCcStatus),
        "get_host_info" => simple(Operation::GetHostInfo),
        "get_messages" => simple(Operation::GetMessages { after: number_of(op, "seqno") }),
        "get_message_count" => simple(Operation::GetMessageCount),
        "get_notices" => simple(Operation::GetNotices { after: number_of(op, "seqno") }),
        "get_notices_public" => {
            simple(Operation::GetNoticesPublic { after: number_of(op, "seqno") })
        }
        "get_disk_usage" => simple(Operation::GetDiskUsage),
        "get_statistics" => simple(Operation::GetStatistics),
        "get_file_transfers" => simple(Operation::GetFileTransfers),
        "retry_file_transfer" => Some(file_transfer(op, TransferAction::Retry)),
        "abort_file_transfer" => Some(file_transfer(op, TransferAction::Abort)),
        "get_newer_version" => simple(Operation::GetNewerVersion),
        "get_daily_xfer_history" => simple(Operation::GetDailyTransferHistory),
        "get_all_projects_list" => simple(Operation::GetAllProjectsList),
        "set_run_mode" => Some(mode_change(op).map(Operation::SetRunMode)),
        "set_gpu_mode" => Some(mode_change(op).map(Operation::SetGpuMode)),
        "set_network_mode" => Some(mode_change(op).map(Operation::SetNetworkMode)),
        "project_suspend" => Some(project(op, ProjectAction::Suspend)),
        "project_resume" => Some(project(op, ProjectAction::Resume)),
        "project_update" => Some(project(op, ProjectAction::Update)),
        "project_nomorework" => Some(project(op, ProjectAction::NoMoreWork)),
        "project_allowmorework" => Some(project(op, ProjectAction::AllowMoreWork)),
        "project_reset" => Some(project(op, ProjectAction::Reset)),
        "project_detach" => Some(project(op, ProjectAction::Detach)),
        "suspend_result" => Some(result(op, ResultAction::Suspend)),
        "resume_result" => Some(result(op, ResultAction::Resume)),
        "abort_result" => Some(result(op, ResultAction::Abort)),
        "project_attach" => Some(project_attach(op)),
        "project_attach_poll" => simple(Operation::ProjectAttachPoll),
        "acct_mgr_info" => simple(Operation::AccountManagerInfo),
        "acct_mgr_rpc" => Some(account_manager_rpc(op)),
        "acct_mgr_rpc_poll" => simple(Operation::AccountManagerRpcPoll),
        "read_cc_config" => simple(Operation::ReadCcConfig),
        "read_global_prefs_override" => simple(Operation::ReadGlobalPrefsOverride),
        "quit" => simple(Operation::Quit),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::operation::Access;
    use super::*;

    fn wrapped(body: &str) -> Vec<u8> {
        format!("<boinc_gui_rpc_request>\n{body}\n</boinc_gui_rpc_request>\n").into_bytes()
    }

    fn op(body: &str) -> Operation {
        match parse_request(&wrapped(body)) {
            Request::Operation { operation: Ok(operation), .. } => operation,
            other => panic!("{body}: {other:?}"),
        }
    }

    /// Every request boinccmd sent in gui_rpc_samples.txt, byte for byte.
    #[test]
    fn the_fixtures_requests() {
        assert_eq!(parse_request(&wrapped("<auth1/>")), Request::Auth1);
        assert_eq!(
            parse_request(&wrapped(
                "<auth2>\n<nonce_hash>3d6adc71cd90b8c5c5ef4e89f602b555</nonce_hash>\n</auth2>"
            )),
            Request::Auth2 { nonce_hash: "3d6adc71cd90b8c5c5ef4e89f602b555".into() }
        );
        assert_eq!(op("<get_cc_status/>"), Operation::GetCcStatus);
        assert_eq!(
            parse_request(b"<boinc_gui_rpc_request>\n<get_host_info/></boinc_gui_rpc_request>\n"),
            Request::Operation { access: Access::ReadOnly, operation: Ok(Operation::GetHostInfo) }
        );
        assert_eq!(
            op("<set_run_mode>\n<never/>\n  <duration>0.000000</duration>\n</set_run_mode>"),
            Operation::SetRunMode(ModeChange { mode: Some(RunMode::Never), duration: 0.0 })
        );
        assert_eq!(
            op("<get_results>\n<active_only>0</active_only>\n</get_results>"),
            Operation::GetResults { active_only: false }
        );
        assert_eq!(
            op("<suspend_result>\n   <project_url>http://127.0.0.1:8088/</project_url>\n   \
                <name>wu_C_r0</name>\n</suspend_result>"),
            Operation::Result {
                action: ResultAction::Suspend,
                project_url: "http://127.0.0.1:8088/".into(),
                name: "wu_C_r0".into()
            }
        );
        assert_eq!(
            op("<project_attach>\n  <project_url>http://127.0.0.1:8089/</project_url>\n  \
                <authenticator>fedcba9876543210fedcba9876543210</authenticator>\n  \
                <project_name></project_name>\n</project_attach>"),
            Operation::ProjectAttach {
                master_url: "http://127.0.0.1:8089/".into(),
                authenticator: "fedcba9876543210fedcba9876543210".into(),
                project_name: String::new()
            }
        );
        assert_eq!(
            op("<get_messages><seqno>1150</seqno></get_messages>"),
            Operation::GetMessages { after: 1150 }
        );
    }

    /// gui_rpc_edge_cases.txt: what the real client says to requests that are not one.
    #[test]
    fn the_fixtures_edge_cases() {
        assert_eq!(parse_request(b"<get_state/>\n"), Request::Missing);
        assert_eq!(
            parse_request(&wrapped("<bogus_op/>")),
            Request::Unrecognized("bogus_op/".into())
        );
        assert_eq!(
            parse_request(b"<boinc_gui_rpc_request></boinc_gui_rpc_request>"),
            Request::Unrecognized("/boinc_gui_rpc_request".into())
        );
        assert!(matches!(
            parse_request(b"<boinc_gui_rpc_request><get_state>"),
            Request::Malformed(_)
        ));
        // What a GUI client is told about its own request names no file of the client's.
        let Request::Malformed(detail) = parse_request(b"<boinc_gui_rpc_request><a></b>") else {
            panic!("malformed")
        };
        assert!(!detail.contains("client_state"), "{detail}");
    }

    /// The Manager's Transfers tab and `boinccmd --file_transfer URL NAME retry|abort`.
    #[test]
    fn file_transfer_operations() {
        let body = "<retry_file_transfer>\n   <project_url>http://p/</project_url>\n   \
                    <filename>in_1</filename>\n</retry_file_transfer>";
        let retry = op(body);
        assert_eq!(
            retry,
            Operation::FileTransfer {
                action: TransferAction::Retry,
                project_url: "http://p/".into(),
                filename: "in_1".into()
            }
        );
        assert_eq!(
            retry.user_action(),
            Some(crate::control::UserAction::RetryFileTransfer {
                project: "http://p/".into(),
                file: "in_1".into()
            })
        );
        let written = crate::protocol::gui_rpc::write_request(&retry);
        assert_eq!(op(written.trim()), retry);
        let Request::Operation { access, operation } = parse_request(&wrapped(
            "<abort_file_transfer><project_url>u</project_url></abort_file_transfer>",
        )) else {
            panic!("an operation");
        };
        assert_eq!((access, operation), (Access::Control, Err(ArgumentError::MissingFilename)));
    }

    #[test]
    fn bad_arguments_still_need_authentication() {
        for body in ["<project_suspend/>", "<set_run_mode><sometimes/></set_run_mode>"] {
            let Request::Operation { access, operation: Err(_) } = parse_request(&wrapped(body))
            else {
                panic!("{body} has bad arguments");
            };
            assert_eq!(access, Access::Control);
        }
        let Request::Operation { operation, .. } =
            parse_request(&wrapped("<abort_result><project_url>u</project_url></abort_result>"))
        else {
            panic!("an operation");
        };
        assert_eq!(operation, Err(ArgumentError::MissingResultName));
    }

    #[test]
    fn modes_and_account_managers() {
        assert_eq!(
            op("<set_gpu_mode><restore/><duration>-5</duration></set_gpu_mode>"),
            Operation::SetGpuMode(ModeChange { mode: None, duration: 0.0 })
        );
        assert_eq!(
            op("<set_network_mode><always/><duration>3600</duration></set_network_mode>"),
            Operation::SetNetworkMode(ModeChange { mode: Some(RunMode::Always), duration: 3600.0 })
        );
        assert_eq!(
            op("<acct_mgr_rpc><url>http://am/</url><name>me</name><password>pw</password>\
                </acct_mgr_rpc>"),
            Operation::AccountManagerRpc(AccountManagerTarget::Account {
                url: "http://am/".into(),
                name: "me".into(),
                password: "pw".into()
            })
        );
        assert_eq!(
            op("<acct_mgr_rpc><use_config_file/></acct_mgr_rpc>"),
            Operation::AccountManagerRpc(AccountManagerTarget::Configured)
        );
    }

    proptest::proptest! {
        /// Any bytes at all get an answer, never a panic.
        #[test]
        fn any_bytes_are_answered(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2048)) {
            let _ = parse_request(&bytes);
        }

        /// A real request with bytes changed, cut or inserted anywhere still gets an
        /// answer; the untouched request is read as what it is.
        #[test]
        fn mangled_requests_are_answered(
            cut in 0usize..200,
            at in 0usize..200,
            noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..16),
        ) {
            let real = wrapped(
                "<suspend_result>\n   <project_url>http://127.0.0.1:8088/</project_url>\n   \
                 <name>wu_C_r0</name>\n</suspend_result>",
            );
            let mut bytes = real.clone();
            let at = at.min(bytes.len());
            bytes.splice(at..at, noise.iter().copied());
            bytes.truncate(cut.max(at).min(bytes.len()));
            let _ = parse_request(&bytes);
            let parsed = parse_request(&real);
            let is_suspend = matches!(
                parsed,
                Request::Operation { operation: Ok(Operation::Result { action: ResultAction::Suspend, .. }), .. }
            );
            proptest::prop_assert!(is_suspend);
        }
    }

    #[test]
    fn sequence_numbers_never_fail() {
        for (text, after) in [("12", 12), ("-3", 0), ("x", 0), ("1e30", u64::MAX), ("", 0)] {
            let body = format!("<get_notices><seqno>{text}</seqno></get_notices>");
            assert_eq!(op(&body), Operation::GetNotices { after }, "{text}");
        }
    }
}
