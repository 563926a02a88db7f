//! BOINC's figures of merit for an emulator run (docs/design.md "Emulator": idle fraction,
//! wasted fraction, share violation, monotony, RPCs per job), the fair-share violation
//! beside them ([`super::fair_share`]), with the per-project usage, jobs done and
//! deadlines missed; and the online accumulator the event loop feeds.
//!
//! One addition to BOINC's definitions: CPU usage in any interval is capped at the CPUs
//! whose capacity counts then (`cpu_scale`), so that GPU jobs' CPU fractions or a
//! multithreaded allowance that commit more CPUs than the host has cannot make the idle
//! fraction negative.

use super::fair_share::{ProjectProcessing, fair_targets};
use boinc_core::Time;
use boinc_core::model::{GPU_PEAK_FLOPS_SCALE, JobId, ProjectId, ResourceMap, ResourceType};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// One project's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProjectFigures {
    /// Flops used on each resource as a fraction of that resource's capacity, keyed
    /// `cpu`, `nvidia`, `amd`, `intel` (only resources the host has).
    pub usage: BTreeMap<String, f64>,
    /// Its part of all the flops the projects used (U_p / U).
    #[serde(default)]
    pub processing_share: f64,
    /// The part the fair-share violation holds it entitled to (T_p / U): its share of
    /// the processing, as far as the devices it has apps for allow.
    #[serde(default)]
    pub fair_share: f64,
    /// Jobs finished computing.
    pub jobs_done: u32,
    /// Jobs reported after their deadline.
    pub deadlines_missed: u32,
    /// Jobs received.
    pub jobs_received: u32,
    /// Successful scheduler RPCs.
    pub rpcs: u32,
    /// Seed 004: disk polls that found BOINC over its disk limit while this project used
    /// more than its share (absent when the scenario gives no file sizes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_violations: Option<u32>,
    /// Seed 004: files of this project the disk manager deleted to make room (absent
    /// when the scenario gives no file sizes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_deleted: Option<u32>,
}

/// The figures of merit of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FiguresOfMerit {
    /// (capacity − flops used) / capacity.
    pub idle_fraction: f64,
    /// Flops used by jobs reported after their deadlines / capacity.
    pub wasted_fraction: f64,
    /// Σ over projects |U_p − U·s_p| / U.
    pub share_violation: f64,
    /// Σ over projects |U_p − T_p| / U, T the weighted max-min fair split of the flops
    /// used on each device among the projects with apps for it ([`super::fair_share`]).
    #[serde(default)]
    pub fair_share_violation: f64,
    /// 1 − 1/(x+1), x = Σ_p S_p / (n² × scheduling period).
    pub monotony: f64,
    /// Successful RPCs / (2 × jobs received).
    pub rpcs_per_job: f64,
    /// Simulated days.
    pub sim_days: f64,
    /// Wall-clock seconds the run took (filled in by the caller, which has a clock).
    pub wall_seconds: f64,
    /// Per project, keyed by name (with the master URL where names clash).
    pub projects: BTreeMap<String, ProjectFigures>,
}

/// One project as the figures know it before the run starts.
#[derive(Debug, Clone, PartialEq)]
pub struct FiguresProject {
    /// The name the figures and the trace give it (unique within the run).
    pub name: String,
    /// Resource share.
    pub share: f64,
    /// The devices it has app versions for (the fair-share violation's eligibility).
    pub devices: ResourceMap<bool>,
}

/// Everything the figures need to know about the run before it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct FiguresSetup {
    /// Usable CPUs.
    pub ncpus: u32,
    /// Peak flops of one CPU.
    pub p_fpops: f64,
    /// Per GPU type present: instance count and advertised peak flops of one instance
    /// (the CPU entry is ignored).
    pub gpus: ResourceMap<Option<(u32, f64)>>,
    /// Projects by [`ProjectId`] index.
    pub projects: Vec<FiguresProject>,
    /// Scheduling period, seconds (monotony is measured against it).
    pub scheduling_period: f64,
    /// BOINC-emulator modelling: CPU capacity and monotony's active time count the whole
    /// simulated time, whatever the host's availability.
    pub boinc_compat: bool,
    /// Virtual start time of the run.
    pub start: Time,
}

/// What one running job occupied during an interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunningUsage {
    /// Its project.
    pub project: ProjectId,
    /// The job.
    pub job: JobId,
    /// CPUs it occupied.
    pub avg_ncpus: f64,
    /// GPU type and instances it occupied (a fraction for a shared GPU).
    pub gpu: Option<(ResourceType, f64)>,
}

