//! `POST /account_manager/rpc.php`: BOINC's account manager RPC, answered by the
//! project server's account manager role ([`super::super::account_manager`]). Every
//! answer is an `<acct_mgr_reply>`, an error one when the request cannot be read, so
//! the client shows the user why.

use super::super::server::ServerState;
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, web};
use boinc_core::protocol::acct_mgr::{
    AccountManagerReply, parse_acct_mgr_request, write_acct_mgr_reply,
};
use std::sync::atomic::Ordering;

/// The most bytes of an account manager request (a real client's is a few kilobytes).
pub(crate) const MAX_ACCOUNT_MANAGER_REQUEST_BYTES: usize = 1 << 20;

/// BOINC's error number for a request that is not the XML it should be (`ERR_XML_PARSE`).
const UNREADABLE_REQUEST: i32 = -112;

pub(crate) async fn account_manager_rpc(
    state: web::Data<ServerState>,
    request: HttpRequest,
    body: Bytes,
) -> HttpResponse {
    state.metrics.account_manager_requests.fetch_add(1, Ordering::Relaxed);
    let peer = request.peer_addr();
    let state = state.into_inner();
    // Reading the configuration, recording the URLs handed out and signing them are
    // blocking work.
    let replied = web::block(move || {
        let parsed = std::str::from_utf8(&body)
            .map_err(|e| e.to_string())
            .and_then(|text| parse_acct_mgr_request(text).map_err(|e| e.to_string()));
        let config = state.account_manager.config();
        match parsed {
            Ok(request) => {
                let reply = state.account_manager.answer(config.as_ref(), &request);
                if reply.error.is_none() {
                    state.account_manager.signed_in(&request.host_cpid);
                }
                tracing::info!(
                    name = %request.name,
                    host_cpid = %request.host_cpid,
                    projects = reply.accounts.iter().filter(|a| !a.detach).count(),
                    detached = reply.accounts.iter().filter(|a| a.detach).count(),
                    error = ?reply.error,
                    "account manager request"
                );
                reply
            }
            Err(error) => {
                tracing::warn!(?peer, %error, "unreadable account manager request");
                AccountManagerReply {
                    name: config.map(|c| c.name).unwrap_or_default(),
                    error_num: UNREADABLE_REQUEST,
                    error: Some(format!("the account manager could not read the request: {error}")),
                    ..AccountManagerReply::default()
                }
            }
        }
    })
    .await;
    match replied {
        Ok(reply) => HttpResponse::Ok().content_type("text/xml").body(write_acct_mgr_reply(&reply)),
        Err(error) => HttpResponse::InternalServerError().body(format!("{error}\n")),
    }
}
