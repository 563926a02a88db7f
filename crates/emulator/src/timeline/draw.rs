//! Drawing the laid-out run as an SVG document: lanes, bars by project, availability
//! shading, the time axis, deadline-miss markers and the legend.

use super::lanes::{Bar, EPSILON, Layout, layout};
use super::svg_text::{Coord, Escaped};
use crate::trace::TraceEvent;
use boinc_core::Time;
use std::fmt::{self, Write};

/// Project colours; no red (deadline-miss markers) and no grey (host-off shading).
pub(super) const PALETTE: [&str; 20] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#ff9da7", "#9c755f",
    "#17becf", "#bcbd22", "#a0cbe8", "#ffbe7d", "#8cd17d", "#d4a6c8", "#f1ce63", "#86bcb6",
    "#fabfd2", "#d7b5a6", "#1f3f7a", "#6b8e23",
];
pub(super) const MISS_COLOUR: &str = "#e00000";
pub(super) const OFF_COLOUR: &str = "#9a9a9a";
pub(super) const GPU_OFF_COLOUR: &str = "#cfcfcf";

pub(super) const WIDTH: f64 = 1600.0;
pub(super) const LEFT: f64 = 90.0;
pub(super) const RIGHT: f64 = 20.0;
pub(super) const TOP: f64 = 44.0;
pub(super) const AXIS_HEIGHT: f64 = 36.0;
pub(super) const LEGEND_ROW: f64 = 20.0;

/// Tick spacing: the smallest that gives at most about a dozen ticks.
pub(super) fn tick_step(span: f64) -> f64 {
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

pub(super) fn tick_label(offset: f64) -> String {
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

pub(super) fn draw(svg: &mut String, layout: &Layout<'_>) -> fmt::Result {
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
pub(super) struct MissMarker {
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
