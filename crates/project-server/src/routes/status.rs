//! `GET /status`: the project's figures as one JSON object, for people and tests:
//! `jobs_sent`, `results_received`, `results_validated` and the other counters, the
//! jobs by state, for each job how often it was sent and reported, and the latest
//! scheduler requests' arrivals (with the fault each was answered with on purpose).

use super::super::records::{JobStatus, Outcome};
use super::super::server::ServerState;
use actix_web::{HttpResponse, web};
use serde_json::json;
use std::sync::atomic::Ordering;

pub(crate) async fn status(state: web::Data<ServerState>) -> HttpResponse {
    let metrics = &state.metrics;
    let load = |counter: &std::sync::atomic::AtomicU64| counter.load(Ordering::Relaxed);
    let signing = state.signing();
    let key_md5 =
        boinc_core::protocol::code_signing::md5_hex(signing.keys.public().to_text().as_bytes());
    let apps: Vec<_> = signing
        .apps
        .iter()
        .map(|a| json!({"name": a.name, "file": a.file_name, "nbytes": a.nbytes, "md5": a.md5}))
        .collect();
    drop(signing);
    let scheduler_request_log: Vec<_> = metrics
        .scheduler_request_log
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .arrivals()
        .copied()
        .collect();
    let body = state.store.read(|records| {
        let counters = records.counters;
        let (mut unsent, mut in_progress, mut reported) = (0u64, 0u64, 0u64);
        let results: Vec<_> = records
            .jobs
            .values()
            .map(|job| {
                let (status, hostid, outcome, reported_at) = match &job.status {
                    JobStatus::Unsent => {
                        unsent += 1;
                        ("unsent", None, None, None)
                    }
                    JobStatus::InProgress { hostid, .. } => {
                        in_progress += 1;
                        ("in_progress", Some(*hostid), None, None)
                    }
                    JobStatus::Reported { hostid, outcome, received } => {
                        reported += 1;
                        let outcome = match outcome {
                            Outcome::Valid => ("valid", None),
                            Outcome::Invalid { reason } => ("invalid", Some(reason.as_str())),
                            Outcome::ClientError { .. } => ("client_error", None),
                        };
                        ("reported", Some(*hostid), Some(outcome), Some(*received))
                    }
                };
                json!({
                    "name": job.name,
                    "app": job.app,
                    "status": status,
                    "hostid": hostid,
                    "outcome": outcome.map(|(name, _)| name),
                    "invalid_reason": outcome.and_then(|(_, reason)| reason),
                    "reported_at": reported_at,
                    "times_sent": job.times_sent,
                    "times_reported": job.times_reported,
                    "misbehaviour": job.misbehaviour.name(),
                    "report": job.report,
                })
            })
            .collect();
        json!({
            "project_name": state.config.name,
            "url": state.urls.master,
            "uptime_seconds": state.started.elapsed().as_secs_f64(),
            "code_sign_key_md5": key_md5,
            "apps": apps,
            "accounts": records.accounts.len(),
            "hosts": records.hosts.len(),
            "jobs_created": counters.jobs_created,
            "jobs_unsent": unsent,
            "jobs_in_progress": in_progress,
            "jobs_reported": reported,
            "jobs_sent": counters.jobs_sent,
            "jobs_resent": counters.jobs_resent,
            "results_received": counters.results_received,
            "results_validated": counters.results_validated,
            "results_invalid": counters.results_invalid,
            "results_failed": counters.results_failed,
            "duplicate_reports": counters.duplicate_reports,
            "unknown_reports": counters.unknown_reports,
            "uploads_completed": counters.uploads_completed,
            "master_requests": load(&metrics.master_requests),
            "scheduler_requests": load(&metrics.scheduler_requests),
            "bad_scheduler_requests": load(&metrics.bad_scheduler_requests),
            "downloads": load(&metrics.downloads),
            "download_bytes": load(&metrics.download_bytes),
            "upload_requests": load(&metrics.upload_requests),
            "account_manager_url": state.urls.account_manager,
            "account_manager_requests": load(&metrics.account_manager_requests),
            "account_manager_hosts": state.account_manager.hosts(),
            "faults_applied": state.faults.applied().len(),
            "results": results,
            "scheduler_request_log": scheduler_request_log,
        })
    });
    HttpResponse::Ok().json(body)
}
