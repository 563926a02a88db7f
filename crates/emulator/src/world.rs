//! The emulated world (docs/design.md "Emulator"): the host's availability, the project
//! servers, and the processes of running tasks, with the figures of merit and the trace
//! measured on it. The client reaches the servers only by scheduler requests and
//! replies; what only the emulator may know (a job's true size) stays here, by job name. The client's side of the run is [`boinc_core::control::ClientControl`];
//! the emulator's engine connects the two directly and the actor runtime connects them
//! through its effect traits, so both see the same world.
//!
//! A process runs at its app version's flops while its resource may compute, and
//! checkpoints every `checkpoint_period` seconds of running (an app without one
//! checkpoints continuously). Every random choice of the world (availability periods,
//! job sizes) comes from one seeded stream (stream 0 of the run's seed); the client's
//! own randomness has its own streams, so the world is the same whatever the client's
//! backoffs drew.

use super::availability::{
    HostAvailability, HostProcess, host_availability_rng, server_availability_rng,
};
use super::disk_world::DiskSink;
use super::engine::SimConfig;
use super::fair_share::device_list;
use super::figures::{
    FiguresAccumulator, FiguresOfMerit, FiguresProject, FiguresSetup, HostState, RunningUsage,
};
use super::project_server::{EmulatedServer, ServerBuffers};
use super::trace::{AvailabilityKind, TraceEvent, TraceGpu, TraceProject};
use boinc_core::Time;
use boinc_core::control::{HostView, ProcessStatus, SuspendReasons, TaskCommand, TaskSpec};
use boinc_core::estimate::{job_dcf, unstarted_duration};
use boinc_core::model::{
    ClientState, JobId, ProjectId, ResourceMap, ResourceType, ResourceUsage, project_labels,
};
use boinc_core::protocol::{NoWorkReason, SchedulerReply, SchedulerRequest};
use boinc_core::work_fetch::app_version_resources;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::cell::Cell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The emulator's truth about a job, beside what the client knows.
#[derive(Debug, Clone, Copy)]
struct JobTruth {
    /// Running seconds the job really needs (true flops / app version flops).
    true_duration: f64,
    /// Stable number of the job for figures and trace.
    serial: u32,
    /// Checkpoint period of its app (0: continuous).
    checkpoint_period: f64,
    /// Its report deadline.
    deadline: Time,
}

/// Hashes job names for the world's tables of truths. The names are the world's own (a
/// project's name and a number) or those of the scenario the user gave, never a remote
/// peer's, so a multiplication per eight bytes serves where the default hasher's
/// resistance to chosen keys would cost several times as much on every job sent,
/// started and reported.
#[derive(Debug, Default, Clone, Copy)]
struct NameHasher(u64);

impl NameHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    /// The product's high bits depend on every byte, its low ones only on the low bytes
    /// of each word: the table picks buckets by the low bits, so the high ones go there.
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

/// The world's truths of one project's jobs until reported: those its server made by
/// their number, as keying them by name would cost a copy of the name and its hash on
/// every job sent; the scenario's own by name. Both hold only jobs not yet reported, so
/// a long run's tables stay the size of the host's queue.
#[derive(Debug, Clone, Default)]
struct Truths {
    /// Jobs the server made, by [`EmulatedServer::made_job_index`].
    made: HashMap<usize, JobTruth, BuildHasherDefault<NameHasher>>,
    /// The scenario's jobs, by name.
    adopted: HashMap<String, JobTruth, BuildHasherDefault<NameHasher>>,
}

impl Truths {
    fn insert(&mut self, made_index: Option<usize>, name: &str, truth: JobTruth) {
        match made_index {
            Some(index) => {
                self.made.insert(index, truth);
            }
            None => {
                self.adopted.insert(name.to_string(), truth);
            }
        }
    }

    fn get(&self, made_index: Option<usize>, name: &str) -> Option<JobTruth> {
        match made_index {
            Some(index) => self.made.get(&index).copied(),
            None => self.adopted.get(name).copied(),
        }
    }

    fn remove(&mut self, made_index: Option<usize>, name: &str) -> Option<JobTruth> {
        match made_index {
            Some(index) => self.made.remove(&index),
            None => self.adopted.remove(name),
        }
    }
}