/// The host's availability during an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostState {
    /// The host (and client) is running.
    pub on: bool,
    /// Computing is allowed.
    pub active: bool,
    /// GPU computing is allowed.
    pub gpu_active: bool,
}

impl HostState {
    /// Host on, computing and GPU computing allowed: the state a run starts in.
    pub const UP: HostState = HostState { on: true, active: true, gpu_active: true };
}

/// The flops BOINC credits one instance of a GPU type with: 0.2 × peak × count. The
/// count enters because BOINC derives it from a relative speed computed for the whole
/// coprocessor type; we reproduce that quirk so our figures compare with BOINC's.
pub(crate) fn gpu_instance_value(count: u32, peak_flops: f64) -> f64 {
    GPU_PEAK_FLOPS_SCALE * peak_flops * f64::from(count)
}

/// CPUs whose capacity counts while the host is in a state: all of them under
/// `boinc_compat` (BOINC's emulator counts CPU capacity over the whole time), otherwise
/// only while the host is on and computing is allowed.
pub(crate) fn cpus_counted(ncpus: u32, boinc_compat: bool, on: bool, active: bool) -> f64 {
    if boinc_compat || (on && active) { f64::from(ncpus) } else { 0.0 }
}

/// The factor every running job's CPU flops are scaled by in an interval where the jobs
/// occupy `cpus_used` CPUs and `cpus_counted` CPUs count as capacity. GPU jobs' CPU
/// fractions and a multithreaded app's allowance can commit more CPUs than the host has
/// (seed 000 lets the scheduler do so), but CPUs cannot deliver more than their peak:
/// capping each interval's CPU usage at its capacity keeps the idle fraction ≥ 0 and
/// every project's CPU usage ≤ 1, and shares the real CPU time in proportion to what
/// each job asked for.
pub(crate) fn cpu_scale(cpus_used: f64, cpus_counted: f64) -> f64 {
    if cpus_used > cpus_counted { cpus_counted / cpus_used } else { 1.0 }
}

/// ∫ R² dt over an interval where R grows linearly from `r_from` to `r_to`, written as
/// dt·(a² + ab + b²)/3 rather than (b³ − a³)/3 so that summing many short pieces of a
/// long gap loses no precision to cancellation.
pub(crate) fn integral_of_square(r_from: f64, r_to: f64) -> f64 {
    (r_to - r_from) * (r_from * r_from + r_from * r_to + r_to * r_to) / 3.0
}

/// Seconds per simulated day.
const SECONDS_PER_DAY: f64 = 86_400.0;

/// One project's integrated quantities, from which its figures follow.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ProjectTotals {
    /// Project name.
    pub name: String,
    /// Resource share.
    pub share: f64,
    /// The devices it has app versions for.
    pub devices: ResourceMap<bool>,
    /// Flops used per resource.
    pub used: ResourceMap<f64>,
    /// Flops used per device its jobs were scheduled on: a GPU job's CPU part counts on
    /// its GPU (the fair-share violation's U_p by device).
    pub used_by_job_device: ResourceMap<f64>,
    /// ∫ R_p(t)² dt, R_p the time since the project last had a running job.
    pub starvation_square_integral: f64,
    /// Jobs received.
    pub jobs_received: u32,
    /// Jobs finished computing.
    pub jobs_done: u32,
    /// Jobs reported after their deadline.
    pub deadlines_missed: u32,
    /// Successful scheduler RPCs.
    pub rpcs: u32,
    /// Disk polls that found a violation with the project offending.
    pub disk_violations: u32,
    /// Files the disk manager deleted.
    pub files_deleted: u32,
}

/// A run's integrated quantities. Both the online accumulator and the trace replay reduce
/// a run to these (each by its own integration); the definitions then apply once, here.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RunTotals {
    /// Simulated seconds.
    pub duration: f64,
    /// Which resources the host has (usage is reported only for those).
    pub present: ResourceMap<bool>,
    /// Capacity per resource, flops.
    pub capacity: ResourceMap<f64>,
    /// Time monotony is averaged over.
    pub active_time: f64,
    /// Scheduling period, seconds.
    pub scheduling_period: f64,
    /// Flops used by jobs reported after their deadlines.
    pub wasted_flops: f64,
    /// Per project.
    pub projects: Vec<ProjectTotals>,
    /// The run emulated disk usage (its disk figures are reported).
    pub disk: bool,
}

