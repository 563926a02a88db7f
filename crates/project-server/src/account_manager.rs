//! The project server as a minimal account manager (issue "GUI RPC server", account
//! managers; BOINC's account manager RPC: the client POSTs an `<acct_mgr_request>` to
//! the manager's URL + `rpc.php` and gets an `<acct_mgr_reply>`). Its URL is the
//! project's URL + `account_manager/`. Every host that signs in with a configured name
//! and password (BOINC's hash: md5 of the password and the lower-case name) is given
//! the same list of projects, each with its authenticator and URL signed with the
//! project's code-signing key (sent as the manager's `<signing_key>`); a project the
//! host was attached to through the manager and that is no longer listed is detached.
//!
//! The configuration is `DIR/account_manager.json` (see [`AccountManagerConfig`]),
//! re-read whenever it changes, so a person or a test changes the list at run time by
//! writing the file or with `PUT /admin/account_manager`. A damaged file is logged and
//! the last good configuration kept; without one, hosts are told the role is off.

use super::atomic_file::write_atomically;
use super::signing::{CodeSignPrivateKey, sign_text};
use boinc_core::protocol::acct_mgr::account_manager_password_hash;
use boinc_core::protocol::acct_mgr::{
    AccountManagerAccount, AccountManagerReply, AccountManagerRequest,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

/// The configuration's file in the project directory.
pub const ACCOUNT_MANAGER_FILE: &str = "account_manager.json";

/// The largest configuration read (a list of projects and users, not a database).
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// BOINC's error number for an account that does not exist (`ERR_DB_NOT_FOUND`).
const NO_SUCH_ACCOUNT: i32 = -136;
/// BOINC's error number for a wrong password (`ERR_BAD_PASSWD`).
const BAD_PASSWORD: i32 = -206;
/// BOINC's error number for a manager that cannot answer (`ERR_NOT_FOUND`).
const NOT_AN_ACCOUNT_MANAGER: i32 = -161;

/// A volunteer who may sign in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManagedUser {
    /// The login name.
    pub name: String,
    /// The password (clients send md5 of it and the lower-case name), or `hash:HASH`
    /// for that hash itself, so the file need not hold the password.
    pub password: String,
}

/// A project every host is attached to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManagedProject {
    /// Its master URL.
    pub url: String,
    /// The account's authenticator on it.
    pub authenticator: String,
    /// The resource share hosts give it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_share: Option<f64>,
    /// Suspend (true) or resume (false) it on every host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
    /// Stop (true) or allow (false) fetching its work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dont_request_more_work: Option<bool>,
}

/// `DIR/account_manager.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccountManagerConfig {
    /// The manager's name, as clients show it.
    #[serde(default = "default_name")]
    pub name: String,
    /// Seconds until a host asks again (`<repeat_sec>`).
    #[serde(default = "default_repeat_seconds")]
    pub repeat_seconds: f64,
    /// Who may sign in.
    pub users: Vec<ManagedUser>,
    /// The projects.
    pub projects: Vec<ManagedProject>,
}

fn default_name() -> String {
    "boinc-rs account manager".into()
}

fn default_repeat_seconds() -> f64 {
    3600.0
}

impl AccountManagerConfig {
    /// Checks what the JSON cannot say; an error tells what to fix.
    pub fn check(&self) -> Result<(), String> {
        if !(self.repeat_seconds.is_finite() && self.repeat_seconds > 0.0) {
            return Err("repeat_seconds must be a positive number of seconds".into());
        }
        if let Some(user) = self.users.iter().find(|u| u.name.trim().is_empty()) {
            return Err(format!("a user has an empty name (password {:?})", user.password));
        }
        for project in &self.projects {
            if !(project.url.starts_with("http://") || project.url.starts_with("https://")) {
                return Err(format!(
                    "{:?} is not a project URL (http:// or https://)",
                    project.url
                ));
            }
            if project.authenticator.trim().is_empty() {
                return Err(format!("the project {} has no authenticator", project.url));
            }
            if project.resource_share.is_some_and(|s| !(s.is_finite() && s >= 0.0)) {
                return Err(format!("the project {} has a negative resource share", project.url));
            }
        }
        Ok(())
    }
}

/// Master URLs compare without their trailing slash.
fn same_url(a: &str, b: &str) -> bool {
    a.trim().trim_end_matches('/') == b.trim().trim_end_matches('/')
}

