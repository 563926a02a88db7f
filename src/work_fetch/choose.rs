//! The per-resource work-fetch decision (seed 003 "Work fetch", "select_project()",
//! "send_req()"), with seed 002's low and high water marks: which resource needs work,
//! which project to ask, and how much of each resource to ask it for.
//!
//! The order is seed 003's: idle GPUs (NVIDIA, AMD, Intel), idle CPUs, GPU shortfall,
//! CPU shortfall. The first resource in that order for which some project may be asked
//! decides the project; the request then covers every resource that project may supply
//! and is not backed off for, except that a request made for idle GPUs asks no CPU work
//! and one made for idle CPUs asks no GPU work.

use super::legacy::choose_legacy;
use super::may_supply::may_supply_all;
use super::request::{FetchDecision, FetchReason, ProjectFetchInfo, ResourceRequest, WorkRequest};
use crate::Time;
use crate::model::{ClientState, ProjectFacts, ProjectId, ResourceMap, ResourceType, RunMode};
use crate::policy::Policy;
use crate::rr_sim::RrSimOutput;

use super::backoff::backed_off;

/// Decides whether to ask a project for work now, which project and how much.
///
/// `policy` picks how projects are ranked: `Seed` by overall LTD + the project's
/// shortfall for the resource (seed 003), `Rec` by REC priority (see
/// [`rec_priorities`]), `Legacy` by seed 001's ETTPRC work requests (CPU only).
pub fn choose_work_fetch(
    state: &ClientState,
    rr: &RrSimOutput,
    facts: &[ProjectFacts],
    policy: Policy,
    now: Time,
) -> FetchDecision {
    let mut candidates = project_infos(state, rr, now);
    let reason = if state.network_mode == RunMode::Never {
        Some(FetchReason::NetworkSuspended)
    } else if state.run_mode == RunMode::Never {
        Some(FetchReason::ComputingSuspended)
    } else {
        None
    };
    if let Some(reason) = reason {
        return FetchDecision { request: None, reason, candidates };
    }
    if let Some(request) = non_cpu_intensive_request(state, facts, &candidates) {
        return FetchDecision {
            request: Some(request),
            reason: FetchReason::NonCpuIntensiveIdle,
            candidates,
        };
    }
    match policy {
        Policy::Legacy => {
            let (request, reason) = choose_legacy(state, &mut candidates);
            FetchDecision { request, reason, candidates }
        }
        Policy::Seed | Policy::Rec => {
            let (request, reason) = choose_per_resource(state, rr, policy, &mut candidates);
            FetchDecision { request, reason, candidates }
        }
    }
}

/// What the decision knows about each project, gathered once per call.
fn project_infos(state: &ClientState, rr: &RrSimOutput, now: Time) -> Vec<ProjectFetchInfo> {
    let may_supply = may_supply_all(state);
    state
        .project_ids()
        .map(|id| {
            let project = state.project(id);
            let shortfall = rr
                .projects
                .get(id.index())
                .map_or_else(ResourceMap::default, |p| p.shortfall.map(|_, &s| s.max(0.0)));
            ProjectFetchInfo {
                project: id,
                overall_long_term_debt: state.overall_long_term_debt(id),
                shortfall,
                backed_off: ResourceMap::from_fn(|r| backed_off(project, r, now)),
                may_supply: may_supply[id.index()],
                fetchable: state.project_fetchable(id, now),
                overworked: state.project_overworked(id),
                latency_limited: state.project_latency_limited(id, now),
                score: ResourceMap::default(),
            }
        })
        .collect()
}

/// Whether the project may be asked for work at all now (resource aside).
pub(crate) fn askable(state: &ClientState, info: &ProjectFetchInfo) -> bool {
    info.fetchable && !info.latency_limited && !state.project(info.project).non_cpu_intensive
}

