//! The host service's account manager client (BOINC's account manager protocol; issue
//! "GUI RPC server", account managers): how a volunteer runs many hosts from one web
//! account. A GUI RPC `acct_mgr_rpc` (`boinccmd --acct_mgr attach URL NAME PASSWORD`)
//! joins a manager; the service then asks it, at once and again whenever its reply
//! says (`<repeat_sec>`, a day otherwise), which projects this host should be attached
//! to, and follows the answer: the core's [`plan_reply`] says what to do, this module
//! does it (account files written or removed, the client told). What it keeps lives in
//! BOINC's own files, `acct_mgr_url.xml` and `acct_mgr_login.xml` (the password only
//! as its hash, in a file only the user can read), so a restarted service goes on with
//! the same manager.

use super::account_files::{canonical_master_url, remove_project_files, write_account_file};
use super::atomic_file::write_atomically;
use super::http::HttpTransport;
use boinc_core::Time;
use boinc_core::control::UserAction;
use boinc_core::model::ClientState;
use boinc_core::protocol::acct_mgr::account_manager_password_hash;
use boinc_core::protocol::acct_mgr::{
    ACCT_MGR_LOGIN_FILE, ACCT_MGR_URL_FILE, AccountManagerAction, AccountManagerPlan,
    AccountManagerRequest, AccountManagerSettings, plan_reply,
};
use boinc_core::protocol::code_signing::{CodeSignKey, Signature, verify_text_signature};
use boinc_core::protocol::gui_rpc::PROTOCOL_VERSION;
use boinc_gui_rpc::AccountManagerInfo;
use boinc_runtime::client::ClientHandle;
use boinc_runtime::effects::Clock;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The largest account manager file read (a URL, a name and a key; a login and an
/// opaque blob the manager sent, itself bounded by the reply's size).
const MAX_SETTINGS_FILE: u64 = 2 << 20;

/// How often the service looks whether a request is due.
const CHECK_INTERVAL: Duration = Duration::from_secs(5);

/// The first wait after a failed request; it doubles with each failure in a row.
const FIRST_RETRY_SECONDS: f64 = 60.0;
/// The longest wait after failures: BOINC's day between requests.
const LONGEST_RETRY_SECONDS: f64 = 86_400.0;

/// Why an account manager request could not be made or was refused.
#[derive(Debug, thiserror::Error)]
pub enum AccountManagerError {
    /// No manager is in use, or the client holds no credentials for it.
    #[error(
        "this client uses no account manager; join one with `boinccmd --acct_mgr attach URL NAME PASSWORD`"
    )]
    NoManager,
    /// The manager's URL is not one.
    #[error(
        "'{0}' is not an account manager URL: give its web address, e.g. https://bam.boincstats.com/"
    )]
    BadUrl(String),
    /// The manager could not be reached or its answer not read.
    #[error("the account manager could not be reached: {0}; the client asks again later")]
    Unreachable(String),
    /// The manager answered with an error (a wrong password, an unknown account).
    #[error("the account manager refused the request: {0}")]
    Refused(String),
    /// The client stopped meanwhile.
    #[error("the client stopped")]
    Stopped,
    /// The settings could not be saved.
    #[error("cannot save the account manager settings: {0}; check the data directory")]
    Save(String),
}

/// The service's account manager client.
pub(crate) struct AccountManagerClient {
    dir: PathBuf,
    client: ClientHandle,
    transport: Arc<HttpTransport>,
    clock: Arc<dyn Clock>,
    settings: Mutex<Option<AccountManagerSettings>>,
    /// Failed requests in a row (the retry waits grow with them).
    failures: Mutex<u32>,
    /// One request at a time: a GUI RPC's and the scheduled one never overlap.
    busy: tokio::sync::Mutex<()>,
}

fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl AccountManagerClient {
    /// The client for the data directory `dir`, with the manager its files name.
    pub(crate) fn new(
        dir: &Path,
        client: ClientHandle,
        transport: Arc<HttpTransport>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        AccountManagerClient {
            dir: dir.to_path_buf(),
            client,
            transport,
            clock,
            settings: Mutex::new(load_settings(dir)),
            failures: Mutex::new(0),
            busy: tokio::sync::Mutex::new(()),
        }
    }

    /// The manager in use, as `acct_mgr_info` reports it.
    pub(crate) fn info(&self) -> AccountManagerInfo {
        locked(&self.settings)
            .as_ref()
            .map(|s| AccountManagerInfo {
                url: s.url.clone(),
                name: s.name.clone(),
                have_credentials: s.have_credentials(),
            })
            .unwrap_or_default()
    }

    /// Joins the manager at `url` as `name` (`password` plain, or `hash:` and its hash)
    /// and asks it for this host's projects at once; an empty `url` leaves the manager.
    pub(crate) async fn join(
        &self,
        url: &str,
        name: &str,
        password: &str,
    ) -> Result<(), AccountManagerError> {
        if url.trim().is_empty() {
            return self.leave().await;
        }
        let url =
            canonical_master_url(url).map_err(|_| AccountManagerError::BadUrl(url.to_string()))?;
        let settings =
            AccountManagerSettings::new(&url, name, &account_manager_password_hash(name, password));
        {
            let _one_at_a_time = self.busy.lock().await;
            save_settings(&self.dir, &settings)?;
            *locked(&self.settings) = Some(settings);
            *locked(&self.failures) = 0;
        }
        tracing::info!(manager = %url, login = %name, "account manager joined");
        self.request().await
    }

    /// Stops using the manager: its projects stay attached, as plain projects.
    async fn leave(&self) -> Result<(), AccountManagerError> {
        let _one_at_a_time = self.busy.lock().await;
        let Some(settings) = locked(&self.settings).take() else { return Ok(()) };
        for name in [ACCT_MGR_URL_FILE, ACCT_MGR_LOGIN_FILE] {
            match std::fs::remove_file(self.dir.join(name)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(AccountManagerError::Save(e.to_string())),
            }
        }
        let snapshot = self.client.snapshot().await.map_err(|_| AccountManagerError::Stopped)?;
        for project in snapshot.state.projects.iter().filter(|p| p.account.attached_via_acct_mgr) {
            let action = UserAction::SetAttachedViaAccountManager {
                project: project.master_url.clone(),
                attached: false,
            };
            self.client.act(action).await.map_err(|_| AccountManagerError::Stopped)?;
        }
        tracing::info!(manager = %settings.url, "account manager left");
        Ok(())
    }

    /// Asks the manager now and follows its answer.
    pub(crate) async fn request(&self) -> Result<(), AccountManagerError> {
        let _one_at_a_time = self.busy.lock().await;
        let settings = locked(&self.settings)
            .clone()
            .filter(AccountManagerSettings::have_credentials)
            .ok_or(AccountManagerError::NoManager)?;
        let snapshot = self.client.snapshot().await.map_err(|_| AccountManagerError::Stopped)?;
        let state = &snapshot.state;
        let request = request_for(&settings, state);
        let sent = self.clock.now();
        let reply = match self.transport.account_manager_rpc(&settings.url, &request).await {
            Ok(reply) => reply,
            Err(error) => {
                self.retry_later(settings, sent)?;
                return Err(AccountManagerError::Unreachable(error.to_string()));
            }
        };
        let key = settings.signing_key.as_deref().or(reply.signing_key.as_deref());
        let key = key.and_then(|k| CodeSignKey::parse(k).ok());
        let verify = |url: &str, signature: &str, _key: &str| {
            let Some(key) = &key else { return false };
            Signature::parse(signature)
                .is_ok_and(|signature| verify_text_signature(key, &signature, url).is_ok())
        };
        let authenticator =
            |url: &str| state.project_by_url(url).map(|p| state.project(p).authenticator.clone());
        let plan =
            plan_reply(&reply, state, settings.signing_key.as_deref(), verify, authenticator, sent);
        for message in &plan.messages {
            tracing::info!(manager = %settings.url, %message, "message from the account manager");
        }
        if let Some(error) = &plan.error {
            self.retry_later(settings, sent)?;
            return Err(AccountManagerError::Refused(error.clone()));
        }
        for (url, why) in &plan.rejected {
            tracing::warn!(project = %url, reason = ?why, "an account of the manager's was not taken");
        }
        self.carry_out(&plan).await?;
        let mut next = settings;
        if !reply.name.trim().is_empty() {
            next.name = reply.name.trim().to_string();
        }
        if let Some(key) = &plan.signing_key {
            next.signing_key = Some(key.clone());
        }
        next.next_rpc_time = plan.next_rpc_time;
        next.opaque = reply.opaque.clone().unwrap_or_default();
        save_settings(&self.dir, &next)?;
        *locked(&self.settings) = Some(next);
        *locked(&self.failures) = 0;
        tracing::info!(
            manager = %reply.name,
            actions = plan.actions.len(),
            next_in_seconds = plan.next_rpc_time - sent,
            "account manager request done"
        );
        Ok(())
    }

    /// After a failure the next request waits, longer with each failure in a row.
    fn retry_later(
        &self,
        mut settings: AccountManagerSettings,
        now: Time,
    ) -> Result<(), AccountManagerError> {
        let failures = {
            let mut failures = locked(&self.failures);
            *failures = failures.saturating_add(1);
            *failures
        };
        let wait = FIRST_RETRY_SECONDS * 2f64.powi(i32::try_from(failures - 1).unwrap_or(i32::MAX));
        settings.next_rpc_time = now + wait.min(LONGEST_RETRY_SECONDS);
        save_settings(&self.dir, &settings)?;
        *locked(&self.settings) = Some(settings);
        Ok(())
    }

    /// Does what the plan says, each step through the client as a user's action would.
    async fn carry_out(&self, plan: &AccountManagerPlan) -> Result<(), AccountManagerError> {
        for action in &plan.actions {
            let done = match action {
                AccountManagerAction::Attach {
                    master_url,
                    authenticator,
                    dont_request_more_work,
                } => self.attach(master_url, authenticator, *dont_request_more_work).await,
                AccountManagerAction::User(UserAction::Detach(url)) => self.detach(url).await,
                AccountManagerAction::User(user) => self.act(user.clone()).await,
                AccountManagerAction::SetResourceShare { master_url, share } => {
                    self.act(UserAction::SetResourceShare {
                        project: master_url.clone(),
                        share: *share,
                    })
                    .await
                }
                AccountManagerAction::MarkAttachedViaManager { master_url } => {
                    self.act(UserAction::SetAttachedViaAccountManager {
                        project: master_url.clone(),
                        attached: true,
                    })
                    .await
                }
            };
            match done {
                Ok(()) => {}
                Err(Step::Stopped) => return Err(AccountManagerError::Stopped),
                Err(Step::Failed(error)) => {
                    tracing::warn!(%error, ?action, "an account manager instruction failed")
                }
            }
        }
        Ok(())
    }

    async fn act(&self, action: UserAction) -> Result<(), Step> {
        self.client.act(action).await.map_err(Step::from)
    }

    async fn attach(
        &self,
        master_url: &str,
        authenticator: &str,
        dont_request_more_work: Option<bool>,
    ) -> Result<(), Step> {
        // The account file first: the attachment survives a restart.
        write_account_file(&self.dir, master_url, authenticator)
            .map_err(|e| Step::Failed(e.to_string()))?;
        self.act(UserAction::AttachAccount {
            master_url: master_url.to_string(),
            authenticator: authenticator.to_string(),
            project_name: None,
        })
        .await?;
        self.act(UserAction::SetAttachedViaAccountManager {
            project: master_url.to_string(),
            attached: true,
        })
        .await?;
        if dont_request_more_work == Some(true) {
            self.act(UserAction::NoMoreWork(master_url.to_string())).await?;
        }
        tracing::info!(project = %master_url, "attached by the account manager");
        Ok(())
    }

    async fn detach(&self, master_url: &str) -> Result<(), Step> {
        self.act(UserAction::Detach(master_url.to_string())).await?;
        remove_project_files(&self.dir, master_url).map_err(|e| Step::Failed(e.to_string()))?;
        tracing::info!(project = %master_url, "detached by the account manager");
        Ok(())
    }

    /// Asks the manager whenever a request is due, until the client stops.
    pub(crate) async fn run(self: Arc<Self>) {
        let mut interval = tokio::time::interval(CHECK_INTERVAL);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            let due = locked(&self.settings)
                .as_ref()
                .is_some_and(|s| s.have_credentials() && s.next_rpc_time <= self.clock.now());
            if !due {
                continue;
            }
            match self.request().await {
                Ok(()) => {}
                Err(AccountManagerError::Stopped) => return,
                Err(error) => tracing::warn!(%error, "account manager request"),
            }
        }
    }
}

