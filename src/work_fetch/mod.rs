//! Work fetch (seed 003; seed 000 scalar fallback; seed 001 ETTPRC for `legacy`): when
//! to ask which project for how much of which processing resource's work, per-(project,
//! resource) backoff, and what a scheduler reply changes.

mod backoff;
mod choose;
mod intermittent;
mod job_cap;
mod latency_cap;
mod legacy;
mod may_supply;
mod outlook;
mod reply;
mod request;
mod scalar;

pub use backoff::{
    MAX_BACKOFF_INTERVAL, MIN_BACKOFF_INTERVAL, back_off, backed_off, clear_backoff,
};
pub use choose::{
    FetchChoice, choose_work_fetch, fetch_outlook, piggyback_request, select_work_fetch,
};
pub use intermittent::{INTERMITTENT_MEMORY, TOP_UP_FRACTION, intermittent, top_up_threshold};
pub use job_cap::{MAX_RUNNABLE_JOBS, RUNNABLE_JOBS_PER_INSTANCE, runnable_job_cap};
pub(crate) use latency_cap::{BatchingScratch, report_batching_into};
pub use latency_cap::{LATENCY_REFILL, MIN_BATCH_JOBS, report_batching};
pub use legacy::{LegacyWorkRequests, legacy_work_requests};
pub use may_supply::{app_version_resources, may_supply, may_supply_all};
pub(crate) use outlook::FetchScratch;
pub(crate) use outlook::fetch_outlook_with;
pub use outlook::{FetchOutlook, ProjectCaps, ResourceOutlook};
pub use reply::{MIN_LATENCY_LIMIT, WorkReply, apply_work_reply, handle_work_reply};
pub use request::{
    FetchDecision, FetchReason, ProjectFetchInfo, ResourceRequest, Urgency, WorkRequest,
};
pub use scalar::{project_normalised_work_request, scalar_work_request_sizes};
