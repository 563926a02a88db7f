//! The emulator's event loop (DESIGN.md "Emulator"; the triggers of seed 000 "CPU
//! scheduling policy": job completion, end of a scheduling period, new runnable jobs;
//! seed 002's fetch polling and backoff expiry; availability changes).
//!
//! Virtual time jumps from one event to the next: nothing happens between a job's
//! completion, a time slice's end, a checkpoint a preemption waits for, a moment the
//! work buffer falls below its low-water mark, a backoff's expiry or an availability
//! change, so a simulated year costs what its events cost, not what its seconds cost.
//! Every decision is the core's own [`decide`]: the emulator runs exactly the policies
//! the live client runs.
//!
//! The emulated world: a running job progresses at its app version's flops while its
//! resource may compute; it checkpoints every `checkpoint_period` seconds of running (an
//! app without one checkpoints continuously); a finished job uploads at once and is
//! reported by the RPC policy; project servers answer with generated jobs.

use super::availability::{HostAvailability, HostProcess};
use super::disk_world::{DiskSink, DiskWorld};
use super::figures::{FiguresAccumulator, FiguresOfMerit, FiguresSetup, HostState, RunningUsage};
use super::project_server::{EmulatedServer, ServerReply, add_jobs};
use super::trace::{AvailabilityKind, TraceEvent, TraceGpu, TraceProject};
use crate::accounting::long_term_debt::update_long_term_debt;
use crate::accounting::rec::update_rec;
use crate::accounting::short_term_debt::{update_legacy_debt, update_short_term_debt};
use crate::cpu_sched::RunReason;
use crate::decision::{Decision, decide_with_facts};
use crate::enforce::{ActionKind, ActionReason, apply_enforcement, assign_missing_gpu_instances};
use crate::estimate::{unstarted_duration, update_duration_correction_factor};
use crate::model::{
    ClientState, JobId, JobState, ProjectFacts, ProjectId, ResourceMap, ResourceType,
};
use crate::rpc_policy::{
    next_report_time, on_master_fetch_failure, on_master_fetch_success, on_rpc_failure,
    on_rpc_success, report_reasons,
};
use crate::work_fetch::{WorkRequest, handle_work_reply, piggyback_request};
use crate::{Policy, Time};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The work-fetch poll interval: the emulator asks at most once per this many seconds
/// (BOINC's emulator steps 60 s; the real client polls at a similar pace).
pub const FETCH_POLL_INTERVAL: f64 = 60.0;

/// How an emulator run is set up.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Scenario name, for the trace.
    pub scenario: String,
    /// Policy family.
    pub policy: Policy,
    /// Seed of every random choice (servers, availability).
    pub seed: u64,
    /// Simulated seconds.
    pub duration: f64,
    /// Reproduce BOINC's emulator's modelling choices (REFERENCE.md): CPU jobs keep
    /// running while the host is off or computing is suspended and CPU capacity counts
    /// the whole time; servers never say "no app for this resource"; `max_concurrent`
    /// in client_state.xml is ignored.
    pub boinc_compat: bool,
    /// Never contact the servers: run only the jobs the scenario already holds.
    pub existing_jobs_only: bool,
    /// Keep the trace events.
    pub trace: bool,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct SimResult {
    /// BOINC's figures of merit (wall_seconds left for the caller, which has a clock).
    pub figures: FiguresOfMerit,
    /// The trace, if asked for.
    pub trace: Vec<TraceEvent>,
    /// Decisions made.
    pub decisions: u64,
    /// Scheduler RPCs attempted.
    pub rpcs: u64,
}

/// The emulator's truth about a job, beside what the client knows.
#[derive(Debug, Clone, Copy)]
struct JobTruth {
    /// Running seconds the job really needs (true flops / app version flops).
    true_duration: f64,
    /// Stable number of the job for figures and trace (ids are compacted).
    serial: u32,
    /// Start of the job's current run segment, if it is computing.
    segment_start: Option<Time>,
    /// Checkpoint period of its app (0: continuous).
    checkpoint_period: f64,
}

