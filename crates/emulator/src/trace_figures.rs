//! Recomputes the figures of merit (docs/design.md "Emulator") from an emulator trace alone,
//! independently of the online accumulator in [`super::figures`]: capacity by a sweep over
//! the host's availability changes, usage from each run segment (its CPU part capped, as
//! the accumulator caps it, wherever the segments overlapping it commit more CPUs than
//! count as capacity), and each project's starvation R_p from the union of its run
//! segments. The emulator's acceptance tests compare the two on real scenarios.

use super::figures::{
    FiguresOfMerit, ProjectTotals, RunTotals, cpu_scale, cpus_counted, gpu_instance_value,
};
use super::trace::{AvailabilityKind, DiskEvent, TraceEvent};
use boinc_core::Time;
use boinc_core::model::{ResourceMap, ResourceType};
use std::collections::HashMap;
use thiserror::Error;

/// Why a trace cannot be turned into figures of merit.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum TraceError {
    /// No setup event.
    #[error("the trace has no setup event; pass the whole trace file, starting at its first line")]
    MissingSetup,
    /// More than one setup event.
    #[error("the trace has more than one setup event; pass the trace of a single run")]
    DuplicateSetup,
    /// Two projects with the same name in the setup.
    #[error("the setup lists project `{0}` twice; project names must be unique")]
    DuplicateProject(String),
    /// The setup lists a GPU type twice, or lists the CPU as a GPU.
    #[error("the setup lists GPU type `{0}` twice or as a non-GPU; list each GPU type once")]
    BadGpu(ResourceType),
    /// An event names a project the setup does not list.
    #[error(
        "a {event} event at time {time} names project `{project}`, which the setup does not list; the trace is inconsistent"
    )]
    UnknownProject {
        /// Which kind of event.
        event: &'static str,
        /// Project named.
        project: String,
        /// Its time.
        time: Time,
    },
    /// A run segment on a GPU type the host does not have.
    #[error(
        "job `{job}` ran on GPU type `{resource}`, which the setup does not list; the trace is inconsistent"
    )]
    UnknownGpu {
        /// The job.
        job: String,
        /// The GPU type.
        resource: ResourceType,
    },
    /// A run segment with non-finite times or ending before it starts.
    #[error(
        "job `{job}` has a run segment from {start} to {end}; segments must have finite times with end ≥ start"
    )]
    BadSegment {
        /// The job.
        job: String,
        /// Its start.
        start: Time,
        /// Its end.
        end: Time,
    },
}

/// The setup's facts the replay needs.
struct Setup<'a> {
    boinc_compat: bool,
    start: Time,
    end: Time,
    ncpus: u32,
    p_fpops: f64,
    gpus: ResourceMap<Option<(u32, f64)>>,
    projects: HashMap<&'a str, usize>,
    totals: Vec<ProjectTotals>,
    scheduling_period: f64,
}

fn read_setup(events: &[TraceEvent]) -> Result<Setup<'_>, TraceError> {
    let mut setups = events.iter().filter_map(|event| match event {
        TraceEvent::Setup {
            boinc_compat,
            start,
            end,
            ncpus,
            p_fpops,
            gpus,
            projects,
            scheduling_period,
            ..
        } => Some((boinc_compat, start, end, ncpus, p_fpops, gpus, projects, scheduling_period)),
        _ => None,
    });
    let (boinc_compat, start, end, ncpus, p_fpops, gpus, projects, scheduling_period) =
        setups.next().ok_or(TraceError::MissingSetup)?;
    if setups.next().is_some() {
        return Err(TraceError::DuplicateSetup);
    }
    let mut gpu_map: ResourceMap<Option<(u32, f64)>> = ResourceMap::default();
    for gpu in gpus {
        if !gpu.resource.is_gpu() || gpu_map[gpu.resource].is_some() {
            return Err(TraceError::BadGpu(gpu.resource));
        }
        gpu_map[gpu.resource] = Some((gpu.count, gpu.peak_flops));
    }
    let mut index = HashMap::with_capacity(projects.len());
    let mut totals = Vec::with_capacity(projects.len());
    for project in projects {
        if index.insert(project.name.as_str(), totals.len()).is_some() {
            return Err(TraceError::DuplicateProject(project.name.clone()));
        }
        // A trace that does not list the devices counts every device as one the project
        // has apps for (the fair-share violation is then BOINC's share violation).
        let devices = match &project.devices {
            Some(list) => ResourceMap::from_fn(|r| list.contains(&r)),
            None => ResourceMap::from_fn(|_| true),
        };
        totals.push(ProjectTotals {
            name: project.name.clone(),
            share: project.resource_share,
            devices,
            ..ProjectTotals::default()
        });
    }
    Ok(Setup {
        boinc_compat: *boinc_compat,
        start: *start,
        end: *end,
        ncpus: *ncpus,
        p_fpops: *p_fpops,
        gpus: gpu_map,
        projects: index,
        totals,
        scheduling_period: *scheduling_period,
    })
}