/// A task's process.
#[derive(Debug, Clone)]
struct SimProcess {
    project: ProjectId,
    job: String,
    truth: JobTruth,
    usage: ResourceUsage,
    gpu_instances: Vec<u32>,
    status: ProcessStatus,
    /// Running (not suspended).
    running: bool,
    /// Start of the current run segment, while it computes.
    segment_start: Option<Time>,
    /// The client waits for its next checkpoint.
    watch_checkpoint: bool,
}

/// The emulated world of one run.
#[derive(Debug)]
pub struct World {
    boinc_compat: bool,
    /// The host's CPUs: CPU-only processes asking for more between them share these.
    ncpus: f64,
    tracing: bool,
    rng: ChaCha8Rng,
    host_rng: ChaCha8Rng,
    server_rngs: Vec<ChaCha8Rng>,
    host: HostAvailability,
    servers: Vec<EmulatedServer>,
    /// What the servers answer requests in, kept from one request to the next.
    server_buffers: ServerBuffers,
    project_names: Vec<String>,
    /// Per project: the jobs its server made (by number) or the world adopted (by name),
    /// until reported.
    truths: Vec<Truths>,
    next_serial: u32,
    /// Processes by task slot.
    processes: Vec<Option<SimProcess>>,
    /// [`World::cpu_progress_rate`] as last worked out, until a process or the host's
    /// availability changes: the step's `next_change` and the `advance_to` after it ask
    /// for the same rate.
    cpu_rate: Cell<Option<f64>>,
    figures: FiguresAccumulator,
    /// What the computing processes occupy over an interval: kept between intervals so
    /// that advancing time allocates nothing.
    computing: Vec<RunningUsage>,
    trace: Vec<TraceEvent>,
    now: Time,
    end: Time,
}

