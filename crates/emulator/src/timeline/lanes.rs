//! Laying the trace's run segments out on lanes: CPU fractions packed first-fit, GPU
//! segments on the instances the trace names, a job continuing where it stopped kept on
//! its lanes, and each deadline miss placed on its job's last lane.

use super::availability_shading::suspended_intervals;
use crate::trace::{TraceEvent, TraceGpu};
use boinc_core::Time;
use boinc_core::model::ResourceType;
use std::collections::HashMap;

/// Fractions of an instance below this are rounding noise, not occupancy.
pub(super) const EPSILON: f64 = 1e-6;

/// One bar on a lane: part of a segment, `offset` and `height` in fractions of the lane.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Bar {
    pub(super) lane: usize,
    pub(super) offset: f64,
    pub(super) height: f64,
    pub(super) start: Time,
    pub(super) end: Time,
    pub(super) project: usize,
    pub(super) job: usize,
}

/// What is occupying a lane now: (end, offset, height).
pub(super) type Occupant = (Time, f64, f64);

/// Fits `wanted` of a lane's height into its free vertical slots, lowest first; returns
/// the (offset, height) pieces taken.
pub(super) fn fit_in_lane(
    occupants: &mut Vec<Occupant>,
    end: Time,
    wanted: f64,
) -> Vec<(f64, f64)> {
    occupants.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut pieces = Vec::new();
    let mut remaining = wanted;
    let mut cursor = 0.0;
    let mut free = Vec::new();
    for &(_, offset, height) in occupants.iter() {
        if offset > cursor + EPSILON {
            free.push((cursor, offset - cursor));
        }
        cursor = f64::max(cursor, offset + height);
    }
    if cursor < 1.0 - EPSILON {
        free.push((cursor, 1.0 - cursor));
    }
    for (offset, size) in free {
        if remaining <= EPSILON {
            break;
        }
        let take = size.min(remaining);
        pieces.push((offset, take));
        occupants.push((end, offset, take));
        remaining -= take;
    }
    pieces
}

pub(super) struct Lane {
    pub(super) label: String,
    pub(super) gpu: bool,
}

/// The run as the timeline needs it.
pub(super) struct Layout<'a> {
    pub(super) title: String,
    pub(super) start: Time,
    pub(super) end: Time,
    pub(super) lanes: Vec<Lane>,
    pub(super) projects: Vec<&'a str>,
    pub(super) bars: Vec<Bar>,
    /// (time, lane) of each deadline miss.
    pub(super) misses: Vec<(Time, usize)>,
    /// Intervals with the host off or computing suspended.
    pub(super) off: Vec<(Time, Time)>,
    /// Intervals with only GPU computing suspended.
    pub(super) gpu_off: Vec<(Time, Time)>,
}

pub(super) fn gpu_lane_bases(
    ncpus: usize,
    gpus: &[TraceGpu],
) -> HashMap<ResourceType, (usize, u32)> {
    let mut bases = HashMap::new();
    let mut next = ncpus;
    for gpu in gpus {
        bases.entry(gpu.resource).or_insert_with(|| {
            let base = (next, gpu.count);
            next += gpu.count as usize;
            base
        });
    }
    bases
}

