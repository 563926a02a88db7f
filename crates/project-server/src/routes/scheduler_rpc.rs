//! `POST /cgi`: the scheduler RPC over HTTP (docs/design.md "Protocol facts": the body is the
//! `<scheduler_request>`, whatever the Content-Type says; the answer is the
//! `<scheduler_reply>`). The records' changes are saved before the reply goes out, so a
//! crash never forgets a job a client was told about or a report it was acknowledged.

use super::super::faults::{Fault, FaultTarget};
use super::super::scheduler::{SchedulerContext, SignatureMode, answer};
use super::super::server::{SchedulerRequestArrival, ServerState};
use super::fault_response::{fault_response, take_transport_fault};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, web};
use boinc_core::protocol::{
    MessagePriority, SchedulerReply, SchedulerRequest, ServerMessage, web_prefs_mod_time,
};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Inbox files are looked for at most this often.
const INBOX_SCAN_INTERVAL: Duration = Duration::from_secs(1);

fn now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

fn xml(reply: &SchedulerReply) -> HttpResponse {
    HttpResponse::Ok().content_type("text/xml").body(reply.to_xml())
}

pub(crate) async fn scheduler(
    state: web::Data<ServerState>,
    request: HttpRequest,
    body: Bytes,
) -> HttpResponse {
    state.metrics.scheduler_requests.fetch_add(1, Ordering::Relaxed);
    let transport_fault = take_transport_fault(&state, FaultTarget::Scheduler, None);
    state
        .metrics
        .scheduler_request_log
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .record(SchedulerRequestArrival { at: now(), fault: transport_fault.map(|f| f.name()) });
    if let Some(fault @ (Fault::Http500 | Fault::Hang { .. } | Fault::Reset)) = transport_fault {
        return fault_response(fault, &request, Bytes::new()).await;
    }
    let signatures = match state.faults.take(FaultTarget::Scheduler, None, Fault::is_reply_content)
    {
        Some(Fault::BadSignature) => SignatureMode::Bad,
        Some(Fault::MissingSignature) => SignatureMode::Missing,
        _ => SignatureMode::Valid,
    };
    let parsed = std::str::from_utf8(&body)
        .map_err(|e| e.to_string())
        .and_then(|text| SchedulerRequest::from_xml(text).map_err(|e| e.to_string()));
    let scheduler_request = match parsed {
        Ok(parsed) => parsed,
        Err(error) => {
            state.metrics.bad_scheduler_requests.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(peer = ?request.peer_addr(), %error, "unreadable scheduler request");
            let reply = SchedulerReply {
                project_name: Some(state.config.name.clone()),
                request_delay: Some(state.config.request_delay),
                messages: vec![ServerMessage {
                    priority: MessagePriority::High,
                    text: format!("The project could not read the request: {error}"),
                }],
                ..SchedulerReply::default()
            };
            return xml(&reply);
        }
    };
    let now = now();
    let wants_work =
        boinc_core::model::ResourceType::ALL.into_iter().any(|r| scheduler_request.requests(r));
    let result = {
        let signing = state.signing();
        let scan_inbox = {
            let mut last =
                state.last_inbox_scan.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let due = last.is_none_or(|at| at.elapsed() >= INBOX_SCAN_INTERVAL);
            if due {
                *last = Some(Instant::now());
            }
            due
        };
        let context = SchedulerContext {
            project_name: &state.config.name,
            master_url: &state.urls.master,
            download_url: &state.urls.download,
            upload_url: &state.urls.upload,
            apps: &signing.apps,
            keys: &signing.keys,
            request_delay: state.config.request_delay,
            max_jobs_in_progress_per_cpu: state.config.max_jobs_in_progress_per_cpu,
            signatures,
            messages: &state.config.messages,
            notice_feed: &state.urls.notices,
            // Checked when the server was configured; unreadable ones are never newer.
            web_prefs: state.config.web_prefs.as_deref().map(|text| {
                (text, web_prefs_mod_time(text, "--web-prefs").unwrap_or(f64::NEG_INFINITY))
            }),
            host_venue: state.config.host_venue.as_deref(),
        };
        let (outcome, change) = state.store.update(|records| {
            let mut generated = Ok(false);
            let mut rng = state.rng.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if scan_inbox {
                generated = state.generator.take_inbox(records, &signing.apps, now, &mut *rng);
            }
            if wants_work && generated.is_ok() {
                let wanted = (state.config.max_jobs_in_progress_per_cpu as usize)
                    * scheduler_request
                        .usable_instances(boinc_core::model::ResourceType::Cpu)
                        .max(1) as usize;
                generated = state
                    .generator
                    .top_up(records, &signing.apps, wanted, now, &mut *rng)
                    .map(|made| made || generated.unwrap_or(false));
            }
            drop(rng);
            let made = match generated {
                Ok(made) => made,
                Err(error) => {
                    tracing::error!(%error, "the work generator failed");
                    false
                }
            };
            let answer = answer(records, &context, &scheduler_request, now);
            let changed = answer.changed || made;
            (answer, changed)
        });
        (outcome, change)
    };
    let (answer, change) = result;
    if let Err(error) = state.store.saved(change).await {
        tracing::error!(%error, "a scheduler reply is held back: its changes are not saved");
        return HttpResponse::ServiceUnavailable().body(format!("{error}\n"));
    }
    tracing::info!(
        host = answer.hostid,
        reported = answer.reported,
        sent = answer.sent,
        resent = answer.resent,
        messages = ?answer.reply.messages.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
        "scheduler request"
    );
    match transport_fault {
        Some(fault) => {
            fault_response(fault, &request, answer.reply.to_xml().into_bytes().into()).await
        }
        None => xml(&answer.reply),
    }
}
