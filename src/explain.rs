//! The `explain` view: one decision (see [`crate::decision`]) turned into what a user
//! asks — what runs and why, when each job finishes, where work is short, what is owed
//! to whom, and what would be asked of which project. Serialisable as one JSON object
//! and printable as text.

use crate::control::{HostConditions, SuspendReason, SuspendReasons, host_view};
use crate::cpu_sched::{MultithreadOutcome, RunReason};
use crate::decision::Decision;
use crate::disk::DiskReport;
use crate::enforce::{ActionKind, ActionReason};
use crate::model::{ClientState, JobId, JobState, ResourceType, project_labels};
use crate::rpc_policy::{ReportBatching, report_due_times};
use crate::work_fetch::{report_batching, scalar_work_request_sizes, select_work_fetch};
use crate::{Policy, Time};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The latest time recorded in a state: when it was saved, near enough. `explain` uses
/// it as `now` when none is given, so a saved state is explained as of its own time.
pub fn state_time(state: &ClientState) -> Time {
    let jobs = state.jobs.iter().flat_map(|j| [j.received_time, j.completed_time]);
    let projects = state.projects.iter().flat_map(|p| [p.last_rpc_time, p.rec_time]);
    jobs.chain(projects).filter(|t| t.is_finite()).fold(0.0, f64::max)
}

/// One entry of the run list.
#[derive(Debug, Clone, Serialize)]
pub struct RunListView {
    /// Job name.
    pub job: String,
    /// Project name.
    pub project: String,
    /// The resource it is scheduled on.
    pub resource: ResourceType,
    /// Why it is in the run list.
    pub reason: RunReason,
    /// GPU instances it is placed on (empty for CPU jobs).
    pub gpu_instances: Vec<u32>,
}

/// One enforcement action.
#[derive(Debug, Clone, Serialize)]
pub struct ActionView {
    /// Job name.
    pub job: String,
    /// Project name.
    pub project: String,
    /// What happens to the task.
    pub action: ActionKind,
    /// Why.
    pub reason: ActionReason,
}

/// One job with its simulated future.
#[derive(Debug, Clone, Serialize)]
pub struct JobView {
    /// Job name.
    pub name: String,
    /// Project name.
    pub project: String,
    /// The resource it runs on (`None` when its app version is unknown).
    pub resource: Option<ResourceType>,
    /// Life-cycle state.
    pub state: JobState,
    /// Running now.
    pub running: bool,
    /// Elapsed time so far, seconds.
    pub elapsed_time: f64,
    /// Estimated processing time left, seconds.
    pub remaining_duration: f64,
    /// Projected completion under round robin, absolute time (`None`: not simulated).
    pub projected_completion: Option<f64>,
    /// Report deadline, absolute time.
    pub deadline: f64,
    /// Whether round robin would miss the deadline.
    pub deadline_missed: bool,
}

/// One processing resource.
#[derive(Debug, Clone, Serialize)]
pub struct ResourceView {
    /// Instances usable.
    pub instances: f64,
    /// Instances idle after the initial assignment.
    pub nidle: f64,
    /// Idle instance-seconds over the work-buffer horizon.
    pub shortfall: f64,
    /// Seconds until the first instance idles.
    pub saturated_time: f64,
    /// Jobs that would miss their deadlines.
    pub deadlines_missed: u32,
}

/// One project's view of one resource.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectResourceView {
    /// Instances its share entitles it to.
    pub share: f64,
    /// Its shortfall, instance-seconds over the horizon.
    pub shortfall: f64,
    /// Its jobs on this resource that would miss their deadlines.
    pub deadlines_missed: u32,
    /// Long-term debt for this resource, instance-seconds.
    pub long_term_debt: f64,
    /// D(P, R): it accumulates debt for this resource.
    pub accumulate_debt: bool,
    /// Backed off for this resource until (absolute time; `None`: not backed off).
    pub backoff_until: Option<f64>,
    /// It may supply jobs for this resource.
    pub may_supply: bool,
    /// It holds as many jobs for this resource as the failsafe cap allows
    /// (`work_fetch::runnable_job_cap`): it is not asked for more, whatever its
    /// estimates say.
    pub job_cap_reached: bool,
}