/// Runs a scenario. `progress` is called with the fraction of simulated time done, often
/// enough for a progress bar and cheaply.
pub fn run_simulation(
    state: ClientState,
    config: &SimConfig,
    progress: &mut dyn FnMut(f64),
) -> SimResult {
    let mut sim = Simulator::new(state, config);
    sim.run(progress);
    sim.finish()
}

struct Simulator<'c> {
    config: &'c SimConfig,
    state: ClientState,
    truth: Vec<JobTruth>,
    next_serial: u32,
    rng: ChaCha8Rng,
    host: HostAvailability,
    servers: Vec<EmulatedServer>,
    disk: DiskWorld,
    figures: FiguresAccumulator,
    trace: Vec<TraceEvent>,
    now: Time,
    start: Time,
    end: Time,
    last_schedule_time: Time,
    last_accounting_time: Time,
    /// Instance-seconds used per project and resource since the last accounting.
    usage: Vec<ResourceMap<f64>>,
    /// Jobs whose tasks are in the Running state.
    running: Vec<JobId>,
    /// Running jobs that enforcement keeps only until their next checkpoint.
    awaiting_checkpoint: Vec<JobId>,
    next_fetch_check: Time,
    next_rpc_allowed: Time,
    /// The latest decision, whose work-fetch choice the RPC step acts on.
    last_decision: Option<Decision>,
    decisions: u64,
    rpcs: u64,
    acked_jobs: usize,
}

impl<'c> Simulator<'c> {
    fn new(mut state: ClientState, config: &'c SimConfig) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        let start = crate::explain::state_time(&state);
        let end = start + config.duration.max(0.0);
        if config.boinc_compat {
            for app in &mut state.apps {
                app.max_concurrent = None;
            }
        }
        let host = HostAvailability::new(&state.time_stats, start, &mut rng);
        let servers = state
            .project_ids()
            .map(|p| {
                let mut server = EmulatedServer::new(&state, p, start, &mut rng);
                server.set_boinc_compat(config.boinc_compat);
                server
            })
            .collect();
        let gpus = ResourceMap::from_fn(|r| {
            if r.is_gpu() && state.instances(r) > 0 {
                state.host.coprocessors[r].as_ref().map(|c| (state.instances(r), c.peak_flops))
            } else {
                None
            }
        });
        let scheduling_period = state.prefs.scheduling_period();
        let mut figures = FiguresAccumulator::new(FiguresSetup {
            ncpus: state.ncpus(),
            p_fpops: state.host.p_fpops,
            gpus,
            projects: state.projects.iter().map(|p| (p.name.clone(), p.resource_share)).collect(),
            scheduling_period,
            boinc_compat: config.boinc_compat,
            start,
        });
        let mut trace = Vec::new();
        if config.trace {
            trace.push(TraceEvent::Setup {
                scenario: config.scenario.clone(),
                policy: config.policy,
                seed: config.seed,
                boinc_compat: config.boinc_compat,
                start,
                end,
                ncpus: state.ncpus(),
                p_fpops: state.host.p_fpops,
                gpus: ResourceType::GPUS
                    .iter()
                    .filter_map(|&r| {
                        gpus[r].map(|(count, peak_flops)| TraceGpu {
                            resource: r,
                            count,
                            peak_flops,
                        })
                    })
                    .collect(),
                projects: state
                    .projects
                    .iter()
                    .map(|p| TraceProject {
                        name: p.name.clone(),
                        resource_share: p.resource_share,
                    })
                    .collect(),
                scheduling_period,
            });
        }
        let disk = DiskWorld::new(
            &mut state,
            start,
            &mut DiskSink::new(&mut figures, &mut trace, config.trace),
        );
        let nprojects = state.projects.len();
        let mut sim = Simulator {
            config,
            state,
            truth: Vec::new(),
            next_serial: 0,
            rng,
            host,
            servers,
            disk,
            figures,
            trace,
            now: start,
            start,
            end,
            last_schedule_time: start,
            last_accounting_time: start,
            usage: vec![ResourceMap::default(); nprojects],
            running: Vec::new(),
            awaiting_checkpoint: Vec::new(),
            next_fetch_check: start,
            next_rpc_allowed: start,
            last_decision: None,
            decisions: 0,
            rpcs: 0,
            acked_jobs: 0,
        };
        assign_missing_gpu_instances(&mut sim.state);
        sim.adopt_existing_jobs();
        sim
    }

