//! Attaching as a volunteer (docs/design.md "Protocol facts", web RPCs): GUI RPC
//! `lookup_account`, `create_account` and `get_project_config` start the project's web
//! RPC through the host and answer at once; their `_poll` operations answer
//! `<error_num>-204</error_num>` (BOINC's "in progress") inside `<account_out>` or
//! `<project_config>` until the project answered, then its answer, read and written
//! again by the core (`protocol::web_rpc`), as BOINC's client passes it on. The Manager's wizard and `boinccmd --lookup_account` poll once
//! a second.

use super::server::ServerShared;
use boinc_core::protocol::gui_rpc::{self as protocol, AccountRequest};
use boinc_core::protocol::web_rpc::{
    AccountOut, ERR_HTTP_TRANSIENT, ERR_IN_PROGRESS, ERR_XML_PARSE, ProjectConfig,
    read_account_out, read_project_config,
};
use std::sync::{Arc, Mutex, MutexGuard};

/// How one kind of web RPC stands.
#[derive(Debug, Clone, Default)]
enum Status {
    /// None asked for yet.
    #[default]
    Idle,
    /// Under way.
    InProgress,
    /// Failed before the project answered (BOINC's error number).
    Failed(i32),
    /// The project's answer about an account.
    Account(AccountOut),
    /// The project's configuration.
    Config(ProjectConfig),
}

/// The three web RPCs a client may have under way.
#[derive(Debug, Default)]
pub(crate) struct WebRpcs {
    lookup: Mutex<Status>,
    create: Mutex<Status>,
    config: Mutex<Status>,
}

/// Which web RPC.
#[derive(Debug, Clone, Copy)]
pub(crate) enum WebRpc {
    /// `lookup_account.php`.
    LookupAccount,
    /// `create_account.php`.
    CreateAccount,
    /// `get_project_config.php`.
    ProjectConfig,
}

impl WebRpcs {
    fn status(&self, rpc: WebRpc) -> MutexGuard<'_, Status> {
        let status = match rpc {
            WebRpc::LookupAccount => &self.lookup,
            WebRpc::CreateAccount => &self.create,
            WebRpc::ProjectConfig => &self.config,
        };
        status.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The page and query of `rpc` for `account`.
fn page_and_query(
    rpc: WebRpc,
    account: &AccountRequest,
) -> (&'static str, Vec<(&'static str, String)>) {
    match rpc {
        WebRpc::LookupAccount => (
            "lookup_account.php",
            vec![
                ("email_addr", account.email_addr.clone()),
                ("passwd_hash", account.passwd_hash.clone()),
                ("get_opaque_auth", "1".into()),
            ],
        ),
        WebRpc::CreateAccount => (
            "create_account.php",
            vec![
                ("email_addr", account.email_addr.clone()),
                ("passwd_hash", account.passwd_hash.clone()),
                ("user_name", account.user_name.clone()),
                ("team_name", account.team_name.clone()),
            ],
        ),
        WebRpc::ProjectConfig => ("get_project_config.php", Vec::new()),
    }
}

/// The project's answer as the poll passes it on: read by the core (and written again
/// by it), so a broken or hostile server sends the GUI client nothing but BOINC's
/// elements.
fn relayed(rpc: WebRpc, text: &str) -> Status {
    let read = match rpc {
        WebRpc::LookupAccount | WebRpc::CreateAccount => read_account_out(text).map(|answer| {
            if let AccountOut::Error { number, message } = &answer {
                tracing::info!(number, %message, "the project refused the account request");
            }
            Status::Account(answer)
        }),
        WebRpc::ProjectConfig => read_project_config(text).map(Status::Config),
    };
    read.unwrap_or_else(|error| {
        tracing::warn!(%error, "a project's web RPC answer could not be read");
        Status::Failed(ERR_XML_PARSE)
    })
}

/// Starts `rpc` at the project `account.url`; the answer comes through [`poll`].
pub(crate) fn start(shared: &Arc<ServerShared>, rpc: WebRpc, account: AccountRequest) -> Vec<u8> {
    let Some(host) = &shared.host else {
        return protocol::error(
            "attaching by e-mail and password needs the host service (boinc-rs run)",
        );
    };
    *shared.web_rpcs.status(rpc) = Status::InProgress;
    let (page, query) = page_and_query(rpc, &account);
    let request = host.project_web_rpc(account.url, page, query);
    let waiting = shared.clone();
    tokio::spawn(async move {
        let status = match request.await {
            Ok(text) => relayed(rpc, &text),
            Err(why) => {
                tracing::warn!(%why, page, "a project's web RPC failed");
                Status::Failed(ERR_HTTP_TRANSIENT)
            }
        };
        *waiting.web_rpcs.status(rpc) = status;
    });
    protocol::success()
}

/// How `rpc` stands, as BOINC 7.20.5 answers its poll (an idle lookup or
/// configuration: an empty element; an idle creation: an empty reply).
pub(crate) fn poll(shared: &ServerShared, rpc: WebRpc) -> Vec<u8> {
    let status = shared.web_rpcs.status(rpc).clone();
    let number = match status {
        Status::Account(answer) => return protocol::account_out(Ok(&answer)),
        Status::Config(config) => return protocol::project_config(Ok(&config)),
        Status::Idle => match rpc {
            WebRpc::LookupAccount => return b"<account_out/>\n".to_vec(),
            WebRpc::CreateAccount => return Vec::new(),
            WebRpc::ProjectConfig => return b"<project_config/>\n".to_vec(),
        },
        Status::InProgress => ERR_IN_PROGRESS,
        Status::Failed(number) => number,
    };
    match rpc {
        WebRpc::LookupAccount | WebRpc::CreateAccount => protocol::account_out(Err(number)),
        WebRpc::ProjectConfig => protocol::project_config(Err(number)),
    }
}
