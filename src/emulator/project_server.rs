//! An emulated BOINC project server (DESIGN.md "Emulator"; seed 000 "Scheduler work-send
//! policy").
//!
//! **Job generation** follows BOINC's client emulator: for each resource R the request
//! asks for (`req_seconds > 0` or `req_ninstances > 0`), the server repeatedly picks one
//! of the project's apps that has a version for R, with probability proportional to its
//! `<weight>`, and makes a job of it: true size ~ Normal(`fpops_mean`, `fpops_std_dev`),
//! estimate `fpops_est`, deadline = now + `latency_bound`. It stops once the jobs sent
//! for R cover `req_seconds` (instance-seconds) and `req_ninstances` (instances).
//!
//! - An app's version for R is its fastest app version whose main resource is R (BOINC's
//!   emulator takes the fastest version among those for the requested resources). Only
//!   apps with emulation parameters and a positive size make jobs.
//! - A job counts for `duration × usage / available_frac(R)` instance-seconds, where
//!   `duration = fpops_est / version flops × DCF` is the estimate the client will make
//!   (BOINC's request carries the DCF): the request was sized in wall time by a
//!   simulation that runs R only `available_frac(R)` of the time, and BOINC's emulator
//!   scales its decrement the same way.
//! - A drawn size below [`MIN_FLOPS_FRACTION`] of the mean is raised to it: BOINC's
//!   emulator clamps at 0, which makes jobs that finish the moment they start.
//!
//! **Work-send policy** (seed 000; BOINC's server never implemented it): a job is sent
//! only if, in an EDF simulation of the client's queue on R plus the jobs already
//! accepted, it meets its deadline and no other job misses its deadline by more than it
//! did before. The queue is every nearly-runnable job of any project whose main
//! resource is R, with [`remaining_duration`](crate::estimate::remaining_duration)
//! stretched by `available_frac(R)`. A refused job's app is not offered again for R in
//! this request (BOINC's emulator marks the version "don't use"). When something was
//! refused for R and nothing was sent for it, the reply says "no work because of
//! deadlines". The seed's other rule, no deadline sooner than now + min_queue, is left
//! out: the EDF check with the real queue already answers the question it approximates,
//! and the rule would starve short-deadline projects (seed 000's own P1(0.1, 1, .5)) on
//! hosts with a buffer over an hour.
//!
//! **Disk space** (seed 004 "Scheduling Server Changes"): when the client's request
//! carries its three free-space figures ([`EmulatedServer::set_free_space`]), a job is
//! sent only if its files (the app's input, sticky and output sizes) fit in what the
//! jobs already sent leave of the first figure; while nothing has been sent the server
//! moves on to the second figure, and to the third if the project has
//! `<delete_from_self/>`. An app whose job does not fit is not offered again in this
//! request. Without figures (scenarios without file sizes) nothing changes.
//!
//! **Replies** carry no `request_delay` (BOINC's emulator sends none). A server says it
//! has no app for a requested resource (`no_apps`), as real servers do, except in
//! BOINC-compatible mode, where like BOINC's emulator it never says so.

use super::availability::OnOffProcess;
use super::random::normal;
use crate::Time;
use crate::disk::FreeSpaceFigures;
use crate::estimate::{
    DCF_MAX, DCF_MIN, FALLBACK_FLOPS, project_dcf, remaining_after, unstarted_from, usable_flops,
};
use crate::model::{
    AppEmulation, AppId, AppVersionId, ClientState, Job, JobId, ProjectId, ResourceMap,
    ResourceType, Workunit, WorkunitId,
};
use crate::work_fetch::{WorkReply, WorkRequest};
use rand::Rng;

/// The most jobs one reply carries, whatever was asked: bounds the work of one request.
pub const MAX_JOBS_PER_REQUEST: usize = 1000;

/// A drawn job size is at least this fraction of the app's mean size.
pub const MIN_FLOPS_FRACTION: f64 = 0.1;

/// How much later than its deadline (or than its previous miss) a job may finish in the
/// EDF check before it counts as missing, seconds: rounding, not policy.
const DEADLINE_TOLERANCE: f64 = 1e-3;

/// The EDF check keeps the instances' state every this many queue positions, so a
/// candidate is simulated from the nearest snapshot instead of from the start.
const EDF_SNAPSHOT_INTERVAL: usize = 64;

/// A new job the server sends.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NewJob {
    /// The app.
    pub app: AppId,
    /// The app version it runs with.
    pub app_version: AppVersionId,
    /// The flops estimate sent with it (`<rsc_fpops_est>`).
    pub fpops_est: f64,
    /// The flops it really takes (known to the emulator only).
    pub true_flops: f64,
    /// Report deadline.
    pub deadline: Time,
    /// Job name, unique within the project: `{project}_{n}`.
    pub name: String,
}

/// The server's answer to a scheduler request.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct ServerReply {
    /// New jobs, in the order they were made.
    pub jobs: Vec<NewJob>,
    /// The project has work for a requested resource but sent none of it because its
    /// deadlines could not be met (seed 000).
    pub no_work_because_of_deadlines: bool,
    /// The project has work for a requested resource but sent none of it because its
    /// files would not fit the client's free-space figures (seed 004).
    #[serde(default)]
    pub no_work_because_of_disk: bool,
    /// `<request_delay>`: always `None` (BOINC's emulator sends none).
    pub request_delay: Option<f64>,
    /// Per resource: requested, and the project has no app version for it.
    pub no_apps: ResourceMap<bool>,
}

impl ServerReply {
    /// What work fetch needs from the reply (jobs counted by their version's main
    /// resource).
    pub fn work_reply(&self, state: &ClientState) -> WorkReply {
        let mut jobs_received = ResourceMap::<u32>::default();
        for job in &self.jobs {
            jobs_received[state.app_version(job.app_version).usage.main_resource()] += 1;
        }
        WorkReply {
            jobs_received,
            no_work_because_of_deadlines: self.no_work_because_of_deadlines,
            no_work_because_of_disk: self.no_work_because_of_disk,
            request_delay: self.request_delay,
            no_apps: self.no_apps,
        }
    }
}

/// One app the server can make jobs of for a resource.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    app: AppId,
    version: AppVersionId,
    weight: f64,
    emulation: AppEmulation,
}

