//! Issue 3 acceptance on the design scenarios, judged from the run's trace and figures:
//!
//! - seed_scenario1 (seed 000's P1(0.1,1,.5) P2(1,24,.25) P3(1,24,.25) on 2 CPUs): P2 and
//!   P3 run for whole scheduling periods, and P1's tasks never wait behind P2/P3 past
//!   their deadline;
//! - gpu_share (seed 003's GPU example): B uses ≥ 95 % of the CPU, and the GPU splits
//!   75/25 between A and B within ±5 points;
//! - seed_scenario1's P1 reports in batches (fewer RPCs than a third of its jobs), never
//!   after a deadline it finished in time for.
//!
//! Both policy models are checked: the faithful default and `boinc_compat`.

use crate::support;

use boinc_emulator::trace::TraceEvent;
use std::collections::HashMap;
use support::run;

/// Times closer than this are the same instant (the event loop never steps less than a
/// microsecond).
const SAME_INSTANT: f64 = 1e-3;

/// What the trace says about one job.
#[derive(Debug, Default)]
struct JobHistory {
    project: String,
    received: f64,
    deadline: f64,
    /// CPUs it occupies.
    avg_ncpus: f64,
    /// Its true size, flops.
    flops: f64,
    /// (start, end) of each run segment, in trace order.
    segments: Vec<(f64, f64)>,
    finished: Option<f64>,
    reported_missed: bool,
    /// Times the scheduler preempted it to run a deadline-endangered job.
    preempted_for_deadline: Vec<f64>,
}

/// The run's jobs by name, with what the setup says.
struct RunHistory {
    jobs: HashMap<String, JobHistory>,
    scheduling_period: f64,
    ncpus: f64,
    p_fpops: f64,
    end: f64,
}

fn history(trace: &[TraceEvent]) -> RunHistory {
    let mut jobs: HashMap<String, JobHistory> = HashMap::new();
    let (mut scheduling_period, mut ncpus, mut p_fpops, mut end) = (0.0, 0.0, 0.0, 0.0);
    for event in trace {
        match event {
            TraceEvent::Setup {
                scheduling_period: period,
                ncpus: cpus,
                p_fpops: peak,
                end: run_end,
                ..
            } => {
                scheduling_period = *period;
                ncpus = f64::from(*cpus);
                p_fpops = *peak;
                end = *run_end;
            }
            TraceEvent::JobReceived { time, job, project, deadline, avg_ncpus, flops, .. } => {
                let history = jobs.entry(job.clone()).or_default();
                history.project = project.clone();
                history.received = *time;
                history.deadline = *deadline;
                history.avg_ncpus = *avg_ncpus;
                history.flops = *flops;
            }
            TraceEvent::RunSegment { job, start, end, .. } => {
                jobs.entry(job.clone()).or_default().segments.push((*start, *end));
            }
            TraceEvent::JobFinished { time, job, .. } => {
                jobs.entry(job.clone()).or_default().finished = Some(*time);
            }
            TraceEvent::JobReported { job, missed, .. } => {
                jobs.entry(job.clone()).or_default().reported_missed = *missed;
            }
            TraceEvent::Preempted { time, job, for_deadline: true, .. } => {
                jobs.entry(job.clone()).or_default().preempted_for_deadline.push(*time);
            }
            TraceEvent::Preempted { .. }
            | TraceEvent::Rpc { .. }
            | TraceEvent::Availability { .. }
            | TraceEvent::Disk { .. } => {}
        }
    }
    assert!(scheduling_period > 0.0 && ncpus > 0.0 && p_fpops > 0.0, "the trace has no setup");
    RunHistory { jobs, scheduling_period, ncpus, p_fpops, end }
}

