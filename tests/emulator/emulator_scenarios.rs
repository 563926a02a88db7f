//! Issue 3 acceptance: every shared scenario runs for 10 and 100 simulated days, in the
//! faithful model and under `boinc_compat`, with sane figures; and the figures recomputed
//! from a run's trace (written as JSON lines and read back) agree with the printed ones.

use crate::support;

use boinc_emulator::figures::FiguresOfMerit;
use boinc_emulator::trace::{AvailabilityKind, TraceEvent};
use boinc_emulator::trace_figures::figures_from_trace;
use std::collections::HashMap;
use std::time::Instant;
use support::{assert_sane, json_lines_round_trip, run, scenario_names};

fn every_scenario_runs(days: f64, boinc_compat: bool) {
    for name in scenario_names() {
        let started = Instant::now();
        let result = run(&name, days, boinc_compat, false);
        let what = format!("{name}, {days} days, boinc_compat {boinc_compat}");
        eprintln!("{what}: {:.2} s wall", started.elapsed().as_secs_f64());
        assert_sane(&what, &result.figures, days);
        assert!(result.decisions > 0 && result.rpcs > 0, "{what}: nothing happened");
    }
}

#[test]
fn every_scenario_runs_10_days_faithfully() {
    every_scenario_runs(10.0, false);
}

#[test]
fn every_scenario_runs_10_days_boinc_compat() {
    every_scenario_runs(10.0, true);
}

#[test]
fn every_scenario_runs_100_days_faithfully() {
    every_scenario_runs(100.0, false);
}

#[test]
fn every_scenario_runs_100_days_boinc_compat() {
    every_scenario_runs(100.0, true);
}

fn assert_agree(what: &str, printed: &FiguresOfMerit, replayed: &FiguresOfMerit) {
    // Relative, plus an absolute slack at rounding level: a fraction near 0 is summed from
    // large flop counts in one order online and another from the trace.
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * x.abs().max(y.abs()) + 1e-12;
    let pairs = [
        ("idle fraction", printed.idle_fraction, replayed.idle_fraction),
        ("wasted fraction", printed.wasted_fraction, replayed.wasted_fraction),
        ("share violation", printed.share_violation, replayed.share_violation),
        ("fair-share violation", printed.fair_share_violation, replayed.fair_share_violation),
        ("monotony", printed.monotony, replayed.monotony),
        ("RPCs per job", printed.rpcs_per_job, replayed.rpcs_per_job),
        ("simulated days", printed.sim_days, replayed.sim_days),
    ];
    for (name, x, y) in pairs {
        assert!(close(x, y), "{what}: {name} printed {x}, from the trace {y}");
    }
    let names = |f: &FiguresOfMerit| f.projects.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(printed), names(replayed), "{what}: projects");
    for (project, p) in &printed.projects {
        let q = &replayed.projects[project];
        assert_eq!(
            p.usage.keys().collect::<Vec<_>>(),
            q.usage.keys().collect::<Vec<_>>(),
            "{what}: {project}'s resources"
        );
        for (resource, &x) in &p.usage {
            let y = q.usage[resource];
            assert!(close(x, y), "{what}: {project} {resource} printed {x}, from the trace {y}");
        }
        assert!(
            close(p.fair_share, q.fair_share),
            "{what}: {project}'s fair share printed {}, from the trace {}",
            p.fair_share,
            q.fair_share
        );
        let counts = |f: &boinc_emulator::figures::ProjectFigures| {
            (
                f.jobs_done,
                f.deadlines_missed,
                f.jobs_received,
                f.rpcs,
                f.disk_violations,
                f.files_deleted,
            )
        };
        assert_eq!(
            counts(p),
            counts(q),
            "{what}: {project} (jobs done, deadlines missed, jobs received, RPCs, disk violations, files deleted)"
        );
    }
}

/// The host's state (on, active, GPU active) from each availability change on.
fn host_changes(trace: &[TraceEvent]) -> Vec<(f64, [bool; 3])> {
    let mut up = [true; 3];
    let mut changes = Vec::new();
    for event in trace {
        if let TraceEvent::Availability { time, what, up: state } = event {
            let process = match what {
                AvailabilityKind::HostOn => 0,
                AvailabilityKind::Active => 1,
                AvailabilityKind::GpuActive => 2,
                AvailabilityKind::Connected | AvailabilityKind::ProjectUp { .. } => continue,
            };
            up[process] = *state;
            changes.push((*time, up));
        }
    }
    changes
}

/// Run segments are consistent with the host and with each other: a job's segments never
/// overlap, and in the faithful model no job computes while its resource may not.
fn assert_segments_consistent(what: &str, trace: &[TraceEvent], boinc_compat: bool) {
    let changes = host_changes(trace);
    assert!(
        changes.windows(2).all(|pair| pair[0].0 <= pair[1].0),
        "{what}: availability events out of order"
    );
    let state_at = |t: f64| {
        let index = changes.partition_point(|change| change.0 <= t);
        if index == 0 { [true; 3] } else { changes[index - 1].1 }
    };
    let mut last_end: HashMap<&str, f64> = HashMap::new();
    let mut segments = 0;
    for event in trace {
        let TraceEvent::RunSegment { job, start, end, gpu, .. } = event else { continue };
        segments += 1;
        assert!(end > start, "{what}: empty segment of {job} at {start}");
        if let Some(&previous) = last_end.get(job.as_str()) {
            assert!(*start >= previous, "{what}: {job} runs twice at {start}");
        }
        last_end.insert(job, *end);
        // The state over the segment: at its start and at every change inside it.
        let first = changes.partition_point(|change| change.0 <= *start);
        let inside = changes[first..].iter().take_while(|change| change.0 < *end);
        for state in std::iter::once(state_at(*start)).chain(inside.map(|change| change.1)) {
            let allowed = if gpu.is_some() {
                state[0] && state[2]
            } else {
                boinc_compat || (state[0] && state[1])
            };
            assert!(
                allowed,
                "{what}: {job} computes from {start} to {end} in host state {state:?}"
            );
        }
    }
    assert!(segments > 0, "{what}: no run segments");
}

fn trace_replay_agrees(name: &str, boinc_compat: bool) {
    let what = format!("{name}, boinc_compat {boinc_compat}");
    let result = run(name, 10.0, boinc_compat, true);
    let trace = json_lines_round_trip(&result.trace);
    // serde_json may parse a float one unit in the last place off what it wrote, so the
    // events are compared through the figures (to 1e-9) rather than bit for bit.
    assert_eq!(trace.len(), result.trace.len(), "{what}: events lost through JSON lines");
    assert_segments_consistent(&what, &trace, boinc_compat);
    let replayed = figures_from_trace(&trace).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_agree(&what, &result.figures, &replayed);
}

#[test]
fn trace_replay_agrees_on_s2_where_the_host_is_not_always_available() {
    trace_replay_agrees("s2", false);
    trace_replay_agrees("s2", true);
}

#[test]
fn trace_replay_agrees_on_gpu_share() {
    trace_replay_agrees("gpu_share", false);
    trace_replay_agrees("gpu_share", true);
}

#[test]
fn trace_replay_agrees_on_seed_scenario1() {
    trace_replay_agrees("seed_scenario1", false);
}

#[test]
fn trace_replay_agrees_on_the_other_scenarios() {
    for name in ["s1", "share_75_25", "starved_gpu", "tight_deadlines", "big_host"] {
        trace_replay_agrees(name, false);
    }
}
