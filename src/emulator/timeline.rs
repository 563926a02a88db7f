//! The emulator's SVG timeline (issue 3 "Timeline", DESIGN.md "Emulator": one lane per
//! CPU/GPU instance, coloured by project, deadline misses marked), drawn from the trace
//! alone so that any saved trace can be redrawn.
//!
//! The trace does not say which CPU a job ran on, only how many CPUs it occupied, so CPU
//! lanes are assigned here: at each segment's start its `avg_ncpus` is packed first-fit
//! into the CPU lanes by lane index — whole CPUs onto wholly free lanes first, then the
//! rest into the lowest free vertical slot of each lane (a job using 0.5 CPU is a
//! half-height bar); a job continuing where it stopped tries its previous lanes first. GPU segments go on the instance lanes the
//! trace names, with the fraction of the instance as bar height.

use super::trace::{AvailabilityKind, TraceEvent, TraceGpu};
use crate::Time;
use crate::model::ResourceType;
use std::collections::HashMap;
use std::fmt::{self, Write};

/// Project colours; no red (deadline-miss markers) and no grey (host-off shading).
const PALETTE: [&str; 20] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#ff9da7", "#9c755f",
    "#17becf", "#bcbd22", "#a0cbe8", "#ffbe7d", "#8cd17d", "#d4a6c8", "#f1ce63", "#86bcb6",
    "#fabfd2", "#d7b5a6", "#1f3f7a", "#6b8e23",
];
const MISS_COLOUR: &str = "#e00000";
const OFF_COLOUR: &str = "#9a9a9a";
const GPU_OFF_COLOUR: &str = "#cfcfcf";

const WIDTH: f64 = 1600.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 44.0;
const AXIS_HEIGHT: f64 = 36.0;
const LEGEND_ROW: f64 = 20.0;
/// Fractions of an instance below this are rounding noise, not occupancy.
const EPSILON: f64 = 1e-6;

/// A coordinate rounded to one decimal, written without a trailing `.0`.
struct Coord(f64);

impl fmt::Display for Coord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tenths = (self.0 * 10.0).round();
        if tenths == 0.0 {
            f.write_str("0")
        } else if tenths % 10.0 == 0.0 {
            write!(f, "{}", tenths / 10.0)
        } else {
            write!(f, "{:.1}", tenths / 10.0)
        }
    }
}

/// Text with XML's special characters escaped.
struct Escaped<'a>(&'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            match c {
                '&' => f.write_str("&amp;")?,
                '<' => f.write_str("&lt;")?,
                '>' => f.write_str("&gt;")?,
                '"' => f.write_str("&quot;")?,
                '\'' => f.write_str("&apos;")?,
                c if c.is_control() => f.write_char(' ')?,
                c => f.write_char(c)?,
            }
        }
        Ok(())
    }
}

/// One bar on a lane: part of a segment, `offset` and `height` in fractions of the lane.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bar {
    lane: usize,
    offset: f64,
    height: f64,
    start: Time,
    end: Time,
    project: usize,
    job: usize,
}

/// What is occupying a lane now: (end, offset, height).
type Occupant = (Time, f64, f64);

/// Fits `wanted` of a lane's height into its free vertical slots, lowest first; returns
/// the (offset, height) pieces taken.
fn fit_in_lane(occupants: &mut Vec<Occupant>, end: Time, wanted: f64) -> Vec<(f64, f64)> {
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

struct Lane {
    label: String,
    gpu: bool,
}

/// The run as the timeline needs it.
struct Layout<'a> {
    title: String,
    start: Time,
    end: Time,
    lanes: Vec<Lane>,
    projects: Vec<&'a str>,
    bars: Vec<Bar>,
    /// (time, lane) of each deadline miss.
    misses: Vec<(Time, usize)>,
    /// Intervals with the host off or computing suspended.
    off: Vec<(Time, Time)>,
    /// Intervals with only GPU computing suspended.
    gpu_off: Vec<(Time, Time)>,
}