/// `numerator / denominator`, or 0 where the denominator is not positive (a run with no
/// capacity, no usage or no jobs has no meaningful fraction; 0 keeps the JSON finite).
fn fraction(numerator: f64, denominator: f64) -> f64 {
    if denominator > 0.0 { numerator / denominator } else { 0.0 }
}

impl RunTotals {
    /// Applies BOINC's definitions of the figures of merit (docs/design.md "Emulator").
    pub(crate) fn figures(&self) -> FiguresOfMerit {
        let flops_total: f64 = self.capacity.0.iter().sum();
        let used_per_project: Vec<f64> =
            self.projects.iter().map(|p| p.used.0.iter().sum()).collect();
        let flops_used: f64 = used_per_project.iter().sum();
        let share_total: f64 = self.projects.iter().map(|p| p.share).sum();
        let share_violation = if flops_used > 0.0 {
            self.projects
                .iter()
                .zip(&used_per_project)
                .map(|(p, &used)| (used - flops_used * fraction(p.share, share_total)).abs())
                .sum::<f64>()
                / flops_used
        } else {
            0.0
        };
        let n = self.projects.len() as f64;
        let monotony = if n > 0.0 && self.active_time > 0.0 && self.scheduling_period > 0.0 {
            let x = self
                .projects
                .iter()
                .map(|p| (p.starvation_square_integral / self.active_time).sqrt())
                .sum::<f64>()
                / (n * n * self.scheduling_period);
            1.0 - 1.0 / (x + 1.0)
        } else {
            0.0
        };
        let rpcs: u32 = self.projects.iter().map(|p| p.rpcs).sum();
        let received: u32 = self.projects.iter().map(|p| p.jobs_received).sum();
        let processing: Vec<ProjectProcessing> = self
            .projects
            .iter()
            .map(|p| ProjectProcessing {
                share: p.share,
                devices: p.devices,
                used: p.used_by_job_device,
            })
            .collect();
        let targets = fair_targets(&processing);
        let processed: Vec<f64> = processing.iter().map(ProjectProcessing::total_used).collect();
        let processed_total: f64 = processed.iter().sum();
        let fair_share_violation = fraction(
            processed.iter().zip(&targets).map(|(u, t)| (u - t).abs()).sum::<f64>(),
            processed_total,
        );
        let projects = self
            .projects
            .iter()
            .zip(processed.iter().zip(&targets))
            .map(|(p, (&processed, &target))| {
                let usage = ResourceType::ALL
                    .into_iter()
                    .filter(|&r| self.present[r])
                    .map(|r| (r.key().to_string(), fraction(p.used[r], self.capacity[r])))
                    .collect();
                let figures = ProjectFigures {
                    usage,
                    processing_share: fraction(processed, processed_total),
                    fair_share: fraction(target, processed_total),
                    jobs_done: p.jobs_done,
                    deadlines_missed: p.deadlines_missed,
                    jobs_received: p.jobs_received,
                    rpcs: p.rpcs,
                    disk_violations: self.disk.then_some(p.disk_violations),
                    files_deleted: self.disk.then_some(p.files_deleted),
                };
                (p.name.clone(), figures)
            })
            .collect();
        FiguresOfMerit {
            // Usage is capped at capacity in every interval; what is left below 0 is
            // rounding in the sums, which must not print as a negative idle fraction.
            idle_fraction: fraction(flops_total - flops_used, flops_total).max(0.0),
            wasted_fraction: fraction(self.wasted_flops, flops_total),
            share_violation,
            fair_share_violation,
            monotony,
            rpcs_per_job: fraction(f64::from(rpcs), 2.0 * f64::from(received)),
            sim_days: self.duration / SECONDS_PER_DAY,
            wall_seconds: 0.0,
            projects,
        }
    }
}

/// Job ids below this are tracked in a dense vector (ids are indices into the client
/// state's job list); larger ones, which would make the vector huge, go to a map.
const DENSE_JOB_IDS: usize = 1 << 20;

/// Flops each job has used so far, for the wasted fraction.
#[derive(Debug, Clone, Default)]
struct JobFlops {
    dense: Vec<f64>,
    sparse: HashMap<JobId, f64>,
}

impl JobFlops {
    fn add(&mut self, job: JobId, flops: f64) {
        let index = job.index();
        if index < DENSE_JOB_IDS {
            if index >= self.dense.len() {
                self.dense.resize(index + 1, 0.0);
            }
            self.dense[index] += flops;
        } else {
            *self.sparse.entry(job).or_insert(0.0) += flops;
        }
    }