/// An emulated project server: availability and job generation for one project.
#[derive(Debug, Clone, PartialEq)]
pub struct EmulatedServer {
    project: ProjectId,
    availability: Option<OnOffProcess>,
    next_job_number: u64,
    boinc_compat: bool,
    free_space: Option<FreeSpaceFigures>,
}

impl EmulatedServer {
    /// The server of `project`, up from `start` unless the project has an `<available>`
    /// process (which draws its first period from `rng`). Job numbers continue after the
    /// highest `{project}_{n}` already in the state, so names stay unique.
    pub fn new(state: &ClientState, project: ProjectId, start: Time, rng: &mut impl Rng) -> Self {
        let record = state.project(project);
        let availability =
            record.availability.map(|a| OnOffProcess::new(a.frac, a.lambda, start, rng));
        let prefix = format!("{}_", record.name);
        let next_job_number = state
            .jobs
            .iter()
            .filter(|j| j.project == project)
            .filter_map(|j| j.name.strip_prefix(&prefix)?.parse::<u64>().ok())
            .max()
            .map_or(0, |n| n + 1);
        EmulatedServer {
            project,
            availability,
            next_job_number,
            boinc_compat: false,
            free_space: None,
        }
    }

    /// BOINC-compatible mode, as BOINC's emulator: never answer "no app for this
    /// resource", and let the up/down process advance only at contacts
    /// ([`EmulatedServer::contact`]).
    pub fn set_boinc_compat(&mut self, boinc_compat: bool) {
        self.boinc_compat = boinc_compat;
    }

    /// The free-space figures of the next request (seed 004); `None`: the client does
    /// not report disk space and every job fits.
    pub fn set_free_space(&mut self, figures: Option<FreeSpaceFigures>) {
        self.free_space = figures;
    }

    /// Whether the server runs in BOINC-compatible mode.
    pub fn boinc_compat(&self) -> bool {
        self.boinc_compat
    }

    /// The project this server serves.
    pub fn project(&self) -> ProjectId {
        self.project
    }

    /// Whether the server answers requests now.
    pub fn is_up(&self) -> bool {
        self.availability.as_ref().is_none_or(OnOffProcess::is_up)
    }

    /// When the server next goes up or down by itself (`f64::INFINITY`: never). In
    /// BOINC-compatible mode a server changes only when a client contacts it
    /// ([`EmulatedServer::contact`]), so never by itself.
    pub fn next_change(&self) -> Time {
        if self.boinc_compat {
            return f64::INFINITY;
        }
        self.availability.as_ref().map_or(f64::INFINITY, OnOffProcess::next_change)
    }

    /// A client contacts the server at `now` (a scheduler RPC or a master-page read).
    /// In BOINC-compatible mode the up/down process advances only here, as in BOINC's
    /// emulator (REFERENCE.md): if the current period has run out by `now`, the server
    /// changes state once and the next period is added to the old end, however long
    /// ago that was. A server that went down and came back between two contacts is
    /// thus seen to go down, and an outage is stretched to the next contact. Returns
    /// the new state when it changed. In the faithful model the world applies changes
    /// as they happen and a contact changes nothing.
    pub fn contact(&mut self, now: Time, rng: &mut impl Rng) -> Option<bool> {
        if !self.boinc_compat {
            return None;
        }
        let process = self.availability.as_mut()?;
        if process.next_change() > now {
            return None;
        }
        Some(process.pop_change(rng).1)
    }

    /// Applies the next up/down change: its time and the new state
    /// (`(f64::INFINITY, true)` for a server that is always up).
    pub fn pop_change(&mut self, rng: &mut impl Rng) -> (Time, bool) {
        match &mut self.availability {
            Some(process) => process.pop_change(rng),
            None => (f64::INFINITY, true),
        }
    }

    /// Per resource, the apps this project can make jobs of, and whether it has any app
    /// version at all for the resource.
    fn candidates(&self, state: &ClientState) -> (ResourceMap<Vec<Candidate>>, ResourceMap<bool>) {
        let mut has_version = ResourceMap::<bool>::default();
        // Fastest version per (app, resource), apps in id order for determinism.
        let mut best: Vec<(AppId, ResourceMap<Option<AppVersionId>>)> = state
            .apps
            .iter()
            .enumerate()
            .filter(|(_, app)| app.project == self.project)
            .map(|(i, _)| (AppId::from_index(i), ResourceMap::default()))
            .collect();
        for (i, version) in state.app_versions.iter().enumerate() {
            if version.project != self.project {
                continue;
            }
            let resource = version.usage.main_resource();
            has_version[resource] = true;
            let Some((_, slots)) = best.iter_mut().find(|(app, _)| *app == version.app) else {
                continue;
            };
            let faster = slots[resource].is_none_or(|b| version.flops > state.app_version(b).flops);
            if faster {
                slots[resource] = Some(AppVersionId::from_index(i));
            }
        }
        let mut candidates = ResourceMap::<Vec<Candidate>>::default();
        for (app, slots) in best {
            let Some(emulation) = state.app(app).emulation else { continue };
            if job_mean_size(&emulation).is_none() {
                continue;
            }
            let weight = if emulation.weight.is_finite() && emulation.weight > 0.0 {
                emulation.weight
            } else {
                0.0
            };
            for (resource, version) in slots.iter() {
                if let Some(version) = *version {
                    candidates[resource].push(Candidate { app, version, weight, emulation });
                }
            }
        }
        (candidates, has_version)
    }

