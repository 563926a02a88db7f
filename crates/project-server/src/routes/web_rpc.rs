//! A project's web RPCs for volunteers (docs/design.md "Protocol facts", web RPCs):
//! `GET /lookup_account.php` (an account's key by e-mail address and password hash),
//! `GET /create_account.php` (a new account) and `GET /get_project_config.php`, in
//! BOINC's elements and error numbers (`boinc_core::protocol::web_rpc`). A new account
//! is saved before its key goes out, like every record a client is told about.

use super::super::records::AccountRecord;
use super::super::server::ServerState;
use actix_web::{HttpResponse, web};
use boinc_core::protocol::platform::boinc_platform;
use boinc_core::protocol::web_rpc::{
    AccountOut, ERR_BAD_EMAIL_ADDR, ERR_BAD_PASSWD, ERR_DB_NOT_FOUND, ERR_DB_NOT_UNIQUE,
    ProjectConfig, write_account_out, write_project_config,
};
use rand::Rng;
use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

/// The shortest password the project takes (BOINC's default).
const MIN_PASSWD_LENGTH: u32 = 6;
/// The longest e-mail address or user name taken, bytes.
const MAX_NAME: usize = 254;

fn xml(text: String) -> HttpResponse {
    HttpResponse::Ok().content_type("text/xml").body(text)
}

fn refused(number: i32, message: &str) -> HttpResponse {
    xml(write_account_out(&AccountOut::Error { number, message: message.to_owned() }))
}

/// The e-mail address as accounts are keyed by it, if it is one.
fn email_of(query: &HashMap<String, String>) -> Option<String> {
    let email = query.get("email_addr")?.trim().to_lowercase();
    (email.len() <= MAX_NAME && email.contains('@') && !email.starts_with('@')).then_some(email)
}

/// The password hash, if it is one (md5 in hex).
fn passwd_hash_of(query: &HashMap<String, String>) -> Option<String> {
    let hash = query.get("passwd_hash")?.trim().to_lowercase();
    (hash.len() == 32 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then_some(hash)
}

/// `GET /lookup_account.php?email_addr=..&passwd_hash=..`.
pub(crate) async fn lookup_account(
    state: web::Data<ServerState>,
    query: web::Query<HashMap<String, String>>,
) -> HttpResponse {
    let Some(email) = email_of(&query) else {
        return refused(ERR_BAD_EMAIL_ADDR, "Invalid email address");
    };
    let hash = passwd_hash_of(&query).unwrap_or_default();
    let (found, _) = state.store.update(|records| {
        let account = records.accounts.iter().find(|(_, a)| a.email_addr == email);
        (account.map(|(key, a)| (key.clone(), a.passwd_hash == hash)), false)
    });
    match found {
        None => refused(ERR_DB_NOT_FOUND, "No account with that email address"),
        Some((_, false)) => refused(ERR_BAD_PASSWD, "Invalid password"),
        Some((authenticator, true)) => {
            xml(write_account_out(&AccountOut::Authenticator(authenticator)))
        }
    }
}

/// `GET /create_account.php?email_addr=..&passwd_hash=..&user_name=..`.
pub(crate) async fn create_account(
    state: web::Data<ServerState>,
    query: web::Query<HashMap<String, String>>,
) -> HttpResponse {
    let Some(email) = email_of(&query) else {
        return refused(ERR_BAD_EMAIL_ADDR, "Invalid email address");
    };
    let Some(hash) = passwd_hash_of(&query) else {
        return refused(ERR_BAD_PASSWD, "Invalid password hash");
    };
    let name: String =
        query.get("user_name").map_or("", |n| n.trim()).chars().take(MAX_NAME).collect();
    let authenticator: String = {
        let mut rng = state.rng.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        (0..32).map(|_| char::from(b"0123456789abcdef"[rng.random_range(0..16)])).collect()
    };
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
    let (made, change) = state.store.update(|records| {
        if records.accounts.values().any(|a| a.email_addr == email) {
            return (false, false);
        }
        let userid = records.next_userid;
        records.next_userid += 1;
        let account = AccountRecord {
            userid,
            created: now,
            email_addr: email.clone(),
            passwd_hash: hash.clone(),
            name: if name.is_empty() { email.clone() } else { name.clone() },
            ..AccountRecord::default()
        };
        records.accounts.insert(authenticator.clone(), account);
        tracing::info!(userid, "account created");
        (true, true)
    });
    if !made {
        return refused(ERR_DB_NOT_UNIQUE, "An account with that email address already exists");
    }
    if let Err(error) = state.store.saved(change).await {
        tracing::error!(%error, "a new account is held back: it is not saved");
        return HttpResponse::ServiceUnavailable().body(format!("{error}\n"));
    }
    xml(write_account_out(&AccountOut::Authenticator(authenticator)))
}

/// `GET /get_project_config.php`.
pub(crate) async fn get_project_config(state: web::Data<ServerState>) -> HttpResponse {
    let config = ProjectConfig {
        name: state.config.name.clone(),
        master_url: state.urls.master.clone(),
        web_rpc_url_base: state.urls.master.clone(),
        min_passwd_length: MIN_PASSWD_LENGTH,
        account_creation_disabled: false,
        uses_username: false,
        platforms: vec![boinc_platform()],
        error: None,
    };
    xml(write_project_config(&config))
}