    /// The job's flops, forgetting them (a reported job's id may be reused).
    fn take(&mut self, job: JobId) -> f64 {
        let index = job.index();
        if index < DENSE_JOB_IDS {
            self.dense.get_mut(index).map_or(0.0, std::mem::take)
        } else {
            self.sparse.remove(&job).unwrap_or(0.0)
        }
    }
}

/// Online accumulator of the figures of merit, fed by the emulator's event loop: each
/// `advance` integrates one interval in O(running jobs + projects), without allocating
/// beyond amortised growth of the per-job table.
#[derive(Debug, Clone)]
pub struct FiguresAccumulator {
    setup: FiguresSetup,
    /// Flops/s one instance of each GPU type is credited with.
    gpu_value: ResourceMap<f64>,
    /// End of the last interval integrated.
    now: Time,
    /// Host state in the last interval (assumed to persist across gaps).
    host: HostState,
    /// Whole simulated time integrated so far.
    wall_time: f64,
    /// Time with the host on and computing allowed.
    computing_time: f64,
    /// Time with the host on and GPU computing allowed.
    gpu_time: f64,
    /// When each project last had a running job (the start if never).
    last_running: Vec<Time>,
    /// Interval number in which each project was last seen running (avoids clearing flags).
    running_mark: Vec<u64>,
    interval: u64,
    projects: Vec<ProjectTotals>,
    job_flops: JobFlops,
    wasted_flops: f64,
    disk: bool,
}

impl FiguresAccumulator {
    /// An accumulator for a run starting at `setup.start` with the host up.
    pub fn new(setup: FiguresSetup) -> Self {
        let gpu_value = ResourceMap::from_fn(|r| match setup.gpus[r] {
            Some((count, peak)) if r.is_gpu() => gpu_instance_value(count, peak),
            _ => 0.0,
        });
        let projects = setup
            .projects
            .iter()
            .map(|project| ProjectTotals {
                name: project.name.clone(),
                share: project.share,
                devices: project.devices,
                ..ProjectTotals::default()
            })
            .collect();
        let nprojects = setup.projects.len();
        FiguresAccumulator {
            gpu_value,
            now: setup.start,
            host: HostState::UP,
            wall_time: 0.0,
            computing_time: 0.0,
            gpu_time: 0.0,
            last_running: vec![setup.start; nprojects],
            running_mark: vec![0; nprojects],
            interval: 0,
            projects,
            job_flops: JobFlops::default(),
            wasted_flops: 0.0,
            disk: false,
            setup,
        }
    }

    /// Integrates the interval [from, to) during which exactly `running` ran and the host
    /// was in state `host`. A gap since the previous interval counts as idle in the
    /// previous host state; the part of an interval before the previous one's end is
    /// ignored so that nothing is counted twice.
    pub fn advance(&mut self, from: Time, to: Time, host: HostState, running: &[RunningUsage]) {
        if from > self.now {
            let previous = self.host;
            self.integrate(self.now, from, previous, &[]);
        }
        let from = from.max(self.now);
        if to > from {
            self.integrate(from, to, host, running);
        }
    }

    fn integrate(&mut self, from: Time, to: Time, host: HostState, running: &[RunningUsage]) {
        let dt = to - from;
        self.interval += 1;
        let cpus_used: f64 = running.iter().map(|usage| usage.avg_ncpus).sum();
        let counted = cpus_counted(self.setup.ncpus, self.setup.boinc_compat, host.on, host.active);
        let scale = cpu_scale(cpus_used, counted);
        for usage in running {
            let Some(project) = self.projects.get_mut(usage.project.index()) else {
                debug_assert!(false, "running job of unknown project {:?}", usage.project);
                continue;
            };
            let cpu_flops = usage.avg_ncpus * scale * self.setup.p_fpops * dt;
            project.used[ResourceType::Cpu] += cpu_flops;
            let mut job_flops = cpu_flops;
            let mut job_device = ResourceType::Cpu;
            if let Some((resource, instances)) = usage.gpu {
                let gpu_flops = instances * self.gpu_value[resource] * dt;
                project.used[resource] += gpu_flops;
                job_flops += gpu_flops;
                job_device = resource;
            }
            project.used_by_job_device[job_device] += job_flops;
            self.job_flops.add(usage.job, job_flops);
            self.running_mark[usage.project.index()] = self.interval;
        }
        for (index, project) in self.projects.iter_mut().enumerate() {
            if self.running_mark[index] == self.interval {
                self.last_running[index] = to;
            } else {
                let last = self.last_running[index];
                project.starvation_square_integral += integral_of_square(from - last, to - last);
            }
        }
        self.wall_time += dt;
        if host.on && host.active {
            self.computing_time += dt;
        }
        if host.on && host.gpu_active {
            self.gpu_time += dt;
        }
        self.host = host;
        self.now = to;
    }