impl RunHistory {
    /// Run seconds a job still needed at `time`: its segments after `time`, and for a
    /// job the run ended before it finished, the rest of its size at peak speed.
    fn remaining_after(&self, job: &JobHistory, time: f64) -> f64 {
        let later: f64 = job
            .segments
            .iter()
            .map(|&(start, end)| end - start.max(time))
            .filter(|&s| s > 0.0)
            .sum();
        let unrun = if job.finished.is_none() {
            let ran: f64 = job.segments.iter().map(|&(start, end)| end - start).sum();
            (job.flops / self.p_fpops - ran).max(0.0)
        } else {
            0.0
        };
        later + unrun
    }

    /// Whether a deadline forced the cut at `cut` of a segment of `project` that started
    /// at `start`: had the segment kept its CPU until its scheduling period ended, the
    /// other projects' jobs waiting at `cut` could not all have met their deadlines even
    /// with every other CPU free, work divisible at will, and earliest deadline first.
    /// The check is generous to the scheduler, so an unforced cut is a real one.
    fn deadline_forced(&self, project: &str, start: f64, cut: f64) -> bool {
        let period_end = start + self.scheduling_period;
        let mut waiting: Vec<(f64, f64)> = self
            .jobs
            .values()
            .filter(|job| job.project != project && job.received <= cut + SAME_INSTANT)
            .filter(|job| job.finished.is_none_or(|finished| finished > cut))
            .map(|job| (job.deadline, self.remaining_after(job, cut) * job.avg_ncpus))
            .filter(|&(_, work)| work > 0.0)
            .collect();
        waiting.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut work_due = 0.0;
        waiting.iter().any(|&(deadline, work)| {
            work_due += work;
            let capacity =
                (self.ncpus - 1.0) * (deadline - cut).max(0.0) + (deadline - period_end).max(0.0);
            work_due > capacity + SAME_INSTANT
        })
    }
}

/// A run segment of a P2/P3 job that ended before its scheduling period did, although
/// the job did not finish then and the run did not end then. It counts as forced by a
/// deadline when the scheduler preempted it to run a job it saw endangered (the trace's
/// `preempted` event says so), or when, in hindsight, the other projects' work could
/// not have met its deadlines had the segment kept its CPU (see `deadline_forced`).
#[derive(Debug)]
#[allow(dead_code)] // Read through Debug in failure messages.
struct EarlyPreemption {
    job: String,
    start: f64,
    end: f64,
    deadline_forced: bool,
}

fn early_preemptions(run: &RunHistory, projects: &[&str]) -> Vec<EarlyPreemption> {
    let mut found = Vec::new();
    for (name, job) in &run.jobs {
        if !projects.contains(&job.project.as_str()) {
            continue;
        }
        for &(start, end) in &job.segments {
            let finished_here = job.finished.is_some_and(|t| (t - end).abs() < SAME_INSTANT);
            let run_ended = (run.end - end).abs() < SAME_INSTANT;
            if end < start + run.scheduling_period - SAME_INSTANT && !finished_here && !run_ended {
                found.push(EarlyPreemption {
                    job: name.clone(),
                    start,
                    end,
                    deadline_forced: run.deadline_forced(&job.project, start, end)
                        || job
                            .preempted_for_deadline
                            .iter()
                            .any(|&t| (t - end).abs() < SAME_INSTANT),
                });
            }
        }
    }
    found.sort_by(|a, b| a.start.total_cmp(&b.start));
    found
}

/// A P1 job that missed its deadline (reported after it, or still computing when it
/// passed) while P2/P3 jobs computed in segments they started while the P1 job was
/// waiting (after it arrived or was preempted, before it ran again, finished or reached
/// its deadline): the scheduler gave P2/P3 a CPU that the late P1 job was waiting for. P2/P3 segments already
/// running when the P1 job arrived are not counted: they hold their scheduling period.
#[derive(Debug)]
#[allow(dead_code)] // Read through Debug in failure messages.
struct WaitedBehind {
    job: String,
    received: f64,
    deadline: f64,
    finished: Option<f64>,
    /// CPU seconds P2/P3 computed in segments started in that window, within it.
    others_computed: f64,
}

