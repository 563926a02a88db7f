//! Carrying GUI RPC operations out against a running client (docs/design.md "Protocol
//! facts", GUI RPC): queries render a snapshot of the client with the core's reply
//! functions; control operations become the core's user actions, applied at once by
//! the client (so a suspended task has stopped when the reply goes out). Unknown
//! projects and tasks get BOINC's own error messages.

use super::config_files::{self, ConfigFile};
use super::modes::{ModeKind, TemporaryModes};
use super::server::ServerShared;
use super::web_rpcs::{self, WebRpc};
use boinc_core::control::{MessagePriority, SuspendReason, UserAction, UserActionError};
use boinc_core::model::{RunMode, over_transfer_limit};
use boinc_core::protocol::data_dir::{CC_CONFIG, GLOBAL_PREFS, GLOBAL_PREFS_OVERRIDE};
use boinc_core::protocol::gui_rpc::{
    self as protocol, AccountRequest, ClientView, ModeChange, Modes, Operation, ProjectAction,
    ResultAction, TransferAction, render_query,
};
use boinc_core::protocol::working_prefs_text;
use boinc_runtime::client::ClientError;
use boinc_runtime::configuration_files::read_configuration_dir;
use boinc_runtime::runtime::messages::StateSnapshot;
use std::sync::Arc;
use std::time::Instant;

/// BOINC's `ERR_IN_PROGRESS`: an account manager RPC is under way.
const ERR_IN_PROGRESS: i32 = -204;
/// BOINC's `ERR_ALREADY_ATTACHED`.
const ERR_ALREADY_ATTACHED: i32 = -130;
/// An operation the host service would carry out; BOINC's `ERR_NOT_IMPLEMENTED`.
const ERR_NOT_IMPLEMENTED: i32 = -150;
/// An account manager RPC that failed (the message says why); BOINC's `ERR_HTTP_TRANSIENT`
/// would claim a network fault, which it need not be, so the generic failure.
const ERR_ACCOUNT_MANAGER_RPC: i32 = -1;

/// What the connection does after sending an operation's reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Afterwards {
    /// Nothing.
    Continue,
    /// Shut the client down (`quit`).
    ShutDown,
}

fn stopped(error: &ClientError) -> Vec<u8> {
    protocol::error(&error.to_string())
}

/// The modes as `get_cc_status` reports them.
fn modes(temporary: &TemporaryModes, snapshot: &StateSnapshot) -> Modes {
    let now = Instant::now();
    let state = &snapshot.state;
    let mut suspended = snapshot.host.suspend;
    // The daily transfer limit holds transfers back, not RPCs, so it is no condition of
    // the host's; BOINC names it as the network's reason all the same.
    if suspended.network.is_none()
        && over_transfer_limit(
            &state.daily_transfers,
            state.prefs.reported.daily_xfer_limit_mb,
            state.prefs.reported.daily_xfer_period_days,
            snapshot.time,
        )
    {
        suspended.network = Some(SuspendReason::NetworkQuotaExceeded);
    }
    Modes {
        task: temporary.status(ModeKind::Task, state.run_mode, now),
        gpu: temporary.status(ModeKind::Gpu, state.gpu_mode, now),
        network: temporary.status(ModeKind::Network, state.network_mode, now),
        suspended,
    }
}