    /// A job of `project` arrived.
    pub fn job_received(&mut self, project: ProjectId) {
        if let Some(p) = self.projects.get_mut(project.index()) {
            p.jobs_received += 1;
        }
    }

    /// A job of `project` finished computing.
    pub fn job_finished(&mut self, project: ProjectId) {
        if let Some(p) = self.projects.get_mut(project.index()) {
            p.jobs_done += 1;
        }
    }

    /// A job was reported; if after its deadline, every flop it used counts as wasted.
    pub fn job_reported(&mut self, project: ProjectId, job: JobId, missed: bool) {
        let used = self.job_flops.take(job);
        if missed {
            self.wasted_flops += used;
            if let Some(p) = self.projects.get_mut(project.index()) {
                p.deadlines_missed += 1;
            }
        }
    }

    /// The run emulates disk usage: its figures include the disk counts.
    pub fn enable_disk(&mut self) {
        self.disk = true;
    }

    /// A disk poll found BOINC over its limit with `project` over its share.
    pub fn disk_violation(&mut self, project: ProjectId) {
        if let Some(p) = self.projects.get_mut(project.index()) {
            p.disk_violations += 1;
        }
    }

    /// The disk manager deleted a file of `project`.
    pub fn file_deleted(&mut self, project: ProjectId) {
        if let Some(p) = self.projects.get_mut(project.index()) {
            p.files_deleted += 1;
        }
    }

    /// A scheduler RPC to `project`; only successful ones count.
    pub fn rpc(&mut self, project: ProjectId, success: bool) {
        if success && let Some(p) = self.projects.get_mut(project.index()) {
            p.rpcs += 1;
        }
    }