    /// Answers a scheduler request (see the module documentation): `None` when the
    /// server is down, so the RPC fails.
    pub fn handle_request(
        &mut self,
        state: &ClientState,
        request: &WorkRequest,
        now: Time,
        rng: &mut impl Rng,
    ) -> Option<ServerReply> {
        if !self.is_up() {
            return None;
        }
        let mut reply = ServerReply::default();
        if !ResourceType::ALL.into_iter().any(|r| request.requests(r)) {
            return Some(reply);
        }
        let (mut candidates, has_version) = self.candidates(state);
        let project = state.project(self.project);
        let dcf = project.duration_correction_factor;
        let dcf = if dcf.is_finite() && dcf > 0.0 { dcf.clamp(DCF_MIN, DCF_MAX) } else { 1.0 };
        let mut disk = self
            .free_space
            .map(|figures| DiskBudget::new(figures, project.deletion_policy.delete_from_self));
        for resource in ResourceType::ALL {
            if !request.requests(resource) {
                continue;
            }
            if !has_version[resource] {
                reply.no_apps[resource] = !self.boinc_compat;
                continue;
            }
            let instances = state.instances(resource);
            if instances == 0 {
                continue;
            }
            let available = state.time_stats.available_frac(resource);
            let wanted = request.resources[resource];
            let offer = &mut candidates[resource];
            let mut queue: Option<EdfQueue> = None;
            let (mut seconds, mut ninstances, mut sent, mut refused) = (0.0, 0.0, 0usize, false);
            let mut refused_for_disk = false;
            while (seconds < wanted.req_seconds || ninstances < wanted.req_ninstances)
                && reply.jobs.len() < MAX_JOBS_PER_REQUEST
                && !offer.is_empty()
            {
                let chosen = choose_by_weight(offer, rng);
                let candidate = offer[chosen];
                let Some(mean) = job_mean_size(&candidate.emulation) else { break };
                let drawn = normal(rng, mean, candidate.emulation.fpops_std_dev);
                let true_flops =
                    if drawn.is_finite() { drawn } else { mean }.max(MIN_FLOPS_FRACTION * mean);
                let fpops_est = usable(candidate.emulation.fpops_est).unwrap_or(mean);
                let version = state.app_version(candidate.version);
                let flops =
                    usable(version.flops).or(usable(state.host.p_fpops)).unwrap_or(FALLBACK_FLOPS);
                let wall = sane_duration(fpops_est / flops * dcf / available);
                let usage = version.usage.usage_of(resource);
                let latency = candidate.emulation.latency_bound;
                let relative_deadline =
                    if latency.is_finite() { latency.max(0.0) } else { f64::MAX };
                let job_nbytes = candidate.emulation.files.job_nbytes();
                if let Some(disk) = disk.as_mut()
                    && !disk.fits(job_nbytes, reply.jobs.is_empty())
                {
                    refused_for_disk = true;
                    offer.remove(chosen);
                    continue;
                }
                let queue = queue.get_or_insert_with(|| {
                    EdfQueue::from_state(state, resource, instances, available, now)
                });
                if !queue.try_insert(EdfEntry::new(relative_deadline, wall, usage)) {
                    refused = true;
                    offer.remove(chosen);
                    continue;
                }
                if let Some(disk) = disk.as_mut() {
                    disk.take(job_nbytes);
                }
                let name = format!("{}_{}", project.name, self.next_job_number);
                self.next_job_number += 1;
                reply.jobs.push(NewJob {
                    app: candidate.app,
                    app_version: candidate.version,
                    fpops_est,
                    true_flops,
                    deadline: now + relative_deadline,
                    name,
                });
                seconds += wall * usage;
                ninstances += usage;
                sent += 1;
            }
            if refused && sent == 0 {
                reply.no_work_because_of_deadlines = true;
            }
            if refused_for_disk && sent == 0 {
                reply.no_work_because_of_disk = true;
            }
        }
        Some(reply)
    }
}

/// The disk space a reply may fill: seed 004's passes over the three free-space figures.
#[derive(Debug, Clone, Copy)]
struct DiskBudget {
    figures: FreeSpaceFigures,
    delete_from_self: bool,
    /// 0, 1, 2: which figure is in force.
    pass: u8,
    /// Bytes of the jobs sent so far.
    used: f64,
}

impl DiskBudget {
    fn new(figures: FreeSpaceFigures, delete_from_self: bool) -> Self {
        DiskBudget { figures, delete_from_self, pass: 0, used: 0.0 }
    }

    fn allowed(&self) -> f64 {
        match self.pass {
            0 => self.figures.free,
            1 => self.figures.free_after_offenders,
            _ => self.figures.free_after_offenders_and_self,
        }
    }

    /// Whether a job of `nbytes` fits; a later pass is taken only while nothing has
    /// been sent (`nothing_sent`).
    fn fits(&mut self, nbytes: f64, nothing_sent: bool) -> bool {
        loop {
            if self.used + nbytes <= self.allowed() {
                return true;
            }
            let last_pass = if self.delete_from_self { 2 } else { 1 };
            if !nothing_sent || self.pass >= last_pass {
                return false;
            }
            self.pass += 1;
        }
    }

    fn take(&mut self, nbytes: f64) {
        self.used += nbytes;
    }
}

/// A positive finite value, else `None`.
fn usable(x: f64) -> Option<f64> {
    (x.is_finite() && x > 0.0).then_some(x)
}

/// Mean true size of an app's jobs: `fpops_mean`, else `fpops_est`; `None` when neither
/// is a positive number (the app can't make jobs).
fn job_mean_size(emulation: &AppEmulation) -> Option<f64> {
    usable(emulation.fpops_mean).or(usable(emulation.fpops_est))
}

/// A duration the EDF check can add up: corrupt values become "forever", so the job is
/// refused rather than slipping through a NaN comparison.
fn sane_duration(x: f64) -> f64 {
    if x.is_finite() && x >= 0.0 { x } else { f64::MAX }
}

/// Picks a candidate with probability proportional to its weight (one uniform draw);
/// uniformly when no weight is positive.
fn choose_by_weight(candidates: &[Candidate], rng: &mut impl Rng) -> usize {
    let total: f64 = candidates.iter().map(|c| c.weight).sum();
    // Weights are already finite and non-negative.
    if total <= 0.0 {
        return rng.random_range(0..candidates.len());
    }
    let mut x = rng.random::<f64>() * total;
    for (i, candidate) in candidates.iter().enumerate() {
        if candidate.weight > 0.0 && x < candidate.weight {
            return i;
        }
        x -= candidate.weight;
    }
    candidates.iter().rposition(|c| c.weight > 0.0).unwrap_or(candidates.len() - 1)
}