/// Carries `operation` out; returns the reply body and what to do after sending it.
pub(crate) async fn execute(
    operation: Operation,
    shared: &Arc<ServerShared>,
) -> (Vec<u8>, Afterwards) {
    let body = match operation {
        Operation::SetRunMode(change) => set_mode(shared, ModeKind::Task, change).await,
        Operation::SetGpuMode(change) => set_mode(shared, ModeKind::Gpu, change).await,
        Operation::SetNetworkMode(change) => set_mode(shared, ModeKind::Network, change).await,
        Operation::Project { .. } | Operation::Result { .. } => {
            act_on_project(shared, &operation).await
        }
        Operation::FileTransfer { action, ref filename, .. } => {
            let Some(user_action) = operation.user_action() else {
                return (protocol::error("not a transfer operation"), Afterwards::Continue);
            };
            let message = match action {
                TransferAction::Retry => format!("retrying the transfer of {filename}"),
                TransferAction::Abort => format!("transfer of {filename} aborted by user"),
            };
            act(shared, user_action, "", &message).await
        }
        Operation::ProjectAttach { master_url, authenticator, project_name } => {
            attach(shared, master_url, authenticator, project_name).await
        }
        Operation::ProjectAttachPoll => {
            let (error_num, messages) = shared.attach_status();
            protocol::project_attach_poll(error_num, &messages)
        }
        Operation::AccountManagerInfo => {
            let info = shared.host.as_ref().map(|host| host.account_manager()).unwrap_or_default();
            protocol::account_manager_info(&info.url, &info.name, info.have_credentials)
        }
        Operation::AccountManagerRpc(target) => match &shared.host {
            Some(host) => {
                shared.set_account_manager_status(ERR_IN_PROGRESS, None);
                let rpc = host.account_manager_rpc(target);
                let waiting = shared.clone();
                // The RPC goes on after the reply: clients poll acct_mgr_rpc_poll.
                tokio::spawn(async move {
                    match rpc.await {
                        Ok(()) => waiting.set_account_manager_status(0, None),
                        Err(message) => waiting
                            .set_account_manager_status(ERR_ACCOUNT_MANAGER_RPC, Some(message)),
                    }
                });
                protocol::success()
            }
            None => protocol::error(
                "account managers need the host service (boinc-rs run); this client cannot \
                 reach one",
            ),
        },
        Operation::AccountManagerRpcPoll => {
            let (error_num, message) = shared.account_manager_status();
            protocol::account_manager_rpc_poll(error_num, message.as_deref())
        }
        Operation::ReadCcConfig => {
            reload_configuration(shared, ConfigurationPart::Options, "Re-read config file").await
        }
        Operation::ReadGlobalPrefsOverride => {
            reload_configuration(
                shared,
                ConfigurationPart::Preferences,
                "Reading preferences override file",
            )
            .await
        }
        Operation::LookupAccount(account) => {
            web_rpcs::start(shared, WebRpc::LookupAccount, account)
        }
        Operation::LookupAccountPoll => web_rpcs::poll(shared, WebRpc::LookupAccount),
        Operation::CreateAccount(account) => {
            web_rpcs::start(shared, WebRpc::CreateAccount, account)
        }
        Operation::CreateAccountPoll => web_rpcs::poll(shared, WebRpc::CreateAccount),
        Operation::GetProjectConfig { url } => {
            let account = AccountRequest { url, ..AccountRequest::default() };
            web_rpcs::start(shared, WebRpc::ProjectConfig, account)
        }
        Operation::GetProjectConfigPoll => web_rpcs::poll(shared, WebRpc::ProjectConfig),
        Operation::GetProjectInitStatus => {
            config_files::project_init_status(&shared.data_dir).await
        }
        Operation::GetCcConfig => {
            config_files::get(&shared.data_dir, ConfigFile::Options, "").await
        }
        Operation::SetCcConfig { text } => {
            config_files::set(&shared.data_dir, ConfigFile::Options, "", text).await
        }
        Operation::GetAppConfig { url } => {
            config_files::get(&shared.data_dir, ConfigFile::Apps, &url).await
        }
        Operation::SetAppConfig { url, text } => {
            config_files::set(&shared.data_dir, ConfigFile::Apps, &url, text).await
        }
        Operation::GetGlobalPrefsFile => {
            config_files::get(&shared.data_dir, ConfigFile::Preferences, "").await
        }
        Operation::GetGlobalPrefsWorking => match shared.client.snapshot().await {
            Ok(snapshot) => working_prefs_text(&snapshot.state.prefs).into_bytes(),
            Err(error) => stopped(&error),
        },
        Operation::GetGlobalPrefsOverride => {
            config_files::get(&shared.data_dir, ConfigFile::PreferencesOverride, "").await
        }
        Operation::SetGlobalPrefsOverride { text } => {
            config_files::set(&shared.data_dir, ConfigFile::PreferencesOverride, "", text).await
        }
        Operation::GetProxySettings => {
            protocol::proxy_info(&config_files::proxy_settings(&shared.data_dir).await)
        }
        Operation::SetProxySettings { text } => {
            match config_files::set_proxy_settings(&shared.data_dir, text).await {
                // Without the service (a served simulation) the file is all there is.
                Ok(proxy) => match shared.host.as_ref().map(|host| host.use_proxy(&proxy)) {
                    Some(Err(why)) => protocol::error(&why),
                    Some(Ok(())) | None => protocol::success(),
                },
                Err(reply) => reply,
            }
        }
        Operation::RunBenchmarks => run_benchmarks(shared),
        Operation::NetworkAvailable => network_available(shared).await,
        // A mobile Manager's battery report: boinc-rs reads the battery itself.
        Operation::ReportDeviceStatus => protocol::success(),
        Operation::GetAllProjectsList => all_projects_list(&shared.data_dir).await,
        Operation::Quit => {
            shared.log.push(
                shared.client_time(),
                "",
                MessagePriority::Info,
                "Exit requested by user",
            );
            return (protocol::success(), Afterwards::ShutDown);
        }
        query => match shared.client.snapshot().await {
            Ok(snapshot) => {
                shared.saw(&snapshot);
                let modes = modes(&shared.modes(), &snapshot);
                let view = view(shared, &snapshot, modes);
                let log = shared.log.lock();
                render_query(&query, &view, &log.messages, &log.notices)
                    .unwrap_or_else(|| protocol::unrecognized(&format!("{query:?}")))
            }
            Err(error) => stopped(&error),
        },
    };
    (body, Afterwards::Continue)
}

