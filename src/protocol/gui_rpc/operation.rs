//! The operations of BOINC's GUI RPC protocol (docs/design.md "Protocol facts", GUI RPC;
//! the fixtures gui_rpc_samples.txt and gui_rpc_edge_cases.txt) and who may ask for
//! them: read-only operations are open to local clients without authentication, every
//! other one needs it, as in BOINC 7.20.5.

use crate::control::UserAction;
use crate::model::RunMode;

/// Who may ask for an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Local clients may ask without authenticating (what is running, the messages):
    /// things people sharing the computer may see.
    ReadOnly,
    /// Only authenticated clients may ask: anything that changes the client, and
    /// anything private (notices, account manager, configuration).
    Control,
}

/// A run-mode request (`<set_run_mode>`, `<set_gpu_mode>`, `<set_network_mode>`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModeChange {
    /// The mode asked for; `None` for `<restore/>`: back to the permanent mode.
    pub mode: Option<RunMode>,
    /// For how long, seconds; 0 makes it the permanent mode.
    pub duration: f64,
}

/// What a project operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectAction {
    /// `project_suspend`.
    Suspend,
    /// `project_resume`.
    Resume,
    /// `project_update`: contact the scheduler now.
    Update,
    /// `project_nomorework`.
    NoMoreWork,
    /// `project_allowmorework`.
    AllowMoreWork,
    /// `project_reset`: drop the project's jobs and start over.
    Reset,
    /// `project_detach`.
    Detach,
    /// `project_detach_when_done`: detach once the project's tasks are reported.
    DetachWhenDone,
    /// `project_dont_detach_when_done`.
    DontDetachWhenDone,
}

/// What a result (task) operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultAction {
    /// `suspend_result`.
    Suspend,
    /// `resume_result`.
    Resume,
    /// `abort_result`.
    Abort,
}

/// What a file transfer operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransferAction {
    /// `retry_file_transfer`: try again now.
    Retry,
    /// `abort_file_transfer`: give the file up.
    Abort,
}

/// The account manager a client asks to use (`<acct_mgr_rpc>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountManagerTarget {
    /// Use the account manager the client already knows (`<use_config_file/>`).
    Configured,
    /// Join (or leave, with an empty URL) an account manager.
    Account {
        /// The manager's URL; empty: stop using an account manager.
        url: String,
        /// The account's name.
        name: String,
        /// The password as given: plain, or `hash:` followed by its hash.
        password: String,
    },
}

/// An account at a project, as `lookup_account` and `create_account` name it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AccountRequest {
    /// The project's master URL.
    pub url: String,
    /// The account's e-mail address.
    pub email_addr: String,
    /// md5(password + lower-case e-mail), in hex.
    pub passwd_hash: String,
    /// The user name (`create_account`).
    pub user_name: String,
    /// The team to join (`create_account`).
    pub team_name: String,
}