    /// Gives the scenario's own jobs their truth: their estimate is all the emulator
    /// knows of them, so it is taken as their real size.
    fn adopt_existing_jobs(&mut self) {
        for id in self.state.job_ids() {
            let true_duration = self.estimated_true_duration(id);
            self.push_truth(id, true_duration);
            if self.state.job(id).is_running() {
                self.running.push(id);
            }
            if self.config.trace {
                let event = self.job_received_event(id, true_duration);
                self.trace.push(event);
            }
        }
    }

    fn estimated_true_duration(&self, id: JobId) -> f64 {
        let job = self.state.job(id);
        let dcf = self.state.project(job.project).duration_correction_factor;
        let estimate = unstarted_duration(&self.state, id);
        if dcf > 0.0 && dcf.is_finite() { estimate / dcf } else { estimate }
    }

    fn push_truth(&mut self, id: JobId, true_duration: f64) {
        let job = self.state.job(id);
        let checkpoint_period = self
            .state
            .app(self.state.workunit(job.workunit).app)
            .emulation
            .map_or(0.0, |e| e.checkpoint_period.max(0.0));
        debug_assert_eq!(self.truth.len(), id.index());
        self.truth.push(JobTruth {
            true_duration: true_duration.max(1.0),
            serial: self.next_serial,
            segment_start: None,
            checkpoint_period,
        });
        self.next_serial += 1;
    }

    fn job_received_event(&self, id: JobId, true_duration: f64) -> TraceEvent {
        let job = self.state.job(id);
        let workunit = self.state.workunit(job.workunit);
        let usage = job.app_version.map(|av| self.state.app_version(av).usage);
        let flops = job.app_version.map_or(0.0, |av| self.state.app_version(av).flops);
        TraceEvent::JobReceived {
            time: self.now,
            job: job.name.clone(),
            project: self.state.project(job.project).name.clone(),
            app: self.state.app(workunit.app).name.clone(),
            avg_ncpus: usage.map_or(0.0, |u| u.avg_ncpus),
            coprocessor: usage.and_then(|u| u.coprocessor),
            flops: true_duration * flops,
            fpops_est: workunit.rsc_fpops_est,
            deadline: job.report_deadline,
        }
    }

    /// Whether a job's resource may compute now.
    fn may_compute(&self, id: JobId) -> bool {
        let host = self.host_state();
        let is_gpu = self
            .state
            .job(id)
            .app_version
            .is_some_and(|av| self.state.app_version(av).usage.coprocessor.is_some());
        if is_gpu {
            host.on && host.gpu_active
        } else {
            self.config.boinc_compat || (host.on && host.active)
        }
    }

    fn host_state(&self) -> HostState {
        HostState {
            on: self.host.is_up(HostProcess::On),
            active: self.host.is_up(HostProcess::Active),
            gpu_active: self.host.is_up(HostProcess::GpuActive),
        }
    }

    fn run(&mut self, progress: &mut dyn FnMut(f64)) {
        let span = (self.end - self.start).max(1.0);
        let mut next_progress = 0.0;
        self.reconcile_segments();
        self.step();
        loop {
            let next = self.next_event_time();
            if next >= self.end {
                self.advance_to(self.end);
                break;
            }
            self.advance_to(next);
            self.step();
            let done = (self.now - self.start) / span;
            if done >= next_progress {
                progress(done.min(1.0));
                next_progress = done + 0.01;
            }
        }
        self.close_segments();
        progress(1.0);
    }

