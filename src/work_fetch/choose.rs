//! The per-resource work-fetch choice (seed 003 "Work fetch", "select_project()",
//! "send_req()"), with seed 002's low and high water marks: which resource needs work,
//! which project to ask, and how much of each resource to ask it for.
//!
//! The order is seed 003's: idle GPUs (NVIDIA, AMD, Intel), idle CPUs, GPU shortfall,
//! CPU shortfall. The first resource in that order for which some project may be asked
//! decides the project; the request then covers every resource that project may supply
//! and is not backed off for, except that a request made for idle GPUs asks no CPU work
//! and one made for idle CPUs asks no GPU work.
//!
//! The choice ([`select_work_fetch`]) reads only a [`FetchOutlook`]: the state's part is
//! gathered first (`outlook`), so that whoever holds the outlook (the fetch actor) makes
//! the choice without the state.

use super::latency_cap::latency_caps;
use super::legacy::choose_legacy;
use super::may_supply::project_may_supply;
use super::outlook::{
    FetchOutlook, FetchScratch, HostFacts, ProjectCaps, ResourceOutlook, fetch_outlook_with,
    project_info,
};
use super::request::{FetchDecision, FetchReason, ProjectFetchInfo, ResourceRequest, WorkRequest};
use crate::Time;
use crate::model::{ClientState, ProjectFacts, ProjectId, ResourceMap, ResourceType, RunMode};
use crate::policy::Policy;
use crate::rpc_policy::ReportBatching;
use crate::rr_sim::RrSimOutput;
use serde::{Deserialize, Serialize};

/// Decides whether to ask a project for work now, which project and how much.
///
/// `policy` picks how projects are ranked: `Seed` by overall LTD + the project's
/// shortfall for the resource (seed 003), `Rec` by REC priority (see
/// [`crate::accounting::rec::rec_priorities`]), `Legacy` by seed 001's ETTPRC work
/// requests (CPU only). The same as [`select_work_fetch`] over [`fetch_outlook`].
pub fn choose_work_fetch(
    state: &ClientState,
    rr: &RrSimOutput,
    facts: &[ProjectFacts],
    policy: Policy,
    now: Time,
) -> FetchDecision {
    let mut outlook = fetch_outlook(state, rr, facts, policy, now);
    let choice = select_work_fetch(&mut outlook);
    FetchDecision { request: choice.request, reason: choice.reason, candidates: outlook.candidates }
}

/// What the work-fetch choice reads of `state` (whose round-robin simulation is `rr` and
/// project facts `facts`) at `now`.
pub fn fetch_outlook(
    state: &ClientState,
    rr: &RrSimOutput,
    facts: &[ProjectFacts],
    policy: Policy,
    now: Time,
) -> FetchOutlook {
    fetch_outlook_with(state, rr, facts, policy, now, &mut FetchScratch::default())
}

/// A work-fetch choice: the request to make, if any, and why.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FetchChoice {
    /// The request to make, if any.
    pub request: Option<WorkRequest>,
    /// Why this request, or why none.
    pub reason: FetchReason,
}

/// Seed 003's choice over `outlook`: the project to ask and how much, or why none. Each
/// candidate's ranking score is written into `outlook.candidates` (for `explain`).
pub fn select_work_fetch(outlook: &mut FetchOutlook) -> FetchChoice {
    if let Some(reason) = outlook.blocked {
        return FetchChoice { request: None, reason };
    }
    if let Some(request) = non_cpu_intensive_request(&outlook.candidates) {
        return FetchChoice { request: Some(request), reason: FetchReason::NonCpuIntensiveIdle };
    }
    let (request, reason) = match outlook.policy {
        Policy::Legacy => {
            let cpu = outlook.resources[ResourceType::Cpu].usable;
            choose_legacy(cpu, outlook.legacy.as_ref(), &mut outlook.candidates)
        }
        Policy::Seed | Policy::Rec => choose_per_resource(outlook),
    };
    FetchChoice { request, reason }
}