/// One GUI RPC operation with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum Operation {
    /// `exchange_versions`.
    ExchangeVersions,
    /// `get_state`: the whole client state.
    GetState,
    /// `get_results`: the tasks, all or only those with an active task.
    GetResults {
        /// Only tasks that have started.
        active_only: bool,
    },
    /// `get_old_results`: results reported and forgotten.
    GetOldResults,
    /// `get_project_status`.
    GetProjectStatus,
    /// `get_simple_gui_info`: projects and tasks.
    GetSimpleGuiInfo,
    /// `get_screensaver_tasks`: the running tasks.
    GetScreensaverTasks,
    /// `get_cc_status`: modes and suspend reasons.
    GetCcStatus,
    /// `get_host_info`.
    GetHostInfo,
    /// `get_messages`: the event log after a sequence number.
    GetMessages {
        /// Messages after this one (0: all).
        after: u64,
    },
    /// `get_message_count`: the newest message's sequence number.
    GetMessageCount,
    /// `get_notices` (private notices too).
    GetNotices {
        /// Notices after this one (0: all).
        after: u64,
    },
    /// `get_notices_public`.
    GetNoticesPublic {
        /// Notices after this one (0: all).
        after: u64,
    },
    /// `get_disk_usage`.
    GetDiskUsage,
    /// `get_statistics`: per-project credit history.
    GetStatistics,
    /// `get_file_transfers`.
    GetFileTransfers,
    /// `get_newer_version`.
    GetNewerVersion,
    /// `get_daily_xfer_history`.
    GetDailyTransferHistory,
    /// `get_all_projects_list`.
    GetAllProjectsList,
    /// `set_run_mode`.
    SetRunMode(ModeChange),
    /// `set_gpu_mode`.
    SetGpuMode(ModeChange),
    /// `set_network_mode`.
    SetNetworkMode(ModeChange),
    /// A project operation.
    Project {
        /// Which.
        action: ProjectAction,
        /// The project's master URL.
        master_url: String,
    },
    /// A result operation.
    Result {
        /// Which.
        action: ResultAction,
        /// The project's master URL.
        project_url: String,
        /// The result's name.
        name: String,
    },
    /// `project_attach`.
    ProjectAttach {
        /// The project's master URL.
        master_url: String,
        /// The account's authenticator.
        authenticator: String,
        /// The project's name, if the client knows it.
        project_name: String,
    },
    /// `project_attach_poll`: how the last attach went.
    ProjectAttachPoll,
    /// `acct_mgr_info`.
    AccountManagerInfo,
    /// `acct_mgr_rpc`: join, leave or contact an account manager.
    AccountManagerRpc(AccountManagerTarget),
    /// `acct_mgr_rpc_poll`: how the last account manager RPC went.
    AccountManagerRpcPoll,
    /// `lookup_account`: ask the project for an account's key by e-mail and password.
    LookupAccount(AccountRequest),
    /// `lookup_account_poll`: how the lookup went (the key when it is done).
    LookupAccountPoll,
    /// `create_account`: make an account at the project.
    CreateAccount(AccountRequest),
    /// `create_account_poll`: how the creation went (the key when it is done).
    CreateAccountPoll,
    /// `get_project_config`: fetch the project's `get_project_config.php`.
    GetProjectConfig {
        /// The project's master URL.
        url: String,
    },
    /// `get_project_config_poll`: the project's configuration when it came.
    GetProjectConfigPoll,
    /// `get_project_init_status`: the project `project_init.xml` names, if any.
    GetProjectInitStatus,
    /// `get_cc_config`: cc_config.xml as the client reads it.
    GetCcConfig,
    /// `set_cc_config`: write cc_config.xml (the Manager then asks `read_cc_config`).
    SetCcConfig {
        /// The `<cc_config>` element, as sent.
        text: String,
    },
    /// `get_app_config`: a project's app_config.xml.
    GetAppConfig {
        /// The project's master URL.
        url: String,
    },
    /// `set_app_config`: write a project's app_config.xml.
    SetAppConfig {
        /// The project's master URL.
        url: String,
        /// The `<app_config>` element, as sent.
        text: String,
    },
    /// `get_global_prefs_file`: global_prefs.xml as the projects sent it.
    GetGlobalPrefsFile,
    /// `get_global_prefs_working`: the preferences in force.
    GetGlobalPrefsWorking,
    /// `get_global_prefs_override`: global_prefs_override.xml.
    GetGlobalPrefsOverride,
    /// `set_global_prefs_override`: write global_prefs_override.xml.
    SetGlobalPrefsOverride {
        /// The `<global_preferences>` element, as sent (empty: remove the file).
        text: String,
    },
    /// `retry_file_transfer` / `abort_file_transfer`.
    FileTransfer {
        /// Retry or abort.
        action: TransferAction,
        /// The project's master URL.
        project_url: String,
        /// The file's name.
        filename: String,
    },
    /// `get_proxy_settings`.
    GetProxySettings,
    /// `set_proxy_settings`.
    SetProxySettings {
        /// The `<proxy_info>` element, as sent.
        text: String,
    },
    /// `run_benchmarks`: measure the CPUs again.
    RunBenchmarks,
    /// `network_available`: the user says the network is up; retry what waits on it.
    NetworkAvailable,
    /// `report_device_status`: the device's battery and charging state (mobile
    /// Managers); accepted and not acted on.
    ReportDeviceStatus,
    /// `read_cc_config`: re-read cc_config.xml.
    ReadCcConfig,
    /// `read_global_prefs_override`: re-read the preferences.
    ReadGlobalPrefsOverride,
    /// `quit`: shut the client down.
    Quit,
}