    /// The earliest moment anything can change.
    fn next_event_time(&self) -> Time {
        let period = self.state.prefs.scheduling_period();
        let mut next = self.host.next_change();
        for server in &self.servers {
            next = next.min(server.next_change());
        }
        for &id in &self.running {
            let Some(task) = self.state.job(id).task.as_ref() else { continue };
            if self.may_compute(id) {
                let truth = &self.truth[id.index()];
                next = next.min(self.now + (truth.true_duration - task.elapsed_time).max(0.0));
            }
            // The end of its time slice may let another job in.
            let slice_end = task.run_start_time + period;
            if slice_end > self.now {
                next = next.min(slice_end);
            }
        }
        for &id in &self.awaiting_checkpoint {
            next = next.min(self.next_checkpoint_time(id));
        }
        if !self.config.existing_jobs_only {
            next = next.min(self.next_fetch_check.max(self.next_rpc_allowed));
        }
        // Never sleep longer than a scheduling period: the real client reschedules at
        // least that often, and accounting stays fine-grained.
        next.min(self.now + period).max(self.now + 1e-6)
    }

    fn next_checkpoint_time(&self, id: JobId) -> Time {
        let truth = &self.truth[id.index()];
        let Some(task) = self.state.job(id).task.as_ref() else { return f64::INFINITY };
        if !self.may_compute(id) {
            return f64::INFINITY;
        }
        if truth.checkpoint_period <= 0.0 {
            return self.now;
        }
        let next = (task.checkpoint_elapsed_time / truth.checkpoint_period).floor() + 1.0;
        self.now + (next * truth.checkpoint_period - task.elapsed_time).max(0.0)
    }

    /// Moves virtual time to `to`: running jobs progress and checkpoint, usage and the
    /// figures accumulate.
    fn advance_to(&mut self, to: Time) {
        let from = self.now;
        let dt = to - from;
        if dt <= 0.0 {
            return;
        }
        let mut computing = Vec::with_capacity(self.running.len());
        for &id in &self.running {
            if !self.may_compute(id) {
                continue;
            }
            let job = &self.state.jobs[id.index()];
            let Some(av) = job.app_version else { continue };
            let usage = self.state.app_versions[av.index()].usage;
            computing.push(RunningUsage {
                project: job.project,
                job: JobId(self.truth[id.index()].serial),
                avg_ncpus: usage.avg_ncpus,
                gpu: usage.coprocessor,
            });
            let project_usage = &mut self.usage[job.project.index()];
            project_usage[ResourceType::Cpu] += usage.avg_ncpus * dt;
            if let Some((r, n)) = usage.coprocessor {
                project_usage[r] += n * dt;
            }
            let truth = self.truth[id.index()];
            let Some(task) = self.state.jobs[id.index()].task.as_mut() else { continue };
            let before = task.elapsed_time;
            task.elapsed_time = (before + dt).min(truth.true_duration);
            task.current_cpu_time += usage.avg_ncpus.min(1.0) * dt;
            task.fraction_done = (task.elapsed_time / truth.true_duration).clamp(0.0, 1.0);
            if truth.checkpoint_period <= 0.0 {
                task.checkpoint_elapsed_time = task.elapsed_time;
                task.checkpoint_cpu_time = task.current_cpu_time;
                task.checkpoint_wall_time = to;
            } else {
                let period = truth.checkpoint_period;
                let last = (task.elapsed_time / period).floor() * period;
                if last > task.checkpoint_elapsed_time {
                    task.checkpoint_wall_time = from + (last - before);
                    task.checkpoint_elapsed_time = last;
                    task.checkpoint_cpu_time = task.current_cpu_time;
                }
            }
        }
        self.figures.advance(from, to, self.host_state(), &computing);
        self.now = to;
    }

    /// Everything that happens at the current instant: availability changes, completions,
    /// a decision, and scheduler RPCs.
    fn step(&mut self) {
        self.apply_availability_changes();
        self.complete_finished_jobs();
        let mut sink = DiskSink::new(&mut self.figures, &mut self.trace, self.config.trace);
        self.disk.poll(&mut self.state, self.now, &mut sink);
        self.schedule();
        // One RPC per poll interval at most; new jobs are scheduled at once.
        if !self.config.existing_jobs_only && self.rpc_step() {
            self.schedule();
        }
        if self.acked_jobs > 32 && self.acked_jobs * 4 > self.state.jobs.len() {
            self.compact();
        }
    }