/// Runs the CPU benchmarks through the host; the result goes to the event log when
/// they are done (they take seconds), as BOINC reports them.
fn run_benchmarks(shared: &Arc<ServerShared>) -> Vec<u8> {
    let Some(host) = &shared.host else {
        return protocol::error("the benchmarks need the host service (boinc-rs run)");
    };
    shared.log.push(shared.client_time(), "", MessagePriority::Info, "Running CPU benchmarks");
    let run = host.run_benchmarks();
    let waiting = shared.clone();
    tokio::spawn(async move {
        let (priority, text) = match run.await {
            Ok(result) => (MessagePriority::Info, result),
            Err(why) => (MessagePriority::UserAlert, format!("CPU benchmarks failed: {why}")),
        };
        waiting.log.push(waiting.client_time(), "", priority, &text);
    });
    protocol::success()
}

/// The user says the network is back: every project waiting out a failed RPC is
/// contacted now, as BOINC retries what waited on the network.
async fn network_available(shared: &ServerShared) -> Vec<u8> {
    let snapshot = match shared.client.snapshot().await {
        Ok(snapshot) => snapshot,
        Err(error) => return stopped(&error),
    };
    let waiting: Vec<String> = snapshot
        .state
        .projects
        .iter()
        .filter(|p| !p.detached && p.nrpc_failures > 0)
        .map(|p| p.master_url.clone())
        .collect();
    for url in waiting {
        if let Err(error) = shared.client.act(UserAction::UpdateProject(url)).await {
            return stopped(&error);
        }
    }
    shared.log.push(shared.client_time(), "", MessagePriority::Info, "Network available: retrying");
    protocol::success()
}