/// The P1 jobs that waited behind P2/P3 past their deadline, and how many P1 jobs missed.
fn p1_waits_behind_others(run: &RunHistory) -> (Vec<WaitedBehind>, u32) {
    let others: Vec<(f64, f64, f64)> = run
        .jobs
        .values()
        .filter(|job| job.project == "P2" || job.project == "P3")
        .flat_map(|job| job.segments.iter().map(|&(start, end)| (start, end, job.avg_ncpus)))
        .collect();
    let mut missed = 0;
    let mut found = Vec::new();
    for (name, job) in &run.jobs {
        if job.project != "P1" {
            continue;
        }
        let late = match job.finished {
            Some(finished) => finished > job.deadline,
            None => job.deadline < run.end,
        };
        if !(job.reported_missed || late) {
            continue;
        }
        missed += 1;
        let until = job.finished.map_or(job.deadline, |f| f.min(job.deadline));
        // The times the P1 job was waiting: from its arrival to its first run segment,
        // and between its segments, up to `until`.
        let mut waiting: Vec<(f64, f64)> = Vec::new();
        let mut from = job.received;
        let mut own = job.segments.clone();
        own.sort_by(|a, b| a.0.total_cmp(&b.0));
        for &(start, end) in &own {
            if start > from {
                waiting.push((from, start.min(until)));
            }
            from = from.max(end);
        }
        if from < until {
            waiting.push((from, until));
        }
        let others_computed: f64 = others
            .iter()
            .map(|&(start, end, ncpus)| {
                waiting
                    .iter()
                    .filter(|&&(w_start, w_end)| start >= w_start && start < w_end)
                    .map(|&(_, w_end)| (end.min(w_end) - start).max(0.0) * ncpus)
                    .sum::<f64>()
            })
            .sum();
        // Rounding-size segments (an instant between two decisions) take no CPU from P1.
        if others_computed > 1.0 {
            found.push(WaitedBehind {
                job: name.clone(),
                received: job.received,
                deadline: job.deadline,
                finished: job.finished,
                others_computed,
            });
        }
    }
    found.sort_by(|a, b| a.received.total_cmp(&b.received));
    (found, missed)
}

/// seed_scenario1's run history for 10 days, with a name for messages.
fn seed_scenario1(boinc_compat: bool) -> (String, RunHistory) {
    let what = format!("seed_scenario1, 10 days, boinc_compat {boinc_compat}");
    let result = run("seed_scenario1", 10.0, boinc_compat, true);
    (what, history(&result.trace))
}

/// P2 and P3 each run for whole scheduling periods: no run segment of theirs is cut
/// before its period ended unless a deadline forced it.
fn assert_whole_periods(what: &str, history: &RunHistory) {
    let preemptions = early_preemptions(history, &["P2", "P3"]);
    let segments: usize = history
        .jobs
        .values()
        .filter(|job| job.project == "P2" || job.project == "P3")
        .map(|job| job.segments.len())
        .sum();
    let unforced: Vec<&EarlyPreemption> =
        preemptions.iter().filter(|p| !p.deadline_forced).collect();
    eprintln!(
        "{what}: {segments} P2/P3 run segments, {} cut before their period ended, {} of them \
         without a deadline forcing it",
        preemptions.len(),
        unforced.len()
    );
    assert!(segments > 0, "{what}: P2/P3 never ran");
    assert!(
        unforced.is_empty(),
        "{what}: {} of {segments} P2/P3 run segments were preempted before their scheduling \
         period ended without a deadline forcing it; first ones: {:#?}",
        unforced.len(),
        &unforced[..unforced.len().min(5)]
    );
}