/// Seed 000: a non-CPU-intensive project is asked for work whenever it has no nearly
/// runnable job; it doesn't compete for processors, so it comes before the others.
fn non_cpu_intensive_request(candidates: &[ProjectFetchInfo]) -> Option<WorkRequest> {
    let info = candidates.iter().find(|info| {
        info.non_cpu_intensive
            && info.fetchable
            && !info.latency_limited
            && !info.backed_off[ResourceType::Cpu]
            && !info.has_job
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
    /// A top-up step: only intermittent projects whose own shortfall for the resource
    /// reaches the top-up threshold may be asked, and only for that shortfall.
    top_up: Option<f64>,
}

fn steps(outlook: &FetchOutlook) -> impl Iterator<Item = Step> + use<> {
    let resources = outlook.resources;
    let work_buf_min = outlook.work_buf_min;
    let minimal = outlook.fetch_minimal_work;
    let idle = ResourceMap::from_fn(|r| resources[r].usable && resources[r].nidle > 0.0);
    let short = ResourceMap::from_fn(|r| {
        let sim = resources[r];
        sim.usable && !minimal && sim.shortfall > 0.0 && sim.saturated_time < work_buf_min
    });
    let only_gpus = ResourceMap::from_fn(|r| r == ResourceType::Cpu);
    let only_cpu = ResourceMap::from_fn(|r| r.is_gpu());
    let none = ResourceMap::default();
    let gpu_idle = ResourceType::GPUS.into_iter().filter(move |&r| idle[r]).map(move |r| Step {
        resource: r,
        reason: FetchReason::IdleInstances(r),
        zeroed: only_gpus,
        top_up: None,
    });
    let cpu_idle = idle[ResourceType::Cpu].then_some(Step {
        resource: ResourceType::Cpu,
        reason: FetchReason::IdleInstances(ResourceType::Cpu),
        zeroed: only_cpu,
        top_up: None,
    });
    let gpu_short = ResourceType::GPUS.into_iter().filter(move |&r| short[r]).map(move |r| Step {
        resource: r,
        reason: FetchReason::Shortfall(r),
        zeroed: none,
        top_up: None,
    });
    let cpu_short = short[ResourceType::Cpu].then_some(Step {
        resource: ResourceType::Cpu,
        reason: FetchReason::Shortfall(ResourceType::Cpu),
        zeroed: none,
        top_up: None,
    });
    // Last, resources between the water marks that an intermittent project may top up
    // (GPUs first, as above); the low-water steps already cover the others.
    let top_up_order = ResourceType::GPUS.into_iter().chain([ResourceType::Cpu]);
    let top_ups = top_up_order
        .filter(move |&r| {
            resources[r].usable && !minimal && !short[r] && !idle[r] && resources[r].shortfall > 0.0
        })
        .map(move |r| Step {
            resource: r,
            reason: FetchReason::TopUp(r),
            zeroed: none,
            top_up: Some(resources[r].top_up_threshold),
        });
    gpu_idle.chain(cpu_idle).chain(gpu_short).chain(cpu_short).chain(top_ups)
}

fn choose_per_resource(outlook: &mut FetchOutlook) -> (Option<WorkRequest>, FetchReason) {
    let mut unserved = None;
    let mut excluded: Vec<ProjectId> = Vec::new();
    for step in steps(outlook) {
        let idle_now = outlook.resources[step.resource].nidle > 0.0;
        excluded.clear();
        loop {
            let Some(project) = select_project(outlook, &step, idle_now, &excluded) else {
                // A top-up is optional: without an intermittent project to ask, the
                // buffer is as full as seed 002 wants it.
                if step.top_up.is_none() {
                    unserved.get_or_insert(step.resource);
                }
                break;
            };
            // A project whose share of the resource is already booked up to its
            // latency is not asked: the next best one is.
            let caps = caps_of(outlook, project).room;
            if caps[step.resource] <= 0.0 {
                excluded.push(project);
                continue;
            }
            let info = &outlook.candidates[project.index()];
            let request = send_req(outlook, info, &step, &caps);
            return (Some(request), step.reason);
        }
    }
    (None, unserved.map_or(FetchReason::BufferFull, FetchReason::NoFetchableProject))
}

/// `project`'s caps in `outlook`; none at all where they were not gathered (no resource
/// needed work, so no step reads them).
fn caps_of(outlook: &FetchOutlook, project: ProjectId) -> ProjectCaps {
    outlook.caps.get(project.index()).copied().unwrap_or(ProjectCaps {
        room: ResourceMap::from_fn(|_| f64::INFINITY),
        may_top_up: ResourceMap::from_fn(|_| true),
    })
}

/// Seed 003 select_project(R): among the projects that may be asked, are not backed off
/// for R and may supply it, the one ranked highest. Projects with a zero resource share
/// are backups: asked only when R has idle instances and no project with a share can
/// be (so that they don't fetch every few minutes).
fn select_project(
    outlook: &mut FetchOutlook,
    step: &Step,
    idle_now: bool,
    excluded: &[ProjectId],
) -> Option<ProjectId> {
    let resource = step.resource;
    let horizon = if outlook.horizon > 0.0 { outlook.horizon } else { 1.0 };
    let mut best: Option<(bool, f64, f64, ProjectId)> = None;
    for index in 0..outlook.candidates.len() {
        let info = &outlook.candidates[index];
        if !info.askable
            || excluded.contains(&info.project)
            || info.backed_off[resource]
            || info.job_cap_reached[resource]
            || !info.may_supply[resource]
            || info.overworked_for[resource]
            || step.top_up.is_some_and(|threshold| !tops_up(outlook, info, resource, threshold))
        {
            continue;
        }
        let has_share = info.has_share;
        if !has_share && !idle_now {
            continue;
        }
        let shortfall = info.shortfall[resource];
        // Seed: one score, LTD + shortfall. Rec: the REC priority first, the
        // project's shortfall (as a fraction of the horizon) breaking ties.
        let (primary, secondary) = match info.rec_priority {
            Some(priority) if outlook.policy == Policy::Rec => (priority, shortfall / horizon),
            _ => (info.overall_long_term_debt + shortfall, 0.0),
        };
        let project = info.project;
        outlook.candidates[index].score[resource] = Some(primary);
        let key = (has_share, primary, secondary, project);
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

/// Whether an intermittent project tops `resource` up now: its own shortfall there
/// reaches `threshold`, and it is intermittent because its server failed recently, or
/// because the host is often out of reach and its deadlines leave room for work queued
/// against an outage (a project whose latency cap keeps it from holding its share of a
/// full buffer would only miss them).
fn tops_up(
    outlook: &FetchOutlook,
    info: &ProjectFetchInfo,
    resource: ResourceType,
    threshold: f64,
) -> bool {
    info.intermittent
        && info.shortfall[resource] >= threshold
        && caps_of(outlook, info.project).may_top_up[resource]
}

/// Seed 003 send_req(p): the resource that triggered the fetch gets its whole shortfall
/// and idle instances; every other resource the project may supply and is not backed
/// off for is asked only for the project's own shortfall there (what its fair-share
/// target leaves uncovered), unless the step zeroes it. Asking a project for another
/// resource's whole shortfall on every fetch would fill that resource's queue with its
/// jobs and undo the cross-resource shares seed 003 targets (its GPU example).
fn send_req(
    outlook: &FetchOutlook,
    info: &ProjectFetchInfo,
    step: &Step,
    caps: &ResourceMap<f64>,
) -> WorkRequest {
    let resources = ResourceMap::from_fn(|r| {
        if step.zeroed[r] {
            return ResourceRequest::default();
        }
        let ask =
            if r == step.resource && step.top_up.is_none() { Ask::Trigger } else { Ask::OwnShare };
        let request =
            resource_request(&outlook.resources, outlook.fetch_minimal_work, info, r, ask);
        capped(request, caps[r])
    });
    with_scalar_seconds(info.project, resources)
}

/// What to ask one project for one resource: the resource's whole shortfall when it
/// triggered the fetch; else the project's own uncovered share of it, as far as the
/// resource is short; for a refill (see [`piggyback_request`]) its own uncovered share.
/// `minimal`: cc_config `fetch_minimal_work`.
fn resource_request(
    resources: &ResourceMap<ResourceOutlook>,
    minimal: bool,
    info: &ProjectFetchInfo,
    r: ResourceType,
    ask: Ask,
) -> ResourceRequest {
    let sim = resources[r];
    if !sim.usable || info.backed_off[r] || info.job_cap_reached[r] || !info.may_supply[r] {
        return ResourceRequest::default();
    }
    let nidle = sim.nidle.max(0.0);
    let trigger = ask == Ask::Trigger;
    let shortfall = if trigger {
        sim.shortfall.max(0.0)
    } else if info.overworked_for[r] {
        0.0
    } else if ask == Ask::Refill {
        info.shortfall[r].max(0.0)
    } else {
        sim.shortfall.max(0.0).min(info.shortfall[r])
    };
    if !trigger && shortfall <= 0.0 {
        return ResourceRequest::default();
    }
    // fetch_minimal_work: just enough jobs for the idle instances; the seconds are a
    // token so servers that read only seconds still send something.
    let req_seconds = if minimal { if nidle > 0.0 { 1.0 } else { 0.0 } } else { shortfall };
    ResourceRequest { req_seconds, req_ninstances: nidle }
}

/// Seed 002: an RPC made for another reason (results to report, a user's request)
/// also asks for work, "enough to bring us up to the high-water mark", for whatever
/// the project's fair share of each resource leaves uncovered. A project that is not
/// askable for work (suspended, no new tasks, latency-limited) gets an empty request.
///
/// A batched project whose queue has drained to its refill point (`batching`
/// [`ReportBatching::Refill`]) asks for its whole uncovered share of each resource,
/// whether or not the resource as a whole is short, within its latency cap: its jobs are
/// due soon, so a buffer filled by the others' longer jobs would otherwise leave it
/// without work until the resource next runs short.
pub fn piggyback_request(
    state: &ClientState,
    rr: &RrSimOutput,
    facts: &[ProjectFacts],
    project: ProjectId,
    batching: ReportBatching,
    now: Time,
) -> WorkRequest {
    let ask = if batching == ReportBatching::Refill { Ask::Refill } else { Ask::OwnShare };
    // Only this project's facts are needed, not every project's.
    let info = (project.index() < state.projects.len()).then(|| {
        let may_supply = project_may_supply(state, project);
        let host = HostFacts::of(state, Policy::Seed);
        project_info(state, rr, facts, project, may_supply, &host, now)
    });
    let resources = ResourceMap::from_fn(|r| ResourceOutlook::of(state, rr, r, f64::INFINITY));
    let minimal = state.config.fetch_minimal_work;
    let requests = match info {
        Some(info) if info.askable && state.network_mode != RunMode::Never => {
            let caps = latency_caps(state, facts, rr, project);
            ResourceMap::from_fn(|r| {
                capped(resource_request(&resources, minimal, &info, r, ask), caps[r])
            })
        }
        _ => ResourceMap::default(),
    };
    with_scalar_seconds(project, requests)
}

/// How much of a resource a request asks for (see `resource_request`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    /// The resource triggered the fetch: its whole shortfall.
    Trigger,
    /// The project's uncovered share, as far as the resource is short.
    OwnShare,
    /// The project's uncovered share.
    Refill,
}

/// A resource's request limited to `cap` instance-seconds; nothing at all when the cap
/// leaves nothing.
fn capped(request: ResourceRequest, cap: f64) -> ResourceRequest {
    if request.req_seconds <= cap {
        request
    } else if cap <= 0.0 {
        ResourceRequest::default()
    } else {
        ResourceRequest { req_seconds: cap, ..request }
    }
}

fn with_scalar_seconds(project: ProjectId, resources: ResourceMap<ResourceRequest>) -> WorkRequest {
    let work_req_seconds = resources.0.iter().map(|r| r.req_seconds).fold(0.0, f64::max);
    WorkRequest { project, resources, work_req_seconds }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::rec::rec_priorities;
    use crate::model::{
        AppId, AppVersion, AppVersionId, Coprocessor, Job, Project, ResourceUsage, Workunit,
        WorkunitId,
    };
    use crate::rr_sim::{ProjectSim, ResourceSim};
    use crate::work_fetch::intermittent::{INTERMITTENT_MEMORY, top_up_threshold};
    use crate::work_fetch::request::Urgency;

    const CPU: ResourceType = ResourceType::Cpu;
    const NVIDIA: ResourceType = ResourceType::Nvidia;
    const AMD: ResourceType = ResourceType::Amd;
    const INTEL: ResourceType = ResourceType::Intel;

    fn gpu(resource: ResourceType) -> Coprocessor {
        Coprocessor { resource, name: "gpu".into(), count: 1, peak_flops: 1e10, available_ram: 0.0 }
    }

    /// A host with 2 CPUs and one NVIDIA GPU twice as fast as a CPU.
    fn host() -> ClientState {
        let mut state = ClientState::default();
        state.host.p_ncpus = 2;
        state.host.p_fpops = 1e9;
        state.host.coprocessors[NVIDIA] = Some(gpu(NVIDIA));
        state
    }

    /// Adds a project with app versions for the given resources.
    fn add_project(state: &mut ClientState, name: &str, supplies: &[ResourceType]) -> ProjectId {
        let id = ProjectId::from_index(state.projects.len());
        state.projects.push(Project::new(name, format!("http://{name}/"), 1.0));
        for &r in supplies {
            let usage =
                ResourceUsage { avg_ncpus: 1.0, coprocessor: r.is_gpu().then_some((r, 1.0)) };
            state.app_versions.push(AppVersion::new(id, AppId(0), 1, "", usage, 1e9));
        }
        id
    }

    /// Adds a one-hour job of `project`'s app version for `resource`, received now (time
    /// 1000) and due `latency` seconds later.
    fn add_job(state: &mut ClientState, project: ProjectId, resource: ResourceType, latency: f64) {
        let version = state
            .app_versions
            .iter()
            .position(|v| v.project == project && v.usage.main_resource() == resource)
            .expect("the project has an app version for the resource");
        let workunit = WorkunitId::from_index(state.workunits.len());
        state.workunits.push(Workunit {
            project,
            name: format!("wu{}", workunit.index()),
            app: AppId(0),
            rsc_fpops_est: 3600.0 * 1e9,
            rsc_fpops_bound: 36_000.0 * 1e9,
            rsc_memory_bound: 0.0,
            rsc_disk_bound: 0.0,
            input_files: Vec::new(),
            command_line: String::new(),
        });
        let name = format!("job{}", state.jobs.len());
        let av = AppVersionId::from_index(version);
        state.jobs.push(Job::downloaded(project, name, workunit, av, 1000.0, 1000.0 + latency));
    }

    /// A simulation output where every resource is busy past the high water mark.
    fn busy_rr(state: &ClientState) -> RrSimOutput {
        let horizon = state.prefs.work_buf_total();
        RrSimOutput {
            jobs: Vec::new(),
            resources: ResourceMap::from_fn(|r| ResourceSim {
                instances: f64::from(state.instances(r)),
                shortfall: 0.0,
                nidle: 0.0,
                saturated_time: horizon,
                deadlines_missed: 0,
            }),
            projects: vec![ProjectSim::default(); state.projects.len()],
            horizon,
        }
    }

    fn idle(rr: &mut RrSimOutput, r: ResourceType, nidle: f64) {
        rr.resources[r].nidle = nidle;
        rr.resources[r].saturated_time = 0.0;
        rr.resources[r].shortfall = nidle * rr.horizon;
    }

    fn short(rr: &mut RrSimOutput, r: ResourceType, shortfall: f64) {
        rr.resources[r].saturated_time = 100.0;
        rr.resources[r].shortfall = shortfall;
    }

    fn decide(state: &ClientState, rr: &RrSimOutput, policy: Policy) -> FetchDecision {
        let facts = ProjectFacts::gather(state);
        choose_work_fetch(state, rr, &facts, policy, 1000.0)
    }

    #[test]
    fn request_order_is_gpu_idle_cpu_idle_gpu_shortfall_cpu_shortfall() {
        let mut state = host();
        let both = add_project(&mut state, "both", &[CPU, NVIDIA]);
        let mut rr = busy_rr(&state);

        assert_eq!(decide(&state, &rr, Policy::Seed).reason, FetchReason::BufferFull);
        assert_eq!(decide(&state, &rr, Policy::Seed).request, None);

        // CPU shortfall only.
        short(&mut rr, CPU, 500.0);
        let d = decide(&state, &rr, Policy::Seed);
        assert_eq!(d.reason, FetchReason::Shortfall(CPU));
        let request = d.request.expect("a request");
        assert_eq!(request.project, both);
        assert_eq!(request.resources[CPU].req_seconds, 500.0);
        assert_eq!(request.work_req_seconds, 500.0);

        // GPU shortfall comes before CPU shortfall. The CPU rides along only for what
        // the project's own share leaves uncovered there.
        short(&mut rr, NVIDIA, 800.0);
        let d = decide(&state, &rr, Policy::Seed);
        assert_eq!(d.reason, FetchReason::Shortfall(NVIDIA));
        let request = d.request.expect("a request");
        assert_eq!(request.resources[CPU], ResourceRequest::default(), "its CPU share is covered");
        assert_eq!(request.resources[NVIDIA].req_seconds, 800.0);
        assert_eq!(request.work_req_seconds, 800.0);
        rr.projects[both.index()].shortfall[CPU] = 300.0;
        let request = decide(&state, &rr, Policy::Seed).request.expect("a request");
        assert_eq!(request.resources[CPU].req_seconds, 300.0, "capped by its own shortfall");
        assert_eq!(request.resources[NVIDIA].req_seconds, 800.0);
        rr.projects[both.index()].shortfall[CPU] = 0.0;

        // Idle CPUs come before GPU shortfall, and the GPU request is zeroed.
        idle(&mut rr, CPU, 1.0);
        let d = decide(&state, &rr, Policy::Seed);
        assert_eq!(d.reason, FetchReason::IdleInstances(CPU));
        let request = d.request.expect("a request");
        assert_eq!(request.resources[CPU].req_ninstances, 1.0);
        assert_eq!(request.resources[CPU].req_seconds, rr.horizon);
        assert_eq!(request.resources[NVIDIA], ResourceRequest::default());

        // Idle GPUs come first, and the CPU request is zeroed.
        idle(&mut rr, NVIDIA, 1.0);
        let d = decide(&state, &rr, Policy::Seed);
        assert_eq!(d.reason, FetchReason::IdleInstances(NVIDIA));
        let request = d.request.expect("a request");
        assert_eq!(request.resources[NVIDIA].req_ninstances, 1.0);
        assert_eq!(request.resources[CPU], ResourceRequest::default());
    }

    #[test]
    fn overworked_on_one_resource_is_still_asked_for_another() {
        let mut state = host();
        let both = add_project(&mut state, "both", &[CPU, NVIDIA]);
        // It ran far beyond its GPU share: no GPU work for it, but the CPU it is owed.
        state.projects[both.index()].resources[NVIDIA].long_term_debt = -1e6;
        assert!(state.project_overworked_for(both, NVIDIA));
        assert!(!state.project_overworked_for(both, CPU));
        let mut rr = busy_rr(&state);
        short(&mut rr, NVIDIA, 800.0);
        assert_eq!(decide(&state, &rr, Policy::Seed).request, None);
        short(&mut rr, CPU, 500.0);
        let request = decide(&state, &rr, Policy::Seed).request.expect("asked for CPU work");
        assert_eq!(request.project, both);
        assert!(request.requests(CPU) && !request.requests(NVIDIA));
    }

    /// The request a report of `project` carries, unbatched.
    fn report_request(state: &ClientState, rr: &RrSimOutput, project: ProjectId) -> WorkRequest {
        let facts = ProjectFacts::gather(state);
        piggyback_request(state, rr, &facts, project, ReportBatching::Unbatched, 1000.0)
    }

    #[test]
    fn a_report_asks_for_the_projects_uncovered_share() {
        let mut state = host();
        let both = add_project(&mut state, "both", &[CPU, NVIDIA]);
        let mut rr = busy_rr(&state);
        // Buffer full: the report asks for nothing.
        assert_eq!(report_request(&state, &rr, both).work_req_seconds, 0.0);
        // Some GPU shortfall, of which the project's own share covers 300 s.
        short(&mut rr, NVIDIA, 800.0);
        rr.projects[both.index()].shortfall[NVIDIA] = 300.0;
        let request = report_request(&state, &rr, both);
        assert_eq!(request.resources[NVIDIA].req_seconds, 300.0);
        assert!(!request.requests(CPU));
        // A project that may not be asked for work (no new tasks) gets an empty request.
        state.projects[both.index()].dont_request_more_work = true;
        assert_eq!(report_request(&state, &rr, both).work_req_seconds, 0.0);
    }

    #[test]
    fn gpu_types_are_asked_nvidia_amd_intel() {
        let mut state = host();
        state.host.coprocessors[AMD] = Some(gpu(AMD));
        state.host.coprocessors[INTEL] = Some(gpu(INTEL));
        add_project(&mut state, "all", &[CPU, NVIDIA, AMD, INTEL]);
        let mut rr = busy_rr(&state);
        idle(&mut rr, INTEL, 1.0);
        assert_eq!(decide(&state, &rr, Policy::Seed).reason, FetchReason::IdleInstances(INTEL));
        idle(&mut rr, AMD, 1.0);
        assert_eq!(decide(&state, &rr, Policy::Seed).reason, FetchReason::IdleInstances(AMD));
        idle(&mut rr, NVIDIA, 1.0);
        let d = decide(&state, &rr, Policy::Seed);
        assert_eq!(d.reason, FetchReason::IdleInstances(NVIDIA));
        // The other idle GPU types ride along where the project's share is uncovered;
        // the CPU doesn't.
        let request = d.request.expect("a request");
        assert!(!request.requests(AMD) && !request.requests(INTEL) && !request.requests(CPU));
        let project = ProjectId(0);
        rr.projects[project.index()].shortfall[AMD] = 100.0;
        rr.projects[project.index()].shortfall[INTEL] = 100.0;
        rr.projects[project.index()].shortfall[CPU] = 100.0;
        let request = decide(&state, &rr, Policy::Seed).request.expect("a request");
        assert!(request.requests(AMD) && request.requests(INTEL) && !request.requests(CPU));
    }

    #[test]
    fn cpu_only_project_is_not_asked_for_gpu_work() {
        let mut state = host();
        let cpu_only = add_project(&mut state, "cpu", &[CPU]);
        let gpu_only = add_project(&mut state, "gpu", &[NVIDIA]);
        state.projects[cpu_only.index()].resources[CPU].long_term_debt = 1e3;
        let mut rr = busy_rr(&state);
        idle(&mut rr, NVIDIA, 1.0);
        let d = decide(&state, &rr, Policy::Seed);
        assert_eq!(d.request.map(|r| r.project), Some(gpu_only));
        assert_eq!(d.candidates[cpu_only.index()].score[NVIDIA], None);
        assert!(!d.candidates[cpu_only.index()].may_supply[NVIDIA]);
    }

    /// Seed 003's example: A supplies only GPU jobs, B both. Who is asked for GPU work
    /// flips from A to B exactly when A's overall LTD + GPU shortfall falls below B's
    /// (ties go to the lower id).
    #[test]
    fn gpu_choice_flips_with_overall_debt() {
        let mut state = host();
        let a = add_project(&mut state, "A", &[NVIDIA]);
        let b = add_project(&mut state, "B", &[CPU, NVIDIA]);
        let mut rr = busy_rr(&state);
        idle(&mut rr, NVIDIA, 1.0);
        rr.projects[a.index()].shortfall[NVIDIA] = 100.0;
        rr.projects[b.index()].shortfall[NVIDIA] = 40.0;
        // B's CPU debt counts at speed 1, GPU debt at speed 2.
        state.projects[b.index()].resources[CPU].long_term_debt = 20.0;
        let chosen =
            |state: &ClientState| decide(state, &rr, Policy::Seed).request.unwrap().project;
        // A: 2·gA + 100, B: 20 + 2·5 + 40 = 70.
        state.projects[b.index()].resources[NVIDIA].long_term_debt = 5.0;
        for (gpu_debt_a, expected) in [(0.0, a), (-15.0, a), (-15.5, b), (-100.0, b)] {
            state.projects[a.index()].resources[NVIDIA].long_term_debt = gpu_debt_a;
            assert_eq!(chosen(&state), expected, "A's GPU debt {gpu_debt_a}");
        }
        state.projects[a.index()].resources[NVIDIA].long_term_debt = 0.0;
        let d = decide(&state, &rr, Policy::Seed);
        assert_eq!(d.candidates[a.index()].score[NVIDIA], Some(100.0));
        assert_eq!(d.candidates[b.index()].score[NVIDIA], Some(70.0));
    }

    #[test]
    fn backed_off_latency_limited_and_unfetchable_projects_are_skipped() {
        let mut state = host();
        let a = add_project(&mut state, "A", &[NVIDIA]);
        let b = add_project(&mut state, "B", &[NVIDIA]);
        state.projects[b.index()].resources[NVIDIA].long_term_debt = 1e3;
        let mut rr = busy_rr(&state);
        idle(&mut rr, NVIDIA, 1.0);
        assert_eq!(decide(&state, &rr, Policy::Seed).request.unwrap().project, b);

        state.projects[b.index()].resources[NVIDIA].backoff_time = 2000.0;
        let d = decide(&state, &rr, Policy::Seed);
        assert_eq!(d.request.unwrap().project, a);
        assert!(d.candidates[b.index()].backed_off[NVIDIA]);

        state.projects[a.index()].latency_limited_until = Some(5000.0);
        let d = decide(&state, &rr, Policy::Seed);
        assert_eq!(d.request, None);
        assert_eq!(d.reason, FetchReason::NoFetchableProject(NVIDIA));

        state.projects[a.index()].latency_limited_until = Some(900.0);
        state.projects[a.index()].dont_request_more_work = true;
        assert_eq!(decide(&state, &rr, Policy::Seed).request, None);
        state.projects[a.index()].dont_request_more_work = false;
        state.projects[a.index()].min_rpc_time = 1001.0;
        assert_eq!(decide(&state, &rr, Policy::Seed).request, None);
        state.projects[a.index()].min_rpc_time = 1000.0;
        assert_eq!(decide(&state, &rr, Policy::Seed).request.unwrap().project, a);
    }

    #[test]
    fn request_leaves_out_backed_off_resources_of_the_chosen_project() {
        let mut state = host();
        let both = add_project(&mut state, "both", &[CPU, NVIDIA]);
        state.projects[both.index()].resources[CPU].backoff_time = 2000.0;
        let mut rr = busy_rr(&state);
        short(&mut rr, NVIDIA, 300.0);
        short(&mut rr, CPU, 700.0);
        let request = decide(&state, &rr, Policy::Seed).request.unwrap();
        assert_eq!(request.resources[NVIDIA].req_seconds, 300.0);
        assert_eq!(request.resources[CPU], ResourceRequest::default());
        assert_eq!(request.work_req_seconds, 300.0);
    }

    #[test]
    fn low_water_mark_decides_shortfall_fetch() {
        let mut state = host();
        add_project(&mut state, "cpu", &[CPU]);
        let mut rr = busy_rr(&state);
        rr.resources[CPU].shortfall = 1000.0;
        rr.resources[CPU].saturated_time = state.prefs.work_buf_min();
        assert_eq!(decide(&state, &rr, Policy::Seed).reason, FetchReason::BufferFull);
        rr.resources[CPU].saturated_time = state.prefs.work_buf_min() - 1.0;
        assert_eq!(decide(&state, &rr, Policy::Seed).reason, FetchReason::Shortfall(CPU));
    }

    #[test]
    fn an_intermittent_project_tops_up_between_the_water_marks() {
        let mut state = host();
        state.prefs.work_buf_min_days = 0.1;
        state.prefs.work_buf_additional_days = 0.25;
        let steady = add_project(&mut state, "steady", &[NVIDIA]);
        let flaky = add_project(&mut state, "flaky", &[NVIDIA]);
        let step = top_up_threshold(&state, NVIDIA);
        let mut rr = busy_rr(&state);
        rr.resources[NVIDIA].shortfall = 2.0 * step;
        rr.resources[NVIDIA].saturated_time = state.prefs.work_buf_min() + 1.0;
        for p in [steady, flaky] {
            rr.projects[p.index()].shortfall[NVIDIA] = step;
        }
        // Nobody failed recently: above the low water mark the buffer is full.
        assert_eq!(decide(&state, &rr, Policy::Seed).reason, FetchReason::BufferFull);

        // The flaky project failed an hour ago: it is asked for its own shortfall.
        state.projects[flaky.index()].last_rpc_failure = Some(1000.0 - 3600.0);
        let decision = decide(&state, &rr, Policy::Seed);
        assert_eq!(decision.reason, FetchReason::TopUp(NVIDIA));
        let request = decision.request.unwrap();
        assert_eq!(request.project, flaky);
        assert_eq!(request.resources[NVIDIA].req_seconds, step);
        assert!(decision.candidates[flaky.index()].intermittent);
        assert!(!decision.candidates[steady.index()].intermittent);

        // Less than a step short: not worth an RPC.
        rr.projects[flaky.index()].shortfall[NVIDIA] = step * 0.99;
        assert_eq!(decide(&state, &rr, Policy::Seed).reason, FetchReason::BufferFull);
        rr.projects[flaky.index()].shortfall[NVIDIA] = step;

        // Backed off for the resource, or the failure long forgotten: no top-up.
        state.projects[flaky.index()].resources[NVIDIA].backoff_time = 2000.0;
        assert_eq!(decide(&state, &rr, Policy::Seed).reason, FetchReason::BufferFull);
        state.projects[flaky.index()].resources[NVIDIA].backoff_time = 0.0;
        state.projects[flaky.index()].last_rpc_failure = Some(1000.0 - INTERMITTENT_MEMORY - 1.0);
        assert_eq!(decide(&state, &rr, Policy::Seed).reason, FetchReason::BufferFull);

        // Below the low water mark seed 002's rule applies to everyone, as before.
        rr.resources[NVIDIA].saturated_time = state.prefs.work_buf_min() - 1.0;
        assert_eq!(decide(&state, &rr, Policy::Seed).reason, FetchReason::Shortfall(NVIDIA));
    }

    #[test]
    fn on_a_host_often_out_of_reach_every_project_tops_up_unless_its_deadlines_are_short() {
        let mut state = host();
        state.prefs.work_buf_min_days = 0.1;
        state.prefs.work_buf_additional_days = 0.25;
        let steady = add_project(&mut state, "steady", &[NVIDIA]);
        let step = top_up_threshold(&state, NVIDIA);
        let mut rr = busy_rr(&state);
        rr.resources[NVIDIA].shortfall = 2.0 * step;
        rr.resources[NVIDIA].saturated_time = state.prefs.work_buf_min() + 1.0;
        rr.projects[steady.index()].shortfall[NVIDIA] = step;
        rr.projects[steady.index()].share[NVIDIA] = 1.0;
        assert_eq!(decide(&state, &rr, Policy::Seed).reason, FetchReason::BufferFull);

        // Online half the time, in spells of three hours: it tops up while it can.
        state.time_stats.connected_frac = 0.5;
        state.time_stats.connected_lambda = Some(3.0 * 3600.0);
        let decision = decide(&state, &rr, Policy::Seed);
        assert_eq!(decision.reason, FetchReason::TopUp(NVIDIA));
        assert!(decision.candidates[steady.index()].intermittent);

        // A project whose jobs are due in two hours cannot hold its share of a full buffer:
        // work queued against an outage would miss, so it is left to the low water mark.
        add_job(&mut state, steady, NVIDIA, 2.0 * 3600.0);
        let decision = decide(&state, &rr, Policy::Seed);
        assert_eq!(decision.reason, FetchReason::BufferFull);
    }

    #[test]
    fn modes_and_minimal_fetch() {
        let mut state = host();
        add_project(&mut state, "both", &[CPU, NVIDIA]);
        let mut rr = busy_rr(&state);
        idle(&mut rr, NVIDIA, 1.0);
        short(&mut rr, CPU, 700.0);

        state.network_mode = RunMode::Never;
        assert_eq!(decide(&state, &rr, Policy::Seed).reason, FetchReason::NetworkSuspended);
        state.network_mode = RunMode::Auto;
        state.run_mode = RunMode::Never;
        assert_eq!(decide(&state, &rr, Policy::Seed).reason, FetchReason::ComputingSuspended);
        state.run_mode = RunMode::Auto;
        state.gpu_mode = RunMode::Never;
        let d = decide(&state, &rr, Policy::Seed);
        assert_eq!(d.reason, FetchReason::Shortfall(CPU));
        assert!(!d.request.unwrap().requests(NVIDIA));
        state.gpu_mode = RunMode::Auto;

        state.config.fetch_minimal_work = true;
        let d = decide(&state, &rr, Policy::Seed);
        assert_eq!(d.reason, FetchReason::IdleInstances(NVIDIA));
        let request = d.request.unwrap();
        assert_eq!(
            request.resources[NVIDIA],
            ResourceRequest { req_seconds: 1.0, req_ninstances: 1.0 }
        );
        rr.resources[NVIDIA] = busy_rr(&state).resources[NVIDIA];
        assert_eq!(decide(&state, &rr, Policy::Seed).reason, FetchReason::BufferFull);
    }

    #[test]
    fn zero_share_project_is_a_backup_for_idle_instances_only() {
        let mut state = host();
        let backup = add_project(&mut state, "backup", &[CPU]);
        state.projects[backup.index()].resource_share = 0.0;
        let mut rr = busy_rr(&state);
        short(&mut rr, CPU, 500.0);
        assert_eq!(decide(&state, &rr, Policy::Seed).request, None);
        idle(&mut rr, CPU, 1.0);
        assert_eq!(decide(&state, &rr, Policy::Seed).request.unwrap().project, backup);
        let main = add_project(&mut state, "main", &[CPU]);
        state.projects[main.index()].resources[CPU].long_term_debt = -100.0;
        rr.projects.push(ProjectSim::default());
        assert_eq!(decide(&state, &rr, Policy::Seed).request.unwrap().project, main);
    }

    #[test]
    fn non_cpu_intensive_project_without_jobs_is_asked_first() {
        let mut state = host();
        add_project(&mut state, "cpu", &[CPU]);
        let nci = add_project(&mut state, "nci", &[CPU]);
        state.projects[nci.index()].non_cpu_intensive = true;
        let mut rr = busy_rr(&state);
        idle(&mut rr, CPU, 2.0);
        let d = decide(&state, &rr, Policy::Seed);
        assert_eq!(d.reason, FetchReason::NonCpuIntensiveIdle);
        assert_eq!(d.request.unwrap().project, nci);
        // Even when it may not be asked, it never competes for the processors.
        state.projects[nci.index()].dont_request_more_work = true;
        let d = decide(&state, &rr, Policy::Seed);
        assert_eq!(d.reason, FetchReason::IdleInstances(CPU));
        assert_ne!(d.request.unwrap().project, nci);
    }

    #[test]
    fn rec_policy_asks_the_project_furthest_below_its_share() {
        let mut state = host();
        let a = add_project(&mut state, "A", &[CPU]);
        let b = add_project(&mut state, "B", &[CPU]);
        let c = add_project(&mut state, "C", &[CPU]);
        state.projects[a.index()].resource_share = 2.0;
        state.projects[a.index()].rec = 500.0;
        state.projects[b.index()].rec = 300.0;
        state.projects[c.index()].rec = 200.0;
        // Large LTD for C must not matter under rec.
        state.projects[c.index()].resources[CPU].long_term_debt = 1e3;
        let priorities = rec_priorities(&state);
        // Shares 2:1:1 → fractions .5, .25, .25; REC fractions .5, .3, .2.
        assert!((priorities[a.index()] + 1.0).abs() < 1e-12);
        assert!((priorities[b.index()] + 1.2).abs() < 1e-12);
        assert!((priorities[c.index()] + 0.8).abs() < 1e-12);
        let mut rr = busy_rr(&state);
        short(&mut rr, CPU, 500.0);
        assert_eq!(decide(&state, &rr, Policy::Rec).request.unwrap().project, c);
        state.projects[c.index()].rec = 1000.0;
        assert_eq!(decide(&state, &rr, Policy::Rec).request.unwrap().project, a);

        // No REC yet: all equal, the shortfall decides.
        for p in &mut state.projects {
            p.rec = 0.0;
        }
        rr.projects[b.index()].shortfall[CPU] = 50.0;
        assert_eq!(decide(&state, &rr, Policy::Rec).request.unwrap().project, b);
    }

    #[test]
    fn legacy_policy_asks_the_project_with_the_largest_work_request() {
        let mut state = host();
        add_project(&mut state, "A", &[CPU]);
        add_project(&mut state, "B", &[CPU]);
        let rr = busy_rr(&state);
        let d = decide(&state, &rr, Policy::Legacy);
        // Both are starved: each asks 2T × its processing rate (1 CPU): the tie goes to A.
        assert_eq!(d.reason, FetchReason::Legacy(Urgency::NeedWorkImmediately));
        let request = d.request.unwrap();
        assert_eq!(request.project, ProjectId(0));
        let t = state.prefs.work_buf_min();
        assert!((request.resources[CPU].req_seconds - 2.0 * t).abs() < 1e-6);
        assert_eq!(request.work_req_seconds, request.resources[CPU].req_seconds);
        assert!(!request.requests(NVIDIA));
    }

    #[test]
    fn decision_round_trips_through_json() {
        let mut state = host();
        add_project(&mut state, "both", &[CPU, NVIDIA]);
        let mut rr = busy_rr(&state);
        idle(&mut rr, NVIDIA, 1.0);
        let d = decide(&state, &rr, Policy::Seed);
        let json = serde_json::to_string(&d).expect("serialisable");
        assert!(json.contains("IdleInstances"));
        let back: FetchDecision = serde_json::from_str(&json).expect("deserialisable");
        assert_eq!(back, d);
    }

    #[test]
    fn reasons_display() {
        assert_eq!(FetchReason::IdleInstances(NVIDIA).to_string(), "nvidia instances are idle");
        assert!(FetchReason::NoFetchableProject(CPU).to_string().contains("no project"));
    }
}