/// One project.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectView {
    /// Resource share.
    pub resource_share: f64,
    /// Share as a fraction of all projects' shares.
    pub share_fraction: f64,
    /// Short-term debt, seconds.
    pub short_term_debt: f64,
    /// Anticipated debt after this run list, seconds.
    pub anticipated_debt: f64,
    /// Overall long-term debt (per-resource debts weighted by speed), CPU-seconds.
    pub long_term_debt: f64,
    /// Recent estimated credit.
    pub rec: f64,
    /// Jobs that would miss their deadlines, all resources.
    pub deadlines_missed: u32,
    /// Seed 000's scalar work request size, normalised CPU seconds.
    pub work_request_size: f64,
    /// Seed 000 predicates.
    pub runnable: bool,
    /// Seed 000 predicates.
    pub fetchable: bool,
    /// Seed 000 predicates.
    pub overworked: bool,
    /// Seed 000 predicates.
    pub latency_limited: bool,
    /// Seed 000 predicates.
    pub potentially_runnable: bool,
    /// Per resource, keyed `cpu`, `nvidia`, `amd`, `intel`.
    pub resources: BTreeMap<&'static str, ProjectResourceView>,
    /// Results computed and waiting to be reported.
    pub results_waiting: u32,
    /// Whether its short-deadline results are batched, and how.
    pub report_batching: ReportBatching,
    /// When its waiting results will be reported (no sooner than its `min_rpc_time`).
    pub report_due: Option<Time>,
}

/// One resource of the work request.
#[derive(Debug, Clone, Serialize)]
pub struct ResourceRequestView {
    /// Instance-seconds requested.
    pub req_seconds: f64,
    /// Instances to occupy.
    pub req_ninstances: f64,
}

/// The scheduler request the fetch policy would send, or why none.
#[derive(Debug, Clone, Serialize)]
pub struct WorkRequestView {
    /// The project asked (`None`: no request).
    pub project: Option<String>,
    /// Why this request, or why none.
    pub reason: String,
    /// The request's scalar `work_req_seconds` (old servers read only this).
    pub work_req_seconds: f64,
    /// Per resource, keyed `cpu`, `nvidia`, `amd`, `intel`.
    pub resources: BTreeMap<&'static str, ResourceRequestView>,
}

/// Everything `boinc-rs explain` shows.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    /// The instant explained.
    pub now: Time,
    /// The policy family.
    pub policy: Policy,
    /// Jobs to run, in priority order.
    pub run_list: Vec<RunListView>,
    /// What enforcement does to each task it touches.
    pub actions: Vec<ActionView>,
    /// Every job that is not yet acknowledged by its server.
    pub jobs: Vec<JobView>,
    /// Per resource, keyed `cpu`, `nvidia`, `amd`, `intel`.
    pub resources: BTreeMap<&'static str, ResourceView>,
    /// Per project, keyed by project name.
    pub projects: BTreeMap<String, ProjectView>,
    /// The work request.
    pub work_request: WorkRequestView,
    /// The disk manager (seed 004): limits, usage by project, what it would delete now.
    pub disk: DiskReport,
    /// On a host often off or offline: how long before its deadline a job must finish to
    /// count as on time (`TimeStats::late_report_margin`); 0 for a host always in reach.
    pub late_report_margin: f64,
    /// The best-ranked multithread job that did not fit beside the jobs ranked above it,
    /// and what became of it.
    pub multithread: Option<MultithreadView>,
    /// What is suspended, and why (BOINC's reasons; see [`Explanation::with_host`]).
    pub suspended: SuspensionView,
}