/// BOINC's list of projects, shipped with boinc-rs; an `all_projects_list.xml` in the
/// data directory (BOINC downloads one) is sent instead when there is one.
async fn all_projects_list(data_dir: &std::path::Path) -> Vec<u8> {
    const SHIPPED: &str = include_str!("../all_projects_list.xml");
    let path = data_dir.join("all_projects_list.xml");
    let local = tokio::task::spawn_blocking(move || std::fs::read(path)).await;
    let text = match local {
        Ok(Ok(bytes)) if bytes.len() <= 4 << 20 => String::from_utf8_lossy(&bytes).into_owned(),
        _ => SHIPPED.to_owned(),
    };
    let text = text.trim();
    match text.find("<projects>") {
        Some(start) => format!("{}\n", &text[start..]).into_bytes(),
        // The shipped list starts with its root.
        None => SHIPPED.as_bytes().to_vec(),
    }
}

/// The view a reply is rendered from.
fn view<'a>(shared: &'a ServerShared, snapshot: &'a StateSnapshot, modes: Modes) -> ClientView<'a> {
    ClientView {
        now: snapshot.time,
        state: &snapshot.state,
        in_flight: &snapshot.in_flight,
        platform: &shared.platform,
        client_start_time: shared.client_start_time(),
        modes,
        data_dir: &shared.data_dir,
    }
}

/// Applies `action`, logging `message` (about `project`) when it took.
async fn act(shared: &ServerShared, action: UserAction, project: &str, message: &str) -> Vec<u8> {
    match shared.client.act(action).await {
        Ok(()) => {
            shared.log.push(shared.client_time(), project, MessagePriority::Info, message);
            protocol::success()
        }
        Err(ClientError::Action(UserActionError::UnknownProject(_))) => {
            protocol::error("No such project")
        }
        Err(ClientError::Action(UserActionError::UnknownTask(_))) => {
            protocol::error("no such result")
        }
        // BOINC's words for a file it holds no transfer of.
        Err(ClientError::Action(UserActionError::NoSuchTransfer { .. })) => {
            protocol::error("No such transfer waiting")
        }
        Err(error) => stopped(&error),
    }
}

async fn set_mode(shared: &Arc<ServerShared>, kind: ModeKind, change: ModeChange) -> Vec<u8> {
    let snapshot = match shared.client.snapshot().await {
        Ok(snapshot) => snapshot,
        Err(error) => return stopped(&error),
    };
    shared.saw(&snapshot);
    let state = &snapshot.state;
    let current = match kind {
        ModeKind::Task => state.run_mode,
        ModeKind::Gpu => state.gpu_mode,
        ModeKind::Network => state.network_mode,
    };
    let plan = shared.modes().request(kind, change, current, Instant::now());
    if let Some((generation, after)) = plan.restore_after {
        let shared = shared.clone();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            let permanent = shared.modes().expire(kind, generation);
            if let Some(mode) = permanent {
                let _ = shared.client.act(mode_action(kind, mode)).await;
            }
        });
    }
    match plan.set {
        Some(mode) => {
            let what = match kind {
                ModeKind::Task => "computing",
                ModeKind::Gpu => "GPU computing",
                ModeKind::Network => "network activity",
            };
            let message = format!("{what}: {} (by user request)", mode_words(mode));
            act(shared, mode_action(kind, mode), "", &message).await
        }
        None => protocol::success(),
    }
}

fn mode_action(kind: ModeKind, mode: RunMode) -> UserAction {
    match kind {
        ModeKind::Task => UserAction::SetRunMode(mode),
        ModeKind::Gpu => UserAction::SetGpuMode(mode),
        ModeKind::Network => UserAction::SetNetworkMode(mode),
    }
}

fn mode_words(mode: RunMode) -> &'static str {
    match mode {
        RunMode::Always => "always",
        RunMode::Auto => "according to preferences",
        RunMode::Never => "suspended",
    }
}

