//! Writing GUI RPC requests, for a client (docs/design.md "Protocol facts", GUI RPC): the
//! inverse of [`super::parse_request`], in the layout boinccmd sends.

use super::operation::{
    AccountManagerTarget, AccountRequest, ModeChange, Operation, ProjectAction, ResultAction,
    TransferAction,
};
use crate::model::RunMode;
use crate::protocol::xml_out::XmlOut;

fn project_element(action: ProjectAction) -> &'static str {
    match action {
        ProjectAction::Suspend => "project_suspend",
        ProjectAction::Resume => "project_resume",
        ProjectAction::Update => "project_update",
        ProjectAction::NoMoreWork => "project_nomorework",
        ProjectAction::AllowMoreWork => "project_allowmorework",
        ProjectAction::Reset => "project_reset",
        ProjectAction::Detach => "project_detach",
        ProjectAction::DetachWhenDone => "project_detach_when_done",
        ProjectAction::DontDetachWhenDone => "project_dont_detach_when_done",
    }
}

fn result_element(action: ResultAction) -> &'static str {
    match action {
        ResultAction::Suspend => "suspend_result",
        ResultAction::Resume => "resume_result",
        ResultAction::Abort => "abort_result",
    }
}

fn write_mode(out: &mut XmlOut, element: &str, change: &ModeChange) {
    out.start(element);
    let mode = match change.mode {
        Some(RunMode::Always) => "always",
        Some(RunMode::Auto) => "auto",
        Some(RunMode::Never) => "never",
        None => "restore",
    };
    out.flag(mode, true);
    out.real("duration", change.duration);
    out.end(element);
}

fn empty(out: &mut XmlOut, element: &str) {
    out.flag(element, true);
}

fn with_seqno(out: &mut XmlOut, element: &str, after: u64) {
    out.start(element);
    out.int("seqno", i64::try_from(after).unwrap_or(i64::MAX));
    out.end(element);
}

fn write_account(out: &mut XmlOut, element: &str, account: &AccountRequest) {
    out.start(element);
    out.text("url", &account.url);
    out.text("email_addr", &account.email_addr);
    out.text("passwd_hash", &account.passwd_hash);
    out.text("user_name", &account.user_name);
    out.text("team_name", &account.team_name);
    out.bit("ldap_auth", false);
    out.bit("server_assigned_cookie", false);
    out.text("server_cookie", "");
    out.end(element);
}

