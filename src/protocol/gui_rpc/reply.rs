//! GUI RPC replies (docs/design.md "Protocol facts", GUI RPC): the envelope
//! `<boinc_gui_rpc_reply>\n BODY </boinc_gui_rpc_reply>\n` and the terminating byte
//! 0x03, and every reply body, rendered from a [`ClientView`] and the event log. Each
//! function returns a body; [`frame_reply`] wraps it for the wire.

use super::cc_status::write_cc_status;
use super::client_state::write_client_state;
use super::disk_usage::write_disk_usage;
use super::host_info::write_host_info;
use super::messages::{write_message_count, write_messages, write_notices};
use super::operation::Operation;
use super::project_status::{write_each_project, write_projects};
use super::results::{write_each_result, write_old_results, write_result, write_results};
use super::statistics::write_statistics;
use super::transfers::write_file_transfers;
use super::view::{ClientView, PROTOCOL_VERSION};
use crate::control::reason_code;
use crate::control::{MessageLog, NoticeLog};
use crate::model::ProxyInfo;
use crate::protocol::ProjectInit;
use crate::protocol::proxy_info::write_proxy_info;
use crate::protocol::web_rpc::{AccountOut, ProjectConfig, write_project_config};
use crate::protocol::xml_out::XmlOut;

/// The byte that ends every request and reply.
pub const TERMINATOR: u8 = 0x03;

/// A reply on the wire: the body in the reply envelope, then the terminator.
pub fn frame_reply(body: &[u8]) -> Vec<u8> {
    const OPEN: &[u8] = b"<boinc_gui_rpc_reply>\n";
    const CLOSE: &[u8] = b"</boinc_gui_rpc_reply>\n";
    let mut framed = Vec::with_capacity(OPEN.len() + body.len() + CLOSE.len() + 1);
    framed.extend_from_slice(OPEN);
    framed.extend_from_slice(body);
    framed.extend_from_slice(CLOSE);
    framed.push(TERMINATOR);
    framed
}

fn body(write: impl FnOnce(&mut XmlOut)) -> Vec<u8> {
    let mut out = XmlOut::new();
    write(&mut out);
    out.finish()
}

fn flag_body(name: &str) -> Vec<u8> {
    body(|out| out.flag(name, true))
}

/// `<success/>`.
pub fn success() -> Vec<u8> {
    flag_body("success")
}

/// `<error>message</error>`.
pub fn error(message: &str) -> Vec<u8> {
    body(|out| out.text("error", message))
}

/// `<account_out>` (`lookup_account_poll`, `create_account_poll`) as BOINC's client
/// answers: the account's key, or the error number (BOINC's `ERR_IN_PROGRESS`, -204,
/// while the project has not answered) with the project's message.
pub fn account_out(answer: Result<&AccountOut, i32>) -> Vec<u8> {
    body(|out| {
        out.start("account_out");
        match answer {
            Ok(AccountOut::Authenticator(key)) => out.text("authenticator", key),
            Ok(AccountOut::Error { number, message }) => {
                out.int("error_num", *number);
                out.text("error_msg", message);
            }
            Err(number) => out.int("error_num", number),
        }
        out.end("account_out");
    })
}

/// `<project_config>` (`get_project_config_poll`): the project's configuration, or
/// the error number while there is none.
pub fn project_config(answer: Result<&ProjectConfig, i32>) -> Vec<u8> {
    match answer {
        Ok(config) if config.error.is_none() => write_project_config(config).into_bytes(),
        Ok(config) => project_config(Err(config.error.as_ref().map_or(-1, |e| e.0))),
        Err(number) => body(|out| {
            out.start("project_config");
            out.int("error_num", number);
            out.end("project_config");
        }),
    }
}

/// `<get_project_init_status>`: the project project_init.xml names (empty fields when
/// there is none).
pub fn project_init_status(init: Option<&ProjectInit>) -> Vec<u8> {
    body(|out| {
        out.start("get_project_init_status");
        out.text("url", init.map_or("", |i| i.url.as_str()));
        out.text("name", init.map_or("", |i| i.name.as_str()));
        out.flag("has_account_key", init.is_some_and(|i| !i.account_key.is_empty()));
        out.flag("embedded", init.is_some_and(|i| i.embedded));
        out.end("get_project_init_status");
    })
}

/// `<proxy_info>` (`get_proxy_settings`) in BOINC's fields: the proxy cc_config.xml
/// names (the environment's proxies, which the client also follows, are not shown, as
/// BOINC does not show them).
pub fn proxy_info(info: &ProxyInfo) -> Vec<u8> {
    body(|out| write_proxy_info(out, info))
}

/// `<unauthorized/>`: the client must authenticate first (or its password was wrong).
pub fn unauthorized() -> Vec<u8> {
    flag_body("unauthorized")
}

/// `<authorized/>`.
pub fn authorized() -> Vec<u8> {
    flag_body("authorized")
}

