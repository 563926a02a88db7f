//! What the work-fetch choice reads, gathered from one state and its round-robin
//! simulation (seed 003 "Work fetch": per resource the shortfall, idle instances and
//! saturated time; per project its long-term debt, its own shortfall, its backoffs and
//! what it may supply), so that the choice itself ([`super::select_work_fetch`]) is a
//! function of this outlook alone.
//!
//! The split is the actors' seam (docs/design.md "The actors"): the scheduler's
//! decision builds the outlook, the fetch actor picks the project from it. Everything
//! the choice could ask of the state is answered here, including the latency caps
//! (`latency_cap`) of every project, which are worked out only when some resource
//! needs work at all.

use super::backoff::backed_off;
use super::intermittent::{host_intermittent, intermittent, top_up_threshold};
use super::job_cap::{job_cap_reached_with, job_caps};
use super::latency_cap::{BookingScratch, latency_bookings_each};
use super::legacy::{LegacyWorkRequests, legacy_work_requests};
use super::may_supply::{app_version_resources_into, may_supply_from};
use super::request::{FetchReason, ProjectFetchInfo, Urgency};
use crate::Time;
use crate::accounting::rec::rec_priorities;
use crate::model::{ClientState, ProjectFacts, ProjectId, ResourceMap, ResourceType, RunMode};
use crate::policy::Policy;
use crate::rr_sim::RrSimOutput;
use serde::Serialize;

/// One processing resource as the work-fetch choice sees it: what the round-robin
/// simulation says of its buffer (seed 003's `shortfall`, `nidle`, `saturated_time`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ResourceOutlook {
    /// The host has instances of it, and GPUs are not switched off.
    pub usable: bool,
    /// Instances idle now.
    pub nidle: f64,
    /// Instance-seconds of idleness within the buffer's horizon.
    pub shortfall: f64,
    /// Seconds until the first instance goes idle.
    pub saturated_time: f64,
    /// The shortfall from which an intermittent project tops the resource up
    /// ([`top_up_threshold`]).
    pub top_up_threshold: f64,
}

impl ResourceOutlook {
    /// Resource `r` of `state` as the round-robin simulation `rr` left it, topped up from
    /// `top_up_threshold`.
    pub(crate) fn of(
        state: &ClientState,
        rr: &RrSimOutput,
        r: ResourceType,
        top_up_threshold: f64,
    ) -> Self {
        let sim = rr.resources[r];
        ResourceOutlook {
            usable: usable(state, r),
            nidle: sim.nidle,
            shortfall: sim.shortfall,
            saturated_time: sim.saturated_time,
            top_up_threshold,
        }
    }
}

/// What the latency cap leaves a project of each resource (see `latency_cap`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ProjectCaps {
    /// The most instance-seconds worth asking for (infinite where no cap applies).
    pub room: ResourceMap<f64>,
    /// Whether the project, where it is intermittent, may top the resource up: it failed
    /// recently, or its cap leaves room for its fair part of a full buffer.
    pub may_top_up: ResourceMap<bool>,
}

/// Everything one work-fetch choice reads.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct FetchOutlook {
    /// When it was gathered.
    pub now: Time,
    /// How projects are ranked.
    pub policy: Policy,
    /// Why no work may be asked for at all (network or computing switched off).
    pub blocked: Option<FetchReason>,
    /// Per resource.
    pub resources: ResourceMap<ResourceOutlook>,
    /// The low water mark, seconds (seed 002 `work_buf_min`).
    pub work_buf_min: f64,
    /// The high water mark, seconds (seed 002 `work_buf_min + work_buf_additional`).
    pub work_buf_total: f64,
    /// The round-robin simulation's horizon, seconds.
    pub horizon: f64,
    /// cc_config `fetch_minimal_work`: only enough jobs for the idle instances.
    pub fetch_minimal_work: bool,
    /// Per project (indexed by project id).
    pub candidates: Vec<ProjectFetchInfo>,
    /// Per project (indexed by project id), where some resource needs work; empty
    /// otherwise (no choice will read them).
    pub caps: Vec<ProjectCaps>,
    /// Seed 001's figures, for the `legacy` policy only.
    pub legacy: Option<LegacyWorkRequests>,
}