    fn apply_availability_changes(&mut self) {
        let mut changed = false;
        while self.host.next_change() <= self.now {
            let (time, process, up) = self.host.pop_change(&mut self.rng);
            changed = true;
            if self.config.trace {
                let what = match process {
                    HostProcess::On => AvailabilityKind::HostOn,
                    HostProcess::Connected => AvailabilityKind::Connected,
                    HostProcess::Active => AvailabilityKind::Active,
                    HostProcess::GpuActive => AvailabilityKind::GpuActive,
                };
                self.trace.push(TraceEvent::Availability { time, what, up });
            }
        }
        for p in 0..self.servers.len() {
            while self.servers[p].next_change() <= self.now {
                let (time, up) = self.servers[p].pop_change(&mut self.rng);
                if self.config.trace {
                    let project = self.state.projects[p].name.clone();
                    let what = AvailabilityKind::ProjectUp { project };
                    self.trace.push(TraceEvent::Availability { time, what, up });
                }
            }
        }
        if changed {
            self.reconcile_segments();
        }
    }

    fn complete_finished_jobs(&mut self) {
        let mut finished = Vec::new();
        for &id in &self.running {
            let task_elapsed = self.state.job(id).elapsed_time();
            if task_elapsed >= self.truth[id.index()].true_duration - 1e-6 {
                finished.push(id);
            }
        }
        if finished.is_empty() {
            return;
        }
        for id in finished {
            self.end_segment(id);
            let estimated = unstarted_duration(&self.state, id);
            let elapsed = self.state.job(id).elapsed_time();
            let project = self.state.job(id).project;
            update_duration_correction_factor(
                &mut self.state.projects[project.index()],
                estimated,
                elapsed,
            );
            let job = &mut self.state.jobs[id.index()];
            job.state = JobState::FilesUploaded;
            job.ready_to_report = true;
            job.completed_time = self.now;
            job.final_elapsed_time = elapsed;
            job.task = None;
            self.running.retain(|&j| j != id);
            self.awaiting_checkpoint.retain(|&j| j != id);
            self.figures.job_finished(project);
            let mut sink = DiskSink::new(&mut self.figures, &mut self.trace, self.config.trace);
            self.disk.job_finished(&mut self.state, id, self.now, &mut sink);
            if self.config.trace {
                self.trace.push(TraceEvent::JobFinished {
                    time: self.now,
                    job: self.state.job(id).name.clone(),
                    project: self.state.project(project).name.clone(),
                });
            }
        }
        // A completion frees resources and changes the buffer: look at fetching again.
        self.next_fetch_check = self.now;
    }

    /// Brings the debts up to date with the usage since the last decision.
    fn account(&mut self, facts: &[ProjectFacts]) {
        let dt = self.now - self.last_accounting_time;
        if dt <= 0.0 {
            return;
        }
        match self.config.policy {
            Policy::Legacy => update_legacy_debt(&mut self.state, facts, &self.usage, dt),
            _ => update_short_term_debt(&mut self.state, facts, &self.usage, dt),
        }
        update_long_term_debt(&mut self.state, facts, &self.usage, dt, self.now);
        update_rec(&mut self.state, &self.usage, self.now);
        for usage in &mut self.usage {
            *usage = ResourceMap::default();
        }
        self.last_accounting_time = self.now;
    }