impl World {
    /// The world of the scenario `state` (the client's state at the start, which names
    /// the projects, apps and host) from `start`, for the run `config`.
    pub fn new(state: &ClientState, config: &SimConfig, start: Time) -> Self {
        let rng = ChaCha8Rng::seed_from_u64(config.seed);
        let end = start + config.duration.max(0.0);
        let mut host_rng = host_availability_rng(config.seed);
        let host = HostAvailability::new(&state.time_stats, start, &mut host_rng);
        let mut server_rngs: Vec<ChaCha8Rng> =
            state.project_ids().map(|p| server_availability_rng(config.seed, p)).collect();
        let servers = state
            .project_ids()
            .zip(server_rngs.iter_mut())
            .map(|(p, server_rng)| {
                let mut server = EmulatedServer::new(state, p, start, server_rng);
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
        // Projects are known by their master URL; the figures and the trace name them by
        // labels that stay distinct where names clash.
        let project_names = project_labels(&state.projects);
        let devices = app_version_resources(state);
        let figures_projects: Vec<FiguresProject> = state
            .projects
            .iter()
            .zip(&project_names)
            .zip(&devices)
            .map(|((p, name), devices)| FiguresProject {
                name: name.clone(),
                share: p.resource_share,
                devices: *devices,
            })
            .collect();
        let figures = FiguresAccumulator::new(FiguresSetup {
            ncpus: state.ncpus(),
            p_fpops: state.host.p_fpops,
            gpus,
            projects: figures_projects,
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
                    .zip(&project_names)
                    .zip(&devices)
                    .map(|((p, name), devices)| TraceProject {
                        name: name.clone(),
                        resource_share: p.resource_share,
                        devices: Some(device_list(devices)),
                    })
                    .collect(),
                scheduling_period,
            });
        }
        World {
            boinc_compat: config.boinc_compat,
            ncpus: f64::from(state.ncpus()),
            tracing: config.trace,
            rng,
            host_rng,
            server_rngs,
            host,
            servers,
            server_buffers: ServerBuffers::default(),
            project_names,
            truths: vec![Truths::default(); state.projects.len()],
            next_serial: 0,
            processes: Vec::new(),
            cpu_rate: Cell::new(None),
            figures,
            computing: Vec::new(),
            trace,
            now: start,
            end,
        }
    }

    /// Takes the jobs the scenario already holds into the world: their estimate is all
    /// the emulator knows of them, so it is taken as their real size.
    pub fn adopt_jobs(&mut self, state: &ClientState) {
        for id in state.job_ids() {
            let dcf = job_dcf(state, id);
            let estimate = unstarted_duration(state, id);
            let true_duration =
                if dcf > 0.0 && dcf.is_finite() { estimate / dcf } else { estimate };
            self.add_truth(state, id, true_duration);
        }
    }

    /// Records what a job really is: it runs `true_duration` seconds (at least one) and
    /// checkpoints as its app does. `made_index`: which of its server's jobs it is
    /// ([`EmulatedServer::made_job_index`]).
    fn insert_truth(
        &mut self,
        project: ProjectId,
        name: &str,
        made_index: Option<usize>,
        checkpoint_period: f64,
        true_duration: f64,
        deadline: Time,
    ) {
        let checkpoint_period = checkpoint_period.max(0.0);
        let truth = JobTruth {
            true_duration: true_duration.max(1.0),
            serial: self.next_serial,
            checkpoint_period,
            deadline,
        };
        self.next_serial += 1;
        if let Some(truths) = self.truths.get_mut(project.index()) {
            truths.insert(made_index, name, truth);
        }
    }

    /// Which of its server's jobs `name` is ([`EmulatedServer::made_job_index`]).
    fn made_job_index(&self, project: ProjectId, name: &str) -> Option<usize> {
        self.servers.get(project.index())?.made_job_index(name)
    }

    fn add_truth(&mut self, state: &ClientState, id: JobId, true_duration: f64) {
        let job = state.job(id);
        let workunit = state.workunit(job.workunit);
        let app = state.app(workunit.app);
        let checkpoint_period = app.emulation.map_or(0.0, |e| e.checkpoint_period);
        let made_index = self.made_job_index(job.project, &job.name);
        self.insert_truth(
            job.project,
            &job.name,
            made_index,
            checkpoint_period,
            true_duration,
            job.report_deadline,
        );
        if self.tracing {
            let usage = job.app_version.map(|av| state.app_version(av).usage);
            let flops = job.app_version.map_or(0.0, |av| state.app_version(av).flops);
            self.trace.push(TraceEvent::JobReceived {
                time: self.now,
                job: job.name.clone(),
                project: self.project_names[job.project.index()].clone(),
                app: app.name.clone(),
                avg_ncpus: usage.map_or(0.0, |u| u.avg_ncpus),
                coprocessor: usage.and_then(|u| u.coprocessor),
                flops: true_duration * flops,
                fpops_est: workunit.rsc_fpops_est,
                deadline: job.report_deadline,
            });
        }
    }

    /// Virtual time now.
    pub fn now(&self) -> Time {
        self.now
    }

    /// The end of the run.
    pub fn end(&self) -> Time {
        self.end
    }

    /// The host's availability now.
    pub fn host_view(&self) -> HostView {
        HostView {
            on: self.host.is_up(HostProcess::On),
            connected: self.host.is_up(HostProcess::Connected),
            active: self.host.is_up(HostProcess::Active),
            gpu_active: self.host.is_up(HostProcess::GpuActive),
            suspend: SuspendReasons::NONE,
            user_active: true,
        }
    }

    fn host_state(&self) -> HostState {
        let view = self.host_view();
        HostState { on: view.on, active: view.active, gpu_active: view.gpu_active }
    }

    fn computes(&self, process: &SimProcess) -> bool {
        process.running && self.host_view().may_compute(&process.usage, self.boinc_compat)
    }

    /// The speed of each computing CPU-only process, as a fraction of a whole CPU per
    /// CPU it asks for: 1 while they fit the host's CPUs, less when they ask for more
    /// between them (a multithread job started beside jobs still running to their
    /// checkpoints), since the operating system then shares the CPUs among all their
    /// threads. GPU jobs are left at full speed: their CPU part mostly feeds the GPU and
    /// the client counts it apart from the CPU jobs (`InstancePool`).
    fn cpu_progress_rate(&self) -> f64 {
        if let Some(rate) = self.cpu_rate.get() {
            return rate;
        }
        let host = self.host_view();
        let demand: f64 = self
            .processes
            .iter()
            .flatten()
            .filter(|p| p.running && p.usage.coprocessor.is_none())
            .filter(|p| host.may_compute(&p.usage, self.boinc_compat))
            .map(|p| p.usage.avg_ncpus.clamp(0.0, self.ncpus))
            .sum();
        let rate = if demand > self.ncpus && self.ncpus > 0.0 { self.ncpus / demand } else { 1.0 };
        self.cpu_rate.set(Some(rate));
        rate
    }

    /// The earliest moment the world changes by itself: an availability change, a
    /// process finishing, or a watched process checkpointing.
    pub fn next_change(&self) -> Time {
        let mut next = self.host.next_change();
        for server in &self.servers {
            next = next.min(server.next_change());
        }
        let host = self.host_view();
        let cpu_rate = self.cpu_progress_rate();
        for process in self.processes.iter().flatten() {
            if !process.running || !host.may_compute(&process.usage, self.boinc_compat) {
                continue;
            }
            let rate = if process.usage.coprocessor.is_none() { cpu_rate } else { 1.0 };
            let status = &process.status;
            let left = (process.truth.true_duration - status.elapsed_time).max(0.0);
            next = next.min(self.now + left / rate);
            if process.watch_checkpoint {
                let period = process.truth.checkpoint_period;
                if period <= 0.0 {
                    next = next.min(self.now);
                } else {
                    let count = (status.checkpoint_elapsed_time / period).floor() + 1.0;
                    let until = (count * period - status.elapsed_time).max(0.0);
                    next = next.min(self.now + until / rate);
                }
            }
        }
        next
    }

    /// Moves virtual time to `to`: computing processes progress and checkpoint, and the
    /// figures integrate the interval.
    pub fn advance_to(&mut self, to: Time) {
        let from = self.now;
        let dt = to - from;
        if dt <= 0.0 {
            return;
        }
        let host = self.host_view();
        let cpu_rate = self.cpu_progress_rate();
        let mut computing = std::mem::take(&mut self.computing);
        computing.clear();
        for process in self.processes.iter_mut().flatten() {
            if !process.running || !host.may_compute(&process.usage, self.boinc_compat) {
                continue;
            }
            let rate = if process.usage.coprocessor.is_none() { cpu_rate } else { 1.0 };
            computing.push(RunningUsage {
                project: process.project,
                job: JobId(process.truth.serial),
                avg_ncpus: process.usage.avg_ncpus,
                gpu: process.usage.coprocessor,
            });
            let truth = process.truth;
            let status = &mut process.status;
            let before = status.elapsed_time;
            status.elapsed_time = (before + dt * rate).min(truth.true_duration);
            status.current_cpu_time += process.usage.avg_ncpus.min(1.0) * dt * rate;
            status.fraction_done = (status.elapsed_time / truth.true_duration).clamp(0.0, 1.0);
            if truth.checkpoint_period <= 0.0 {
                status.checkpoint_elapsed_time = status.elapsed_time;
                status.checkpoint_cpu_time = status.current_cpu_time;
                status.checkpoint_wall_time = to;
            } else {
                let period = truth.checkpoint_period;
                let last = (status.elapsed_time / period).floor() * period;
                if last > status.checkpoint_elapsed_time {
                    status.checkpoint_wall_time = from + (last - before) / rate;
                    status.checkpoint_elapsed_time = last;
                    status.checkpoint_cpu_time = status.current_cpu_time;
                }
            }
            status.finished = status.elapsed_time >= truth.true_duration - 1e-6;
        }
        let host_state = self.host_state();
        self.figures.advance(from, to, host_state, &computing);
        self.computing = computing;
        self.now = to;
    }

    /// Applies the availability changes due now (host and servers); returns whether the
    /// host's changed (the client must hear of it).
    pub fn pop_availability_changes(&mut self) -> bool {
        let mut changed = false;
        while self.host.next_change() <= self.now {
            let (time, process, up) = self.host.pop_change(&mut self.host_rng);
            changed = true;
            self.cpu_rate.set(None);
            if self.tracing {
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
                let (time, up) = self.servers[p].pop_change(&mut self.server_rngs[p]);
                if self.tracing {
                    let project = self.project_names[p].clone();
                    let what = AvailabilityKind::ProjectUp { project };
                    self.trace.push(TraceEvent::Availability { time, what, up });
                }
            }
        }
        if changed {
            self.reconcile_segments();
        }
        changed
    }

    /// Opens and closes run segments so they match which processes compute now.
    fn reconcile_segments(&mut self) {
        for slot in 0..self.processes.len() {
            let Some(process) = &self.processes[slot] else { continue };
            let computing = self.computes(process);
            let open = process.segment_start.is_some();
            if computing && !open {
                if let Some(process) = self.processes[slot].as_mut() {
                    process.segment_start = Some(self.now);
                }
            } else if !computing && open {
                self.end_segment(slot);
            }
        }
    }

    fn end_segment(&mut self, slot: usize) {
        let now = self.now;
        let Some(process) = self.processes.get_mut(slot).and_then(Option::as_mut) else { return };
        let Some(start) = process.segment_start.take() else { return };
        if !self.tracing || now <= start {
            return;
        }
        let gpu =
            process.usage.coprocessor.map(|(r, n)| (r, process.gpu_instances.clone(), n.min(1.0)));
        let event = TraceEvent::RunSegment {
            job: process.job.clone(),
            project: self.project_names[process.project.index()].clone(),
            start,
            end: now,
            avg_ncpus: process.usage.avg_ncpus,
            gpu,
        };
        self.trace.push(event);
    }

    fn open_segment(&mut self, slot: usize) {
        let now = self.now;
        let computes = self.processes[slot].as_ref().is_some_and(|p| self.computes(p));
        if let Some(process) = self.processes[slot].as_mut()
            && computes
            && process.segment_start.is_none()
        {
            process.segment_start = Some(now);
        }
    }

    /// Carries out a command on a task's process (the process host of the emulated
    /// world). A command for a job the world does not know is ignored. The command is
    /// used up: a started process keeps its name and instances rather than copies.
    pub fn apply(&mut self, command: TaskCommand) {
        if !matches!(command, TaskCommand::WatchCheckpoint { .. }) {
            self.cpu_rate.set(None);
        }
        match command {
            TaskCommand::Start(spec) => self.spawn(spec),
            TaskCommand::Resume { slot, gpu_instances, .. } => {
                let slot = slot as usize;
                if let Some(process) = self.processes.get_mut(slot).and_then(Option::as_mut) {
                    process.running = true;
                    process.gpu_instances = gpu_instances;
                    self.open_segment(slot);
                }
            }
            TaskCommand::Preempt { slot, remove_from_memory, for_deadline, .. } => {
                let slot = slot as usize;
                let Some(process) = self.processes.get(slot).and_then(Option::as_ref) else {
                    return;
                };
                // The job's name is copied only for the trace.
                let traced = self.tracing.then(|| (process.project, process.job.clone()));
                self.end_segment(slot);
                if let Some((project, job)) = traced {
                    self.trace.push(TraceEvent::Preempted {
                        time: self.now,
                        job,
                        project: self.project_names[project.index()].clone(),
                        for_deadline,
                    });
                }
                if remove_from_memory {
                    self.processes[slot] = None;
                } else if let Some(process) = self.processes[slot].as_mut() {
                    process.running = false;
                    process.watch_checkpoint = false;
                }
            }
            TaskCommand::Abort { slot, .. } => {
                self.kill(slot);
            }
            TaskCommand::WatchCheckpoint { slot, watch, .. } => {
                if let Some(process) =
                    self.processes.get_mut(slot as usize).and_then(Option::as_mut)
                {
                    process.watch_checkpoint = watch;
                }
            }
        }
    }

    /// Starts the process `spec` describes. The spec stays boxed: the fields the
    /// process keeps are moved out of the box one by one, not the whole (large) spec
    /// copied out first.
    fn spawn(&mut self, spec: Box<TaskSpec>) {
        let made_index = self.made_job_index(spec.project, &spec.job);
        let Some(truth) =
            self.truths.get(spec.project.index()).and_then(|t| t.get(made_index, &spec.job))
        else {
            return;
        };
        let TaskSpec { project, job, slot, usage, gpu_instances, mut status, .. } = *spec;
        let slot = slot as usize;
        if self.processes.len() <= slot {
            self.processes.resize(slot + 1, None);
        }
        status.finished = status.elapsed_time >= truth.true_duration - 1e-6;
        self.processes[slot] = Some(SimProcess {
            project,
            job,
            truth,
            usage,
            gpu_instances,
            status,
            running: true,
            segment_start: None,
            watch_checkpoint: false,
        });
        self.open_segment(slot);
    }

    /// What the process in `slot` reports, if there is one.
    pub fn status(&self, slot: u32) -> Option<ProcessStatus> {
        self.processes.get(slot as usize).and_then(Option::as_ref).map(|p| p.status)
    }

    /// The process in `slot` exited after finishing its work: it is gone.
    pub fn reap(&mut self, slot: u32) {
        let slot = slot as usize;
        let Some(process) = self.processes.get(slot).and_then(Option::as_ref) else { return };
        let project = process.project;
        self.end_segment(slot);
        // The process goes: its job's name moves to the trace rather than being copied.
        let Some(process) = self.processes[slot].take() else { return };
        self.cpu_rate.set(None);
        self.figures.job_finished(project);
        if self.tracing {
            self.trace.push(TraceEvent::JobFinished {
                time: self.now,
                job: process.job,
                project: self.project_names[project.index()].clone(),
            });
        }
    }

    /// The process in `slot` dies (a crash, or killed): it is gone, and what its last
    /// checkpoint saved is where a restart begins.
    pub fn kill(&mut self, slot: u32) -> Option<ProcessStatus> {
        let slot = slot as usize;
        let status = self.processes.get(slot).and_then(Option::as_ref)?.status;
        self.end_segment(slot);
        self.processes[slot] = None;
        self.cpu_rate.set(None);
        let fraction = if status.elapsed_time > 0.0 {
            status.fraction_done * status.checkpoint_elapsed_time / status.elapsed_time
        } else {
            status.fraction_done
        };
        Some(ProcessStatus {
            elapsed_time: status.checkpoint_elapsed_time,
            current_cpu_time: status.checkpoint_cpu_time,
            fraction_done: fraction,
            finished: false,
            ..status
        })
    }

    /// Whether the process in `slot` runs (exists and is not suspended).
    pub fn is_running(&self, slot: u32) -> bool {
        self.processes.get(slot as usize).and_then(Option::as_ref).is_some_and(|p| p.running)
    }

    /// Where the emulated disk reports (seed 004): the run's figures and trace.
    pub fn disk_sink(&mut self) -> DiskSink<'_> {
        DiskSink::new(&mut self.figures, &mut self.trace, self.tracing)
    }