/// A project or result operation: the project must be attached under that URL, and a
/// result must be one of its tasks, as BOINC checks before it acts.
async fn act_on_project(shared: &ServerShared, operation: &Operation) -> Vec<u8> {
    let snapshot = match shared.client.snapshot().await {
        Ok(snapshot) => snapshot,
        Err(error) => return stopped(&error),
    };
    shared.saw(&snapshot);
    let state = &snapshot.state;
    let (url, result) = match operation {
        Operation::Project { master_url, .. } => (master_url, None),
        Operation::Result { project_url, name, .. } => (project_url, Some(name)),
        _ => return protocol::error("not a project operation"),
    };
    let Some(project) = state.project_by_url(url).filter(|&p| !state.project(p).detached) else {
        return protocol::error("No such project");
    };
    if let Some(name) = result
        && !state.jobs.iter().any(|job| job.project == project && job.name == *name)
    {
        return protocol::error("no such result");
    }
    let Some(action) = operation.user_action() else {
        return protocol::error("not a project operation");
    };
    let project_name = state.project(project).name.clone();
    let message = match operation {
        Operation::Project { action, .. } => match action {
            ProjectAction::Suspend => "suspended by user".to_string(),
            ProjectAction::Resume => "resumed by user".to_string(),
            ProjectAction::Update => "update requested by user".to_string(),
            ProjectAction::NoMoreWork => "work fetch suspended by user".to_string(),
            ProjectAction::AllowMoreWork => "work fetch resumed by user".to_string(),
            ProjectAction::Reset => "Resetting project".to_string(),
            ProjectAction::Detach => "Detaching from project".to_string(),
            ProjectAction::DetachWhenDone => "Will detach when tasks are done".to_string(),
            ProjectAction::DontDetachWhenDone => "Won't detach when tasks are done".to_string(),
        },
        Operation::Result { action, name, .. } => match action {
            ResultAction::Suspend => format!("task {name} suspended by user"),
            ResultAction::Resume => format!("task {name} resumed by user"),
            ResultAction::Abort => format!("task {name} aborted by user"),
        },
        _ => String::new(),
    };
    let detach = matches!(operation, Operation::Project { action: ProjectAction::Detach, .. });
    let reply = act(shared, action, &project_name, &message).await;
    // The files side of a detach (the account file, the project's directory) is the
    // host's: left in place, the account file would attach the project again.
    if detach
        && reply == protocol::success()
        && let Some(host) = &shared.host
        && let Err(message) = host.project_detached(url.clone()).await
    {
        return protocol::error(&message);
    }
    reply
}

async fn attach(
    shared: &ServerShared,
    master_url: String,
    authenticator: String,
    project_name: String,
) -> Vec<u8> {
    let snapshot = match shared.client.snapshot().await {
        Ok(snapshot) => snapshot,
        Err(error) => return stopped(&error),
    };
    shared.saw(&snapshot);
    match snapshot.state.project_by_url(&master_url) {
        Some(project) if !snapshot.state.project(project).detached => {
            shared.set_attach_status(
                ERR_ALREADY_ATTACHED,
                vec!["Already attached to project".into()],
            );
            protocol::error("Already attached to project")
        }
        // A project detached before, attached again: a host writes its account file
        // anew (the detach removed it), with the authenticator given now.
        Some(project) if shared.host.is_none() => {
            let name = snapshot.state.project(project).name.clone();
            let reply =
                act(shared, UserAction::Attach(master_url), &name, "Attaching to project").await;
            shared.set_attach_status(0, Vec::new());
            reply
        }
        Some(_) | None => match &shared.host {
            Some(host) => {
                match host.attach_project(master_url, authenticator, project_name).await {
                    Ok(()) => {
                        shared.set_attach_status(0, Vec::new());
                        protocol::success()
                    }
                    Err(message) => {
                        shared.set_attach_status(ERR_NOT_IMPLEMENTED, vec![message.clone()]);
                        protocol::error(&message)
                    }
                }
            }
            None => {
                let message = "attaching a project the client has never known needs the host \
                               service (boinc-rs run, or boinc-rs attach)";
                shared.set_attach_status(ERR_NOT_IMPLEMENTED, vec![message.to_string()]);
                protocol::error(message)
            }
        },
    }
}

