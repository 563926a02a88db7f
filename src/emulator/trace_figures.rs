//! Recomputes the figures of merit (DESIGN.md "Emulator") from an emulator trace alone,
//! independently of the online accumulator in [`super::figures`]: capacity by a sweep over
//! the host's availability changes, usage from each run segment, and each project's
//! starvation R_p from the union of its run segments. The acceptance test
//! compares the two on every scenario.

use super::figures::{FiguresOfMerit, ProjectTotals, RunTotals, gpu_instance_value};
use super::trace::{AvailabilityKind, TraceEvent};
use crate::Time;
use crate::model::{ResourceMap, ResourceType};
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
        totals.push(ProjectTotals {
            name: project.name.clone(),
            share: project.resource_share,
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

/// Sweeps the host's availability changes over [start, end): every process starts up
/// unless an event at or before the start says otherwise.
fn availability_times(events: &[TraceEvent], start: Time, end: Time) -> AvailabilityTimes {
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
    let mut times = AvailabilityTimes::default();
    let mut cursor = start;
    for (time, process, state) in changes {
        if time > cursor {
            let until = time.min(end);
            if until > cursor {
                let dt = until - cursor;
                if up[0] && up[1] {
                    times.computing += dt;
                }
                if up[0] && up[2] {
                    times.gpu_computing += dt;
                }
                cursor = until;
            }
        }
        if time >= end {
            break;
        }
        up[process] = state;
    }
    if end > cursor {
        let dt = end - cursor;
        if up[0] && up[1] {
            times.computing += dt;
        }
        if up[0] && up[2] {
            times.gpu_computing += dt;
        }
    }
    times
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
    let mut job_flops: HashMap<(usize, &str), f64> = HashMap::new();
    let mut run_intervals: Vec<Vec<(Time, Time)>> = vec![Vec::new(); setup.totals.len()];
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
            let index = setup.project("run_segment", project, *start)?;
            let length = segment_end - start;
            let cpu_flops = avg_ncpus * setup.p_fpops * length;
            let totals = &mut setup.totals[index];
            totals.used[ResourceType::Cpu] += cpu_flops;
            let mut flops = cpu_flops;
            if let Some((resource, instances, instance_fraction)) = gpu {
                if !resource.is_gpu() || setup.gpus[*resource].is_none() {
                    return Err(TraceError::UnknownGpu { job: job.clone(), resource: *resource });
                }
                let gpu_flops =
                    instances.len() as f64 * instance_fraction * gpu_value[*resource] * length;
                totals.used[*resource] += gpu_flops;
                flops += gpu_flops;
            }
            *job_flops.entry((index, job.as_str())).or_insert(0.0) += flops;
            if length > 0.0 {
                run_intervals[index].push((*start, *segment_end));
                end = end.max(*segment_end);
            }
        }
    }
    let mut wasted_flops = 0.0;
    for event in events {
        match event {
            TraceEvent::JobReceived { time, project, .. } => {
                let index = setup.project("job_received", project, *time)?;
                setup.totals[index].jobs_received += 1;
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
            TraceEvent::Rpc { time, project, success, .. } => {
                let index = setup.project("rpc", project, *time)?;
                if *success {
                    setup.totals[index].rpcs += 1;
                }
            }
            TraceEvent::Setup { .. }
            | TraceEvent::RunSegment { .. }
            | TraceEvent::Availability { .. } => {}
        }
    }
    for (totals, intervals) in setup.totals.iter_mut().zip(&mut run_intervals) {
        totals.starvation_square_integral = starvation_square_integral(intervals, setup.start, end);
    }
    let duration = (end - setup.start).max(0.0);
    let times = availability_times(events, setup.start, end);
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
    }
    .figures())
}