impl Setup<'_> {
    fn project(&self, event: &'static str, project: &str, time: Time) -> Result<usize, TraceError> {
        self.projects.get(project).copied().ok_or_else(|| TraceError::UnknownProject {
            event,
            project: project.to_string(),
            time,
        })
    }
}

/// Time spent in each availability condition the capacity depends on.
#[derive(Debug, Default)]
struct AvailabilityTimes {
    computing: f64,
    gpu_computing: f64,
}

/// The host's state (on, computing allowed, GPU computing allowed) from each time on:
/// the first entry is the state at `start` (every process starts up unless an event at
/// or before the start says otherwise), then one entry per change before `end`.
fn host_states(events: &[TraceEvent], start: Time, end: Time) -> Vec<(Time, [bool; 3])> {
    // (time, process, up) with process 0 = host on, 1 = computing, 2 = GPU computing.
    let mut changes: Vec<(Time, usize, bool)> = events
        .iter()
        .filter_map(|event| match event {
            TraceEvent::Availability { time, what, up } => {
                let process = match what {
                    AvailabilityKind::HostOn => 0,
                    AvailabilityKind::Active => 1,
                    AvailabilityKind::GpuActive => 2,
                    AvailabilityKind::Connected | AvailabilityKind::ProjectUp { .. } => {
                        return None;
                    }
                };
                Some((*time, process, *up))
            }
            _ => None,
        })
        .collect();
    // Stable: simultaneous changes of one process apply in trace order, the last winning.
    changes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut up = [true; 3];
    let mut states = vec![(start, up)];
    for (time, process, state) in changes {
        if time >= end {
            break;
        }
        up[process] = state;
        let at = time.max(start);
        match states.last_mut() {
            Some(last) if last.0 == at => last.1 = up,
            _ => states.push((at, up)),
        }
    }
    states
}

/// Time the host spent computing and GPU computing over [start, end).
fn availability_times(states: &[(Time, [bool; 3])], end: Time) -> AvailabilityTimes {
    let mut times = AvailabilityTimes::default();
    for (index, &(from, up)) in states.iter().enumerate() {
        let to = states.get(index + 1).map_or(end, |next| next.0);
        if to > from {
            let dt = to - from;
            if up[0] && up[1] {
                times.computing += dt;
            }
            if up[0] && up[2] {
                times.gpu_computing += dt;
            }
        }
    }
    times
}

/// The CPU time that over-committed intervals take back from running jobs (see
/// [`cpu_scale`]): `deficit_at(t)` = ∫ from the start to t of (1 − scale), so a segment
/// that ran from a to b counts `(b − a) − (deficit_at(b) − deficit_at(a))` seconds of its
/// CPUs. Where no interval is over-committed the deficit is exactly 0 and segment
/// lengths are untouched.
struct CpuDeficit {
    /// Every segment boundary and host change, ascending.
    times: Vec<Time>,
    /// The deficit at each of `times`.
    deficit: Vec<f64>,
}

impl CpuDeficit {
    /// Sweeps the CPU-occupying segments `(start, end, avg_ncpus)` against the host's
    /// states.
    fn new(
        segments: &[(Time, Time, f64)],
        states: &[(Time, [bool; 3])],
        ncpus: u32,
        boinc_compat: bool,
    ) -> Self {
        // (time, change of CPUs used, change of open segments, new host state)
        let mut points: Vec<(Time, f64, i64, Option<[bool; 3]>)> =
            Vec::with_capacity(2 * segments.len() + states.len());
        for &(start, end, avg_ncpus) in segments {
            points.push((start, avg_ncpus, 1, None));
            points.push((end, -avg_ncpus, -1, None));
        }
        points.extend(states.iter().map(|&(time, up)| (time, 0.0, 0, Some(up))));
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut times = Vec::with_capacity(points.len());
        let mut deficit = Vec::with_capacity(points.len());
        let mut cpus_used = 0.0;
        let mut open = 0i64;
        let mut up = [true; 3];
        let mut total = 0.0;
        let mut index = 0;
        while index < points.len() {
            let now = points[index].0;
            while index < points.len() && points[index].0 == now {
                let (_, used, opened, state) = points[index];
                cpus_used += used;
                open += opened;
                if let Some(state) = state {
                    up = state;
                }
                index += 1;
            }
            // Rounding in the running sum must not leave phantom usage behind.
            if open == 0 {
                cpus_used = 0.0;
            }
            times.push(now);
            deficit.push(total);
            if let Some(&(next, ..)) = points.get(index) {
                let counted = cpus_counted(ncpus, boinc_compat, up[0], up[1]);
                total += (1.0 - cpu_scale(cpus_used, counted)) * (next - now);
            }
        }
        CpuDeficit { times, deficit }
    }