fn gpu_lane_bases(ncpus: usize, gpus: &[TraceGpu]) -> HashMap<ResourceType, (usize, u32)> {
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

/// Time intervals [from, to).
type Intervals = Vec<(Time, Time)>;

/// Host-off and GPU-suspended intervals within [start, end): every process starts up
/// unless an event at or before the start says otherwise.
fn suspended_intervals(events: &[TraceEvent], start: Time, end: Time) -> (Intervals, Intervals) {
    let mut changes: Vec<(Time, usize, bool)> = events
        .iter()
        .filter_map(|event| match event {
            TraceEvent::Availability { time, what: AvailabilityKind::HostOn, up } => {
                Some((*time, 0, *up))
            }
            TraceEvent::Availability { time, what: AvailabilityKind::Active, up } => {
                Some((*time, 1, *up))
            }
            TraceEvent::Availability { time, what: AvailabilityKind::GpuActive, up } => {
                Some((*time, 2, *up))
            }
            _ => None,
        })
        .collect();
    changes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut up = [true; 3];
    let mut off: Vec<(Time, Time)> = Vec::new();
    let mut gpu_off: Vec<(Time, Time)> = Vec::new();
    let mut cursor = start;
    let mut record = |up: &[bool; 3], from: Time, to: Time| {
        if to <= from {
            return;
        }
        let target = if !(up[0] && up[1]) {
            &mut off
        } else if !up[2] {
            &mut gpu_off
        } else {
            return;
        };
        match target.last_mut() {
            Some(last) if last.1 >= from => last.1 = to,
            _ => target.push((from, to)),
        }
    };
    for (time, process, state) in changes {
        if time >= end {
            break;
        }
        if time > cursor {
            record(&up, cursor, time);
            cursor = time;
        }
        up[process] = state;
    }
    record(&up, cursor, end);
    (off, gpu_off)
}

fn layout<'a>(events: &'a [TraceEvent]) -> Option<Layout<'a>> {
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
fn merge_adjacent(mut bars: Vec<Bar>) -> Vec<Bar> {
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

/// Tick spacing: the smallest that gives at most about a dozen ticks.
fn tick_step(span: f64) -> f64 {
    const HOUR: f64 = 3600.0;
    const DAY: f64 = 86_400.0;
    let steps = [
        HOUR,
        2.0 * HOUR,
        3.0 * HOUR,
        6.0 * HOUR,
        12.0 * HOUR,
        DAY,
        2.0 * DAY,
        5.0 * DAY,
        10.0 * DAY,
        20.0 * DAY,
        50.0 * DAY,
        100.0 * DAY,
    ];
    steps.into_iter().find(|&s| span / s <= 12.0).unwrap_or(365.0 * DAY)
}

fn tick_label(offset: f64) -> String {
    let hours = (offset / 3600.0).round() as i64;
    let (days, hours) = (hours / 24, hours % 24);
    match (days, hours) {
        (0, h) => format!("{h}h"),
        (d, 0) => format!("{d}d"),
        (d, h) => format!("{d}d {h}h"),
    }
}

/// An SVG document drawing the run in `events`: a lane per CPU and GPU instance, bars
/// coloured by project, host-off and computing-suspended periods shaded grey, red markers
/// at deadline misses, a time axis in days and hours, and a legend.
pub fn render_timeline(events: &[TraceEvent]) -> String {
    let mut svg = String::new();
    let Some(layout) = layout(events) else {
        svg.push_str(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"400\" height=\"40\">\
             <text x=\"10\" y=\"25\">The trace has no setup event: nothing to draw.</text></svg>\n",
        );
        return svg;
    };
    // Writing to a String cannot fail.
    let _ = draw(&mut svg, &layout);
    svg
}

fn draw(svg: &mut String, layout: &Layout<'_>) -> fmt::Result {
    let lane_height = match layout.lanes.len() {
        0..=16 => 20.0,
        17..=40 => 14.0,
        _ => 10.0,
    };
    let bar_height = lane_height - 2.0;
    let plot_width = WIDTH - LEFT - RIGHT;
    let lanes_height = lane_height * layout.lanes.len() as f64;
    let span = (layout.end - layout.start).max(1.0);
    let x = |t: Time| LEFT + ((t - layout.start) / span).clamp(0.0, 1.0) * plot_width;

    // Legend entries: (swatch, label); wrap by estimated text width.
    let mut legend: Vec<(String, String)> = layout
        .projects
        .iter()
        .enumerate()
        .map(|(i, name)| (PALETTE[i % PALETTE.len()].to_string(), name.to_string()))
        .collect();
    legend.push((String::new(), "deadline missed (at report time)".to_string()));
    legend.push((OFF_COLOUR.to_string(), "host off or computing suspended".to_string()));
    if layout.lanes.iter().any(|l| l.gpu) {
        legend.push((GPU_OFF_COLOUR.to_string(), "GPU computing suspended".to_string()));
    }
    let mut placed = Vec::with_capacity(legend.len());
    let (mut lx, mut row) = (LEFT, 0usize);
    for (swatch, label) in &legend {
        let width = 36.0 + 7.0 * label.chars().count() as f64;
        if lx + width > WIDTH - RIGHT && lx > LEFT {
            lx = LEFT;
            row += 1;
        }
        placed.push((lx, row, swatch, label));
        lx += width;
    }
    let legend_top = TOP + lanes_height + AXIS_HEIGHT;
    let height = legend_top + LEGEND_ROW * (row + 1) as f64 + 8.0;

    writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"11\">",
        w = Coord(WIDTH),
        h = Coord(height)
    )?;
    writeln!(svg, "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>")?;
    writeln!(
        svg,
        "<text x=\"{}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>",
        Coord(LEFT),
        Escaped(&layout.title)
    )?;

    // Lane backgrounds and labels.
    writeln!(svg, "<g fill=\"#f4f4f4\">")?;
    for (i, _) in layout.lanes.iter().enumerate().filter(|(i, _)| i % 2 == 0) {
        writeln!(
            svg,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
            Coord(LEFT),
            Coord(TOP + lane_height * i as f64),
            Coord(plot_width),
            Coord(lane_height)
        )?;
    }
    writeln!(svg, "</g>")?;
    writeln!(svg, "<g text-anchor=\"end\" font-size=\"{}\">", Coord(lane_height.min(11.0) - 1.0))?;
    for (i, lane) in layout.lanes.iter().enumerate() {
        let y = TOP + lane_height * (i as f64 + 0.5) + lane_height.min(11.0) * 0.35;
        writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\">{}</text>",
            Coord(LEFT - 6.0),
            Coord(y),
            Escaped(&lane.label)
        )?;
    }
    writeln!(svg, "</g>")?;

    // Bars, one group per project so that colour and tooltip are written once.
    let mut by_project: Vec<Vec<&Bar>> = vec![Vec::new(); layout.projects.len()];
    for bar in &layout.bars {
        by_project[bar.project].push(bar);
    }
    for (project, bars) in by_project.iter().enumerate() {
        if bars.is_empty() {
            continue;
        }
        writeln!(
            svg,
            "<g fill=\"{}\"><title>{}</title>",
            PALETTE[project % PALETTE.len()],
            Escaped(layout.projects[project])
        )?;
        // One path of rectangles per project: a third the size of one <rect> per bar.
        svg.push_str("<path d=\"");
        for bar in bars {
            let lane_bottom = TOP + lane_height * (bar.lane as f64 + 1.0) - 1.0;
            let height = (bar.height * bar_height).max(0.1);
            let y = lane_bottom - bar.offset * bar_height - height;
            let width = Coord((x(bar.end) - x(bar.start)).max(0.1));
            writeln!(
                svg,
                "M{} {}h{width}v{}h-{width}z",
                Coord(x(bar.start)),
                Coord(y),
                Coord(height)
            )?;
        }
        writeln!(svg, "\"/></g>")?;
    }

    // Availability shading over the bars, translucent: in BOINC's model CPU jobs keep
    // running while the host is off, and the shading must show either way.
    let first_gpu = layout.lanes.iter().position(|l| l.gpu);
    let shade = |svg: &mut String,
                 colour: &str,
                 intervals: &[(Time, Time)],
                 top: f64,
                 height: f64|
     -> fmt::Result {
        if intervals.is_empty() || height <= 0.0 {
            return Ok(());
        }
        writeln!(svg, "<g fill=\"{colour}\" fill-opacity=\"0.6\">")?;
        for &(from, to) in intervals {
            writeln!(
                svg,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                Coord(x(from)),
                Coord(top),
                Coord((x(to) - x(from)).max(0.1)),
                Coord(height)
            )?;
        }
        writeln!(svg, "</g>")
    };
    shade(svg, OFF_COLOUR, &layout.off, TOP, lanes_height)?;
    if let Some(first) = first_gpu {
        let top = TOP + lane_height * first as f64;
        shade(svg, GPU_OFF_COLOUR, &layout.gpu_off, top, TOP + lanes_height - top)?;
    }

    // Time axis with day/hour ticks and light grid lines.
    let axis_y = TOP + lanes_height;
    let step = tick_step(span);
    writeln!(svg, "<g stroke=\"#444\" stroke-width=\"1\">")?;
    writeln!(
        svg,
        "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\"/>",
        Coord(LEFT),
        Coord(LEFT + plot_width),
        y = Coord(axis_y)
    )?;
    let ticks: Vec<f64> =
        (0..).map(|i| f64::from(i) * step).take_while(|&o| o <= span + EPSILON).collect();
    for &offset in &ticks {
        let tx = Coord(x(layout.start + offset));
        writeln!(
            svg,
            "<line x1=\"{tx}\" y1=\"{}\" x2=\"{tx}\" y2=\"{}\"/>",
            Coord(axis_y),
            Coord(axis_y + 5.0)
        )?;
        writeln!(
            svg,
            "<line x1=\"{tx}\" y1=\"{}\" x2=\"{tx}\" y2=\"{}\" stroke=\"#000\" stroke-opacity=\"0.12\"/>",
            Coord(TOP),
            Coord(axis_y)
        )?;
    }
    writeln!(svg, "</g>")?;
    writeln!(svg, "<g text-anchor=\"middle\">")?;
    for &offset in &ticks {
        writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\">{}</text>",
            Coord(x(layout.start + offset)),
            Coord(axis_y + 17.0),
            tick_label(offset)
        )?;
    }
    writeln!(svg, "</g>")?;
    writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#444\">time since start</text>",
        Coord(LEFT + plot_width),
        Coord(axis_y + 31.0)
    )?;

    // Deadline misses on top of everything on the lanes.
    if !layout.misses.is_empty() {
        writeln!(
            svg,
            "<g fill=\"{MISS_COLOUR}\" stroke=\"#600\" stroke-width=\"0.6\"><title>deadline missed</title>"
        )?;
        for &(time, lane) in &layout.misses {
            writeln!(
                svg,
                "{}",
                MissMarker {
                    x: x(time),
                    top: TOP + lane_height * lane as f64,
                    height: lane_height
                }
            )?;
        }
        writeln!(svg, "</g>")?;
    }

    // Legend.
    for (lx, row, swatch, label) in placed {
        let y = legend_top + LEGEND_ROW * row as f64;
        if swatch.is_empty() {
            let marker = MissMarker { x: lx + 7.0, top: y - 1.0, height: 14.0 };
            writeln!(
                svg,
                "<g fill=\"{MISS_COLOUR}\" stroke=\"#600\" stroke-width=\"0.6\">{marker}</g>"
            )?;
        } else {
            writeln!(
                svg,
                "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"12\" fill=\"{swatch}\"/>",
                Coord(lx),
                Coord(y)
            )?;
        }
        writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\">{}</text>",
            Coord(lx + 19.0),
            Coord(y + 10.0),
            Escaped(label)
        )?;
    }
    writeln!(svg, "</svg>")
}

