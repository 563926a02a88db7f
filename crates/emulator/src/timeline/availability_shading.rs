//! The periods the timeline shades: host off or computing suspended, and GPU computing
//! suspended, from the trace's availability events.

use crate::trace::{AvailabilityKind, TraceEvent};
use boinc_core::Time;

/// Time intervals [from, to).
pub(super) type Intervals = Vec<(Time, Time)>;

/// Host-off and GPU-suspended intervals within [start, end): every process starts up
/// unless an event at or before the start says otherwise.
pub(super) fn suspended_intervals(
    events: &[TraceEvent],
    start: Time,
    end: Time,
) -> (Intervals, Intervals) {
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