/// Seed 000: a non-CPU-intensive project is asked for work whenever it has no nearly
/// runnable job; it doesn't compete for processors, so it comes before the others.
fn non_cpu_intensive_request(
    state: &ClientState,
    facts: &[ProjectFacts],
    candidates: &[ProjectFetchInfo],
) -> Option<WorkRequest> {
    let info = candidates.iter().find(|info| {
        let project = state.project(info.project);
        let has_job = facts
            .get(info.project.index())
            .is_some_and(|f| f.nearly_runnable.0.iter().any(|&n| n > 0) || f.downloading > 0);
        project.non_cpu_intensive
            && info.fetchable
            && !info.latency_limited
            && !info.backed_off[ResourceType::Cpu]
            && !has_job
    })?;
    let mut resources = ResourceMap::<ResourceRequest>::default();
    resources[ResourceType::Cpu] = ResourceRequest { req_seconds: 1.0, req_ninstances: 0.0 };
    Some(WorkRequest { project: info.project, resources, work_req_seconds: 1.0 })
}

/// One step of seed 003's order: the resource, why, and which resources the request
/// must leave out.
struct Step {
    resource: ResourceType,
    reason: FetchReason,
    zeroed: ResourceMap<bool>,
}

fn steps(
    state: &ClientState,
    rr: &RrSimOutput,
    usable: &ResourceMap<bool>,
) -> impl Iterator<Item = Step> {
    let work_buf_min = state.prefs.work_buf_min();
    let minimal = state.config.fetch_minimal_work;
    let idle = ResourceMap::from_fn(|r| usable[r] && rr.resources[r].nidle > 0.0);
    let short = ResourceMap::from_fn(|r| {
        let sim = rr.resources[r];
        usable[r] && !minimal && sim.shortfall > 0.0 && sim.saturated_time < work_buf_min
    });
    let only_gpus = ResourceMap::from_fn(|r| r == ResourceType::Cpu);
    let only_cpu = ResourceMap::from_fn(|r| r.is_gpu());
    let none = ResourceMap::default();
    let gpu_idle = ResourceType::GPUS.into_iter().filter(move |&r| idle[r]).map(move |r| Step {
        resource: r,
        reason: FetchReason::IdleInstances(r),
        zeroed: only_gpus,
    });
    let cpu_idle = idle[ResourceType::Cpu].then_some(Step {
        resource: ResourceType::Cpu,
        reason: FetchReason::IdleInstances(ResourceType::Cpu),
        zeroed: only_cpu,
    });
    let gpu_short = ResourceType::GPUS.into_iter().filter(move |&r| short[r]).map(move |r| Step {
        resource: r,
        reason: FetchReason::Shortfall(r),
        zeroed: none,
    });
    let cpu_short = short[ResourceType::Cpu].then_some(Step {
        resource: ResourceType::Cpu,
        reason: FetchReason::Shortfall(ResourceType::Cpu),
        zeroed: none,
    });
    gpu_idle.chain(cpu_idle).chain(gpu_short).chain(cpu_short)
}

fn choose_per_resource(
    state: &ClientState,
    rr: &RrSimOutput,
    policy: Policy,
    candidates: &mut [ProjectFetchInfo],
) -> (Option<WorkRequest>, FetchReason) {
    let usable = ResourceMap::from_fn(|r| {
        state.instances(r) > 0 && !(r.is_gpu() && state.gpu_mode == RunMode::Never)
    });
    let priorities = (policy == Policy::Rec).then(|| rec_priorities(state));
    let mut unserved = None;
    for step in steps(state, rr, &usable) {
        let idle_now = rr.resources[step.resource].nidle > 0.0;
        match select_project(state, rr, step.resource, idle_now, priorities.as_deref(), candidates)
        {
            Some(project) => {
                let request = send_req(state, rr, &candidates[project.index()], &usable, &step);
                return (Some(request), step.reason);
            }
            None => {
                unserved.get_or_insert(step.resource);
            }
        }
    }
    (None, unserved.map_or(FetchReason::BufferFull, FetchReason::NoFetchableProject))
}