/// `<nonce>N</nonce>`, the answer to `<auth1/>`.
pub fn nonce(nonce: &str) -> Vec<u8> {
    body(|out| out.text("nonce", nonce))
}

/// What BOINC answers to a request without `<boinc_gui_rpc_request>`.
pub fn missing_request() -> Vec<u8> {
    error("missing request")
}

/// What BOINC answers to an operation it does not know.
pub fn unrecognized(operation: &str) -> Vec<u8> {
    error(&format!("unrecognized op: {operation}"))
}

/// `<server_version>`, the answer to `exchange_versions`.
pub fn server_version() -> Vec<u8> {
    body(|out| {
        out.start("server_version");
        out.int("major", PROTOCOL_VERSION.major);
        out.int("minor", PROTOCOL_VERSION.minor);
        out.int("release", PROTOCOL_VERSION.release);
        out.end("server_version");
    })
}

/// `<acct_mgr_info>`: the account manager in use (empty URL and name: none).
pub fn account_manager_info(url: &str, name: &str, have_credentials: bool) -> Vec<u8> {
    body(|out| {
        out.start("acct_mgr_info");
        out.text("acct_mgr_url", url);
        out.text("acct_mgr_name", name);
        out.flag("have_credentials", have_credentials);
        out.end("acct_mgr_info");
    })
}

/// `<acct_mgr_rpc_reply>`: how the last account manager RPC went (0: it succeeded or
/// none was asked for; BOINC's `ERR_IN_PROGRESS`, -204, while it runs).
pub fn account_manager_rpc_poll(error_num: i32, message: Option<&str>) -> Vec<u8> {
    body(|out| {
        out.start("acct_mgr_rpc_reply");
        if let Some(message) = message {
            out.text("message", message);
        }
        out.int("error_num", error_num);
        out.end("acct_mgr_rpc_reply");
    })
}

/// `<project_attach_reply>`: how the last attach went.
pub fn project_attach_poll(error_num: i32, messages: &[String]) -> Vec<u8> {
    body(|out| {
        out.start("project_attach_reply");
        for message in messages {
            out.text("message", message);
        }
        out.int("error_num", error_num);
        out.end("project_attach_reply");
    })
}

/// Where BOINC 7.20.5 says a client is downloaded (`get_newer_version`).
const BOINC_DOWNLOAD_URL: &str = "https://boinc.berkeley.edu/download.php";

/// The reply to an operation that only reads the client (and to `get_notices`, which
/// reads it too, though only for authenticated clients); `None` for operations that
/// change something or need more than the state and the log.
pub fn render_query(
    operation: &Operation,
    view: &ClientView,
    log: &MessageLog,
    notices: &NoticeLog,
) -> Option<Vec<u8>> {
    let reply = match operation {
        Operation::ExchangeVersions => server_version(),
        Operation::GetState => body(|out| write_client_state(out, view)),
        Operation::GetResults { active_only } => body(|out| write_results(out, view, *active_only)),
        Operation::GetOldResults => body(|out| write_old_results(out, view)),
        Operation::GetProjectStatus => body(|out| write_projects(out, view)),
        Operation::GetSimpleGuiInfo => body(|out| {
            out.start("simple_gui_info");
            write_each_project(out, view);
            // BOINC lists the active tasks here, not every task.
            write_each_result(out, view, true);
            out.end("simple_gui_info");
        }),
        Operation::GetScreensaverTasks => body(|out| {
            out.start("handle_get_screensaver_tasks");
            out.int("suspend_reason", reason_code(view.modes.reasons().cpu));
            for job in view.state.job_ids().filter(|&j| view.state.job(j).is_running()) {
                write_result(out, view, job);
            }
            out.end("handle_get_screensaver_tasks");
        }),
        Operation::GetCcStatus => body(|out| write_cc_status(out, view, log.capacity())),
        Operation::GetHostInfo => body(|out| write_host_info(out, &view.state.host)),
        Operation::GetMessages { after } => body(|out| write_messages(out, log, *after)),
        Operation::GetMessageCount => body(|out| write_message_count(out, log)),
        Operation::GetNotices { after } => body(|out| write_notices(out, notices, *after, false)),
        Operation::GetNoticesPublic { after } => {
            body(|out| write_notices(out, notices, *after, true))
        }
        Operation::GetDiskUsage => body(|out| write_disk_usage(out, view)),
        Operation::GetStatistics => body(|out| write_statistics(out, view)),
        Operation::GetFileTransfers => body(|out| write_file_transfers(out, view)),
        Operation::GetNewerVersion => body(|out| {
            out.text("newer_version", "");
            // As BOINC: GUI RPC client libraries take an empty URL for a broken reply.
            out.text("download_url", BOINC_DOWNLOAD_URL);
        }),
        Operation::GetDailyTransferHistory => body(|out| {
            crate::protocol::daily_transfers::write_daily_transfers(
                out,
                &view.state.daily_transfers,
            )
        }),
        _ => return None,
    };
    Some(reply)
}