/// Adds a reply's jobs to the state: a workunit and a job each, input present
/// (`FilesDownloaded`), received `now`. Returns their ids in order. The workunit's
/// `rsc_fpops_bound` is ten times the larger of the estimate and the true size, so an
/// emulated job is never aborted for running long.
pub fn add_jobs(
    state: &mut ClientState,
    project: ProjectId,
    jobs: &[NewJob],
    now: Time,
) -> Vec<JobId> {
    let mut ids = Vec::with_capacity(jobs.len());
    state.workunits.reserve(jobs.len());
    state.jobs.reserve(jobs.len());
    for new in jobs {
        let workunit = WorkunitId::from_index(state.workunits.len());
        state.workunits.push(Workunit {
            project,
            name: new.name.clone(),
            app: new.app,
            rsc_fpops_est: new.fpops_est,
            rsc_fpops_bound: 10.0 * new.fpops_est.max(new.true_flops),
            rsc_memory_bound: 0.0,
            rsc_disk_bound: 0.0,
            input_files: Vec::new(),
        });
        ids.push(JobId::from_index(state.jobs.len()));
        state.jobs.push(Job::downloaded(
            project,
            new.name.clone(),
            workunit,
            new.app_version,
            now,
            new.deadline,
        ));
    }
    ids
}

/// When each instance becomes free (seconds after now), earliest first (in
/// `f64::total_cmp` order); always one time per instance. A sorted list rather than a
/// heap: a host has few instances, and a job using several of them takes the first ones
/// and puts its finish back with one move instead of a sift per instance.
type Instances = Vec<f64>;

/// One job in the EDF check, times relative to now.
#[derive(Debug, Clone, Copy, PartialEq)]
struct EdfEntry {
    deadline: f64,
    /// Wall seconds it runs once started.
    duration: f64,
    /// Instances of the resource it occupies.
    usage: f64,
    /// How late it finishes in the current schedule (0: on time).
    miss: f64,
}

impl EdfEntry {
    fn new(deadline: f64, duration: f64, usage: f64) -> Self {
        EdfEntry { deadline, duration, usage, miss: 0.0 }
    }
}

/// Places a job on the instances by list scheduling; returns when it finishes. A job
/// using at most one instance takes the earliest free one for `duration × usage` (a
/// fractional job shares its instance, so it holds a whole one for that share of its
/// run); a job using more takes the `ceil(usage)` earliest free ones from when the last
/// of them is free, for `duration × usage / ceil(usage)`.
fn place(instances: &mut Instances, count: usize, job: &EdfEntry) -> f64 {
    let (taken, finish) = if job.usage <= 1.0 || count <= 1 {
        let free = instances.first().copied().unwrap_or(0.0);
        (1, free + job.duration * job.usage.max(0.0))
    } else {
        let k = (job.usage.ceil() as usize).min(count);
        let start = instances.iter().take(k).fold(0.0, |start: f64, &free| start.max(free));
        (k, start + job.duration * job.usage / k as f64)
    };
    // The first `taken` instances become free at `finish`: the later times that are not
    // after it move up, and the finish fills the gap they leave.
    let taken = taken.min(instances.len());
    let kept = instances[taken..].partition_point(|free| free.total_cmp(&finish).is_le());
    instances.copy_within(taken..taken + kept, 0);
    instances[kept..kept + taken].fill(finish);
    finish
}

/// The EDF simulation of one resource's queue for the work-send check, kept in deadline
/// order with instance snapshots every [`EDF_SNAPSHOT_INTERVAL`] positions: a candidate
/// is simulated from the snapshot before its place, so checking it costs the jobs from
/// there on, not the whole queue (new jobs mostly have the latest deadlines).
#[derive(Debug, Clone)]
struct EdfQueue {
    count: usize,
    entries: Vec<EdfEntry>,
    /// `snapshots[i]`: the instances before `entries[i × EDF_SNAPSHOT_INTERVAL]`.
    snapshots: Vec<Instances>,
}

impl EdfQueue {
    /// A queue of `entries` (any order) on `count` instances, with its baseline schedule.
    fn new(count: usize, mut entries: Vec<EdfEntry>) -> Self {
        // Stable: jobs with equal deadlines keep their given order.
        entries.sort_by(|a, b| a.deadline.total_cmp(&b.deadline));
        let count = count.max(1);
        let idle: Instances = vec![0.0; count];
        let mut queue = EdfQueue { count, entries, snapshots: vec![idle] };
        queue.reschedule_from(0);
        queue
    }

    /// The client's nearly-runnable jobs whose main resource is `resource`.
    fn from_state(
        state: &ClientState,
        resource: ResourceType,
        count: u32,
        available: f64,
        now: Time,
    ) -> Self {
        // What the estimate needs from the versions on this resource and from the
        // projects, looked up once rather than once per job.
        let versions: Vec<Option<(f64, f64)>> = state
            .app_versions
            .iter()
            .map(|av| {
                (av.usage.main_resource() == resource).then(|| {
                    (av.usage.usage_of(resource), usable_flops(av.flops, state.host.p_fpops))
                })
            })
            .collect();
        let dcfs: Vec<f64> = state.projects.iter().map(project_dcf).collect();
        let mut entries = Vec::new();
        for (index, job) in state.jobs.iter().enumerate() {
            let Some(version) = job.app_version else { continue };
            let Some(&Some((usage, flops))) = versions.get(version.index()) else { continue };
            if job.state.computing_done() || !state.job_nearly_runnable(JobId::from_index(index)) {
                continue;
            }
            // `remaining_duration`, from the values looked up above.
            let fpops_est = state.workunit(job.workunit).rsc_fpops_est;
            let remaining =
                remaining_after(unstarted_from(fpops_est, flops, dcfs[job.project.index()]), job);
            if remaining <= 0.0 {
                continue;
            }
            entries.push(EdfEntry::new(
                job.report_deadline - now,
                sane_duration(remaining / available),
                usage,
            ));
        }
        EdfQueue::new(count as usize, entries)
    }

    /// Recomputes finishes, misses and snapshots from snapshot `snapshot` on.
    fn reschedule_from(&mut self, snapshot: usize) {
        self.snapshots.truncate(snapshot + 1);
        let mut instances = self.snapshots[snapshot].clone();
        let start = snapshot * EDF_SNAPSHOT_INTERVAL;
        for i in start..self.entries.len() {
            if i > start && i % EDF_SNAPSHOT_INTERVAL == 0 {
                self.snapshots.push(instances.clone());
            }
            let entry = &mut self.entries[i];
            let finish = place(&mut instances, self.count, entry);
            entry.miss = (finish - entry.deadline).max(0.0);
        }
    }