/// What is suspended and why, in BOINC's codes (as `get_cc_status` reports them) and
/// words; `None`: not suspended.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SuspensionView {
    /// Computing.
    pub computing: Option<ReasonView>,
    /// The GPUs (beyond computing).
    pub gpu: Option<ReasonView>,
    /// File transfers and scheduler RPCs.
    pub network: Option<ReasonView>,
}

/// One suspension's reason.
#[derive(Debug, Clone, Serialize)]
pub struct ReasonView {
    /// BOINC's `SUSPEND_REASON_*` code.
    pub code: i64,
    /// In words.
    pub reason: &'static str,
}

impl SuspensionView {
    fn new(reasons: SuspendReasons) -> Self {
        let view = |reason: Option<SuspendReason>| {
            reason.map(|r| ReasonView { code: r.code(), reason: r.words() })
        };
        SuspensionView {
            computing: view(reasons.cpu),
            gpu: view(reasons.gpu),
            network: view(reasons.network),
        }
    }
}

/// What became of a multithread job that did not fit (see
/// [`crate::cpu_sched::MultithreadNote`]).
#[derive(Debug, Clone, Serialize)]
pub struct MultithreadView {
    /// Job name.
    pub job: String,
    /// Project name.
    pub project: String,
    /// What became of it.
    pub outcome: MultithreadOutcome,
}