    /// Reads `project`'s master page: it comes exactly when the project's server is up.
    pub fn master_page(&mut self, project: ProjectId) -> bool {
        let now = self.now;
        self.contact_server(project, now);
        self.servers.get(project.index()).is_some_and(EmulatedServer::is_up)
    }

    /// The client contacts `project`'s server at `now`: in BOINC-compatible mode its
    /// up/down process advances then (see [`EmulatedServer::contact`]), and a change is
    /// traced at the moment it is seen.
    fn contact_server(&mut self, project: ProjectId, now: Time) {
        let p = project.index();
        let (Some(server), Some(rng)) = (self.servers.get_mut(p), self.server_rngs.get_mut(p))
        else {
            return;
        };
        if let Some(up) = server.contact(now, rng)
            && self.tracing
        {
            let project = self.project_names[p].clone();
            let what = AvailabilityKind::ProjectUp { project };
            self.trace.push(TraceEvent::Availability { time: now, what, up });
        }
    }

    /// A scheduler RPC: `request` goes to `project`'s server at `now`; `None` when the
    /// server is down. Reported results are judged against their deadlines; the jobs
    /// sent enter the world with their true sizes.
    pub fn scheduler_rpc(
        &mut self,
        project: ProjectId,
        request: &SchedulerRequest,
        now: Time,
    ) -> Option<SchedulerReply> {
        self.contact_server(project, now);
        let server = self.servers.get_mut(project.index())?;
        let answer =
            server.handle_request_with(request, now, &mut self.rng, &mut self.server_buffers);
        self.figures.rpc(project, answer.is_some());
        let Some(answer) = answer else {
            self.trace_rpc(project, request, false, 0, false);
            return None;
        };
        for reported in &request.results {
            let name = reported.name.as_ref();
            let made_index = self.made_job_index(project, name);
            let Some(truth) =
                self.truths.get_mut(project.index()).and_then(|t| t.remove(made_index, name))
            else {
                continue;
            };
            let missed = now > truth.deadline;
            self.figures.job_reported(project, JobId(truth.serial), missed);
            if self.tracing {
                self.trace.push(TraceEvent::JobReported {
                    time: now,
                    job: name.to_owned(),
                    project: self.project_names[project.index()].clone(),
                    deadline: truth.deadline,
                    missed,
                });
            }
        }
        for (sent, result) in answer.sent.iter().zip(&answer.reply.results) {
            let catalogue = self.servers[project.index()].catalogue();
            let version = &catalogue.versions[sent.version];
            let app = &catalogue.apps[sent.app];
            let (usage, flops) = (version.usage, version.flops);
            let checkpoint_period = app.emulation.map_or(0.0, |e| e.checkpoint_period);
            let app_name = self.tracing.then(|| app.name.clone());
            let true_duration = sent.true_flops / flops.max(1.0);
            let name = &result.name;
            let made_index = Some(sent.made_index);
            let (period, deadline) = (checkpoint_period, sent.deadline);
            self.insert_truth(project, name, made_index, period, true_duration, deadline);
            self.figures.job_received(project);
            if let Some(app) = app_name {
                self.trace.push(TraceEvent::JobReceived {
                    time: now,
                    job: name.clone(),
                    project: self.project_names[project.index()].clone(),
                    app,
                    avg_ncpus: usage.avg_ncpus,
                    coprocessor: usage.coprocessor,
                    flops: true_duration * flops,
                    fpops_est: sent.fpops_est,
                    deadline: sent.deadline,
                });
            }
        }
        let no_work = answer.reply.no_work_reasons().any(|r| r == NoWorkReason::DeadlinesNotMet);
        self.trace_rpc(project, request, true, answer.sent.len() as u32, no_work);
        Some(answer.reply)
    }