    /// Seed 000's test: adds `candidate` if it meets its deadline and no queued job then
    /// misses its deadline by more than before; returns whether it was added. The check
    /// simulates the queue with the candidate from the snapshot before it, which is the
    /// new schedule itself: when the candidate is accepted, its misses and snapshots are
    /// kept rather than simulated again.
    fn try_insert(&mut self, candidate: EdfEntry) -> bool {
        let position = self.entries.partition_point(|e| e.deadline <= candidate.deadline);
        // A snapshot exists for each multiple of the interval below the queue's length.
        let snapshot = (position / EDF_SNAPSHOT_INTERVAL).min(self.snapshots.len() - 1);
        let start = snapshot * EDF_SNAPSHOT_INTERVAL;
        let mut instances = self.snapshots[snapshot].clone();
        let mut snapshots = Vec::new();
        // Positions in the queue with the candidate: the entries before it keep theirs,
        // those after it move one place on.
        let mut snapshot_before = |index: usize, instances: &Instances| {
            if index > start && index % EDF_SNAPSHOT_INTERVAL == 0 {
                snapshots.push(instances.clone());
            }
        };
        for (index, entry) in self.entries[start..position].iter().enumerate() {
            snapshot_before(start + index, &instances);
            place(&mut instances, self.count, entry);
        }
        snapshot_before(position, &instances);
        let finish = place(&mut instances, self.count, &candidate);
        if finish.is_nan() || finish > candidate.deadline + DEADLINE_TOLERANCE {
            return false;
        }
        let mut misses = Vec::with_capacity(self.entries.len() - position);
        for (index, entry) in self.entries[position..].iter().enumerate() {
            snapshot_before(position + 1 + index, &instances);
            let miss = (place(&mut instances, self.count, entry) - entry.deadline).max(0.0);
            if miss > entry.miss + DEADLINE_TOLERANCE {
                return false;
            }
            misses.push(miss);
        }
        for (entry, miss) in self.entries[position..].iter_mut().zip(misses) {
            entry.miss = miss;
        }
        let miss = (finish - candidate.deadline).max(0.0);
        self.entries.insert(position, EdfEntry { miss, ..candidate });
        self.snapshots.truncate(snapshot + 1);
        self.snapshots.append(&mut snapshots);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        App, AppFiles, AppVersion, Availability, Coprocessor, Project, ResourceUsage,
    };
    use crate::work_fetch::ResourceRequest;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    const CPU: ResourceType = ResourceType::Cpu;
    const GPU: ResourceType = ResourceType::Nvidia;
    const HOUR: f64 = 3600.0;

    fn emulation(hours: f64, latency_hours: f64, weight: f64) -> AppEmulation {
        AppEmulation {
            latency_bound: latency_hours * HOUR,
            fpops_est: hours * HOUR * 1e9,
            fpops_mean: hours * HOUR * 1e9,
            fpops_std_dev: 0.0,
            weight,
            checkpoint_period: 60.0,
            files: AppFiles::default(),
        }
    }

    /// A host with `ncpus` 1-GFLOPS CPUs and one project "p" with the given CPU apps.
    fn state_with_apps(ncpus: u32, apps: &[AppEmulation]) -> ClientState {
        let mut state = ClientState::default();
        state.host.p_ncpus = ncpus;
        state.host.p_fpops = 1e9;
        state.projects.push(Project::new("p", "http://p/", 100.0));
        for (i, e) in apps.iter().enumerate() {
            add_app(
                &mut state,
                &format!("app{i}"),
                *e,
                ResourceUsage { avg_ncpus: 1.0, coprocessor: None },
                1e9,
            );
        }
        state
    }

    fn add_app(
        state: &mut ClientState,
        name: &str,
        emulation: AppEmulation,
        usage: ResourceUsage,
        flops: f64,
    ) -> (AppId, AppVersionId) {
        let app = AppId::from_index(state.apps.len());
        state.apps.push(App {
            project: ProjectId(0),
            name: name.to_string(),
            max_concurrent: None,
            non_cpu_intensive: false,
            emulation: Some(emulation),
        });
        let version = AppVersionId::from_index(state.app_versions.len());
        state.app_versions.push(AppVersion {
            project: ProjectId(0),
            app,
            version_num: 1,
            plan_class: String::new(),
            usage,
            flops,
            duration_correction_factor: None,
        });
        (app, version)
    }

    fn request(resource: ResourceType, req_seconds: f64, req_ninstances: f64) -> WorkRequest {
        let mut resources = ResourceMap::<ResourceRequest>::default();
        resources[resource] = ResourceRequest { req_seconds, req_ninstances };
        WorkRequest { project: ProjectId(0), resources, work_req_seconds: req_seconds }
    }

    fn new_server(state: &ClientState) -> (EmulatedServer, ChaCha8Rng) {
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        (EmulatedServer::new(state, ProjectId(0), 0.0, &mut rng), rng)
    }

    #[test]
    fn in_boinc_compat_mode_a_server_changes_only_when_contacted_and_once() {
        let mut state = state_with_apps(1, &[emulation(1.0, 1e6, 1.0)]);
        state.projects[0].availability = Some(Availability { frac: 0.5, lambda: 100.0 });
        let (mut faithful, mut rng) = new_server(&state);
        let mut compat = faithful.clone();
        compat.set_boinc_compat(true);
        let first_change = faithful.next_change();
        assert!(first_change.is_finite());
        // The faithful server changes by itself and a contact changes nothing.
        assert_eq!(faithful.contact(first_change + 1e6, &mut rng), None);
        // The compatible one never changes by itself...
        assert_eq!(compat.next_change(), f64::INFINITY);
        assert_eq!(compat.contact(first_change * 0.5, &mut rng), None);
        assert!(compat.is_up());
        // ...and a contact long after the period ran out goes down once, not through
        // every change since: the outage starts when it is seen.
        assert_eq!(compat.contact(first_change + 1e6, &mut rng), Some(false));
        assert!(!compat.is_up());
        // The next contact comes back up, however short the down period was.
        assert_eq!(compat.contact(first_change + 2e6, &mut rng), Some(true));
    }