/// Why one step of a plan was not done.
enum Step {
    Stopped,
    Failed(String),
}

impl From<boinc_runtime::client::ClientError> for Step {
    fn from(error: boinc_runtime::client::ClientError) -> Self {
        match error {
            boinc_runtime::client::ClientError::Action(error) => Step::Failed(error.to_string()),
            _ => Step::Stopped,
        }
    }
}

/// The request for the host in `state`.
fn request_for(settings: &AccountManagerSettings, state: &ClientState) -> AccountManagerRequest {
    AccountManagerRequest {
        name: settings.login_name.clone(),
        password_hash: settings.password_hash.clone(),
        host_cpid: state.host.description.host_cpid.clone(),
        previous_host_cpid: String::new(),
        domain_name: state.host.description.domain_name.clone(),
        client_version: PROTOCOL_VERSION,
        run_mode: state.run_mode,
        gui_rpc: None,
        projects: AccountManagerRequest::projects_of(state, |url| {
            state.project_by_url(url).map(|p| state.project(p).authenticator.clone())
        }),
        opaque: settings.opaque.clone(),
    }
}

/// The settings the data directory's files hold; damaged files are logged and ignored.
fn load_settings(dir: &Path) -> Option<AccountManagerSettings> {
    let url_file = read_small(&dir.join(ACCT_MGR_URL_FILE))?;
    let login_file = read_small(&dir.join(ACCT_MGR_LOGIN_FILE));
    match AccountManagerSettings::parse(&url_file, login_file.as_deref()) {
        Ok(settings) => Some(settings),
        Err(error) => {
            tracing::warn!(%error, "the account manager files are damaged; join the manager again");
            None
        }
    }
}