    /// One decision and its enforcement.
    fn schedule(&mut self) {
        if !self.host_state().on && !self.config.boinc_compat {
            self.last_decision = None;
            return;
        }
        let facts = ProjectFacts::gather(&self.state);
        self.account(&facts);
        // Accounting changes debts, not the jobs the facts describe: they still hold.
        let decision = decide_with_facts(
            &self.state,
            facts,
            self.config.policy,
            self.last_schedule_time,
            self.now,
        );
        self.decisions += 1;
        // A preempted job's segment is closed before enforcement releases its GPU
        // instances, so the trace still says which instances it ran on.
        for action in &decision.enforcement.actions {
            if matches!(action.kind, ActionKind::Preempt { .. }) {
                self.end_segment(action.job);
            }
        }
        apply_enforcement(&mut self.state, &decision.enforcement, self.now);
        self.last_schedule_time = self.now;
        self.awaiting_checkpoint.clear();
        let starts_edf_job = decision.enforcement.actions.iter().any(|a| {
            matches!(a.kind, ActionKind::Start { .. } | ActionKind::Resume { .. })
                && decision
                    .run_list
                    .entries
                    .iter()
                    .any(|e| e.job == a.job && e.reason == RunReason::Edf)
        });
        for action in &decision.enforcement.actions {
            match &action.kind {
                ActionKind::Start { .. } | ActionKind::Resume { .. } => {
                    if !self.running.contains(&action.job) {
                        self.running.push(action.job);
                    }
                }
                ActionKind::Preempt { .. } => {
                    self.end_segment(action.job);
                    self.running.retain(|&j| j != action.job);
                    if self.config.trace {
                        let job = self.state.job(action.job);
                        self.trace.push(TraceEvent::Preempted {
                            time: self.now,
                            job: job.name.clone(),
                            project: self.state.project(job.project).name.clone(),
                            for_deadline: starts_edf_job,
                        });
                    }
                }
                ActionKind::KeepRunning => {
                    if action.reason == ActionReason::NotCheckpointed {
                        self.awaiting_checkpoint.push(action.job);
                    }
                }
            }
        }
        self.reconcile_segments();
        self.plan_fetch_check(&decision);
        self.last_decision = Some(decision);
    }

    /// When the fetch decision could next change without any other event: the work
    /// buffer of some resource reaching its low-water mark, or a backoff expiring.
    fn plan_fetch_check(&mut self, decision: &Decision) {
        if decision.work_fetch.request.is_some() {
            self.next_fetch_check = self.now;
            return;
        }
        let low_water = self.state.prefs.work_buf_min();
        let mut next = f64::INFINITY;
        for (r, sim) in decision.rr_sim.resources.iter() {
            if sim.instances > 0.0 && self.state.instances(r) > 0 {
                // The prediction is made afresh at every check and can keep landing just
                // short of the low-water mark; like the real client, look again no sooner
                // than a poll interval unless an event (a completion, new jobs) asks.
                let when = self.now + sim.saturated_time - low_water;
                if when > self.now {
                    next = next.min(when.max(self.now + FETCH_POLL_INTERVAL));
                }
            }
        }
        for project in &self.state.projects {
            for t in [project.min_rpc_time, project.latency_limited_until.unwrap_or(0.0)] {
                if t > self.now {
                    next = next.min(t);
                }
            }
            for (_, resource) in project.resources.iter() {
                if resource.backoff_time > self.now {
                    next = next.min(resource.backoff_time);
                }
            }
        }
        if let Some(due) = next_report_time(&self.state, self.now) {
            next = next.min(due);
        }
        self.next_fetch_check = next;
    }

    /// Opens and closes run segments so they match which jobs compute now.
    fn reconcile_segments(&mut self) {
        for index in 0..self.running.len() {
            let id = self.running[index];
            let computing = self.may_compute(id);
            let open = self.truth[id.index()].segment_start.is_some();
            if computing && !open {
                self.truth[id.index()].segment_start = Some(self.now);
            } else if !computing && open {
                self.end_segment(id);
            }
        }
    }

    fn end_segment(&mut self, id: JobId) {
        let Some(start) = self.truth[id.index()].segment_start.take() else { return };
        if !self.config.trace || self.now <= start {
            return;
        }
        let job = self.state.job(id);
        let usage = job.app_version.map(|av| self.state.app_version(av).usage);
        let gpu = usage.and_then(|u| u.coprocessor).map(|(r, n)| {
            let instances = job.task.as_ref().map(|t| t.gpu_instances.clone()).unwrap_or_default();
            (r, instances, n.min(1.0))
        });
        self.trace.push(TraceEvent::RunSegment {
            job: job.name.clone(),
            project: self.state.project(job.project).name.clone(),
            start,
            end: self.now,
            avg_ncpus: usage.map_or(0.0, |u| u.avg_ncpus),
            gpu,
        });
    }