impl FetchOutlook {
    /// Whether a choice over this outlook could ask for work: some resource is idle or
    /// short (or may be topped up), a non-CPU-intensive project is out of work, or the
    /// legacy policy sees a project starving. `false` is certain; `true` is a maybe, for
    /// the choice to settle.
    pub fn may_request(&self) -> bool {
        if self.blocked.is_some() {
            return false;
        }
        if self.candidates.iter().any(|info| info.non_cpu_intensive && !info.has_job) {
            return true;
        }
        match self.policy {
            Policy::Legacy => {
                self.resources[ResourceType::Cpu].usable
                    && self.legacy.as_ref().is_some_and(|l| l.urgency != Urgency::DontNeedWork)
            }
            Policy::Seed | Policy::Rec => self.needs_work(),
        }
    }

    /// Whether some resource is idle, short or between the water marks.
    pub(crate) fn needs_work(&self) -> bool {
        self.resources.0.iter().any(|r| r.usable && (r.nidle > 0.0 || r.shortfall > 0.0))
    }
}

/// The lists an outlook is gathered in, kept by a caller that decides again and again
/// so that gathering allocates nothing once they have grown.
#[derive(Debug, Clone, Default)]
pub(crate) struct FetchScratch {
    /// The candidates' list of an outlook no longer needed.
    spare_candidates: Vec<ProjectFetchInfo>,
    /// The caps' list of an outlook no longer needed.
    spare_caps: Vec<ProjectCaps>,
    /// Per project, the resources it has an app version for.
    has_version: Vec<ResourceMap<bool>>,
    /// The latency caps' sums.
    bookings: BookingScratch,
}

impl FetchScratch {
    /// Keeps the lists of an outlook the caller is done with.
    pub(crate) fn recycle(&mut self, outlook: FetchOutlook) {
        self.spare_candidates = outlook.candidates;
        self.spare_caps = outlook.caps;
    }
}

/// The outlook of `state`, whose round-robin simulation is `rr` and project facts
/// `facts`, at `now`, gathered in `scratch`'s lists.
pub(crate) fn fetch_outlook_with(
    state: &ClientState,
    rr: &RrSimOutput,
    facts: &[ProjectFacts],
    policy: Policy,
    now: Time,
    scratch: &mut FetchScratch,
) -> FetchOutlook {
    let mut candidates = std::mem::take(&mut scratch.spare_candidates);
    project_infos(state, rr, facts, policy, now, &mut scratch.has_version, &mut candidates);
    let blocked = if state.network_mode == RunMode::Never {
        Some(FetchReason::NetworkSuspended)
    } else if state.run_mode == RunMode::Never {
        Some(FetchReason::ComputingSuspended)
    } else {
        None
    };
    let resources =
        ResourceMap::from_fn(|r| ResourceOutlook::of(state, rr, r, top_up_threshold(state, r)));
    let mut caps = std::mem::take(&mut scratch.spare_caps);
    caps.clear();
    let mut outlook = FetchOutlook {
        now,
        policy,
        blocked,
        resources,
        work_buf_min: state.prefs.work_buf_min(),
        work_buf_total: state.prefs.work_buf_total(),
        horizon: rr.horizon,
        fetch_minimal_work: state.config.fetch_minimal_work,
        candidates,
        caps,
        legacy: None,
    };
    if outlook.blocked.is_none() {
        match policy {
            Policy::Legacy => outlook.legacy = Some(legacy_work_requests(state)),
            Policy::Seed | Policy::Rec => {
                if outlook.needs_work() {
                    project_caps(state, facts, rr, now, &mut scratch.bookings, &mut outlook.caps);
                }
            }
        }
    }
    outlook
}

/// Whether the host computes with `r` at all.
pub(crate) fn usable(state: &ClientState, r: ResourceType) -> bool {
    state.instances(r) > 0 && !(r.is_gpu() && state.gpu_mode == RunMode::Never)
}