/// The reply to `request` under `config`, URLs signed with `key` (whose public half is
/// `key_text`). `None` for `config`: the role is off.
pub(crate) fn answer(
    config: Option<&AccountManagerConfig>,
    request: &AccountManagerRequest,
    key: &CodeSignPrivateKey,
    key_text: &str,
) -> AccountManagerReply {
    let Some(config) = config else {
        return error_reply(
            default_name(),
            NOT_AN_ACCOUNT_MANAGER,
            format!(
                "this project server is not an account manager: write {ACCOUNT_MANAGER_FILE} in its directory"
            ),
        );
    };
    let user =
        config.users.iter().find(|u| u.name.trim().eq_ignore_ascii_case(request.name.trim()));
    let Some(user) = user else {
        return error_reply(
            config.name.clone(),
            NO_SUCH_ACCOUNT,
            format!("no account named {:?}", request.name),
        );
    };
    if !account_manager_password_hash(&user.name, &user.password)
        .eq_ignore_ascii_case(request.password_hash.trim())
    {
        return error_reply(config.name.clone(), BAD_PASSWORD, "wrong password".into());
    }
    let sign = |url: &str| sign_text(key, url).map(|s| s.to_text()).unwrap_or_default();
    let mut accounts: Vec<AccountManagerAccount> = config
        .projects
        .iter()
        .map(|project| AccountManagerAccount {
            url: project.url.clone(),
            url_signature: sign(&project.url),
            authenticator: project.authenticator.clone(),
            resource_share: project.resource_share,
            suspend: project.suspend,
            dont_request_more_work: project.dont_request_more_work,
            ..AccountManagerAccount::default()
        })
        .collect();
    let dropped = request.projects.iter().filter(|held| {
        held.attached_via_acct_mgr && !config.projects.iter().any(|p| same_url(&p.url, &held.url))
    });
    accounts.extend(dropped.map(|held| AccountManagerAccount {
        url: held.url.clone(),
        url_signature: sign(&held.url),
        detach: true,
        ..AccountManagerAccount::default()
    }));
    AccountManagerReply {
        name: config.name.clone(),
        repeat_sec: Some(config.repeat_seconds),
        signing_key: Some(key_text.to_owned()),
        accounts,
        ..AccountManagerReply::default()
    }
}

fn error_reply(name: String, error_num: i32, error: String) -> AccountManagerReply {
    AccountManagerReply { name, error_num, error: Some(error), ..AccountManagerReply::default() }
}

/// The file as last read.
struct Loaded {
    modified: Option<SystemTime>,
    len: u64,
    config: Option<AccountManagerConfig>,
}

/// The role's state: the configuration, re-read when its file changes, and the hosts
/// that signed in.
pub(crate) struct AccountManager {
    path: PathBuf,
    loaded: Mutex<Option<Loaded>>,
    hosts: Mutex<BTreeSet<String>>,
}

impl AccountManager {
    /// The role for the project in `dir`.
    pub(crate) fn new(dir: &Path) -> AccountManager {
        AccountManager {
            path: dir.join(ACCOUNT_MANAGER_FILE),
            loaded: Mutex::new(None),
            hosts: Mutex::new(BTreeSet::new()),
        }
    }

    /// The configuration in force: the file's, read again when it changed; the last
    /// good one when it is damaged; `None` when there never was one.
    pub(crate) fn config(&self) -> Option<AccountManagerConfig> {
        let mut loaded = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        let metadata = std::fs::metadata(&self.path).ok();
        let (modified, len) = metadata.as_ref().map_or((None, 0), |m| (m.modified().ok(), m.len()));
        let unchanged = loaded.as_ref().is_some_and(|l| l.modified == modified && l.len == len);
        if !unchanged {
            let previous = loaded.take().and_then(|l| l.config);
            let config = match metadata {
                None => None,
                Some(_) => match self.read() {
                    Ok(config) => Some(config),
                    Err(error) => {
                        tracing::warn!(
                            path = %self.path.display(),
                            %error,
                            "the account manager's configuration is damaged; the last good one is kept"
                        );
                        previous
                    }
                },
            };
            *loaded = Some(Loaded { modified, len, config });
        }
        loaded.as_ref().and_then(|l| l.config.clone())
    }

    fn read(&self) -> Result<AccountManagerConfig, String> {
        use std::io::Read;
        let file = std::fs::File::open(&self.path).map_err(|e| e.to_string())?;
        let mut bytes = Vec::new();
        file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
        if bytes.len() as u64 > MAX_CONFIG_BYTES {
            return Err(format!("larger than {MAX_CONFIG_BYTES} bytes"));
        }
        let config: AccountManagerConfig =
            serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
        config.check()?;
        Ok(config)
    }

    /// Replaces the configuration (written atomically; read back at the next request).
    pub(crate) fn replace(&self, config: &AccountManagerConfig) -> Result<(), String> {
        config.check()?;
        let json = serde_json::to_vec_pretty(config).map_err(|e| e.to_string())?;
        write_atomically(&self.path, &json, 0o600).map_err(|e| e.to_string())?;
        // Read again even when the change kept the file's time and length.
        *self.loaded.lock().unwrap_or_else(PoisonError::into_inner) = None;
        Ok(())
    }

    /// Counts a host that signed in.
    pub(crate) fn signed_in(&self, host_cpid: &str) {
        self.hosts.lock().unwrap_or_else(PoisonError::into_inner).insert(host_cpid.to_owned());
    }