impl Explanation {
    /// Builds the view of a decision made on `state`.
    pub fn new(state: &ClientState, decision: &Decision) -> Explanation {
        // Projects are known by their master URL: where two share a name, the URL is shown.
        let labels = project_labels(&state.projects);
        let job_name = |id: JobId| state.job(id).name.clone();
        let project_of = |id: JobId| labels[state.job(id).project.index()].clone();
        let run_list = decision
            .run_list
            .entries
            .iter()
            .map(|e| RunListView {
                job: job_name(e.job),
                project: project_of(e.job),
                resource: e.resource,
                reason: e.reason,
                gpu_instances: e.gpu_instances.clone(),
            })
            .collect();
        let actions = decision
            .enforcement
            .actions
            .iter()
            .map(|a| ActionView {
                job: job_name(a.job),
                project: project_of(a.job),
                action: a.kind.clone(),
                reason: a.reason,
            })
            .collect();
        let jobs = state
            .job_ids()
            .filter(|&id| !state.job(id).got_server_ack)
            .map(|id| {
                let job = state.job(id);
                let sim = decision.rr_sim.jobs.get(id.index()).copied().unwrap_or_default();
                JobView {
                    name: job.name.clone(),
                    project: labels[job.project.index()].clone(),
                    resource: job.app_version.map(|av| state.app_version(av).usage.main_resource()),
                    state: job.state,
                    running: job.is_running(),
                    elapsed_time: job.elapsed_time(),
                    remaining_duration: if job.state.computing_done() {
                        0.0
                    } else {
                        crate::estimate::remaining_duration(state, id)
                    },
                    projected_completion: sim.simulated.then_some(sim.projected_completion),
                    deadline: job.report_deadline,
                    deadline_missed: sim.simulated && sim.deadline_missed,
                }
            })
            .collect();
        let resources = ResourceType::ALL
            .iter()
            .map(|&r| {
                let sim = &decision.rr_sim.resources[r];
                let view = ResourceView {
                    instances: sim.instances,
                    nidle: sim.nidle,
                    shortfall: sim.shortfall,
                    saturated_time: sim.saturated_time,
                    deadlines_missed: sim.deadlines_missed,
                };
                (r.key(), view)
            })
            .collect();
        let total_share = state.total_share(|_| true);
        let sizes = scalar_work_request_sizes(state, &decision.rr_sim, decision.now);
        let batching = report_batching(state, &decision.facts, &decision.rr_sim);
        let report_due = report_due_times(state, decision.now, &batching);
        // The choice the fetch actor would make from this decision's outlook.
        let mut outlook = decision.fetch.clone();
        let fetch = select_work_fetch(&mut outlook);
        let mut projects = BTreeMap::new();
        for id in state.project_ids() {
            let project = state.project(id);
            let sim = decision.rr_sim.projects.get(id.index()).copied().unwrap_or_default();
            let info = outlook.candidates.iter().find(|c| c.project == id);
            let facts = &decision.facts[id.index()];
            let resources = ResourceType::ALL
                .iter()
                .map(|&r| {
                    let pr = &project.resources[r];
                    let view = ProjectResourceView {
                        share: sim.share[r],
                        shortfall: sim.shortfall[r],
                        deadlines_missed: sim.deadlines_missed[r],
                        long_term_debt: pr.long_term_debt,
                        accumulate_debt: pr.accumulate_debt,
                        backoff_until: (pr.backoff_time > decision.now).then_some(pr.backoff_time),
                        may_supply: info.is_some_and(|i| i.may_supply[r]),
                        job_cap_reached: info.is_some_and(|i| i.job_cap_reached[r]),
                    };
                    (r.key(), view)
                })
                .collect();
            let view = ProjectView {
                resource_share: project.resource_share,
                share_fraction: if total_share > 0.0 {
                    project.resource_share.max(0.0) / total_share
                } else {
                    0.0
                },
                short_term_debt: project.short_term_debt,
                anticipated_debt: decision
                    .run_list
                    .anticipated_debt
                    .get(id.index())
                    .copied()
                    .unwrap_or(0.0),
                long_term_debt: state.overall_long_term_debt(id),
                rec: project.rec,
                deadlines_missed: sim.total_deadlines_missed(),
                work_request_size: sizes.get(id.index()).copied().unwrap_or(0.0),
                runnable: facts.runnable(),
                fetchable: state.project_fetchable(id, decision.now),
                overworked: state.project_overworked(id),
                latency_limited: state.project_latency_limited(id, decision.now),
                potentially_runnable: state.project_potentially_runnable(id, facts, decision.now),
                resources,
                results_waiting: facts.ready_to_report,
                report_batching: batching.get(id.index()).copied().unwrap_or_default(),
                report_due: report_due.get(id.index()).copied().flatten(),
            };
            projects.insert(labels[id.index()].clone(), view);
        }
        let work_request = WorkRequestView {
            project: fetch.request.as_ref().map(|r| labels[r.project.index()].clone()),
            reason: fetch.reason.to_string(),
            work_req_seconds: fetch.request.as_ref().map_or(0.0, |r| r.work_req_seconds),
            resources: ResourceType::ALL
                .iter()
                .map(|&r| {
                    let req = fetch.request.as_ref().map(|w| w.resources[r]).unwrap_or_default();
                    (
                        r.key(),
                        ResourceRequestView {
                            req_seconds: req.req_seconds,
                            req_ninstances: req.req_ninstances,
                        },
                    )
                })
                .collect(),
        };
        Explanation {
            now: decision.now,
            policy: decision.policy,
            run_list,
            actions,
            jobs,
            resources,
            projects,
            work_request,
            // The state records no core usage; the client's own files are not counted.
            disk: DiskReport::new(state, 0.0, decision.now),
            late_report_margin: state.time_stats.late_report_margin(),
            multithread: decision.run_list.multithread.map(|note| MultithreadView {
                job: job_name(note.job),
                project: project_of(note.job),
                outcome: note.outcome,
            }),
            suspended: SuspensionView::new(SuspendReasons::NONE.under_modes(
                state.run_mode,
                state.gpu_mode,
                state.network_mode,
            )),
        }
    }

    /// The view with what `conditions` (the host observed: its user, power, local time,
    /// programs) suspend under the state's preferences and run modes.
    pub fn with_host(mut self, state: &ClientState, conditions: &HostConditions) -> Self {
        let reasons = host_view(conditions, &state.prefs).suspend;
        self.suspended = SuspensionView::new(reasons.under_modes(
            state.run_mode,
            state.gpu_mode,
            state.network_mode,
        ));
        self
    }
}