/// P1's tasks never wait behind P2/P3 past their deadline.
fn assert_p1_never_waits_behind(what: &str, history: &RunHistory) {
    let (waited, p1_missed) = p1_waits_behind_others(history);
    let p1_jobs = history.jobs.values().filter(|job| job.project == "P1").count();
    eprintln!(
        "{what}: {p1_missed} of {p1_jobs} P1 jobs missed their deadline, {} of them while P2/P3 \
         computed in segments started after they arrived",
        waited.len()
    );
    assert!(p1_jobs > 0, "{what}: P1 got no jobs");
    assert!(
        waited.is_empty(),
        "{what}: {} of {p1_jobs} P1 jobs missed their deadline while P2/P3 jobs started after \
         them computed; first ones: {:#?}",
        waited.len(),
        &waited[..waited.len().min(5)]
    );
}

#[test]
fn seed_scenario1_p2_and_p3_run_whole_scheduling_periods() {
    for boinc_compat in [false, true] {
        let (what, history) = seed_scenario1(boinc_compat);
        assert_whole_periods(&what, &history);
    }
}

#[test]
fn seed_scenario1_p1_never_waits_behind_p2_p3_past_its_deadline() {
    for boinc_compat in [false, true] {
        let (what, history) = seed_scenario1(boinc_compat);
        assert_p1_never_waits_behind(&what, &history);
    }
}

/// P1's 6-minute jobs are due an hour after they arrive, so each result would be
/// reported as it completes, one scheduler RPC per job. Its reports are batched while its
/// queue is well stocked and go out with the request that refills it: far fewer RPCs,
/// and no result that finished in time is reported after its deadline.
#[test]
fn seed_scenario1_batches_p1_reports_without_reporting_late() {
    for boinc_compat in [false, true] {
        let what = format!("seed_scenario1, 10 days, boinc_compat {boinc_compat}");
        let result = run("seed_scenario1", 10.0, boinc_compat, true);
        let mut finished: HashMap<&str, f64> = HashMap::new();
        let (mut rpcs, mut reported, mut late) = (0u32, 0u32, Vec::new());
        for event in &result.trace {
            match event {
                TraceEvent::Rpc { project, .. } if project == "P1" => rpcs += 1,
                TraceEvent::JobFinished { time, job, project } if project == "P1" => {
                    finished.insert(job, *time);
                }
                TraceEvent::JobReported { time, job, project, deadline, .. } if project == "P1" => {
                    reported += 1;
                    let in_time = finished.get(job.as_str()).is_some_and(|&f| f <= *deadline);
                    if in_time && *time > *deadline {
                        late.push((job.clone(), *time - *deadline));
                    }
                }
                _ => {}
            }
        }
        let per_job = f64::from(rpcs) / f64::from(reported.max(1));
        eprintln!("{what}: {rpcs} P1 RPCs for {reported} P1 results reported ({per_job:.3} each)");
        assert!(reported > 2000, "{what}: only {reported} P1 results reported");
        assert!(per_job < 0.35, "{what}: {rpcs} P1 RPCs for {reported} results: not batched");
        assert!(late.is_empty(), "{what}: results finished in time but reported late: {late:?}");
    }
}

/// A hand-made history for checking the two detectors: 2 CPUs, 1-hour periods.
fn hand_made(p1: Vec<JobHistory>, p2: Vec<JobHistory>) -> RunHistory {
    let jobs = p1
        .into_iter()
        .map(|job| JobHistory { project: "P1".to_string(), ..job })
        .chain(p2.into_iter().map(|job| JobHistory { project: "P2".to_string(), ..job }))
        .enumerate()
        .map(|(index, job)| (format!("job_{index}"), job))
        .collect();
    RunHistory { jobs, scheduling_period: 3600.0, ncpus: 2.0, p_fpops: 1e9, end: 1e6 }
}

fn job(
    received: f64,
    deadline: f64,
    segments: Vec<(f64, f64)>,
    finished: Option<f64>,
) -> JobHistory {
    JobHistory {
        received,
        deadline,
        avg_ncpus: 1.0,
        flops: 1e9 * segments.iter().map(|(start, end)| end - start).sum::<f64>(),
        segments,
        finished,
        ..JobHistory::default()
    }
}