impl Operation {
    /// Who may ask for the operation.
    pub fn access(&self) -> Access {
        match self {
            Operation::ExchangeVersions
            | Operation::GetState
            | Operation::GetResults { .. }
            | Operation::GetOldResults
            | Operation::GetProjectStatus
            | Operation::GetSimpleGuiInfo
            | Operation::GetScreensaverTasks
            | Operation::GetCcStatus
            | Operation::GetHostInfo
            | Operation::GetMessages { .. }
            | Operation::GetMessageCount
            | Operation::GetNoticesPublic { .. }
            | Operation::GetDiskUsage
            | Operation::GetStatistics
            | Operation::GetFileTransfers
            | Operation::GetNewerVersion
            | Operation::GetDailyTransferHistory
            | Operation::GetAllProjectsList
            | Operation::GetProjectInitStatus => Access::ReadOnly,
            _ => Access::Control,
        }
    }

    /// The user action the operation asks of the client, for those that are one. The
    /// mode changes name the mode they set; a temporary mode's return to the permanent
    /// one is the caller's to schedule.
    pub fn user_action(&self) -> Option<UserAction> {
        match self {
            Operation::SetRunMode(ModeChange { mode: Some(mode), .. }) => {
                Some(UserAction::SetRunMode(*mode))
            }
            Operation::SetGpuMode(ModeChange { mode: Some(mode), .. }) => {
                Some(UserAction::SetGpuMode(*mode))
            }
            Operation::SetNetworkMode(ModeChange { mode: Some(mode), .. }) => {
                Some(UserAction::SetNetworkMode(*mode))
            }
            Operation::Project { action, master_url } => {
                let url = master_url.clone();
                Some(match action {
                    ProjectAction::Suspend => UserAction::SuspendProject(url),
                    ProjectAction::Resume => UserAction::ResumeProject(url),
                    ProjectAction::Update => UserAction::UpdateProject(url),
                    ProjectAction::NoMoreWork => UserAction::NoMoreWork(url),
                    ProjectAction::AllowMoreWork => UserAction::AllowMoreWork(url),
                    ProjectAction::Reset => UserAction::ResetProject(url),
                    ProjectAction::Detach => UserAction::Detach(url),
                    ProjectAction::DetachWhenDone => UserAction::DetachWhenDone(url, true),
                    ProjectAction::DontDetachWhenDone => UserAction::DetachWhenDone(url, false),
                })
            }
            Operation::Result { action, name, .. } => {
                let name = name.clone();
                Some(match action {
                    ResultAction::Suspend => UserAction::SuspendTask(name),
                    ResultAction::Resume => UserAction::ResumeTask(name),
                    ResultAction::Abort => UserAction::AbortTask(name),
                })
            }
            Operation::FileTransfer { action, project_url, filename } => {
                let (project, file) = (project_url.clone(), filename.clone());
                Some(match action {
                    TransferAction::Retry => UserAction::RetryFileTransfer { project, file },
                    TransferAction::Abort => UserAction::AbortFileTransfer { project, file },
                })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_open_and_changes_need_authentication() {
        assert_eq!(Operation::GetState.access(), Access::ReadOnly);
        assert_eq!(Operation::GetMessages { after: 0 }.access(), Access::ReadOnly);
        assert_eq!(Operation::GetNotices { after: 0 }.access(), Access::Control);
        assert_eq!(Operation::GetNoticesPublic { after: 0 }.access(), Access::ReadOnly);
        assert_eq!(Operation::AccountManagerInfo.access(), Access::Control);
        assert_eq!(Operation::Quit.access(), Access::Control);
        let mode = ModeChange { mode: Some(RunMode::Never), duration: 0.0 };
        assert_eq!(Operation::SetRunMode(mode).access(), Access::Control);
    }

    #[test]
    fn control_operations_become_user_actions() {
        let never = ModeChange { mode: Some(RunMode::Never), duration: 0.0 };
        assert_eq!(
            Operation::SetRunMode(never).user_action(),
            Some(UserAction::SetRunMode(RunMode::Never))
        );
        let restore = ModeChange { mode: None, duration: 0.0 };
        assert_eq!(Operation::SetGpuMode(restore).user_action(), None);
        let op = Operation::Result {
            action: ResultAction::Abort,
            project_url: "http://p/".into(),
            name: "wu_1_0".into(),
        };
        assert_eq!(op.user_action(), Some(UserAction::AbortTask("wu_1_0".into())));
        let op =
            Operation::Project { action: ProjectAction::Reset, master_url: "http://p/".into() };
        assert_eq!(op.user_action(), Some(UserAction::ResetProject("http://p/".into())));
        assert_eq!(Operation::GetState.user_action(), None);
    }
}