pub(super) fn layout<'a>(events: &'a [TraceEvent]) -> Option<Layout<'a>> {
    let (title, start, setup_end, ncpus, gpus, projects) =
        events.iter().find_map(|event| match event {
            TraceEvent::Setup {
                scenario,
                policy,
                seed,
                boinc_compat,
                start,
                end,
                ncpus,
                gpus,
                projects,
                ..
            } => {
                let compat = if *boinc_compat { ", BOINC-compatible model" } else { "" };
                let days = (end - start) / 86_400.0;
                let title =
                    format!("{scenario}: policy {policy}, seed {seed}{compat}, {days:.1} days");
                Some((title, *start, *end, *ncpus as usize, gpus, projects))
            }
            _ => None,
        })?;
    let mut lanes: Vec<Lane> =
        (0..ncpus).map(|i| Lane { label: format!("CPU {i}"), gpu: false }).collect();
    let bases = gpu_lane_bases(ncpus, gpus);
    let mut listed: Vec<_> = bases.iter().map(|(&r, &(base, count))| (base, r, count)).collect();
    listed.sort();
    for (_, resource, count) in listed {
        lanes.extend(
            (0..count).map(|i| Lane { label: format!("{} {i}", resource.boinc_name()), gpu: true }),
        );
    }
    let mut project_names: Vec<&str> = projects.iter().map(|p| p.name.as_str()).collect();
    let mut project_index: HashMap<&str, usize> = HashMap::new();
    for (i, name) in project_names.iter().enumerate() {
        project_index.entry(name).or_insert(i);
    }
    let mut project_of = |name: &'a str, names: &mut Vec<&'a str>| -> usize {
        *project_index.entry(name).or_insert_with(|| {
            names.push(name);
            names.len() - 1
        })
    };

    let mut segments: Vec<(usize, &TraceEvent)> = events
        .iter()
        .filter(|e| matches!(e, TraceEvent::RunSegment { start, end, .. } if end > start))
        .enumerate()
        .collect();
    segments.sort_by(|a, b| {
        let key = |e: &TraceEvent| match e {
            TraceEvent::RunSegment { start, .. } => *start,
            _ => 0.0,
        };
        key(a.1).total_cmp(&key(b.1)).then(a.0.cmp(&b.0))
    });
    let mut job_ids: HashMap<(usize, &str), usize> = HashMap::new();
    // Per job: end of its latest segment and the lane of that segment's first bar, and
    // the CPU lanes that segment took.
    let mut last_lane: Vec<(Time, usize)> = Vec::new();
    let mut previous_lanes: Vec<Vec<usize>> = Vec::new();
    let mut occupants: Vec<Vec<Occupant>> = vec![Vec::new(); lanes.len()];
    let mut bars = Vec::new();
    let mut end = setup_end;
    for (_, event) in segments {
        let TraceEvent::RunSegment { job, project, start: from, end: to, avg_ncpus, gpu } = event
        else {
            continue;
        };
        let project = project_of(project, &mut project_names);
        let next_job = job_ids.len();
        let job = *job_ids.entry((project, job.as_str())).or_insert(next_job);
        if job == last_lane.len() {
            last_lane.push((f64::NEG_INFINITY, 0));
            previous_lanes.push(Vec::new());
        }
        end = end.max(*to);
        for lane in &mut occupants {
            lane.retain(|occupant| occupant.0 > *from);
        }
        let mut first_lane = None;
        let mut remaining = *avg_ncpus;
        // A job continuing where it stopped keeps its lanes, so its bar reads as one.
        let continues = (*from - last_lane[job].0).abs() <= EPSILON;
        let previous = &previous_lanes[job];
        let lane_order: Vec<usize> = previous
            .iter()
            .copied()
            .filter(|&lane| continues && lane < ncpus)
            .chain((0..ncpus).filter(|lane| !continues || !previous.contains(lane)))
            .collect();
        let mut taken = Vec::new();
        // Whole CPUs go on whole free lanes first, so that a multi-CPU or a one-CPU job
        // is not cut into slivers around another job's CPU fraction.
        let mut whole_cpus = (remaining + EPSILON).floor();
        for pass in [true, false] {
            for &lane in &lane_order {
                let wanted = if pass { 1.0 } else { remaining };
                if (pass && (whole_cpus < 1.0 || !occupants[lane].is_empty()))
                    || remaining <= EPSILON
                {
                    continue;
                }
                for (offset, height) in fit_in_lane(&mut occupants[lane], *to, wanted) {
                    remaining -= height;
                    whole_cpus -= height;
                    first_lane.get_or_insert(lane);
                    taken.push(lane);
                    bars.push(Bar { lane, offset, height, start: *from, end: *to, project, job });
                }
            }
        }
        // CPUs overcommitted by GPU jobs' CPU fractions: the excess is not drawn; the
        // GPU lane shows the job.
        if let Some((resource, instances, fraction)) = gpu
            && let Some(&(base, count)) = bases.get(resource)
        {
            for &instance in instances.iter().filter(|&&i| i < count) {
                let lane = base + instance as usize;
                for (offset, height) in fit_in_lane(&mut occupants[lane], *to, fraction.min(1.0)) {
                    first_lane.get_or_insert(lane);
                    bars.push(Bar { lane, offset, height, start: *from, end: *to, project, job });
                }
            }
        }
        if let Some(lane) = first_lane
            && *to >= last_lane[job].0
        {
            last_lane[job] = (*to, lane);
            previous_lanes[job] = taken;
        }
    }
    let mut misses = Vec::new();
    for event in events {
        if let TraceEvent::JobReported { time, job, project, missed: true, .. } = event {
            let lane = project_index
                .get(project.as_str())
                .and_then(|&p| job_ids.get(&(p, job.as_str())))
                .map_or(0, |&j| last_lane[j].1);
            misses.push((*time, lane));
            end = end.max(*time);
        }
    }
    let (off, gpu_off) = suspended_intervals(events, start, end);
    Some(Layout {
        title,
        start,
        end,
        lanes,
        projects: project_names,
        bars: merge_adjacent(bars),
        misses,
        off,
        gpu_off,
    })
}

/// Joins bars of the same job that continue each other on the same lane and slot.
pub(super) fn merge_adjacent(mut bars: Vec<Bar>) -> Vec<Bar> {
    bars.sort_by(|a, b| {
        (a.lane, a.job)
            .cmp(&(b.lane, b.job))
            .then(a.offset.total_cmp(&b.offset))
            .then(a.height.total_cmp(&b.height))
            .then(a.start.total_cmp(&b.start))
    });
    let mut merged: Vec<Bar> = Vec::with_capacity(bars.len());
    for bar in bars {
        match merged.last_mut() {
            Some(last)
                if last.lane == bar.lane
                    && last.job == bar.job
                    && (last.offset - bar.offset).abs() < EPSILON
                    && (last.height - bar.height).abs() < EPSILON
                    && bar.start <= last.end + EPSILON =>
            {
                last.end = last.end.max(bar.end);
            }
            _ => merged.push(bar),
        }
    }
    merged
}