    #[test]
    fn apps_are_chosen_by_weight() {
        let state = state_with_apps(1, &[emulation(1.0, 1e6, 3.0), emulation(1.0, 1e6, 1.0)]);
        let (mut server, mut rng) = new_server(&state);
        let reply = server
            .handle_request(&state, &request(CPU, 1000.0 * HOUR, 0.0), 0.0, &mut rng)
            .unwrap();
        assert_eq!(reply.jobs.len(), 1000);
        let first = reply.jobs.iter().filter(|j| j.app == AppId(0)).count() as f64 / 1000.0;
        assert!((first - 0.75).abs() < 0.04, "app 0 got {first}");
        assert!(!reply.no_work_because_of_deadlines);
    }

    #[test]
    fn sizes_follow_the_normal_distribution_with_a_floor() {
        let mut e = emulation(1.0, 1e6, 1.0);
        e.fpops_std_dev = 0.2 * e.fpops_mean;
        let state = state_with_apps(1, &[e]);
        let (mut server, mut rng) = new_server(&state);
        let reply = server.handle_request(&state, &request(CPU, 1e9, 0.0), 0.0, &mut rng).unwrap();
        let n = reply.jobs.len() as f64;
        let sizes: Vec<f64> = reply.jobs.iter().map(|j| j.true_flops / e.fpops_mean).collect();
        let mean = sizes.iter().sum::<f64>() / n;
        let sd = (sizes.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
        assert!((mean - 1.0).abs() < 0.03, "mean {mean}");
        assert!((sd - 0.2).abs() < 0.03, "sd {sd}");
        assert!(reply.jobs.iter().all(|j| j.fpops_est == e.fpops_est));

        let mut wide = e;
        wide.fpops_std_dev = 3.0 * e.fpops_mean;
        let state = state_with_apps(1, &[wide]);
        let (mut server, mut rng) = new_server(&state);
        let reply = server.handle_request(&state, &request(CPU, 1e9, 0.0), 0.0, &mut rng).unwrap();
        let floor = MIN_FLOPS_FRACTION * e.fpops_mean;
        assert!(reply.jobs.iter().all(|j| j.true_flops >= floor));
        assert!(reply.jobs.iter().any(|j| j.true_flops == floor));
    }

    #[test]
    fn deadline_is_now_plus_latency_bound_and_names_are_unique() {
        let state = state_with_apps(4, &[emulation(1.0, 48.0, 1.0)]);
        let (mut server, mut rng) = new_server(&state);
        let now = 5000.0;
        let reply =
            server.handle_request(&state, &request(CPU, 3.0 * HOUR, 0.0), now, &mut rng).unwrap();
        assert!(!reply.jobs.is_empty());
        assert!(reply.jobs.iter().all(|j| j.deadline == now + 48.0 * HOUR));
        assert_eq!(reply.request_delay, None);
        let again = server.handle_request(&state, &request(CPU, 1.0, 0.0), now, &mut rng).unwrap();
        let names: Vec<&str> =
            reply.jobs.iter().chain(&again.jobs).map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["p_0", "p_1", "p_2", "p_3"]);
    }

    #[test]
    fn request_is_filled_by_seconds_and_by_instances() {
        // 2-hour jobs on a host computing half the time: each counts 4 instance-hours.
        let mut state = state_with_apps(8, &[emulation(2.0, 1e4, 1.0)]);
        state.time_stats.on_frac = 0.5;
        let (mut server, mut rng) = new_server(&state);
        let reply =
            server.handle_request(&state, &request(CPU, 10.0 * HOUR, 0.0), 0.0, &mut rng).unwrap();
        assert_eq!(reply.jobs.len(), 3);
        let reply = server.handle_request(&state, &request(CPU, 0.0, 5.0), 0.0, &mut rng).unwrap();
        assert_eq!(reply.jobs.len(), 5);
        let reply = server.handle_request(&state, &request(CPU, 1.0, 2.0), 0.0, &mut rng).unwrap();
        assert_eq!(reply.jobs.len(), 2);
        let reply = server.handle_request(&state, &request(CPU, 0.0, 0.0), 0.0, &mut rng).unwrap();
        assert!(reply.jobs.is_empty() && !reply.no_work_because_of_deadlines);
    }

    #[test]
    fn multi_instance_jobs_fill_instances_by_usage() {
        let mut state = state_with_apps(8, &[]);
        add_app(
            &mut state,
            "mt",
            emulation(1.0, 1e4, 1.0),
            ResourceUsage { avg_ncpus: 4.0, coprocessor: None },
            4e9,
        );
        let (mut server, mut rng) = new_server(&state);
        let reply = server.handle_request(&state, &request(CPU, 0.0, 8.0), 0.0, &mut rng).unwrap();
        assert_eq!(reply.jobs.len(), 2);
    }

    #[test]
    fn job_that_cannot_make_its_deadline_is_refused_and_flagged() {
        // 3-hour jobs due in 2 hours can never make it.
        let state = state_with_apps(1, &[emulation(3.0, 2.0, 1.0)]);
        let (mut server, mut rng) = new_server(&state);
        let reply = server.handle_request(&state, &request(CPU, HOUR, 0.0), 0.0, &mut rng).unwrap();
        assert!(reply.jobs.is_empty());
        assert!(reply.no_work_because_of_deadlines);
        assert!(reply.work_reply(&state).no_work_because_of_deadlines);
    }

    #[test]
    fn queued_work_limits_what_is_sent() {
        // 1-hour jobs due in 5 hours on one CPU: five fit, the sixth would be late.
        let state = state_with_apps(1, &[emulation(1.0, 5.0, 1.0)]);
        let (mut server, mut rng) = new_server(&state);
        let reply =
            server.handle_request(&state, &request(CPU, 100.0 * HOUR, 0.0), 0.0, &mut rng).unwrap();
        assert_eq!(reply.jobs.len(), 5);
        assert!(!reply.no_work_because_of_deadlines);
        // With those five queued, the next request gets nothing and says why.
        let mut state = state;
        add_jobs(&mut state, ProjectId(0), &reply.jobs, 0.0);
        let reply = server.handle_request(&state, &request(CPU, HOUR, 0.0), 0.0, &mut rng).unwrap();
        assert!(reply.jobs.is_empty() && reply.no_work_because_of_deadlines);
    }