    fn close_segments(&mut self) {
        for index in 0..self.running.len() {
            let id = self.running[index];
            self.end_segment(id);
        }
    }

    /// One scheduler RPC if the policies want one now; returns whether it brought jobs
    /// (the only change a new decision has to react to at once).
    fn rpc_step(&mut self) -> bool {
        if self.now < self.next_rpc_allowed || self.now < self.next_fetch_check {
            return false;
        }
        let host = self.host_state();
        if !host.on || !self.host.is_up(HostProcess::Connected) {
            // Nothing can be sent until the host is back: the availability change that
            // brings it back triggers a new decision and a new plan.
            self.next_fetch_check = f64::INFINITY;
            return false;
        }
        if self.fetch_master_pages() {
            // Master pages read: look again with those projects askable.
            self.schedule();
        }
        let Some(decision) = self.last_decision.as_ref() else { return false };
        let request = match decision.work_fetch.request {
            Some(request) => request,
            None => {
                let reasons = report_reasons(&self.state, self.now);
                let due = self.state.project_ids().find(|&p| {
                    reasons[p.index()].is_some() && self.state.project(p).min_rpc_time <= self.now
                });
                match due {
                    Some(project) => piggyback_request(
                        &self.state,
                        &decision.rr_sim,
                        &decision.facts,
                        project,
                        self.now,
                    ),
                    None => {
                        if let Some(decision) = self.last_decision.take() {
                            self.plan_fetch_check(&decision);
                            self.last_decision = Some(decision);
                        }
                        return false;
                    }
                }
            }
        };
        self.rpcs += 1;
        self.next_rpc_allowed = self.now + FETCH_POLL_INTERVAL;
        let project = request.project;
        self.disk.before_request(&self.state, &mut self.servers[project.index()], self.now);
        let reply = self.servers[project.index()].handle_request(
            &self.state,
            &request,
            self.now,
            &mut self.rng,
        );
        self.figures.rpc(project, reply.is_some());
        self.next_fetch_check = self.now;
        match reply {
            None => {
                on_rpc_failure(&mut self.state.projects[project.index()], self.now, &mut self.rng);
                self.trace_rpc(&request, false, 0, 0, false);
                false
            }
            Some(reply) => {
                let brought_jobs = !reply.jobs.is_empty();
                self.accept_reply(&request, reply);
                brought_jobs
            }
        }
    }

    /// Seed 002: after repeated RPC failures a project's master page is read again; the
    /// emulated master page is readable exactly when the project's server is up. Returns
    /// whether a page was read.
    fn fetch_master_pages(&mut self) -> bool {
        let mut read = false;
        for p in 0..self.state.projects.len() {
            let project = &mut self.state.projects[p];
            if !project.master_fetch_pending || project.min_rpc_time > self.now {
                continue;
            }
            if self.servers[p].is_up() {
                on_master_fetch_success(project, false);
                read = true;
            } else {
                on_master_fetch_failure(project, self.now, &mut self.rng);
            }
        }
        read
    }

    fn accept_reply(&mut self, request: &WorkRequest, reply: ServerReply) {
        let project = request.project;
        let reported = self.report_results(project);
        let ids = add_jobs(&mut self.state, project, &reply.jobs, self.now);
        let mut sink = DiskSink::new(&mut self.figures, &mut self.trace, self.config.trace);
        self.disk.after_reply(&mut self.state, &ids, self.now, &mut sink);
        let work_reply = reply.work_reply(&self.state);
        for (id, new_job) in ids.iter().zip(&reply.jobs) {
            let flops = self.state.app_version(new_job.app_version).flops.max(1.0);
            let true_duration = new_job.true_flops / flops;
            self.push_truth(*id, true_duration);
            self.figures.job_received(project);
            if self.config.trace {
                let event = self.job_received_event(*id, true_duration);
                self.trace.push(event);
            }
        }
        handle_work_reply(&mut self.state, request, &work_reply, self.now, &mut self.rng);
        on_rpc_success(&mut self.state.projects[project.index()], reply.request_delay, self.now);
        self.trace_rpc(
            request,
            true,
            reported,
            ids.len() as u32,
            reply.no_work_because_of_deadlines,
        );
    }