    fn trace_rpc(
        &mut self,
        project: ProjectId,
        request: &SchedulerRequest,
        success: bool,
        received: u32,
        no_work: bool,
    ) {
        if !self.tracing {
            return;
        }
        let reported = if success { request.results.len() as u32 } else { 0 };
        self.trace.push(TraceEvent::Rpc {
            time: self.now,
            project: self.project_names[project.index()].clone(),
            success,
            req_seconds: ResourceMap::from_fn(|r| request.req_secs(r)),
            req_ninstances: ResourceMap::from_fn(|r| request.req_instances(r)),
            reported,
            jobs_received: received,
            no_work_because_of_deadlines: no_work,
        });
    }

    /// Ends the run at its end time: open segments close, and the figures of merit and
    /// the trace come out (the trace is handed over; the world keeps none).
    pub fn finish(&mut self) -> (FiguresOfMerit, Vec<TraceEvent>) {
        self.advance_to(self.end);
        for slot in 0..self.processes.len() {
            self.end_segment(slot);
        }
        let figures = self.figures.finish(self.end);
        (figures, std::mem::take(&mut self.trace))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use boinc_core::Policy;
    use boinc_core::cpu_sched::test_support::{StateBuilder, cpu};

    /// A world of two CPUs holding a 2-thread job and a single-thread job of an hour
    /// each (3.6e12 flops at 1 Gflops), always on.
    fn two_cpus() -> (ClientState, World) {
        let mut b = StateBuilder::new(2);
        let p = b.project("p", 100.0);
        let multi = b.app_version(p, cpu(2.0));
        let single = b.app_version(p, cpu(1.0));
        b.job(p, multi, 0.0, 1e6);
        b.job(p, single, 0.0, 1e6);
        let state = b.build();
        let config = SimConfig {
            scenario: "two_cpus".into(),
            policy: Policy::Seed,
            seed: 1,
            duration: 86_400.0,
            boinc_compat: false,
            existing_jobs_only: true,
            trace: false,
        };
        let mut world = World::new(&state, &config, 0.0);
        world.adopt_jobs(&state);
        (state, world)
    }

    fn start(world: &mut World, state: &ClientState, index: usize) {
        let job = &state.jobs[index];
        let usage = state.app_version(job.app_version.unwrap()).usage;
        world.apply(TaskCommand::Start(Box::new(TaskSpec {
            project: job.project,
            job: job.name.clone(),
            slot: index as u32,
            usage,
            gpu_instances: Vec::new(),
            status: ProcessStatus::default(),
            program: Default::default(),
        })));
    }

    #[test]
    fn cpu_jobs_asking_for_more_than_the_host_has_share_its_cpus() {
        // Alone, the 2-thread job runs at full speed.
        let (state, mut world) = two_cpus();
        start(&mut world, &state, 0);
        world.advance_to(1800.0);
        assert!((world.status(0).unwrap().elapsed_time - 1800.0).abs() < 1e-9);

        // Beside the single-thread job, three threads share two CPUs: each job advances
        // two thirds as fast, and the world knows when the first one will be done.
        let (state, mut world) = two_cpus();
        start(&mut world, &state, 0);
        start(&mut world, &state, 1);
        world.advance_to(1800.0);
        for slot in [0, 1] {
            assert!((world.status(slot).unwrap().elapsed_time - 1200.0).abs() < 1e-9);
        }
        assert!((world.next_change().min(86_400.0) - 5400.0).abs() < 1e-6);
        world.advance_to(5400.0);
        assert!(world.status(0).unwrap().finished && world.status(1).unwrap().finished);
    }
}