    #[test]
    fn job_that_would_make_a_queued_job_late_is_refused() {
        // Queued: 9 h of work due in 10 h. A 1.5-hour job due in 2 h would run first
        // under EDF and push the queued job past its deadline.
        let mut state = state_with_apps(1, &[emulation(9.0, 10.0, 1.0)]);
        let (mut server, mut rng) = new_server(&state);
        let queued = server.handle_request(&state, &request(CPU, 1.0, 0.0), 0.0, &mut rng).unwrap();
        assert_eq!(queued.jobs.len(), 1);
        add_jobs(&mut state, ProjectId(0), &queued.jobs, 0.0);
        state.apps[0].emulation = Some(emulation(1.5, 2.0, 1.0));
        let reply = server.handle_request(&state, &request(CPU, 1.0, 0.0), 0.0, &mut rng).unwrap();
        assert!(reply.jobs.is_empty() && reply.no_work_because_of_deadlines);
        // Half an hour fits.
        state.apps[0].emulation = Some(emulation(0.5, 2.0, 1.0));
        let reply = server.handle_request(&state, &request(CPU, 1.0, 0.0), 0.0, &mut rng).unwrap();
        assert_eq!(reply.jobs.len(), 1);
    }

    #[test]
    fn cpu_only_project_says_it_has_no_gpu_apps_except_in_compat_mode() {
        let mut state = state_with_apps(2, &[emulation(1.0, 24.0, 1.0)]);
        state.host.coprocessors[GPU] = Some(Coprocessor {
            resource: GPU,
            name: "gpu".into(),
            count: 1,
            peak_flops: 1e12,
            available_ram: 0.0,
        });
        let (mut server, mut rng) = new_server(&state);
        let reply = server.handle_request(&state, &request(GPU, HOUR, 1.0), 0.0, &mut rng).unwrap();
        assert!(reply.jobs.is_empty() && reply.no_apps[GPU] && !reply.no_apps[CPU]);
        assert!(!reply.no_work_because_of_deadlines);
        assert!(reply.work_reply(&state).no_apps[GPU]);
        server.set_boinc_compat(true);
        let reply = server.handle_request(&state, &request(GPU, HOUR, 1.0), 0.0, &mut rng).unwrap();
        assert!(reply.jobs.is_empty() && !reply.no_apps[GPU]);
    }

    #[test]
    fn gpu_requests_get_the_gpu_version() {
        let mut state = state_with_apps(2, &[emulation(1.0, 24.0, 1.0)]);
        state.host.coprocessors[GPU] = Some(Coprocessor {
            resource: GPU,
            name: "gpu".into(),
            count: 1,
            peak_flops: 5e10,
            available_ram: 0.0,
        });
        state.app_versions.push(AppVersion {
            project: ProjectId(0),
            app: AppId(0),
            version_num: 2,
            plan_class: "cuda".into(),
            usage: ResourceUsage { avg_ncpus: 0.1, coprocessor: Some((GPU, 1.0)) },
            flops: 1e10,
            duration_correction_factor: None,
        });
        let (mut server, mut rng) = new_server(&state);
        let reply = server.handle_request(&state, &request(GPU, 0.0, 1.0), 0.0, &mut rng).unwrap();
        assert_eq!(reply.jobs.len(), 1);
        assert_eq!(reply.jobs[0].app_version, AppVersionId(1));
        assert_eq!(reply.work_reply(&state).jobs_received[GPU], 1);
        assert_eq!(reply.work_reply(&state).jobs_received[CPU], 0);
    }

    #[test]
    fn server_down_fails_the_rpc() {
        let mut state = state_with_apps(1, &[emulation(1.0, 24.0, 1.0)]);
        state.projects[0].availability = Some(Availability { frac: 0.0, lambda: 3600.0 });
        let (mut server, mut rng) = new_server(&state);
        assert!(!server.is_up());
        assert!(server.handle_request(&state, &request(CPU, HOUR, 0.0), 0.0, &mut rng).is_none());
        assert_eq!(server.next_change(), f64::INFINITY);
    }

    #[test]
    fn server_up_thirty_percent_of_a_long_run() {
        let mut state = state_with_apps(1, &[emulation(1.0, 24.0, 1.0)]);
        state.projects[0].availability = Some(Availability { frac: 0.3, lambda: 2.0 * HOUR });
        let (mut server, mut rng) = new_server(&state);
        let end = 20_000.0 * 2.0 * HOUR;
        let (mut t, mut up_time) = (0.0, 0.0);
        while server.next_change() < end {
            let was_up = server.is_up();
            let (at, up) = server.pop_change(&mut rng);
            assert_ne!(up, was_up);
            if was_up {
                up_time += at - t;
            }
            t = at;
        }
        if server.is_up() {
            up_time += end - t;
        }
        let frac = up_time / end;
        assert!((frac - 0.3).abs() < 0.01, "up {frac}");
    }

    #[test]
    fn add_jobs_wires_workunits_and_versions() {
        let mut state = state_with_apps(1, &[emulation(1.0, 24.0, 1.0), emulation(2.0, 24.0, 1.0)]);
        let (mut server, mut rng) = new_server(&state);
        let reply = server
            .handle_request(&state, &request(CPU, 10.0 * HOUR, 0.0), 100.0, &mut rng)
            .unwrap();
        let ids = add_jobs(&mut state, ProjectId(0), &reply.jobs, 100.0);
        assert_eq!(ids.len(), reply.jobs.len());
        for (id, new) in ids.iter().zip(&reply.jobs) {
            let job = state.job(*id);
            assert_eq!(job.name, new.name);
            assert_eq!(job.app_version, Some(new.app_version));
            assert_eq!(job.state, crate::model::JobState::FilesDownloaded);
            assert_eq!(job.received_time, 100.0);
            assert_eq!(job.report_deadline, new.deadline);
            let wu = state.workunit(job.workunit);
            assert_eq!(wu.name, new.name);
            assert_eq!(wu.app, new.app);
            assert_eq!(state.app_version(new.app_version).app, new.app);
            assert_eq!(wu.rsc_fpops_est, new.fpops_est);
            assert!(state.job_runnable(*id));
        }
        // A new server continues numbering after the jobs already in the state.
        let server = EmulatedServer::new(&state, ProjectId(0), 0.0, &mut rng);
        assert_eq!(server.next_job_number, reply.jobs.len() as u64);
    }