#[test]
fn the_detectors_catch_what_they_describe() {
    // P2 cut after 600 s for a P1 job that had hours to spare: an unforced preemption.
    let relaxed = hand_made(
        vec![job(500.0, 20_000.0, vec![(600.0, 960.0)], Some(960.0))],
        vec![job(0.0, 90_000.0, vec![(0.0, 600.0), (960.0, 3960.0)], Some(3960.0))],
    );
    let found = early_preemptions(&relaxed, &["P2"]);
    assert_eq!(found.len(), 1);
    assert!(!found[0].deadline_forced);

    // The same cut when three P1 jobs due 700 s later could not wait for the period's end
    // on the one other CPU: forced.
    let p1 = (0..3).map(|i| {
        let start = 600.0 + 360.0 * f64::from(i / 2);
        job(500.0, 1300.0, vec![(start, start + 360.0)], Some(start + 360.0))
    });
    let urgent = hand_made(
        p1.collect(),
        vec![job(0.0, 90_000.0, vec![(0.0, 600.0), (1320.0, 4320.0)], Some(4320.0))],
    );
    let found = early_preemptions(&urgent, &["P2"]);
    assert_eq!(found.len(), 1);
    assert!(found[0].deadline_forced);

    // A P1 job finishing after its deadline while a P2 segment started after it arrived.
    let waited = hand_made(
        vec![job(1000.0, 2000.0, vec![(2100.0, 2460.0)], Some(2460.0))],
        vec![job(0.0, 90_000.0, vec![(1200.0, 4800.0)], Some(4800.0))],
    );
    let (found, missed) = p1_waits_behind_others(&waited);
    assert_eq!((found.len(), missed), (1, 1));
    // The same miss behind a P2 segment that was already running when it arrived: not
    // the scheduler's choice (the segment holds its period).
    let held = hand_made(
        vec![job(1000.0, 2000.0, vec![(2100.0, 2460.0)], Some(2460.0))],
        vec![job(0.0, 90_000.0, vec![(900.0, 4500.0)], Some(4500.0))],
    );
    let (found, missed) = p1_waits_behind_others(&held);
    assert_eq!((found.len(), missed), (0, 1));
}

fn gpu_share_acceptance(days: f64, boinc_compat: bool) {
    let what = format!("gpu_share, {days} days, boinc_compat {boinc_compat}");
    let figures = run("gpu_share", days, boinc_compat, false).figures;
    let usage = |project: &str, resource: &str| -> f64 {
        let p = figures.projects.get(project).unwrap_or_else(|| panic!("{what}: no {project}"));
        *p.usage.get(resource).unwrap_or_else(|| panic!("{what}: {project} has no {resource}"))
    };
    let (b_cpu, a_gpu, b_gpu) = (usage("B", "cpu"), usage("A", "nvidia"), usage("B", "nvidia"));
    eprintln!("{what}: CPU B {b_cpu:.4}; GPU A {a_gpu:.4}, B {b_gpu:.4}");
    assert!(b_cpu >= 0.95, "{what}: B used {b_cpu:.4} of the CPU, not ≥ 0.95");
    assert!(
        (a_gpu - 0.75).abs() <= 0.05 && (b_gpu - 0.25).abs() <= 0.05,
        "{what}: the GPU split {a_gpu:.4} / {b_gpu:.4} between A and B, not 0.75 / 0.25 ± 0.05"
    );
}

#[test]
fn gpu_share_b_owns_the_cpu_and_the_gpu_splits_75_25() {
    gpu_share_acceptance(10.0, false);
    gpu_share_acceptance(100.0, false);
}

#[test]
fn gpu_share_acceptance_under_boinc_compat() {
    gpu_share_acceptance(10.0, true);
    gpu_share_acceptance(100.0, true);
}
