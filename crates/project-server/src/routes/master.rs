//! The master page (docs/design.md "Protocol facts": the scheduler's URL in both forms BOINC
//! clients look for, `<scheduler>` and `<link rel="boinc_scheduler">`).

use super::super::faults::FaultTarget;
use super::super::server::ServerState;
use super::fault_response::{fault_response, take_transport_fault};
use actix_web::{HttpRequest, HttpResponse, web};
use boinc_core::protocol::MasterPage;
use std::sync::atomic::Ordering;

pub(crate) async fn master_page(
    state: web::Data<ServerState>,
    request: HttpRequest,
) -> HttpResponse {
    state.metrics.master_requests.fetch_add(1, Ordering::Relaxed);
    let page = MasterPage { scheduler_urls: vec![state.urls.scheduler.clone()] }
        .to_html(&state.config.name);
    if let Some(fault) = take_transport_fault(&state, FaultTarget::Master, None) {
        return fault_response(fault, &request, page.into_bytes().into()).await;
    }
    HttpResponse::Ok().content_type("text/html; charset=utf-8").body(page)
}