    /// The figures of merit of the run up to `end` (the time after the last interval
    /// counts as idle in the last host state). `wall_seconds` is left 0 for the caller.
    pub fn finish(&self, end: Time) -> FiguresOfMerit {
        let tail = (end - self.now).max(0.0);
        let wall_time = self.wall_time + tail;
        let host = self.host;
        let computing_time = self.computing_time + if host.on && host.active { tail } else { 0.0 };
        let gpu_time = self.gpu_time + if host.on && host.gpu_active { tail } else { 0.0 };
        let projects = self
            .projects
            .iter()
            .zip(&self.last_running)
            .map(|(project, &last)| {
                let mut project = project.clone();
                if tail > 0.0 {
                    project.starvation_square_integral +=
                        integral_of_square(self.now - last, self.now + tail - last);
                }
                project
            })
            .collect();
        let cpu_time = if self.setup.boinc_compat { wall_time } else { computing_time };
        let mut capacity = ResourceMap::default();
        capacity[ResourceType::Cpu] = f64::from(self.setup.ncpus) * self.setup.p_fpops * cpu_time;
        let mut present = ResourceMap::default();
        present[ResourceType::Cpu] = true;
        for resource in ResourceType::GPUS {
            if let Some((count, _)) = self.setup.gpus[resource] {
                present[resource] = true;
                capacity[resource] = f64::from(count) * self.gpu_value[resource] * gpu_time;
            }
        }
        RunTotals {
            duration: wall_time,
            present,
            capacity,
            active_time: if self.setup.boinc_compat { wall_time } else { computing_time },
            scheduling_period: self.setup.scheduling_period,
            wasted_flops: self.wasted_flops,
            projects,
            disk: self.disk,
        }
        .figures()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GFLOPS: f64 = 1e9;
    const OFF: HostState = HostState { on: false, active: false, gpu_active: false };

    fn setup(boinc_compat: bool) -> FiguresSetup {
        FiguresSetup {
            ncpus: 2,
            p_fpops: GFLOPS,
            gpus: ResourceMap::default(),
            projects: vec![project("A", 75.0), project("B", 25.0)],
            scheduling_period: 10.0,
            boinc_compat,
            start: 1000.0,
        }
    }

    fn project(name: &str, share: f64) -> FiguresProject {
        let devices = ResourceMap::from_fn(|r| r == ResourceType::Cpu);
        FiguresProject { name: name.to_string(), share, devices }
    }

    fn cpu_job(project: u32, job: u32) -> RunningUsage {
        RunningUsage { project: ProjectId(project), job: JobId(job), avg_ncpus: 1.0, gpu: None }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn idle_fraction_counts_unused_cpu() {
        let mut acc = FiguresAccumulator::new(setup(false));
        acc.advance(1000.0, 1100.0, HostState::UP, &[cpu_job(0, 0)]);
        let figures = acc.finish(1100.0);
        // 1 of 2 CPUs busy for the whole run.
        assert!(close(figures.idle_fraction, 0.5));
        assert!(close(figures.projects["A"].usage["cpu"], 0.5));
        assert!(close(figures.projects["B"].usage["cpu"], 0.0));
        assert!(close(figures.sim_days, 100.0 / 86_400.0));
        assert_eq!(figures.wall_seconds, 0.0);
    }

    #[test]
    fn wasted_fraction_counts_flops_of_late_jobs_only() {
        let mut acc = FiguresAccumulator::new(setup(false));
        acc.advance(1000.0, 1050.0, HostState::UP, &[cpu_job(0, 7), cpu_job(1, 3)]);
        acc.advance(1050.0, 1100.0, HostState::UP, &[cpu_job(0, 7)]);
        acc.job_reported(ProjectId(0), JobId(7), true);
        acc.job_reported(ProjectId(1), JobId(3), false);
        let figures = acc.finish(1100.0);
        // Job 7: 100 CPU-seconds of 200 available; job 3 was on time.
        assert!(close(figures.wasted_fraction, 0.5));
        assert_eq!(figures.projects["A"].deadlines_missed, 1);
        assert_eq!(figures.projects["B"].deadlines_missed, 0);
    }

    #[test]
    fn reported_job_ids_start_afresh_and_sparse_ids_work() {
        let mut acc = FiguresAccumulator::new(setup(false));
        let huge = JobId(u32::MAX - 1);
        acc.advance(1000.0, 1100.0, HostState::UP, &[cpu_job(0, 1), cpu_job(0, huge.0)]);
        acc.job_reported(ProjectId(0), JobId(1), false);
        acc.advance(1100.0, 1200.0, HostState::UP, &[cpu_job(0, 1)]);
        acc.job_reported(ProjectId(0), JobId(1), true);
        acc.job_reported(ProjectId(0), huge, true);
        let figures = acc.finish(1200.0);
        // Reused id 1 wastes only its second life (100 s); the huge id its 100 s.
        assert!(close(figures.wasted_fraction, 200.0 / 400.0));
    }

    #[test]
    fn share_violation_for_75_25_shares() {
        let mut acc = FiguresAccumulator::new(setup(false));
        acc.advance(1000.0, 1100.0, HostState::UP, &[cpu_job(0, 0), cpu_job(1, 1)]);
        let even = acc.finish(1100.0);
        // U_A = U_B = U/2: |U/2 − 3U/4| + |U/2 − U/4| = U/2.
        assert!(close(even.share_violation, 0.5));

        let mut acc = FiguresAccumulator::new(setup(false));
        acc.advance(1000.0, 1100.0, HostState::UP, &[cpu_job(0, 0), cpu_job(0, 2)]);
        acc.advance(1100.0, 1200.0, HostState::UP, &[cpu_job(0, 0), cpu_job(1, 1)]);
        let on_target = acc.finish(1200.0);
        assert!(close(on_target.share_violation, 0.0));
    }

    #[test]
    fn monotony_of_alternating_projects() {
        let mut acc = FiguresAccumulator::new(setup(false));
        // A, B, A, B for 10 s each on one CPU.
        for (i, project) in [0, 1, 0, 1].into_iter().enumerate() {
            let from = 1000.0 + 10.0 * i as f64;
            acc.advance(from, from + 10.0, HostState::UP, &[cpu_job(project, project)]);
        }
        let figures = acc.finish(1040.0);
        // Each project waits twice for 10 s with R growing 0 → 10: ∫R² = 2 × 1000/3.
        let s = (2.0 * 1000.0 / 3.0 / 40.0_f64).sqrt();
        let x = 2.0 * s / (2.0 * 2.0 * 10.0);
        assert!(close(figures.monotony, 1.0 - 1.0 / (x + 1.0)));
    }

    #[test]
    fn monotony_integrates_across_many_short_intervals() {
        let mut whole = FiguresAccumulator::new(setup(false));
        whole.advance(1000.0, 1100.0, HostState::UP, &[cpu_job(0, 0)]);
        let mut pieces = FiguresAccumulator::new(setup(false));
        for i in 0..1000 {
            let from = 1000.0 + 0.1 * f64::from(i);
            pieces.advance(from, from + 0.1, HostState::UP, &[cpu_job(0, 0)]);
        }
        // B never runs: R_B = t − start, ∫R² = 100³/3 either way.
        assert!((whole.finish(1100.0).monotony - pieces.finish(1100.0).monotony).abs() < 1e-12);
    }

    #[test]
    fn rpcs_per_job_counts_successful_rpcs() {
        let mut acc = FiguresAccumulator::new(setup(false));
        for _ in 0..3 {
            acc.rpc(ProjectId(0), true);
        }
        acc.rpc(ProjectId(1), false);
        for _ in 0..4 {
            acc.job_received(ProjectId(0));
        }
        for _ in 0..2 {
            acc.job_received(ProjectId(1));
        }
        acc.job_finished(ProjectId(1));
        let figures = acc.finish(1000.0);
        assert!(close(figures.rpcs_per_job, 3.0 / 12.0));
        assert_eq!(figures.projects["A"].rpcs, 3);
        assert_eq!(figures.projects["B"].rpcs, 0);
        assert_eq!(figures.projects["B"].jobs_received, 2);
        assert_eq!(figures.projects["B"].jobs_done, 1);
    }

    #[test]
    fn compat_counts_cpu_capacity_over_the_whole_time() {
        let run = |boinc_compat: bool| {
            let mut acc = FiguresAccumulator::new(setup(boinc_compat));
            acc.advance(1000.0, 1050.0, HostState::UP, &[cpu_job(0, 0)]);
            acc.advance(1050.0, 1100.0, OFF, &[]);
            acc.finish(1100.0)
        };
        let faithful = run(false);
        let compat = run(true);
        // 50 CPU-seconds used; capacity 2 × 50 (host on) or 2 × 100 (whole time).
        assert!(close(faithful.idle_fraction, 0.5));
        assert!(close(compat.idle_fraction, 0.75));
        // B starves for 100 s; monotony averages over active time, 50 s or 100 s.
        let monotony = |active: f64| {
            // A ran until 1050, then waits 50 s.
            let s_a = (50.0_f64.powi(3) / 3.0 / active).sqrt();
            let s_b = (100.0_f64.powi(3) / 3.0 / active).sqrt();
            let x = (s_a + s_b) / (4.0 * 10.0);
            1.0 - 1.0 / (x + 1.0)
        };
        assert!(close(faithful.monotony, monotony(50.0)));
        assert!(close(compat.monotony, monotony(100.0)));
    }

    #[test]
    fn gpu_value_counts_the_instance_count_twice() {
        let mut setup = setup(false);
        setup.gpus[ResourceType::Nvidia] = Some((2, 1e12));
        let mut acc = FiguresAccumulator::new(setup);
        let gpu_job = RunningUsage {
            project: ProjectId(1),
            job: JobId(0),
            avg_ncpus: 0.5,
            gpu: Some((ResourceType::Nvidia, 1.0)),
        };
        acc.advance(1000.0, 1100.0, HostState::UP, &[gpu_job]);
        acc.advance(1100.0, 1200.0, HostState { gpu_active: false, ..HostState::UP }, &[]);
        acc.job_reported(ProjectId(1), JobId(0), true);
        let figures = acc.finish(1200.0);
        // One instance is worth 0.2 × 1e12 × 2 = 4e11 flops/s.
        let gpu_capacity = 2.0 * 4e11 * 100.0;
        let cpu_capacity = 2.0 * GFLOPS * 200.0;
        let used = 4e11 * 100.0 + 0.5 * GFLOPS * 100.0;
        assert!(close(figures.projects["B"].usage["nvidia"], 0.5));
        assert!(close(figures.projects["B"].usage["cpu"], 0.125));
        assert!(close(figures.projects["A"].usage["nvidia"], 0.0));
        assert!(!figures.projects["A"].usage.contains_key("amd"));
        let total = gpu_capacity + cpu_capacity;
        assert!(close(figures.idle_fraction, (total - used) / total));
        assert!(close(figures.wasted_fraction, used / total));
    }

    #[test]
    fn over_committed_cpus_are_shared_in_proportion() {
        let mut setup = setup(false);
        setup.gpus[ResourceType::Nvidia] = Some((1, 1e12));
        let mut acc = FiguresAccumulator::new(setup);
        let gpu_job = RunningUsage {
            project: ProjectId(1),
            job: JobId(2),
            avg_ncpus: 0.5,
            gpu: Some((ResourceType::Nvidia, 1.0)),
        };
        // 2.5 CPUs committed on 2 for 100 s: each job gets 2/2.5 of what it asked for.
        acc.advance(1000.0, 1100.0, HostState::UP, &[cpu_job(0, 0), cpu_job(0, 1), gpu_job]);
        // Then only the GPU job: nothing to scale.
        acc.advance(1100.0, 1200.0, HostState::UP, &[gpu_job]);
        acc.job_reported(ProjectId(0), JobId(0), true);
        acc.job_reported(ProjectId(1), JobId(2), true);
        let figures = acc.finish(1200.0);
        let cpu_capacity = 2.0 * GFLOPS * 200.0;
        let gpu_capacity = 2e11 * 200.0;
        let used_a = 2.0 * 0.8 * GFLOPS * 100.0;
        let used_b_cpu = 0.4 * GFLOPS * 100.0 + 0.5 * GFLOPS * 100.0;
        assert!(close(figures.projects["A"].usage["cpu"], used_a / cpu_capacity));
        assert!(close(figures.projects["B"].usage["cpu"], used_b_cpu / cpu_capacity));
        assert!(close(figures.projects["B"].usage["nvidia"], 1.0));
        let total = cpu_capacity + gpu_capacity;
        let used = used_a + used_b_cpu + gpu_capacity;
        assert!(close(figures.idle_fraction, (total - used) / total));
        // Wasted: job 0's scaled 80 CPU-seconds, and all of job 2.
        let wasted = 0.8 * GFLOPS * 100.0 + used_b_cpu + gpu_capacity;
        assert!(close(figures.wasted_fraction, wasted / total));
    }

    #[test]
    fn fully_committed_cpus_leave_no_negative_idle() {
        let mut acc = FiguresAccumulator::new(setup(true));
        let wide = RunningUsage { avg_ncpus: 4.0, ..cpu_job(0, 0) };
        acc.advance(1000.0, 1100.0, OFF, &[wide, cpu_job(1, 1)]);
        let figures = acc.finish(1100.0);
        assert_eq!(figures.idle_fraction, 0.0);
        assert!(close(figures.projects["A"].usage["cpu"], 0.8));
        assert!(close(figures.projects["B"].usage["cpu"], 0.2));
    }

    #[test]
    fn gpu_jobs_cpu_fraction_does_not_count_where_cpu_capacity_does_not() {
        let mut setup = setup(false);
        setup.gpus[ResourceType::Nvidia] = Some((1, 1e12));
        let mut acc = FiguresAccumulator::new(setup);
        let gpu_job = RunningUsage {
            project: ProjectId(1),
            job: JobId(0),
            avg_ncpus: 0.5,
            gpu: Some((ResourceType::Nvidia, 1.0)),
        };
        acc.advance(1000.0, 1100.0, HostState::UP, &[gpu_job]);
        // Computing suspended, GPU computing allowed: the GPU job runs on.
        acc.advance(1100.0, 1200.0, HostState { active: false, ..HostState::UP }, &[gpu_job]);
        let figures = acc.finish(1200.0);
        // CPU capacity counts only the first 100 s, and so does the job's CPU fraction.
        assert!(close(figures.projects["B"].usage["cpu"], 0.25));
        assert!(close(figures.projects["B"].usage["nvidia"], 1.0));
        assert!(figures.idle_fraction >= 0.0);
    }

    #[test]
    fn gaps_and_the_tail_count_as_idle() {
        let mut acc = FiguresAccumulator::new(setup(false));
        acc.advance(1050.0, 1100.0, HostState::UP, &[cpu_job(0, 0), cpu_job(1, 1)]);
        // Overlapping the integrated past: only [1100, 1150) counts.
        acc.advance(1090.0, 1150.0, HostState::UP, &[cpu_job(0, 0), cpu_job(1, 1)]);
        let figures = acc.finish(1200.0);
        assert!(close(figures.idle_fraction, 0.5));
        assert!(close(figures.sim_days, 200.0 / 86_400.0));
    }

    #[test]
    fn empty_run_has_finite_figures() {
        let acc = FiguresAccumulator::new(setup(false));
        let figures = acc.finish(1000.0);
        for value in [
            figures.idle_fraction,
            figures.wasted_fraction,
            figures.share_violation,
            figures.monotony,
            figures.rpcs_per_job,
        ] {
            assert_eq!(value, 0.0);
        }
    }
}
