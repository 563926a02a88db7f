//! `/admin/…`: faults on purpose and key changes, for tests of clients (see
//! [`super::super::faults`]), and the account manager's configuration (see
//! [`super::super::account_manager`]). Only requests from the loopback are served:
//! anyone else gets 403.

use super::super::account_manager::AccountManagerConfig;
use super::super::faults::FaultRule;
use super::super::keys::RolloverSignature;
use super::super::server::ServerState;
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;
use serde_json::json;

/// The most bytes of an admin request.
const MAX_ADMIN_BODY: usize = 64 * 1024;

fn from_loopback(request: &HttpRequest) -> bool {
    request.peer_addr().is_some_and(|peer| peer.ip().is_loopback())
}

fn forbidden() -> HttpResponse {
    HttpResponse::Forbidden().body("the admin interface answers only the loopback\n")
}

/// The JSON body of an admin request from the loopback, or the answer refusing it
/// (`usage` says what to send instead).
fn admin_json<T: serde::de::DeserializeOwned>(
    request: &HttpRequest,
    body: &Bytes,
    usage: &str,
) -> Result<T, HttpResponse> {
    if !from_loopback(request) {
        return Err(forbidden());
    }
    if body.len() > MAX_ADMIN_BODY {
        return Err(HttpResponse::PayloadTooLarge().finish());
    }
    serde_json::from_slice(body)
        .map_err(|error| HttpResponse::BadRequest().body(format!("{error}: {usage}\n")))
}

pub(crate) async fn list_faults(
    state: web::Data<ServerState>,
    request: HttpRequest,
) -> HttpResponse {
    if !from_loopback(&request) {
        return forbidden();
    }
    let applied: Vec<_> = state
        .faults
        .applied()
        .into_iter()
        .map(|(target, fault)| json!({"target": target, "fault": fault}))
        .collect();
    HttpResponse::Ok().json(json!({"rules": state.faults.list(), "applied": applied}))
}

/// One rule or a list of rules.
#[derive(Deserialize)]
#[serde(untagged)]
enum Rules {
    One(FaultRule),
    Many(Vec<FaultRule>),
}

pub(crate) async fn add_faults(
    state: web::Data<ServerState>,
    request: HttpRequest,
    body: Bytes,
) -> HttpResponse {
    let usage = "post a rule or a list of rules, e.g. \
                 {\"target\": \"scheduler\", \"fault\": \"http_500\", \"count\": 1}";
    let rules = match admin_json::<Rules>(&request, &body, usage) {
        Ok(Rules::One(rule)) => vec![rule],
        Ok(Rules::Many(rules)) => rules,
        Err(refusal) => return refusal,
    };
    tracing::warn!(?rules, "faults on purpose added");
    state.faults.add(rules);
    HttpResponse::Ok().json(json!({"rules": state.faults.list()}))
}

pub(crate) async fn clear_faults(
    state: web::Data<ServerState>,
    request: HttpRequest,
) -> HttpResponse {
    if !from_loopback(&request) {
        return forbidden();
    }
    state.faults.clear();
    HttpResponse::Ok().json(json!({"rules": []}))
}

#[derive(Deserialize)]
struct Rotation {
    signature: RolloverSignature,
}

pub(crate) async fn rotate_key(
    state: web::Data<ServerState>,
    request: HttpRequest,
    body: Bytes,
) -> HttpResponse {
    let usage = "post {\"signature\": \"signed\"} (or \"none\", or \"bad\")";
    let rotation: Rotation = match admin_json(&request, &body, usage) {
        Ok(rotation) => rotation,
        Err(refusal) => return refusal,
    };
    let state = state.into_inner();
    let rotated = web::block(move || {
        let mut signing = state.signing.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let signing = &mut *signing;
        let key = signing.keys.rotate(rotation.signature)?;
        for app in &mut signing.apps {
            app.resign(&signing.keys)?;
        }
        Ok::<_, super::super::error::ProjectServerError>(key)
    })
    .await;
    match rotated {
        Ok(Ok(key)) => {
            tracing::warn!(signature = ?rotation.signature, "the code-signing key was changed");
            HttpResponse::Ok().json(json!({"code_sign_key": key.to_text()}))
        }
        Ok(Err(error)) => HttpResponse::InternalServerError().body(format!("{error}\n")),
        Err(error) => HttpResponse::InternalServerError().body(format!("{error}\n")),
    }
}

/// `GET /admin/account_manager`: the configuration in force (`null`: none).
pub(crate) async fn account_manager_config(
    state: web::Data<ServerState>,
    request: HttpRequest,
) -> HttpResponse {
    if !from_loopback(&request) {
        return forbidden();
    }
    let state = state.into_inner();
    match web::block(move || state.account_manager.config()).await {
        Ok(config) => HttpResponse::Ok().json(config),
        Err(error) => HttpResponse::InternalServerError().body(format!("{error}\n")),
    }
}

/// `PUT /admin/account_manager`: a new configuration, kept in the project directory
/// and given to every host at its next request.
pub(crate) async fn replace_account_manager_config(
    state: web::Data<ServerState>,
    request: HttpRequest,
    body: Bytes,
) -> HttpResponse {
    let usage = "put {\"users\": [{\"name\": \"N\", \"password\": \"P\"}], \
                 \"projects\": [{\"url\": \"URL\", \"authenticator\": \"A\"}]}";
    let config: AccountManagerConfig = match admin_json(&request, &body, usage) {
        Ok(config) => config,
        Err(refusal) => return refusal,
    };
    let state = state.into_inner();
    let replaced =
        web::block(move || state.account_manager.replace(&config).map(|()| config)).await;
    match replaced {
        Ok(Ok(config)) => {
            tracing::warn!(
                projects = config.projects.len(),
                users = config.users.len(),
                "the account manager's list was changed"
            );
            HttpResponse::Ok().json(config)
        }
        Ok(Err(error)) => HttpResponse::BadRequest().body(format!("{error}\n")),
        Err(error) => HttpResponse::InternalServerError().body(format!("{error}\n")),
    }
}
