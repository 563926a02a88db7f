//! What only the host service (`boinc-rs run`) can do for a GUI RPC client: attach a
//! project the client has never known (its account file), remove a detached project's
//! files, talk to an account manager and to a project's web RPCs over HTTP, run the
//! CPU benchmarks, and send the client's HTTP through a new proxy. A server without them answers
//! those operations with an error that says so.

use boinc_core::model::ProxyInfo;
use boinc_core::protocol::gui_rpc::AccountManagerTarget;
use futures_util::future::BoxFuture;

/// The account manager a client uses, as `acct_mgr_info` reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountManagerInfo {
    /// The manager's URL (empty: none).
    pub url: String,
    /// Its name.
    pub name: String,
    /// The client holds the account's name and password hash.
    pub have_credentials: bool,
}

/// The host service's side of the operations a GUI RPC server cannot carry out alone.
pub trait HostServices: Send + Sync + 'static {
    /// Attaches the client to a project it does not know yet.
    fn attach_project(
        &self,
        master_url: String,
        authenticator: String,
        project_name: String,
    ) -> BoxFuture<'static, Result<(), String>>;

    /// Removes what the data directory keeps for a project just detached (its account
    /// file, its project directory).
    fn project_detached(&self, master_url: String) -> BoxFuture<'static, Result<(), String>>;

    /// Joins, leaves or contacts an account manager; resolves when the RPC is done.
    fn account_manager_rpc(
        &self,
        target: AccountManagerTarget,
    ) -> BoxFuture<'static, Result<(), String>>;

    /// The account manager in use.
    fn account_manager(&self) -> AccountManagerInfo;

    /// Fetches `page` of a project's web RPCs (`lookup_account.php`, ...) under
    /// `master_url` with `query`; resolves to the answer's text (bounded) or why there
    /// is none.
    fn project_web_rpc(
        &self,
        master_url: String,
        page: &'static str,
        query: Vec<(&'static str, String)>,
    ) -> BoxFuture<'static, Result<String, String>>;

    /// Runs the CPU benchmarks; resolves to their result in words.
    fn run_benchmarks(&self) -> BoxFuture<'static, Result<String, String>>;

    /// Sends every HTTP request from now on through `proxy` (what `set_proxy_settings`
    /// wrote into cc_config.xml); why not when it cannot be used.
    fn use_proxy(&self, proxy: &ProxyInfo) -> Result<(), String>;
}