fn read_small(path: &Path) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    let mut text = String::new();
    match file.take(MAX_SETTINGS_FILE).read_to_string(&mut text) {
        Ok(_) => Some(text),
        Err(error) => {
            tracing::warn!(file = %path.display(), %error, "cannot read an account manager file");
            None
        }
    }
}

fn save_settings(dir: &Path, settings: &AccountManagerSettings) -> Result<(), AccountManagerError> {
    let save = |e: super::atomic_file::AtomicWriteError| AccountManagerError::Save(e.to_string());
    write_atomically(
        dir,
        ACCT_MGR_URL_FILE,
        "acct_mgr_url.xml.tmp",
        None,
        settings.url_file().as_bytes(),
    )
    .map_err(save)?;
    if let Some(login) = settings.login_file() {
        write_atomically(
            dir,
            ACCT_MGR_LOGIN_FILE,
            "acct_mgr_login.xml.tmp",
            None,
            login.as_bytes(),
        )
        .map_err(save)?;
        // The password's hash signs the volunteer in: for the user's eyes only.
        std::fs::set_permissions(
            dir.join(ACCT_MGR_LOGIN_FILE),
            std::fs::Permissions::from_mode(0o600),
        )
        .map_err(|e| AccountManagerError::Save(e.to_string()))?;
    }
    Ok(())
}