    #[test]
    fn same_seed_same_reply() {
        let mut e = emulation(1.0, 30.0, 1.0);
        e.fpops_std_dev = 0.3 * e.fpops_mean;
        let state = state_with_apps(4, &[e, emulation(0.5, 10.0, 2.0)]);
        let run = || {
            let (mut server, mut rng) = new_server(&state);
            server.handle_request(&state, &request(CPU, 50.0 * HOUR, 0.0), 0.0, &mut rng)
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn large_queue_is_handled_and_capped() {
        // 10,000 queued 1-hour jobs on 64 CPUs with late deadlines; a huge request.
        let mut state = state_with_apps(64, &[emulation(1.0, 24.0 * 400.0, 1.0)]);
        let (mut server, mut rng) = new_server(&state);
        let mut jobs = Vec::new();
        for _ in 0..10 {
            jobs.extend(
                server
                    .handle_request(&state, &request(CPU, 1e12, 0.0), 0.0, &mut rng)
                    .unwrap()
                    .jobs,
            );
        }
        add_jobs(&mut state, ProjectId(0), &jobs, 0.0);
        assert_eq!(state.jobs.len(), 10_000);
        let reply = server.handle_request(&state, &request(CPU, 1e12, 0.0), 0.0, &mut rng).unwrap();
        assert_eq!(reply.jobs.len(), MAX_JOBS_PER_REQUEST);
    }

    /// The naive check: full EDF simulations before and after adding the candidate.
    fn naive_accepts(count: usize, queue: &[EdfEntry], candidate: EdfEntry) -> bool {
        let schedule = |entries: &[EdfEntry]| -> Vec<f64> {
            let mut sorted: Vec<(usize, EdfEntry)> = entries.iter().copied().enumerate().collect();
            sorted.sort_by(|a, b| a.1.deadline.total_cmp(&b.1.deadline));
            let mut instances: Instances = vec![0.0; count];
            let mut miss = vec![0.0; entries.len()];
            for (i, e) in sorted {
                miss[i] = place(&mut instances, count, &e) - e.deadline;
            }
            miss
        };
        let before = schedule(queue);
        let mut with = queue.to_vec();
        with.push(candidate);
        let after = schedule(&with);
        after[queue.len()] <= DEADLINE_TOLERANCE
            && (0..queue.len())
                .all(|i| after[i].max(0.0) <= before[i].max(0.0) + DEADLINE_TOLERANCE)
    }

    #[test]
    fn incremental_edf_check_at_snapshot_boundaries() {
        for len in [63, 64, 65, 128, 129] {
            let queue: Vec<EdfEntry> =
                (0..len).map(|i| EdfEntry::new(f64::from(i) * HOUR, HOUR, 1.0)).collect();
            let mut incremental = EdfQueue::new(2, queue.clone());
            for deadline in [f64::from(len) * HOUR, 0.5 * HOUR, 1e9] {
                let candidate = EdfEntry::new(deadline, HOUR, 1.0);
                let expected = naive_accepts(2, &incremental.entries, candidate);
                assert_eq!(incremental.try_insert(candidate), expected, "len {len}");
            }
            assert!(incremental.entries.len() > queue.len());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// List scheduling on the sorted instance list gives the finishes a min-heap of
        /// free times gives (pop the earliest `ceil(usage)`, start at the latest of them,
        /// push the finish back once per instance).
        #[test]
        fn placing_matches_a_heap_of_free_times(
            count in 1usize..9,
            jobs in prop::collection::vec((1u32..30, 0u32..40), 1..60),
        ) {
            use std::cmp::Reverse;
            use std::collections::BinaryHeap;
            let mut heap: BinaryHeap<Reverse<u64>> = (0..count).map(|_| Reverse(0)).collect();
            let mut instances: Instances = vec![0.0; count];
            for (hours, quarters) in jobs {
                let job = EdfEntry::new(0.0, f64::from(hours) * HOUR, f64::from(quarters) / 4.0);
                let single = job.usage <= 1.0 || count <= 1;
                let k = if single { 1 } else { (job.usage.ceil() as usize).min(count) };
                let mut start: f64 = 0.0;
                for _ in 0..k {
                    let Reverse(free) = heap.pop().unwrap_or(Reverse(0));
                    start = start.max(f64::from_bits(free));
                }
                let expected = if single {
                    start + job.duration * job.usage
                } else {
                    start + job.duration * job.usage / k as f64
                };
                for _ in 0..k {
                    // Non-negative times order like their bits.
                    heap.push(Reverse(expected.to_bits()));
                }
                prop_assert_eq!(place(&mut instances, count, &job).to_bits(), expected.to_bits());
                prop_assert!(instances.is_sorted_by(|a, b| a.total_cmp(b).is_le()));
            }
        }

        #[test]
        fn incremental_edf_check_matches_full_simulation(
            count in 1usize..5,
            queue in prop::collection::vec((0u32..400, 1u32..30, 1u32..9), 0..200),
            candidates in prop::collection::vec((0u32..400, 1u32..30, 1u32..9), 1..20),
        ) {
            // Whole-hour values keep equal deadlines and exact ties common.
            let entry = |(d, l, u): (u32, u32, u32)| {
                EdfEntry::new(f64::from(d) * HOUR, f64::from(l) * HOUR, f64::from(u) / 2.0)
            };
            let mut accepted: Vec<EdfEntry> = queue.iter().copied().map(entry).collect();
            let mut incremental = EdfQueue::new(count, accepted.clone());
            for c in candidates {
                let candidate = entry(c);
                // Equal deadlines: the candidate goes after the queued ones in both.
                let expected = naive_accepts(count, &accepted, candidate);
                prop_assert_eq!(incremental.try_insert(candidate), expected);
                if expected {
                    accepted.push(candidate);
                    // What the check kept is the schedule simulated afresh.
                    let fresh = EdfQueue::new(count, incremental.entries.clone());
                    prop_assert_eq!(&fresh.entries, &incremental.entries);
                    prop_assert_eq!(&fresh.snapshots, &incremental.snapshots);
                }
            }
        }
    }
}