fn suspension_text(what: &str, reason: Option<&ReasonView>) -> String {
    match reason {
        Some(r) => format!("  {what}: suspended, {} (reason {})", r.reason, r.code),
        None => format!("  {what}: not suspended"),
    }
}

fn action_text(action: &ActionKind) -> String {
    let on_gpus = |gpus: &[u32]| {
        if gpus.is_empty() { String::new() } else { format!(" on GPU {gpus:?}") }
    };
    match action {
        ActionKind::Start { gpu_instances } => format!("start{}", on_gpus(gpu_instances)),
        ActionKind::Resume { gpu_instances } => format!("resume{}", on_gpus(gpu_instances)),
        ActionKind::Preempt { remove_from_memory: true } => "preempt (quit)".to_string(),
        ActionKind::Preempt { remove_from_memory: false } => "preempt (suspend)".to_string(),
        ActionKind::KeepRunning => "keep running".to_string(),
    }
}

fn run_reason_text(reason: RunReason) -> &'static str {
    match reason {
        RunReason::Edf => "edf: would miss its deadline under round robin",
        RunReason::Slice => "slice: keeps its scheduling period",
        RunReason::Debt => "debt: project owed the most",
        RunReason::Priority => "priority: highest REC priority",
        RunReason::NonCpuIntensive => "non-CPU-intensive: always runs",
    }
}

fn hours(seconds: f64) -> String {
    if seconds.is_finite() { format!("{:.2} h", seconds / 3600.0) } else { "never".to_string() }
}