/// Which part of the configuration a reload applies.
enum ConfigurationPart {
    /// cc_config.xml and the projects' app_config.xml (`read_cc_config`).
    Options,
    /// The preferences (`read_global_prefs_override`).
    Preferences,
}

/// Re-reads the configuration files (`live::configuration_files`) and applies one part;
/// each problem in them goes to the event log as an alert, and a file that cannot be
/// read leaves its settings as they were.
async fn reload_configuration(
    shared: &ServerShared,
    part: ConfigurationPart,
    message: &str,
) -> Vec<u8> {
    let snapshot = match shared.client.snapshot().await {
        Ok(snapshot) => snapshot,
        Err(error) => return stopped(&error),
    };
    let dir = shared.data_dir.clone();
    let read =
        tokio::task::spawn_blocking(move || read_configuration_dir(&dir, &snapshot.state)).await;
    let Ok((configuration, warnings)) = read else {
        return protocol::error("reading the configuration failed; see the client's log");
    };
    for warning in &warnings {
        shared.log.push(shared.client_time(), "", MessagePriority::UserAlert, warning);
    }
    // A file of this part that could not be read changes nothing: say why.
    let files: &[&str] = match part {
        ConfigurationPart::Options => &[CC_CONFIG],
        ConfigurationPart::Preferences => &[GLOBAL_PREFS, GLOBAL_PREFS_OVERRIDE],
    };
    if let Some(unread) = configuration.unread.iter().find(|name| files.contains(&name.as_str())) {
        let reason = warnings.iter().find(|w| w.contains(unread.as_str()));
        return protocol::error(reason.map_or(unread.as_str(), String::as_str));
    }
    let actions = match part {
        ConfigurationPart::Options => vec![
            UserAction::SetConfig(Box::new(configuration.cc_config)),
            UserAction::SetAppConfigs(configuration.app_configs),
        ],
        ConfigurationPart::Preferences => {
            vec![UserAction::SetPreferences(Box::new(configuration.prefs))]
        }
    };
    let mut reply = protocol::success();
    for action in actions {
        reply = act(shared, action, "", message).await;
    }
    reply
}

#[cfg(test)]
mod tests {
    use super::*;
    use boinc_core::control::HostView;
    use boinc_core::model::{ClientState, DailyTransfer, day_of};

    #[test]
    fn a_used_up_daily_transfer_limit_is_the_networks_reason() {
        let now = 100.0 * 86_400.0 + 5.0;
        let mut state = ClientState::default();
        state.prefs.reported.daily_xfer_limit_mb = 1.0;
        state.prefs.reported.daily_xfer_period_days = 1;
        state.daily_transfers = vec![DailyTransfer { day: day_of(now), up: 0.0, down: 1e6 }];
        let mut snapshot = StateSnapshot {
            time: now,
            state,
            running: Vec::new(),
            in_flight: Vec::new(),
            decisions: 0,
            rpcs: 0,
            host: HostView::UP,
        };
        let temporary = TemporaryModes::default();
        assert_eq!(modes(&temporary, &snapshot).suspended.network, None, "under 1 MB");
        snapshot.state.daily_transfers[0].down = 1_048_576.0;
        let reasons = modes(&temporary, &snapshot).suspended;
        assert_eq!(reasons.network, Some(SuspendReason::NetworkQuotaExceeded));
        assert_eq!(reasons.cpu, None, "computing goes on");
        // A reason of the host's own comes first.
        snapshot.host.suspend.network = Some(SuspendReason::TimeOfDay);
        assert_eq!(modes(&temporary, &snapshot).suspended.network, Some(SuspendReason::TimeOfDay));
    }
}