    fn trace_rpc(
        &mut self,
        request: &WorkRequest,
        success: bool,
        reported: u32,
        received: u32,
        no_work: bool,
    ) {
        if !self.config.trace {
            return;
        }
        self.trace.push(TraceEvent::Rpc {
            time: self.now,
            project: self.state.project(request.project).name.clone(),
            success,
            req_seconds: request.resources.map(|_, r| r.req_seconds),
            req_ninstances: request.resources.map(|_, r| r.req_ninstances),
            reported,
            jobs_received: received,
            no_work_because_of_deadlines: no_work,
        });
    }

    /// Reports every ready result of a project; the server acknowledges them all.
    fn report_results(&mut self, project: ProjectId) -> u32 {
        let mut reported = 0;
        for index in 0..self.state.jobs.len() {
            let job = &mut self.state.jobs[index];
            if job.project != project || !job.ready_to_report || job.got_server_ack {
                continue;
            }
            job.got_server_ack = true;
            reported += 1;
            self.acked_jobs += 1;
            let missed = self.now > job.report_deadline;
            self.figures.job_reported(project, JobId(self.truth[index].serial), missed);
            if self.config.trace {
                let job = &self.state.jobs[index];
                self.trace.push(TraceEvent::JobReported {
                    time: self.now,
                    job: job.name.clone(),
                    project: self.state.projects[project.index()].name.clone(),
                    deadline: job.report_deadline,
                    missed,
                });
            }
        }
        reported
    }

    /// Forgets acknowledged jobs (and workunits no job needs) so that every decision
    /// costs what the live queue costs, not what the whole run has seen.
    fn compact(&mut self) {
        let keep: Vec<bool> = self.state.jobs.iter().map(|j| !j.got_server_ack).collect();
        let mut new_index = vec![u32::MAX; keep.len()];
        let mut next = 0u32;
        for (index, &k) in keep.iter().enumerate() {
            if k {
                new_index[index] = next;
                next += 1;
            }
        }
        let mut workunit_used = vec![false; self.state.workunits.len()];
        for (job, &k) in self.state.jobs.iter().zip(&keep) {
            if k {
                workunit_used[job.workunit.index()] = true;
            }
        }
        let mut workunit_index = vec![u32::MAX; workunit_used.len()];
        let mut next_wu = 0u32;
        for (index, &used) in workunit_used.iter().enumerate() {
            if used {
                workunit_index[index] = next_wu;
                next_wu += 1;
            }
        }
        let mut position = 0;
        self.state.workunits.retain(|_| {
            let used = workunit_used[position];
            position += 1;
            used
        });
        let mut position = 0;
        self.state.jobs.retain(|_| {
            let k = keep[position];
            position += 1;
            k
        });
        for job in &mut self.state.jobs {
            job.workunit = crate::model::WorkunitId(workunit_index[job.workunit.index()]);
        }
        let mut position = 0;
        self.truth.retain(|_| {
            let k = keep[position];
            position += 1;
            k
        });
        let remap = |id: &mut JobId| *id = JobId(new_index[id.index()]);
        self.running.iter_mut().for_each(remap);
        self.awaiting_checkpoint.iter_mut().for_each(remap);
        self.acked_jobs = 0;
    }

    fn finish(mut self) -> SimResult {
        let figures = self.figures.finish(self.end);
        SimResult {
            figures,
            trace: std::mem::take(&mut self.trace),
            decisions: self.decisions,
            rpcs: self.rpcs,
        }
    }
}