/// The operation's XML, to go inside `<boinc_gui_rpc_request>`.
pub fn write_request(operation: &Operation) -> String {
    let mut out = XmlOut::new();
    match operation {
        Operation::ExchangeVersions => empty(&mut out, "exchange_versions"),
        Operation::GetState => empty(&mut out, "get_state"),
        Operation::GetResults { active_only } => {
            out.start("get_results");
            out.bit("active_only", *active_only);
            out.end("get_results");
        }
        Operation::GetOldResults => empty(&mut out, "get_old_results"),
        Operation::GetProjectStatus => empty(&mut out, "get_project_status"),
        Operation::GetSimpleGuiInfo => empty(&mut out, "get_simple_gui_info"),
        Operation::GetScreensaverTasks => empty(&mut out, "get_screensaver_tasks"),
        Operation::GetCcStatus => empty(&mut out, "get_cc_status"),
        Operation::GetHostInfo => empty(&mut out, "get_host_info"),
        Operation::GetMessages { after } => with_seqno(&mut out, "get_messages", *after),
        Operation::GetMessageCount => empty(&mut out, "get_message_count"),
        Operation::GetNotices { after } => with_seqno(&mut out, "get_notices", *after),
        Operation::GetNoticesPublic { after } => with_seqno(&mut out, "get_notices_public", *after),
        Operation::GetDiskUsage => empty(&mut out, "get_disk_usage"),
        Operation::GetStatistics => empty(&mut out, "get_statistics"),
        Operation::GetFileTransfers => empty(&mut out, "get_file_transfers"),
        Operation::GetNewerVersion => empty(&mut out, "get_newer_version"),
        Operation::GetDailyTransferHistory => empty(&mut out, "get_daily_xfer_history"),
        Operation::GetAllProjectsList => empty(&mut out, "get_all_projects_list"),
        Operation::SetRunMode(change) => write_mode(&mut out, "set_run_mode", change),
        Operation::SetGpuMode(change) => write_mode(&mut out, "set_gpu_mode", change),
        Operation::SetNetworkMode(change) => write_mode(&mut out, "set_network_mode", change),
        Operation::Project { action, master_url } => {
            let element = project_element(*action);
            out.start(element);
            out.text("project_url", master_url);
            out.end(element);
        }
        Operation::Result { action, project_url, name } => {
            let element = result_element(*action);
            out.start(element);
            out.text("project_url", project_url);
            out.text("name", name);
            out.end(element);
        }
        Operation::FileTransfer { action, project_url, filename } => {
            let element = match action {
                TransferAction::Retry => "retry_file_transfer",
                TransferAction::Abort => "abort_file_transfer",
            };
            out.start(element);
            out.text("project_url", project_url);
            out.text("filename", filename);
            out.end(element);
        }
        Operation::ProjectAttach { master_url, authenticator, project_name } => {
            out.start("project_attach");
            out.text("project_url", master_url);
            out.text("authenticator", authenticator);
            out.text("project_name", project_name);
            out.end("project_attach");
        }
        Operation::ProjectAttachPoll => empty(&mut out, "project_attach_poll"),
        Operation::AccountManagerInfo => empty(&mut out, "acct_mgr_info"),
        Operation::AccountManagerRpc(target) => {
            out.start("acct_mgr_rpc");
            match target {
                AccountManagerTarget::Configured => out.flag("use_config_file", true),
                AccountManagerTarget::Account { url, name, password } => {
                    out.text("url", url);
                    out.text("name", name);
                    out.text("password", password);
                }
            }
            out.end("acct_mgr_rpc");
        }
        Operation::AccountManagerRpcPoll => empty(&mut out, "acct_mgr_rpc_poll"),
        Operation::ReadCcConfig => empty(&mut out, "read_cc_config"),
        Operation::ReadGlobalPrefsOverride => empty(&mut out, "read_global_prefs_override"),
        Operation::Quit => empty(&mut out, "quit"),
        Operation::LookupAccount(account) => write_account(&mut out, "lookup_account", account),
        Operation::LookupAccountPoll => empty(&mut out, "lookup_account_poll"),
        Operation::CreateAccount(account) => write_account(&mut out, "create_account", account),
        Operation::CreateAccountPoll => empty(&mut out, "create_account_poll"),
        Operation::GetProjectConfig { url } => {
            out.start("get_project_config");
            out.text("url", url);
            out.end("get_project_config");
        }
        Operation::GetProjectConfigPoll => empty(&mut out, "get_project_config_poll"),
        Operation::GetProjectInitStatus => empty(&mut out, "get_project_init_status"),
        Operation::GetCcConfig => empty(&mut out, "get_cc_config"),
        Operation::SetCcConfig { text } => out.raw("set_cc_config", text),
        Operation::GetAppConfig { url } => {
            out.start("get_app_config");
            out.text("url", url);
            out.end("get_app_config");
        }
        Operation::SetAppConfig { url, text } => {
            out.start("set_app_config");
            out.text("url", url);
            out.raw_xml(text);
            out.end("set_app_config");
        }
        Operation::GetGlobalPrefsFile => empty(&mut out, "get_global_prefs_file"),
        Operation::GetGlobalPrefsWorking => empty(&mut out, "get_global_prefs_working"),
        Operation::GetGlobalPrefsOverride => empty(&mut out, "get_global_prefs_override"),
        Operation::SetGlobalPrefsOverride { text } => out.raw("set_global_prefs_override", text),
        Operation::GetProxySettings => empty(&mut out, "get_proxy_settings"),
        Operation::SetProxySettings { text } => out.raw("set_proxy_settings", text),
        Operation::RunBenchmarks => empty(&mut out, "run_benchmarks"),
        Operation::NetworkAvailable => empty(&mut out, "network_available"),
        Operation::ReportDeviceStatus => empty(&mut out, "report_device_status"),
    }
    String::from_utf8_lossy(&out.finish()).trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::super::request::{Request, parse_request};
    use super::*;
    use proptest::prelude::*;

    fn operations() -> impl Strategy<Value = Operation> {
        let text = "[ -~]{0,24}";
        let mode = prop_oneof![
            Just(None),
            Just(Some(RunMode::Always)),
            Just(Some(RunMode::Auto)),
            Just(Some(RunMode::Never))
        ];
        let change =
            (mode, 0u32..100_000).prop_map(|(mode, d)| ModeChange { mode, duration: f64::from(d) });
        let project_action = prop_oneof![
            Just(ProjectAction::Suspend),
            Just(ProjectAction::Resume),
            Just(ProjectAction::Update),
            Just(ProjectAction::NoMoreWork),
            Just(ProjectAction::AllowMoreWork),
            Just(ProjectAction::Reset),
            Just(ProjectAction::Detach)
        ];
        let result_action = prop_oneof![
            Just(ResultAction::Suspend),
            Just(ResultAction::Resume),
            Just(ResultAction::Abort)
        ];
        let trimmed = text.prop_map(|s: String| s.trim().to_string());
        prop_oneof![
            Just(Operation::GetState),
            Just(Operation::Quit),
            any::<bool>().prop_map(|active_only| Operation::GetResults { active_only }),
            (0u64..1_000_000).prop_map(|after| Operation::GetMessages { after }),
            change.clone().prop_map(Operation::SetRunMode),
            change.prop_map(Operation::SetNetworkMode),
            (project_action, trimmed.clone().prop_filter("a URL", |u| !u.is_empty()))
                .prop_map(|(action, master_url)| Operation::Project { action, master_url }),
            (result_action, trimmed.clone(), trimmed.clone()).prop_map(
                |(action, project_url, name)| { Operation::Result { action, project_url, name } }
            ),
            (trimmed.clone(), trimmed.clone(), trimmed.clone())
                .prop_filter("an authenticator", |(_, a, _)| !a.is_empty())
                .prop_map(|(master_url, authenticator, project_name)| Operation::ProjectAttach {
                    master_url,
                    authenticator,
                    project_name
                }),
            (trimmed.clone(), trimmed.clone(), trimmed.clone()).prop_map(|(url, name, password)| {
                Operation::AccountManagerRpc(AccountManagerTarget::Account { url, name, password })
            }),
            (trimmed.clone(), trimmed.clone(), "[0-9a-f]{32}", trimmed.clone(), any::<bool>())
                .prop_map(|(url, email_addr, passwd_hash, user_name, create)| {
                    let account = AccountRequest {
                        url,
                        email_addr,
                        passwd_hash,
                        user_name,
                        team_name: String::new(),
                    };
                    if create {
                        Operation::CreateAccount(account)
                    } else {
                        Operation::LookupAccount(account)
                    }
                }),
            trimmed.clone().prop_map(|url| Operation::GetProjectConfig { url }),
            (trimmed.clone(), 0u32..64).prop_map(|(url, n)| Operation::SetAppConfig {
                url,
                text: format!("<app_config><app><name>a</name><max_concurrent>{n}</max_concurrent></app></app_config>"),
            }),
            trimmed.prop_map(|url| Operation::GetAppConfig { url }),
            Just(Operation::SetCcConfig {
                text: "<cc_config><options><ncpus>2</ncpus></options></cc_config>".into()
            }),
            Just(Operation::SetProxySettings { text: "<proxy_info>\n<http_server_name>p</http_server_name>\n</proxy_info>".into() }),
        ]
    }

    proptest! {
        /// Whatever a client writes, the server reads back as the same operation, with
        /// any text in it escaped on the way.
        #[test]
        fn written_requests_read_back(operation in operations()) {
            let body = write_request(&operation);
            let wrapped = format!("<boinc_gui_rpc_request>\n{body}\n</boinc_gui_rpc_request>\n");
            match parse_request(wrapped.as_bytes()) {
                Request::Operation { operation: Ok(read), .. } => prop_assert_eq!(read, operation),
                other => prop_assert!(false, "{body} read as {other:?}"),
            }
        }
    }

    #[test]
    fn as_boinccmd_writes_them() {
        let op = Operation::Project {
            action: ProjectAction::Update,
            master_url: "http://a/?x&y".into(),
        };
        assert_eq!(
            write_request(&op),
            "<project_update>\n    <project_url>http://a/?x&amp;y</project_url>\n</project_update>"
        );
        let never = Operation::SetRunMode(ModeChange { mode: Some(RunMode::Never), duration: 0.0 });
        assert_eq!(
            write_request(&never),
            "<set_run_mode>\n    <never/>\n    <duration>0.000000</duration>\n</set_run_mode>"
        );
    }
}