/// A downward red triangle at the top of a lane with a stem through it.
struct MissMarker {
    x: f64,
    top: f64,
    height: f64,
}

impl fmt::Display for MissMarker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let half = (self.height * 0.35).clamp(3.0, 5.0);
        write!(
            f,
            "<polygon points=\"{},{} {},{} {},{}\"/><rect x=\"{}\" y=\"{}\" width=\"1.2\" height=\"{}\"/>",
            Coord(self.x - half),
            Coord(self.top),
            Coord(self.x + half),
            Coord(self.top),
            Coord(self.x),
            Coord(self.top + 1.6 * half),
            Coord(self.x - 0.6),
            Coord(self.top),
            Coord(self.height - 1.0),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Policy;
    use crate::emulator::trace::TraceProject;
    use quick_xml::Reader;
    use quick_xml::events::Event;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    const START: Time = 1.0e9;
    const DAY: f64 = 86_400.0;

    fn setup(ncpus: u32, gpus: u32, projects: &[&str], days: f64) -> TraceEvent {
        TraceEvent::Setup {
            scenario: "test <run>".to_string(),
            policy: Policy::Seed,
            seed: 7,
            boinc_compat: false,
            start: START,
            end: START + days * DAY,
            ncpus,
            p_fpops: 1e9,
            gpus: if gpus > 0 {
                vec![TraceGpu { resource: ResourceType::Nvidia, count: gpus, peak_flops: 1e12 }]
            } else {
                Vec::new()
            },
            projects: projects
                .iter()
                .map(|name| TraceProject { name: name.to_string(), resource_share: 100.0 })
                .collect(),
            scheduling_period: 3600.0,
        }
    }

    fn segment(job: &str, project: &str, from: f64, to: f64, avg_ncpus: f64) -> TraceEvent {
        TraceEvent::RunSegment {
            job: job.to_string(),
            project: project.to_string(),
            start: START + from,
            end: START + to,
            avg_ncpus,
            gpu: None,
        }
    }

    fn gpu_segment(
        job: &str,
        project: &str,
        from: f64,
        to: f64,
        instance: u32,
        fraction: f64,
    ) -> TraceEvent {
        TraceEvent::RunSegment {
            job: job.to_string(),
            project: project.to_string(),
            start: START + from,
            end: START + to,
            avg_ncpus: 0.2,
            gpu: Some((ResourceType::Nvidia, vec![instance], fraction)),
        }
    }

    fn missed(job: &str, project: &str, at: f64) -> TraceEvent {
        TraceEvent::JobReported {
            time: START + at,
            job: job.to_string(),
            project: project.to_string(),
            deadline: START,
            missed: true,
        }
    }

    /// Parses the SVG to the end; returns every text node, unescaped, and the number of
    /// elements of each interesting kind.
    fn parse(svg: &str) -> (Vec<String>, usize, usize, usize) {
        let mut reader = Reader::from_str(svg);
        let (mut texts, mut rects, mut paths, mut markers) = (Vec::new(), 0, 0, 0);
        let mut depth = 0i32;
        loop {
            match reader.read_event() {
                Ok(Event::Eof) => break,
                Ok(Event::Start(_)) => depth += 1,
                Ok(Event::End(_)) => depth -= 1,
                Ok(Event::Empty(e)) => match e.name().as_ref() {
                    b"rect" => rects += 1,
                    b"polygon" => markers += 1,
                    b"path" => paths += 1,
                    _ => {}
                },
                Ok(Event::Text(t)) => {
                    texts.push(t.unescape().expect("valid entities").into_owned())
                }
                Ok(_) => {}
                Err(error) => panic!("malformed SVG at {}: {error}", reader.buffer_position()),
            }
        }
        assert_eq!(depth, 0, "unbalanced elements");
        (texts, rects, paths, markers)
    }

    fn small_run() -> Vec<TraceEvent> {
        vec![
            setup(2, 2, &["Alpha & <Beta>", "Gamma"], 1.0),
            segment("a1", "Alpha & <Beta>", 0.0, 7200.0, 1.0),
            segment("g1", "Gamma", 0.0, 3600.0, 1.0),
            gpu_segment("g2", "Gamma", 0.0, 40_000.0, 1, 0.5),
            missed("g1", "Gamma", 5000.0),
            TraceEvent::Availability {
                time: START + 50_000.0,
                what: AvailabilityKind::HostOn,
                up: false,
            },
            TraceEvent::Availability {
                time: START + 60_000.0,
                what: AvailabilityKind::HostOn,
                up: true,
            },
            TraceEvent::Availability {
                time: START + 70_000.0,
                what: AvailabilityKind::GpuActive,
                up: false,
            },
        ]
    }

    #[test]
    fn svg_is_well_formed_with_lanes_legend_and_markers() {
        let svg = render_timeline(&small_run());
        let (texts, rects, paths, markers) = parse(&svg);
        for label in ["CPU 0", "CPU 1", "NVIDIA 0", "NVIDIA 1"] {
            assert!(texts.iter().any(|t| t == label), "no lane {label}");
        }
        assert!(!texts.iter().any(|t| t == "CPU 2" || t == "NVIDIA 2"));
        for project in ["Alpha & <Beta>", "Gamma"] {
            assert!(texts.iter().filter(|t| *t == project).count() >= 2, "{project} not in legend");
        }
        assert!(texts.iter().any(|t| t.starts_with("deadline missed")));
        assert!(texts.iter().any(|t| t == "host off or computing suspended"));
        assert!(texts.iter().any(|t| t == "GPU computing suspended"));
        assert!(texts.iter().any(|t| t == "12h"), "{texts:?}");
        assert!(svg.contains(MISS_COLOUR));
        // One miss on the lanes plus the legend's sample.
        assert_eq!(markers, 2);
        // One path of bars per project that ran.
        assert_eq!(paths, 2);
        // a1, g1 and g2, whose 0.2 CPU does not fit beside a1 and g1.
        assert_eq!(svg.matches("z\n").count(), 3);
        assert!(rects > 8);
    }

    #[test]
    fn cpu_fractions_are_packed_first_fit_and_gpu_jobs_use_their_instances() {
        let events = vec![
            setup(2, 1, &["A", "B"], 1.0),
            segment("half1", "A", 0.0, 100.0, 0.5),
            segment("double", "B", 0.0, 100.0, 1.5),
            gpu_segment("gpu", "B", 50.0, 150.0, 0, 0.25),
            segment("late", "A", 100.0, 200.0, 1.0),
        ];
        let layout = layout(&events).expect("setup present");
        let bars: Vec<(usize, f64, f64, Time)> =
            layout.bars.iter().map(|b| (b.lane, b.offset, b.height, b.start - START)).collect();
        // half1 takes the bottom of CPU 0, double fills the rest of CPU 0 then CPU 1.
        assert!(bars.contains(&(0, 0.0, 0.5, 0.0)));
        assert!(bars.contains(&(0, 0.5, 0.5, 0.0)));
        assert!(bars.contains(&(1, 0.0, 1.0, 0.0)));
        // The GPU job's 0.2 CPU does not fit (CPUs full): drawn on its GPU lane only.
        assert!(bars.contains(&(2, 0.0, 0.25, 50.0)));
        assert!(!bars.iter().any(|b| b.3 == 50.0 && b.0 < 2));
        // At t=100 the CPU lanes are free again.
        assert!(bars.contains(&(0, 0.0, 1.0, 100.0)));
        assert_eq!(layout.lanes.len(), 3);
    }

    #[test]
    fn continued_segments_of_a_job_merge_and_misses_sit_on_its_last_lane() {
        let events = vec![
            setup(2, 0, &["A", "B"], 1.0),
            segment("x", "B", 0.0, 100.0, 1.0),
            segment("j", "A", 0.0, 100.0, 1.0),
            segment("j", "A", 100.0, 200.0, 1.0),
            segment("j", "A", 300.0, 400.0, 1.0),
            missed("j", "A", 500.0),
        ];
        let layout = layout(&events).expect("setup present");
        let job_bars: Vec<_> = layout.bars.iter().filter(|b| b.project == 0).collect();
        // The continuation at 100 keeps lane 1 and merges; the later run takes lane 0.
        assert_eq!(job_bars.len(), 2, "{job_bars:?}");
        assert_eq!((job_bars[0].lane, job_bars[0].start - START), (0, 300.0));
        assert_eq!((job_bars[1].lane, job_bars[1].start - START), (1, 0.0));
        assert_eq!(job_bars[1].end - START, 200.0);
        assert_eq!(layout.misses, vec![(START + 500.0, 0)]);
    }

    #[test]
    fn availability_shading() {
        let events = small_run();
        let layout = layout_of(&events);
        assert_eq!(layout.off, vec![(START + 50_000.0, START + 60_000.0)]);
        assert_eq!(layout.gpu_off, vec![(START + 70_000.0, START + DAY)]);
        let starts_off = vec![
            setup(1, 0, &["A"], 1.0),
            TraceEvent::Availability { time: START, what: AvailabilityKind::Active, up: false },
            TraceEvent::Availability {
                time: START + 10.0,
                what: AvailabilityKind::Active,
                up: true,
            },
        ];
        assert_eq!(layout_of(&starts_off).off, vec![(START, START + 10.0)]);
    }

    fn layout_of(events: &[TraceEvent]) -> Layout<'_> {
        layout(events).expect("setup present")
    }

    #[test]
    fn coordinates_and_names_are_written_compactly_and_safely() {
        assert_eq!(Coord(12.04).to_string(), "12");
        assert_eq!(Coord(12.06).to_string(), "12.1");
        assert_eq!(Coord(-0.01).to_string(), "0");
        assert_eq!(Escaped("a<b>&\"c'\n").to_string(), "a&lt;b&gt;&amp;&quot;c&apos; ");
        assert_eq!(tick_label(DAY + 6.0 * 3600.0), "1d 6h");
        assert_eq!(tick_step(10.0 * DAY), DAY);
    }

    #[test]
    fn a_trace_without_setup_still_gives_an_svg() {
        let (texts, _, _, _) = parse(&render_timeline(&[]));
        assert!(texts[0].contains("no setup"));
    }

    /// Ten days on 8 CPUs and 2 GPUs with jobs preempted every scheduling period or so:
    /// several thousand segments, as a real run produces.
    pub(super) fn ten_day_run() -> Vec<TraceEvent> {
        let projects =
            ["Einstein@Home", "climate<prediction>", "Rosetta & friends", "WCG", "PrimeGrid"];
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut events = vec![setup(8, 2, &projects, 10.0)];
        let mut job = 0;
        for lane in 0..10u32 {
            let mut t = 0.0;
            while t < 10.0 * DAY {
                let project = projects[rng.random_range(0..4)];
                let length = rng.random_range(600.0..7200.0);
                let end = (t + length).min(10.0 * DAY);
                let name = format!("job_{job}");
                // Preempt mid-job now and then: the job continues later on the same lane.
                let split = t + length * 0.5;
                let pieces = if rng.random_bool(0.2) {
                    vec![(t, split), (split, end)]
                } else {
                    vec![(t, end)]
                };
                for (from, to) in pieces {
                    if lane < 8 {
                        events.push(segment(&name, project, from, to, 1.0));
                    } else {
                        events.push(gpu_segment(&name, "PrimeGrid", from, to, lane - 8, 1.0));
                    }
                }
                if rng.random_bool(0.01) {
                    events.push(missed(&name, project, end + 600.0));
                }
                job += 1;
                t = end + rng.random_range(0.0..120.0);
            }
        }
        for day in 0..10 {
            let night = f64::from(day) * DAY + 0.9 * DAY;
            events.push(TraceEvent::Availability {
                time: START + night,
                what: AvailabilityKind::HostOn,
                up: false,
            });
            events.push(TraceEvent::Availability {
                time: START + night + 0.05 * DAY,
                what: AvailabilityKind::HostOn,
                up: true,
            });
        }
        events
    }

    #[test]
    fn a_ten_day_run_stays_small_and_deterministic() {
        let events = ten_day_run();
        let segments = events.iter().filter(|e| matches!(e, TraceEvent::RunSegment { .. })).count();
        assert!(segments > 2000, "{segments}");
        let svg = render_timeline(&events);
        assert_eq!(svg, render_timeline(&events));
        let (texts, _, _, _) = parse(&svg);
        assert!(texts.iter().any(|t| t == "5d"));
        // GPU jobs' CPU fractions add slivers on the CPU lanes; merging keeps the rest.
        let bars = svg.matches("z\n").count();
        assert!(bars < 2 * segments, "{bars} bars for {segments} segments");
        assert!(svg.len() < 40 * segments, "{} bytes for {segments} segments", svg.len());
    }
}