    fn deficit_at(&self, time: Time) -> f64 {
        let index = self.times.partition_point(|&t| t < time);
        self.deficit.get(index).copied().unwrap_or(0.0)
    }

    /// Seconds of its CPUs a segment from `start` to `end` counts.
    fn effective_length(&self, start: Time, end: Time) -> f64 {
        let taken = self.deficit_at(end) - self.deficit_at(start);
        if taken > 0.0 { (end - start) - taken } else { end - start }
    }
}

/// ∫ R² over a project's run: R grows from 0 (from the start if it never ran) in every
/// gap between the union of its run intervals.
fn starvation_square_integral(intervals: &mut [(Time, Time)], start: Time, end: Time) -> f64 {
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut last_running = start;
    let mut integral = 0.0;
    for &(from, to) in intervals.iter() {
        if from > last_running {
            let gap = from.min(end) - last_running;
            if gap > 0.0 {
                integral += gap * gap * gap / 3.0;
            }
        }
        last_running = last_running.max(to);
    }
    if end > last_running {
        let gap = end - last_running;
        integral += gap * gap * gap / 3.0;
    }
    integral
}

/// The figures of merit of the run the trace records (`wall_seconds` = 0).
pub fn figures_from_trace(events: &[TraceEvent]) -> Result<FiguresOfMerit, TraceError> {
    let mut setup = read_setup(events)?;
    let gpu_value =
        setup.gpus.map(|_, gpu| gpu.map_or(0.0, |(count, peak)| gpu_instance_value(count, peak)));
    let mut end = setup.end;
    // First pass: check the segments and find where the run ends and what occupied CPUs.
    let mut cpu_segments = Vec::new();
    for event in events {
        if let TraceEvent::RunSegment { job, project, start, end: segment_end, avg_ncpus, gpu } =
            event
        {
            if !start.is_finite() || !segment_end.is_finite() || segment_end < start {
                return Err(TraceError::BadSegment {
                    job: job.clone(),
                    start: *start,
                    end: *segment_end,
                });
            }
            setup.project("run_segment", project, *start)?;
            if let Some((resource, ..)) = gpu
                && (!resource.is_gpu() || setup.gpus[*resource].is_none())
            {
                return Err(TraceError::UnknownGpu { job: job.clone(), resource: *resource });
            }
            if segment_end > start {
                end = end.max(*segment_end);
                if *avg_ncpus > 0.0 {
                    cpu_segments.push((*start, *segment_end, *avg_ncpus));
                }
            }
        }
    }
    let states = host_states(events, setup.start, end);
    let cpu_deficit = CpuDeficit::new(&cpu_segments, &states, setup.ncpus, setup.boinc_compat);
    let mut job_flops: HashMap<(usize, &str), f64> = HashMap::new();
    let mut run_intervals: Vec<Vec<(Time, Time)>> = vec![Vec::new(); setup.totals.len()];
    for event in events {
        if let TraceEvent::RunSegment { job, project, start, end: segment_end, avg_ncpus, gpu } =
            event
        {
            let index = setup.project("run_segment", project, *start)?;
            let length = segment_end - start;
            let cpu_flops = if *avg_ncpus > 0.0 && length > 0.0 {
                avg_ncpus * setup.p_fpops * cpu_deficit.effective_length(*start, *segment_end)
            } else {
                avg_ncpus * setup.p_fpops * length
            };
            let totals = &mut setup.totals[index];
            totals.used[ResourceType::Cpu] += cpu_flops;
            let mut flops = cpu_flops;
            let mut job_device = ResourceType::Cpu;
            if let Some((resource, instances, instance_fraction)) = gpu {
                let gpu_flops =
                    instances.len() as f64 * instance_fraction * gpu_value[*resource] * length;
                totals.used[*resource] += gpu_flops;
                flops += gpu_flops;
                job_device = *resource;
            }
            totals.used_by_job_device[job_device] += flops;
            *job_flops.entry((index, job.as_str())).or_insert(0.0) += flops;
            if length > 0.0 {
                run_intervals[index].push((*start, *segment_end));
            }
        }
    }
    let mut wasted_flops = 0.0;
    let mut disk = false;
    for event in events {
        match event {
            // Jobs received are those scheduler replies brought, as the RPC events count
            // them: the scenario's own jobs also appear as received at the start, but no
            // server sent them.
            TraceEvent::JobReceived { time, project, .. } => {
                setup.project("job_received", project, *time)?;
            }
            TraceEvent::JobFinished { time, project, .. } => {
                let index = setup.project("job_finished", project, *time)?;
                setup.totals[index].jobs_done += 1;
            }
            TraceEvent::JobReported { time, project, job, missed, .. } => {
                let index = setup.project("job_reported", project, *time)?;
                if *missed {
                    setup.totals[index].deadlines_missed += 1;
                    wasted_flops += job_flops.get(&(index, job.as_str())).copied().unwrap_or(0.0);
                }
            }
            TraceEvent::Rpc { time, project, success, jobs_received, .. } => {
                let index = setup.project("rpc", project, *time)?;
                if *success {
                    setup.totals[index].rpcs += 1;
                    setup.totals[index].jobs_received += jobs_received;
                }
            }
            TraceEvent::Disk { time, what } => match what {
                DiskEvent::Limits { .. } => disk = true,
                DiskEvent::FileDeleted { project, .. } => {
                    let index = setup.project("disk", project, *time)?;
                    setup.totals[index].files_deleted += 1;
                }
                DiskEvent::Violation { project, .. } => {
                    let index = setup.project("disk", project, *time)?;
                    setup.totals[index].disk_violations += 1;
                }
                DiskEvent::Usage { .. } | DiskEvent::Suspended { .. } => {}
            },
            TraceEvent::Setup { .. }
            | TraceEvent::RunSegment { .. }
            | TraceEvent::Preempted { .. }
            | TraceEvent::Availability { .. } => {}
        }
    }
    for (totals, intervals) in setup.totals.iter_mut().zip(&mut run_intervals) {
        totals.starvation_square_integral = starvation_square_integral(intervals, setup.start, end);
    }
    let duration = (end - setup.start).max(0.0);
    let times = availability_times(&states, end);
    let cpu_time = if setup.boinc_compat { duration } else { times.computing };
    let mut capacity = ResourceMap::default();
    let mut present = ResourceMap::default();
    capacity[ResourceType::Cpu] = f64::from(setup.ncpus) * setup.p_fpops * cpu_time;
    present[ResourceType::Cpu] = true;
    for resource in ResourceType::GPUS {
        if let Some((count, _)) = setup.gpus[resource] {
            present[resource] = true;
            capacity[resource] = f64::from(count) * gpu_value[resource] * times.gpu_computing;
        }
    }
    Ok(RunTotals {
        duration,
        present,
        capacity,
        active_time: cpu_time,
        scheduling_period: setup.scheduling_period,
        wasted_flops,
        projects: setup.totals,
        disk,
    }
    .figures())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::figures::{
        FiguresAccumulator, FiguresProject, FiguresSetup, HostState, RunningUsage,
    };
    use crate::trace::{TraceGpu, TraceProject};
    use boinc_core::Policy;
    use boinc_core::model::{JobId, ProjectId};
    use proptest::prelude::*;

    /// One run segment of a synthetic run.
    #[derive(Debug, Clone)]
    pub(crate) struct Segment {
        pub project: u32,
        pub job: u32,
        pub start: Time,
        pub end: Time,
        pub avg_ncpus: f64,
        pub gpu: Option<(ResourceType, Vec<u32>, f64)>,
    }

    /// A run described once and fed both to the accumulator (as the event loop would)
    /// and, as a trace, to the replay.
    #[derive(Debug, Clone)]
    pub(crate) struct SyntheticRun {
        pub ncpus: u32,
        pub gpus: Vec<TraceGpu>,
        pub shares: Vec<f64>,
        pub boinc_compat: bool,
        pub start: Time,
        pub end: Time,
        pub segments: Vec<Segment>,
        /// (time, process 0 = on / 1 = active / 2 = GPU active, up)
        pub availability: Vec<(Time, u8, bool)>,
        /// (project, job, missed), reported at the end of the job's last segment.
        pub reported: Vec<(u32, u32, bool)>,
        /// (project, success)
        pub rpcs: Vec<(u32, bool)>,
        pub received: Vec<u32>,
    }

    const P_FPOPS: f64 = 3e9;
    const PERIOD: f64 = 3600.0;

    fn job_name(job: u32) -> String {
        format!("job_{job}")
    }

    fn project_name(project: u32) -> String {
        format!("P<{project}>&")
    }

    impl SyntheticRun {
        /// Host state over [at, next boundary): events at or before `at` applied in order.
        fn host_at(&self, at: Time) -> HostState {
            let mut up = [true; 3];
            let mut changes = self.availability.clone();
            changes.sort_by(|a, b| a.0.total_cmp(&b.0));
            for (time, process, state) in changes {
                if time <= at {
                    up[usize::from(process)] = state;
                }
            }
            HostState { on: up[0], active: up[1], gpu_active: up[2] }
        }

        pub(crate) fn trace(&self) -> Vec<TraceEvent> {
            let mut events = vec![TraceEvent::Setup {
                scenario: "synthetic".to_string(),
                policy: Policy::Rec,
                seed: 1,
                boinc_compat: self.boinc_compat,
                start: self.start,
                end: self.end,
                ncpus: self.ncpus,
                p_fpops: P_FPOPS,
                gpus: self.gpus.clone(),
                projects: self
                    .shares
                    .iter()
                    .enumerate()
                    .map(|(i, &share)| TraceProject {
                        name: project_name(i as u32),
                        resource_share: share,
                        // Odd projects list only the CPU; even ones list nothing, as
                        // older traces do, and so count every device.
                        devices: (i % 2 == 1).then(|| vec![ResourceType::Cpu]),
                    })
                    .collect(),
                scheduling_period: PERIOD,
            }];
            for &project in &self.received {
                events.push(TraceEvent::JobReceived {
                    time: self.start,
                    job: "some job".to_string(),
                    project: project_name(project),
                    app: "app".to_string(),
                    avg_ncpus: 1.0,
                    coprocessor: None,
                    flops: 1e12,
                    fpops_est: 1e12,
                    deadline: self.end,
                });
            }
            for &(time, process, up) in &self.availability {
                let what = match process {
                    0 => AvailabilityKind::HostOn,
                    1 => AvailabilityKind::Active,
                    _ => AvailabilityKind::GpuActive,
                };
                events.push(TraceEvent::Availability { time, what, up });
                events.push(TraceEvent::Availability {
                    time,
                    what: AvailabilityKind::Connected,
                    up: !up,
                });
            }
            for segment in &self.segments {
                events.push(TraceEvent::RunSegment {
                    job: job_name(segment.job),
                    project: project_name(segment.project),
                    start: segment.start,
                    end: segment.end,
                    avg_ncpus: segment.avg_ncpus,
                    gpu: segment.gpu.clone(),
                });
                events.push(TraceEvent::JobFinished {
                    time: segment.end,
                    job: job_name(segment.job),
                    project: project_name(segment.project),
                });
            }
            for &(project, job, missed) in &self.reported {
                events.push(TraceEvent::JobReported {
                    time: self.end,
                    job: job_name(job),
                    project: project_name(project),
                    deadline: self.end,
                    missed,
                });
            }
            let rpc = |project: u32, success: bool, jobs_received: u32| TraceEvent::Rpc {
                time: self.start,
                project: project_name(project),
                success,
                req_seconds: ResourceMap::default(),
                req_ninstances: ResourceMap::default(),
                reported: 0,
                jobs_received,
                no_work_because_of_deadlines: false,
            };
            for &(project, success) in &self.rpcs {
                events.push(rpc(project, success, 0));
            }
            for (project, count) in self.receipts() {
                events.push(rpc(project, true, count));
            }
            // A job the scenario already held: in the trace, not received from a server.
            events.push(TraceEvent::JobReceived {
                time: self.start,
                job: "existing job".to_string(),
                project: project_name(0),
                app: "app".to_string(),
                avg_ncpus: 1.0,
                coprocessor: None,
                flops: 1e12,
                fpops_est: 1e12,
                deadline: self.end,
            });
            events
        }

        /// Jobs received per project, each project's arriving in one successful RPC.
        fn receipts(&self) -> Vec<(u32, u32)> {
            let mut counts = std::collections::BTreeMap::new();
            for &project in &self.received {
                *counts.entry(project).or_insert(0) += 1;
            }
            counts.into_iter().collect()
        }

        /// Feeds the accumulator interval by interval, as the event loop does.
        pub(crate) fn accumulate(&self) -> FiguresOfMerit {
            let mut gpus = ResourceMap::default();
            for gpu in &self.gpus {
                gpus[gpu.resource] = Some((gpu.count, gpu.peak_flops));
            }
            let mut acc = FiguresAccumulator::new(FiguresSetup {
                ncpus: self.ncpus,
                p_fpops: P_FPOPS,
                gpus,
                projects: self
                    .shares
                    .iter()
                    .enumerate()
                    .map(|(i, &share)| FiguresProject {
                        name: project_name(i as u32),
                        share,
                        devices: ResourceMap::from_fn(|r| i % 2 == 0 || r == ResourceType::Cpu),
                    })
                    .collect(),
                scheduling_period: PERIOD,
                boinc_compat: self.boinc_compat,
                start: self.start,
            });
            let mut boundaries = vec![self.start, self.end];
            boundaries.extend(self.segments.iter().flat_map(|s| [s.start, s.end]));
            boundaries.extend(self.availability.iter().map(|a| a.0));
            boundaries.retain(|&t| t >= self.start && t <= self.end);
            boundaries.sort_by(f64::total_cmp);
            boundaries.dedup();
            let mut running = Vec::new();
            for pair in boundaries.windows(2) {
                let (from, to) = (pair[0], pair[1]);
                running.clear();
                running.extend(
                    self.segments.iter().filter(|s| s.start <= from && s.end >= to).map(|s| {
                        RunningUsage {
                            project: ProjectId(s.project),
                            job: JobId(s.job),
                            avg_ncpus: s.avg_ncpus,
                            gpu: s.gpu.as_ref().map(|(r, instances, fraction)| {
                                (*r, instances.len() as f64 * fraction)
                            }),
                        }
                    }),
                );
                acc.advance(from, to, self.host_at(from), &running);
            }
            for &project in &self.received {
                acc.job_received(ProjectId(project));
            }
            for segment in &self.segments {
                acc.job_finished(ProjectId(segment.project));
            }
            for &(project, job, missed) in &self.reported {
                acc.job_reported(ProjectId(project), JobId(job), missed);
            }
            for &(project, success) in &self.rpcs {
                acc.rpc(ProjectId(project), success);
            }
            for (project, _) in self.receipts() {
                acc.rpc(ProjectId(project), true);
            }
            acc.finish(self.end)
        }

        /// The parts of [start, end) during which `allowed` holds for the host.
        fn allowed_intervals(&self, allowed: impl Fn(HostState) -> bool) -> Vec<(Time, Time)> {
            let mut cuts: Vec<Time> = self.availability.iter().map(|a| a.0).collect();
            cuts.extend([self.start, self.end]);
            cuts.retain(|&t| t >= self.start && t <= self.end);
            cuts.sort_by(f64::total_cmp);
            cuts.dedup();
            cuts.windows(2)
                .filter(|pair| allowed(self.host_at(pair[0])))
                .map(|pair| (pair[0], pair[1]))
                .collect()
        }

        /// Cuts every segment to the times its resources could compute, as the engine
        /// runs it: CPU jobs while computing is allowed (always under `boinc_compat`),
        /// GPU jobs while GPU computing is, even where CPU capacity does not count.
        pub(crate) fn respect_availability(&mut self) {
            let compat = self.boinc_compat;
            let cpu = self.allowed_intervals(|h| compat || (h.on && h.active));
            let gpu = self.allowed_intervals(|h| h.on && h.gpu_active);
            let mut clipped = Vec::new();
            for segment in self.segments.drain(..) {
                let allowed = if segment.gpu.is_some() { &gpu } else { &cpu };
                for &(from, to) in allowed {
                    let (start, end) = (segment.start.max(from), segment.end.min(to));
                    if end > start {
                        clipped.push(Segment { start, end, ..segment.clone() });
                    }
                }
            }
            self.segments = clipped;
        }
    }

    pub(crate) fn assert_agree(a: &FiguresOfMerit, b: &FiguresOfMerit) {
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * x.abs().max(y.abs()) + 1e-12;
        let pairs = [
            ("idle", a.idle_fraction, b.idle_fraction),
            ("wasted", a.wasted_fraction, b.wasted_fraction),
            ("share violation", a.share_violation, b.share_violation),
            ("fair-share violation", a.fair_share_violation, b.fair_share_violation),
            ("monotony", a.monotony, b.monotony),
            ("rpcs per job", a.rpcs_per_job, b.rpcs_per_job),
            ("sim days", a.sim_days, b.sim_days),
        ];
        for (name, x, y) in pairs {
            assert!(close(x, y), "{name}: {x} vs {y}");
        }
        assert_eq!(a.projects.len(), b.projects.len());
        for ((name, p), (other_name, q)) in a.projects.iter().zip(&b.projects) {
            assert_eq!(name, other_name);
            assert_eq!(p.usage.keys().collect::<Vec<_>>(), q.usage.keys().collect::<Vec<_>>());
            for (resource, &x) in &p.usage {
                assert!(
                    close(x, q.usage[resource]),
                    "{name} {resource}: {x} vs {}",
                    q.usage[resource]
                );
            }
            assert!(close(p.fair_share, q.fair_share), "{name} fair share");
            assert!(close(p.processing_share, q.processing_share), "{name} processing share");
            assert_eq!(
                (p.jobs_done, p.deadlines_missed, p.jobs_received, p.rpcs),
                (q.jobs_done, q.deadlines_missed, q.jobs_received, q.rpcs)
            );
            assert_eq!((p.disk_violations, p.files_deleted), (q.disk_violations, q.files_deleted));
        }
    }

    fn hand_built_run(boinc_compat: bool) -> SyntheticRun {
        let gpu =
            |instance: u32, fraction: f64| Some((ResourceType::Nvidia, vec![instance], fraction));
        let mut run = SyntheticRun {
            ncpus: 2,
            gpus: vec![TraceGpu { resource: ResourceType::Nvidia, count: 2, peak_flops: 5e12 }],
            shares: vec![100.0, 50.0, 50.0],
            boinc_compat,
            start: 1.7e9,
            end: 1.7e9 + 86_400.0,
            segments: Vec::new(),
            availability: vec![
                (1.7e9, 2, false),
                (1.7e9 + 3600.0, 2, true),
                (1.7e9 + 20_000.0, 0, false),
                (1.7e9 + 30_000.0, 0, true),
                (1.7e9 + 50_000.0, 1, false),
                (1.7e9 + 52_000.0, 1, true),
            ],
            reported: vec![(0, 1, true), (1, 2, false), (2, 5, true)],
            rpcs: vec![(0, true), (1, true), (1, false), (2, true)],
            received: vec![0, 0, 1, 2, 2, 2],
        };
        let t = |s: f64| 1.7e9 + s;
        let segments = [
            (0, 1, 0.0, 40_000.0, 1.0, None),
            (1, 2, 0.0, 10_000.0, 1.0, None),
            (2, 3, 10_000.0, 80_000.0, 1.0, None),
            (0, 4, 40_000.0, 86_400.0, 1.0, None),
            (2, 5, 0.0, 60_000.0, 0.25, gpu(0, 1.0)),
            (1, 6, 5000.0, 9000.0, 0.1, gpu(1, 0.5)),
            (1, 7, 5000.0, 70_000.0, 0.1, gpu(1, 0.5)),
        ];
        run.segments = segments
            .into_iter()
            .map(|(project, job, start, end, avg_ncpus, gpu)| Segment {
                project,
                job,
                start: t(start),
                end: t(end),
                avg_ncpus,
                gpu,
            })
            .collect();
        run.respect_availability();
        run
    }

    #[test]
    fn replay_agrees_with_the_accumulator_on_a_synthetic_run() {
        for boinc_compat in [false, true] {
            let run = hand_built_run(boinc_compat);
            let replayed = figures_from_trace(&run.trace()).expect("consistent trace");
            let accumulated = run.accumulate();
            assert_agree(&replayed, &accumulated);
            assert!(replayed.wasted_fraction > 0.0);
            assert!(replayed.idle_fraction > 0.0 && replayed.idle_fraction < 1.0);
            assert_eq!(replayed.projects["P<0>&"].deadlines_missed, 1);
            assert_eq!(replayed.projects["P<2>&"].jobs_received, 3);
            assert!(replayed.projects["P<1>&"].usage["nvidia"] > 0.0);
        }
        let faithful = figures_from_trace(&hand_built_run(false).trace()).expect("trace");
        let compat = figures_from_trace(&hand_built_run(true).trace()).expect("trace");
        assert_ne!(faithful.idle_fraction, compat.idle_fraction);
    }

    #[test]
    fn availability_at_the_start_overrides_the_default() {
        let mut run = hand_built_run(false);
        run.segments.clear();
        run.availability = vec![(run.start, 0, false), (run.start + 43_200.0, 0, true)];
        let figures = figures_from_trace(&run.trace()).expect("trace");
        assert_agree(&figures, &run.accumulate());
        assert_eq!(figures.idle_fraction, 1.0);
        // Host on for half the day: the monotony averages the starvation over 43,200 s.
        let s = (86_400.0_f64.powi(3) / 3.0 / 43_200.0).sqrt();
        let x = 3.0 * s / (9.0 * PERIOD);
        assert!((figures.monotony - (1.0 - 1.0 / (x + 1.0))).abs() < 1e-12);
    }

    #[test]
    fn inconsistent_traces_are_rejected() {
        let run = hand_built_run(false);
        let events = run.trace();
        assert_eq!(figures_from_trace(&events[1..]), Err(TraceError::MissingSetup));
        let mut twice = events.clone();
        twice.push(events[0].clone());
        assert_eq!(figures_from_trace(&twice), Err(TraceError::DuplicateSetup));
        let mut unknown = events.clone();
        unknown.push(TraceEvent::RunSegment {
            job: "x".to_string(),
            project: "nobody".to_string(),
            start: run.start,
            end: run.end,
            avg_ncpus: 1.0,
            gpu: None,
        });
        assert!(matches!(
            figures_from_trace(&unknown),
            Err(TraceError::UnknownProject { event: "run_segment", .. })
        ));
        let mut backwards = events.clone();
        backwards.push(TraceEvent::RunSegment {
            job: "x".to_string(),
            project: project_name(0),
            start: run.end,
            end: run.start,
            avg_ncpus: 1.0,
            gpu: None,
        });
        assert!(matches!(figures_from_trace(&backwards), Err(TraceError::BadSegment { .. })));
        let mut amd = events.clone();
        amd.push(TraceEvent::RunSegment {
            job: "x".to_string(),
            project: project_name(0),
            start: run.start,
            end: run.end,
            avg_ncpus: 1.0,
            gpu: Some((ResourceType::Amd, vec![0], 1.0)),
        });
        assert!(matches!(figures_from_trace(&amd), Err(TraceError::UnknownGpu { .. })));
        let mut rpc = events;
        rpc.push(TraceEvent::Rpc {
            time: run.start,
            project: "nobody".to_string(),
            success: true,
            req_seconds: ResourceMap::default(),
            req_ninstances: ResourceMap::default(),
            reported: 0,
            jobs_received: 0,
            no_work_because_of_deadlines: false,
        });
        let error = figures_from_trace(&rpc).expect_err("unknown project");
        assert!(error.to_string().contains("nobody"));
    }

    /// (gap before, length, project, fraction of the instance) per segment of one lane.
    fn lane() -> impl Strategy<Value = Vec<(f64, f64, u32, f64)>> {
        prop::collection::vec((0.0..300.0, 0.0..400.0, 0u32..3, 0.05..=1.0), 0..6)
    }

    prop_compose! {
        fn synthetic_run()(
            ncpus in 1u32..=3,
            nprojects in 1u32..=3,
            gpu_count in 0u32..=2,
            boinc_compat in any::<bool>(),
            cpu_lanes in prop::collection::vec(lane(), 3),
            gpu_lanes in prop::collection::vec(lane(), 2),
            availability in prop::collection::vec((0.0..2000.0, 0u8..3, any::<bool>()), 0..8),
            shares in prop::collection::vec(1.0..100.0, 3),
            missed in prop::collection::vec(any::<bool>(), 40),
            rpcs in prop::collection::vec((0u32..3, any::<bool>()), 0..10),
            received in prop::collection::vec(0u32..3, 0..10),
        ) -> SyntheticRun {
            let start = 1.0e6;
            let mut segments = Vec::new();
            let lanes = cpu_lanes.iter().take(ncpus as usize).map(|l| (l, None))
                .chain(gpu_lanes.iter().take(gpu_count as usize).enumerate().map(|(i, l)| (l, Some(i as u32))));
            for (lane, instance) in lanes {
                let mut cursor = start;
                for &(gap, length, project, fraction) in lane {
                    let segment_start = cursor + gap;
                    cursor = segment_start + length;
                    let job = segments.len() as u32;
                    segments.push(Segment {
                        project: project % nprojects,
                        job,
                        start: segment_start,
                        end: cursor,
                        // GPU jobs take a CPU fraction too, so CPUs can be over-committed.
                        avg_ncpus: if instance.is_some() { fraction / 2.0 } else { fraction },
                        gpu: instance.map(|i| (ResourceType::Nvidia, vec![i], fraction)),
                    });
                }
            }
            let reported = segments
                .iter()
                .zip(&missed)
                .map(|(s, &missed)| (s.project, s.job, missed))
                .collect();
            let gpus = if gpu_count > 0 {
                vec![TraceGpu { resource: ResourceType::Nvidia, count: gpu_count, peak_flops: 2e12 }]
            } else {
                Vec::new()
            };
            let mut run = SyntheticRun {
                ncpus,
                gpus,
                shares: shares[..nprojects as usize].to_vec(),
                boinc_compat,
                start,
                end: start + 2000.0,
                segments,
                availability: availability.into_iter().map(|(t, p, up)| (start + t, p, up)).collect(),
                reported,
                rpcs: rpcs.into_iter().map(|(p, ok)| (p % nprojects, ok)).collect(),
                received: received.into_iter().map(|p| p % nprojects).collect(),
            };
            run.respect_availability();
            run
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn replay_and_accumulator_agree(run in synthetic_run()) {
            let replayed = figures_from_trace(&run.trace()).expect("consistent trace");
            let accumulated = run.accumulate();
            assert_agree(&replayed, &accumulated);
            let tolerance = 1e-9;
            for fraction in [replayed.idle_fraction, replayed.wasted_fraction, replayed.monotony] {
                prop_assert!((-tolerance..=1.0 + tolerance).contains(&fraction), "{fraction}");
            }
            prop_assert!(replayed.wasted_fraction <= 1.0 - replayed.idle_fraction + tolerance);
            // Both are at most 2 (all of the use where none is owed); a run at that bound
            // rounds a last bit over it.
            for violation in [replayed.share_violation, replayed.fair_share_violation] {
                prop_assert!((0.0..=2.0 + tolerance).contains(&violation), "{violation}");
            }
            for project in replayed.projects.values() {
                for &usage in project.usage.values() {
                    prop_assert!((-tolerance..=1.0 + tolerance).contains(&usage), "{usage}");
                }
            }
        }
    }
}