/// Every project's [`ProjectCaps`] into `caps` (indexed by project id), from one pass
/// over the jobs.
fn project_caps(
    state: &ClientState,
    facts: &[ProjectFacts],
    rr: &RrSimOutput,
    now: Time,
    bookings: &mut BookingScratch,
    caps: &mut Vec<ProjectCaps>,
) {
    let buffer = state.prefs.work_buf_total();
    latency_bookings_each(state, facts, rr, bookings, |id, booking| {
        let recently_failed = intermittent(state.project(id), now);
        let share = rr.projects.get(id.index()).map(|p| p.share).unwrap_or_default();
        caps.push(ProjectCaps {
            room: booking.map(|_, b| b.room()),
            may_top_up: ResourceMap::from_fn(|r| {
                recently_failed || !booking[r].binds(share[r], buffer)
            }),
        });
    });
}

/// What the decision knows about each project, gathered once per call into `infos`
/// (whatever it held is replaced); `has_version` is a buffer for the app versions'
/// resources (see [`app_version_resources_into`]).
fn project_infos(
    state: &ClientState,
    rr: &RrSimOutput,
    facts: &[ProjectFacts],
    policy: Policy,
    now: Time,
    has_version: &mut Vec<ResourceMap<bool>>,
    infos: &mut Vec<ProjectFetchInfo>,
) {
    app_version_resources_into(state, has_version);
    let host = HostFacts::of(state, policy);
    infos.clear();
    infos.extend(state.project_ids().zip(has_version.iter()).map(|(id, has_version)| {
        let may_supply = may_supply_from(state.project(id), has_version);
        project_info(state, rr, facts, id, may_supply, &host, now)
    }));
}

/// What every project's [`ProjectFetchInfo`] reads of the host, looked up once.
pub(crate) struct HostFacts {
    /// [`host_intermittent`]'s answer.
    intermittent: bool,
    /// The resources' weights in the overall debt ([`ClientState::debt_weights`]).
    debt_weights: ResourceMap<Option<f64>>,
    /// The resources' job caps ([`job_caps`]).
    job_caps: ResourceMap<usize>,
    /// REC priorities by project, for the `rec` policy.
    rec_priorities: Option<Vec<f64>>,
}

impl HostFacts {
    pub(crate) fn of(state: &ClientState, policy: Policy) -> Self {
        HostFacts {
            intermittent: host_intermittent(state),
            debt_weights: state.debt_weights(),
            job_caps: job_caps(state),
            rec_priorities: (policy == Policy::Rec).then(|| rec_priorities(state)),
        }
    }
}

/// What the decision knows about project `id`, which may supply `may_supply`. Inlined
/// into the gathering of every project's facts at every decision, so that the record is
/// written in its place in the list rather than returned and copied there.
#[inline(always)]
pub(crate) fn project_info(
    state: &ClientState,
    rr: &RrSimOutput,
    facts: &[ProjectFacts],
    id: ProjectId,
    may_supply: ResourceMap<bool>,
    host: &HostFacts,
    now: Time,
) -> ProjectFetchInfo {
    let project = state.project(id);
    let shortfall = rr
        .projects
        .get(id.index())
        .map_or_else(ResourceMap::default, |p| p.shortfall.map(|_, &s| s.max(0.0)));
    // `project_overworked`, from the debt already at hand.
    let overall_long_term_debt = state.overall_long_term_debt_weighted(id, &host.debt_weights);
    let fetchable = state.project_fetchable(id, now);
    let latency_limited = state.project_latency_limited(id, now);
    let project_facts = facts.get(id.index());
    let has_job = project_facts
        .is_some_and(|f| f.nearly_runnable.0.iter().any(|&n| n > 0) || f.downloading > 0);
    let scheduling_period = state.prefs.scheduling_period();
    ProjectFetchInfo {
        project: id,
        overall_long_term_debt,
        shortfall,
        backed_off: ResourceMap::from_fn(|r| backed_off(project, r, now)),
        may_supply,
        fetchable,
        overworked: overall_long_term_debt < -scheduling_period,
        latency_limited,
        intermittent: host.intermittent || intermittent(project, now),
        job_cap_reached: job_cap_reached_with(&host.job_caps, project_facts),
        score: ResourceMap::default(),
        askable: fetchable && !latency_limited && !project.non_cpu_intensive,
        has_share: project.resource_share > 0.0,
        overworked_for: project.resources.map(|_, r| r.long_term_debt < -scheduling_period),
        non_cpu_intensive: project.non_cpu_intensive,
        has_job,
        rec_priority: host
            .rec_priorities
            .as_ref()
            .map(|p| p.get(id.index()).copied().unwrap_or(0.0)),
    }
}