/// Seed 003 select_project(R): among the projects that may be asked, are not backed off
/// for R and may supply it, the one ranked highest. Projects with a zero resource share
/// are backups: asked only when R has idle instances and no project with a share can
/// be (so that they don't fetch every few minutes).
fn select_project(
    state: &ClientState,
    rr: &RrSimOutput,
    resource: ResourceType,
    idle_now: bool,
    rec_priority: Option<&[f64]>,
    candidates: &mut [ProjectFetchInfo],
) -> Option<ProjectId> {
    let horizon = if rr.horizon > 0.0 { rr.horizon } else { 1.0 };
    let mut best: Option<(bool, f64, f64, ProjectId)> = None;
    for info in candidates.iter_mut() {
        if !askable(state, info) || info.backed_off[resource] || !info.may_supply[resource] {
            continue;
        }
        let has_share = state.project(info.project).resource_share > 0.0;
        if !has_share && !idle_now {
            continue;
        }
        let shortfall = info.shortfall[resource];
        // Seed: one score, LTD + shortfall. Rec: the REC priority first, the
        // project's shortfall (as a fraction of the horizon) breaking ties.
        let (primary, secondary) = match rec_priority {
            Some(priorities) => {
                (priorities.get(info.project.index()).copied().unwrap_or(0.0), shortfall / horizon)
            }
            None => (info.overall_long_term_debt + shortfall, 0.0),
        };
        info.score[resource] = Some(primary);
        let key = (has_share, primary, secondary, info.project);
        let better = match best {
            None => true,
            Some((b_share, b_primary, b_secondary, _)) => {
                (has_share && !b_share)
                    || (has_share == b_share
                        && (primary > b_primary
                            || (primary == b_primary && secondary > b_secondary)))
            }
        };
        if better {
            best = Some(key);
        }
    }
    best.map(|(_, _, _, p)| p)
}

/// Seed 003 send_req(p): every resource the project may supply and is not backed off
/// for gets its whole shortfall and idle instances, unless the step zeroes it.
fn send_req(
    state: &ClientState,
    rr: &RrSimOutput,
    info: &ProjectFetchInfo,
    usable: &ResourceMap<bool>,
    step: &Step,
) -> WorkRequest {
    let minimal = state.config.fetch_minimal_work;
    let resources = ResourceMap::from_fn(|r| {
        if !usable[r] || step.zeroed[r] || info.backed_off[r] || !info.may_supply[r] {
            return ResourceRequest::default();
        }
        let sim = rr.resources[r];
        let nidle = sim.nidle.max(0.0);
        // fetch_minimal_work: just enough jobs for the idle instances; the seconds are
        // a token so servers that read only seconds still send something.
        let req_seconds =
            if minimal { if nidle > 0.0 { 1.0 } else { 0.0 } } else { sim.shortfall.max(0.0) };
        ResourceRequest { req_seconds, req_ninstances: nidle }
    });
    let work_req_seconds = resources.0.iter().map(|r| r.req_seconds).fold(0.0, f64::max);
    WorkRequest { project: info.project, resources, work_req_seconds }
}

/// REC priority of every project (modern BOINC, `--policy rec`): minus the project's
/// fraction of the recent estimated credit over its fraction of the resource share,
/// both among the projects that are not suspended. Higher is asked first; a project
/// that got less than its share recently is above one that got more.
///
/// Kept local to work fetch for now; `accounting::rec` computes the same figure for the
/// CPU scheduler, and the two are to be unified. REC is used as stored (not decayed to
/// `now`): the decay scales every project alike when they were updated together.
pub fn rec_priorities(state: &ClientState) -> Vec<f64> {
    let active = |p: ProjectId| !state.project(p).suspended;
    let total_share = state.total_share(active);
    let total_rec: f64 = state
        .project_ids()
        .filter(|&p| active(p))
        .map(|p| state.project(p).rec.max(0.0))
        .filter(|r| r.is_finite())
        .sum();
    state
        .projects
        .iter()
        .map(|project| {
            if total_rec <= 0.0 || total_share <= 0.0 || !project.rec.is_finite() {
                return 0.0;
            }
            let rec_fraction = project.rec.max(0.0) / total_rec;
            let share_fraction = (project.resource_share.max(0.0) / total_share).max(1e-6);
            -rec_fraction / share_fraction
        })
        .collect()
}