/// The explanation as text for a terminal.
pub fn render_text(e: &Explanation) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "boinc-rs explain: policy {}, now = {:.0}", e.policy, e.now);
    let _ = writeln!(out, "\nRun list ({} jobs, highest priority first):", e.run_list.len());
    for (i, r) in e.run_list.iter().enumerate() {
        let gpus = if r.gpu_instances.is_empty() {
            String::new()
        } else {
            format!(" (GPU {:?})", r.gpu_instances)
        };
        let _ = writeln!(
            out,
            "  {:>3}. {:<28} {:<12} {:<7} {}{}",
            i + 1,
            r.job,
            r.project,
            r.resource.key(),
            run_reason_text(r.reason),
            gpus
        );
    }
    if let Some(m) = &e.multithread {
        let why = match m.outcome {
            MultithreadOutcome::TakesPlaces { displaced, inside_time_slices: true } => format!(
                "its project's turn has come: it takes the CPUs of {displaced} jobs, some \
                 inside their time slice, which can wait for it (they stop at their next \
                 checkpoint, so the CPUs free together rather than idle one by one)"
            ),
            MultithreadOutcome::TakesPlaces { displaced, inside_time_slices: false } => format!(
                "it takes the places of {displaced} lower-ranked jobs that can wait, leaving \
                 fewer CPUs idle"
            ),
            MultithreadOutcome::WaitsForDeadlines => "it waits: jobs holding the CPUs it \
                 needs, or jobs that would wait for it, could not wait and still make their \
                 deadlines"
                .to_string(),
            MultithreadOutcome::WaitsItsTurn => "it waits: its project's turn has not come, \
                 and taking places would leave no fewer CPUs idle"
                .to_string(),
        };
        let _ = writeln!(out, "  multithread job {} ({}): {why}", m.job, m.project);
    }
    let _ = writeln!(out, "\nSuspension:");
    let _ = writeln!(out, "{}", suspension_text("computing", e.suspended.computing.as_ref()));
    let _ = writeln!(out, "{}", suspension_text("GPUs", e.suspended.gpu.as_ref()));
    let _ = writeln!(out, "{}", suspension_text("network", e.suspended.network.as_ref()));
    let _ = writeln!(out, "\nEnforcement:");
    for a in &e.actions {
        let _ = writeln!(
            out,
            "  {:<28} {:<12} {:<22} ({:?})",
            a.job,
            a.project,
            action_text(&a.action),
            a.reason
        );
    }
    let _ = writeln!(out, "\nJobs (projected by weighted round robin):");
    if e.late_report_margin > 0.0 {
        let _ = writeln!(
            out,
            "  (the host is often off or offline: a job finishing less than {} before its \
             deadline counts as missing it, since a spell out of reach rarely lasts longer; \
             its project runs earliest deadline first)",
            hours(e.late_report_margin)
        );
    }
    let _ = writeln!(
        out,
        "  {:<28} {:<12} {:<7} {:>5} {:>10} {:>12} {:>12}  deadline",
        "job", "project", "rsc", "run", "left", "finishes in", "deadline in"
    );
    for j in &e.jobs {
        let finish = j.projected_completion.map_or("-".to_string(), |t| hours(t - e.now));
        let _ = writeln!(
            out,
            "  {:<28} {:<12} {:<7} {:>5} {:>10} {:>12} {:>12}  {}",
            j.name,
            j.project,
            j.resource.map_or("?", ResourceType::key),
            if j.running { "yes" } else { "" },
            hours(j.remaining_duration),
            finish,
            hours(j.deadline - e.now),
            match (j.deadline_missed, j.projected_completion) {
                (false, _) => "met",
                // On time, but within the late-report margin of a host often out of reach.
                (true, Some(done)) if done <= j.deadline => "at risk (late report)",
                (true, _) => "MISSED",
            },
        );
    }
    let _ = writeln!(out, "\nResources:");
    for (key, r) in e.resources.iter().filter(|(_, r)| r.instances > 0.0) {
        let _ = writeln!(
            out,
            "  {:<7} instances {:>5}  idle {:>5.2}  shortfall {:>10.0} s  saturated {:>10}  deadline misses {}",
            key,
            r.instances,
            r.nidle,
            r.shortfall,
            hours(r.saturated_time),
            r.deadlines_missed
        );
    }
    let _ = writeln!(out, "\nProjects:");
    for (name, p) in &e.projects {
        let _ = writeln!(
            out,
            "  {:<16} share {:>5.1} ({:>4.1}%)  STD {:>9.0}  anticipated {:>9.0}  LTD {:>10.0}  REC {:>10.3e}  misses {}{}{}",
            name,
            p.resource_share,
            p.share_fraction * 100.0,
            p.short_term_debt,
            p.anticipated_debt,
            p.long_term_debt,
            p.rec,
            p.deadlines_missed,
            if p.fetchable { "" } else { "  [not fetchable]" },
            if p.overworked { "  [overworked]" } else { "" },
        );
        for (key, r) in p
            .resources
            .iter()
            .filter(|(k, _)| e.resources.get(*k).is_some_and(|x| x.instances > 0.0))
        {
            let backoff = r
                .backoff_until
                .map_or(String::new(), |t| format!("  backed off {}", hours(t - e.now)));
            let _ = writeln!(
                out,
                "      {:<7} share {:>5.2}  shortfall {:>10.0} s  LTD {:>10.0}  D={}{}{}",
                key,
                r.share,
                r.shortfall,
                r.long_term_debt,
                r.accumulate_debt as u8,
                if r.may_supply { "" } else { "  (no apps)" },
                backoff
            );
            if r.job_cap_reached {
                let _ = writeln!(
                    out,
                    "              holds as many jobs as the failsafe cap allows: not asked for more \
                     (its estimates may be far too small)"
                );
            }
        }
        if p.results_waiting > 0 {
            let when = match p.report_due {
                Some(due) if due > e.now => format!("in {}", hours(due - e.now)),
                Some(_) => "now".to_string(),
                None => "when one falls due".to_string(),
            };
            let how = match p.report_batching {
                ReportBatching::Unbatched => format!("reported {when}"),
                ReportBatching::WellStocked => {
                    let held = "held while its queue is well stocked: they go with its next refill";
                    format!("{held}, at the latest {when}")
                }
                ReportBatching::Refill => format!(
                    "reported {when} with a refill (its queue has drained to half its latency cap)"
                ),
            };
            let _ = writeln!(out, "      reports {} result(s) waiting, {how}", p.results_waiting);
        }
    }
    let w = &e.work_request;
    let _ = writeln!(out, "\nWork request:");
    match &w.project {
        Some(project) => {
            let _ = writeln!(
                out,
                "  ask {project} ({}): work_req_seconds {:.0}",
                w.reason, w.work_req_seconds
            );
            for (key, r) in
                w.resources.iter().filter(|(_, r)| r.req_seconds > 0.0 || r.req_ninstances > 0.0)
            {
                let _ = writeln!(
                    out,
                    "    {:<7} req_seconds {:>10.0}  req_ninstances {:.2}",
                    key, r.req_seconds, r.req_ninstances
                );
            }
        }
        None => {
            let _ = writeln!(out, "  none: {}", w.reason);
        }
    }
    let _ = writeln!(out, "\nDisk:");
    out.push_str(&e.disk.render_text());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::decide;
    use crate::model::{Project, ResourceUsage};
    use crate::rr_sim::test_support::StateBuilder;

    #[test]
    fn projects_that_share_a_name_are_told_apart_by_their_urls() {
        let mut b = StateBuilder::new(2);
        let one = b.project("one", 1.0);
        let cpu = ResourceUsage { avg_ncpus: 1.0, coprocessor: None };
        let version = b.app_version(one, cpu, 1e9);
        b.job(one, version, 3600.0, 1e6);
        b.state.projects[one.index()].name = "Same".into();
        b.state.projects.push(Project::new("Same", "http://two/", 1.0));
        let decision = decide(&b.state, Policy::Seed, 0.0, 60.0);
        let explanation = Explanation::new(&b.state, &decision);
        let names: Vec<&String> = explanation.projects.keys().collect();
        assert_eq!(names, ["Same <http://one/>", "Same <http://two/>"]);
        assert_eq!(explanation.jobs[0].project, "Same <http://one/>");
        assert!(render_text(&explanation).contains("Same <http://two/>"));
    }

    #[test]
    fn suspension_is_named_with_boincs_codes() {
        let mut b = StateBuilder::new(2);
        let one = b.project("one", 1.0);
        let cpu = ResourceUsage { avg_ncpus: 1.0, coprocessor: None };
        let version = b.app_version(one, cpu, 1e9);
        b.job(one, version, 3600.0, 1e6);
        b.state.prefs.reported.start_hour = 0.0;
        b.state.prefs.reported.end_hour = 1.0;
        let decision = decide(&b.state, Policy::Seed, 0.0, 60.0);
        let plain = Explanation::new(&b.state, &decision);
        assert!(plain.suspended.computing.is_none());
        let evening = crate::control::HostConditions {
            local_time: Some(crate::control::LocalTime { weekday: 2, hour: 22.2 }),
            ..crate::control::HostConditions::SERVER
        };
        let explanation = plain.with_host(&b.state, &evening);
        let computing = explanation.suspended.computing.as_ref().expect("suspended");
        assert_eq!((computing.code, computing.reason), (8, "time of day"));
        let text = render_text(&explanation);
        assert!(text.contains("computing: suspended, time of day (reason 8)"), "{text}");
        assert!(text.contains("network: not suspended"), "{text}");
        b.state.run_mode = crate::model::RunMode::Never;
        let never = Explanation::new(&b.state, &decision);
        assert_eq!(never.suspended.computing.map(|r| r.code), Some(4));
    }
}