    /// Hosts that signed in since the server started.
    pub(crate) fn hosts(&self) -> usize {
        self.hosts.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use boinc_core::model::RunMode;
    use boinc_core::protocol::acct_mgr::AccountManagerProject;
    use boinc_core::protocol::code_signing::{CodeSignKey, Signature, verify_text_signature};
    use boinc_core::protocol::gui_rpc::PROTOCOL_VERSION;

    fn config() -> AccountManagerConfig {
        AccountManagerConfig {
            name: "Farm".into(),
            repeat_seconds: 60.0,
            users: vec![ManagedUser { name: "Ann".into(), password: "secret".into() }],
            projects: vec![ManagedProject {
                url: "http://127.0.0.1:1/".into(),
                authenticator: "auth1".into(),
                resource_share: Some(50.0),
                suspend: None,
                dont_request_more_work: Some(false),
            }],
        }
    }

    fn request(
        name: &str,
        password: &str,
        projects: Vec<AccountManagerProject>,
    ) -> AccountManagerRequest {
        AccountManagerRequest {
            name: name.into(),
            password_hash: account_manager_password_hash(name, password),
            host_cpid: "cpid".into(),
            previous_host_cpid: String::new(),
            domain_name: "host".into(),
            client_version: PROTOCOL_VERSION,
            run_mode: RunMode::Auto,
            gui_rpc: None,
            projects,
            opaque: String::new(),
        }
    }

    fn key() -> CodeSignPrivateKey {
        CodeSignPrivateKey::generate().expect("a key")
    }

    #[test]
    fn a_hash_in_the_file_stands_for_the_password() {
        let mut hashed = config();
        hashed.users[0].password =
            format!("hash:{}", account_manager_password_hash("ann", "secret"));
        let reply = answer(Some(&hashed), &request("Ann", "secret", vec![]), &key(), "k");
        assert_eq!((reply.error_num, reply.accounts.len()), (0, 1));
    }

    #[test]
    fn signed_in_hosts_get_the_projects_with_signed_urls() {
        let key = key();
        let key_text = key.public_key().to_text();
        let reply = answer(Some(&config()), &request("ann", "secret", vec![]), &key, &key_text);
        assert_eq!((reply.error_num, &reply.error), (0, &None));
        assert_eq!(reply.repeat_sec, Some(60.0));
        assert_eq!(reply.accounts.len(), 1);
        let account = &reply.accounts[0];
        assert_eq!((account.authenticator.as_str(), account.resource_share), ("auth1", Some(50.0)));
        let public = CodeSignKey::parse(reply.signing_key.as_deref().expect("key")).expect("key");
        let signature = Signature::parse(&account.url_signature).expect("signature");
        verify_text_signature(&public, &signature, &account.url).expect("the URL is signed");
    }

    #[test]
    fn projects_no_longer_listed_are_detached_and_others_left_alone() {
        let key = key();
        let held = |url: &str, via_manager: bool| AccountManagerProject {
            url: url.into(),
            project_name: String::new(),
            suspended_via_gui: false,
            account_key: "k".into(),
            hostid: 1,
            attached_via_acct_mgr: via_manager,
        };
        let projects = vec![
            held("http://127.0.0.1:1", true),
            held("http://old.example/", true),
            held("http://own.example/", false),
        ];
        let reply = answer(Some(&config()), &request("Ann", "secret", projects), &key, "k");
        let detached: Vec<_> =
            reply.accounts.iter().filter(|a| a.detach).map(|a| a.url.as_str()).collect();
        assert_eq!(detached, ["http://old.example/"]);
        assert_eq!(reply.accounts.len(), 2);
    }

    #[test]
    fn strangers_wrong_passwords_and_no_configuration_are_errors() {
        let key = key();
        let wrong = answer(Some(&config()), &request("Ann", "guess", vec![]), &key, "k");
        assert_eq!(wrong.error_num, BAD_PASSWORD);
        assert!(wrong.accounts.is_empty());
        let stranger = answer(Some(&config()), &request("Bob", "secret", vec![]), &key, "k");
        assert_eq!(stranger.error_num, NO_SUCH_ACCOUNT);
        let off = answer(None, &request("Ann", "secret", vec![]), &key, "k");
        assert_eq!(off.error_num, NOT_AN_ACCOUNT_MANAGER);
        assert!(off.error.is_some_and(|e| e.contains(ACCOUNT_MANAGER_FILE)));
    }

    #[test]
    fn the_file_is_read_again_when_it_changes_and_a_damaged_one_keeps_the_last() {
        let dir = tempfile::tempdir().expect("dir");
        let manager = AccountManager::new(dir.path());
        assert_eq!(manager.config(), None);
        manager.replace(&config()).expect("written");
        assert_eq!(manager.config(), Some(config()));
        let mut changed = config();
        changed.projects[0].url = "http://127.0.0.1:2/".into();
        std::fs::write(
            dir.path().join(ACCOUNT_MANAGER_FILE),
            serde_json::to_vec(&changed).expect("json"),
        )
        .expect("written by hand");
        assert_eq!(manager.config(), Some(changed.clone()));
        std::fs::write(dir.path().join(ACCOUNT_MANAGER_FILE), b"{ damaged").expect("damaged");
        assert_eq!(manager.config(), Some(changed));
        let mut bad = config();
        bad.projects[0].url = "ftp://x/".into();
        assert!(manager.replace(&bad).is_err());
    }
}
