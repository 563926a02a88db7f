//! `/admin/…`: faults on purpose and key changes, for tests of clients (see
//! [`super::super::faults`]). Only requests from the loopback are served: anyone else
//! gets 403.

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
    if !from_loopback(&request) {
        return forbidden();
    }
    if body.len() > MAX_ADMIN_BODY {
        return HttpResponse::PayloadTooLarge().finish();
    }
    let rules = match serde_json::from_slice::<Rules>(&body) {
        Ok(Rules::One(rule)) => vec![rule],
        Ok(Rules::Many(rules)) => rules,
        Err(error) => {
            return HttpResponse::BadRequest().body(format!(
                "{error}: post a rule or a list of rules, e.g. \
                 {{\"target\": \"scheduler\", \"fault\": \"http_500\", \"count\": 1}}\n"
            ));
        }
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
    if !from_loopback(&request) {
        return forbidden();
    }
    let rotation: Rotation = match serde_json::from_slice(&body) {
        Ok(rotation) => rotation,
        Err(error) => {
            return HttpResponse::BadRequest().body(format!(
                "{error}: post {{\"signature\": \"signed\"}} (or \"none\", or \"bad\")\n"
            ));
        }
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
