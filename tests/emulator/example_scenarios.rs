//! The scenarios shipped in examples/scenarios (the README's quick start runs one of
//! them): every project gets to compute and finishes jobs, a task the state file left
//! suspended in memory runs again although no process survived into the run, and
//! multithread_mix keeps every CPU busy without a miss, split as the shares say.

use crate::support;

use boinc_emulator::engine::SimResult;
use boinc_emulator::engine::run_simulation;
use boinc_emulator::trace::TraceEvent;
use std::path::{Path, PathBuf};
use support::{load_scenario_dir, run_state, sim_config};

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scenarios")
}

fn run(name: &str, days: f64, boinc_compat: bool) -> SimResult {
    run_state(name, load_scenario_dir(&examples_dir().join(name)), days, boinc_compat, true)
}

#[test]
fn every_project_of_every_example_finishes_jobs() {
    let mut names: Vec<String> = std::fs::read_dir(examples_dir())
        .expect("examples/scenarios")
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.path().join("client_state.xml").is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 3, "{names:?}");
    for name in &names {
        for boinc_compat in [false, true] {
            // Ten days: long enough for ten projects of 6-12-hour jobs to take turns on
            // one CPU (many_projects).
            let result = run(name, 10.0, boinc_compat);
            for (project, figures) in &result.figures.projects {
                assert!(
                    figures.jobs_done > 0,
                    "{name} (compat {boinc_compat}): {project} finished no job"
                );
            }
        }
    }
}

#[test]
fn a_task_suspended_in_memory_in_the_state_file_runs_again() {
    // desktop_gpu's protein job is half done, suspended in memory and due in 1.2 hours.
    let result = run("desktop_gpu", 1.0, false);
    let ran = result.trace.iter().any(
        |event| matches!(event, TraceEvent::RunSegment { job, .. } if job == "protein_wu_1_0"),
    );
    assert!(ran, "protein_wu_1_0 never ran");
    assert!(result.figures.projects["protein"].jobs_done > 0);
}

/// An 8-thread job beside single-thread jobs due in 12 hours (multithread_mix): when the
/// multithread job's turn comes it starts beside the jobs running on to their
/// checkpoints instead of idling the CPUs they free one by one, and no single-thread
/// job misses for it. Over three seeds, both models, 20 days.
#[test]
fn multithread_mix_idles_no_cpu_and_misses_nothing() {
    let state = load_scenario_dir(&examples_dir().join("multithread_mix"));
    for seed in 1..=3 {
        for boinc_compat in [false, true] {
            let mut config = sim_config("multithread_mix", 20.0, boinc_compat, false);
            config.seed = seed;
            let figures = run_simulation(state.clone(), &config, &mut |_| {}).figures;
            let context = format!("seed {seed}, compat {boinc_compat}: {figures:?}");
            assert!(figures.idle_fraction < 1e-3, "{context}");
            let missed: u32 = figures.projects.values().map(|p| p.deadlines_missed).sum();
            assert_eq!(missed, 0, "{context}");
            assert!(figures.fair_share_violation < 0.01, "{context}");
        }
    }
}

/// Ten equal projects of 6-12-hour jobs on one slow CPU (many_projects): over 100 days
/// each gets its tenth of the CPU, and none goes without computing for longer than its
/// share of the run (a tenth of 100 days, 240 hours: a project that got ahead repays by
/// waiting, never by starving). Seeds 1-3.
#[test]
fn many_projects_share_the_cpu_and_none_waits_longer_than_its_share_of_the_run() {
    let state = load_scenario_dir(&examples_dir().join("many_projects"));
    let days = 100.0;
    for seed in 1..=3 {
        let mut config = sim_config("many_projects", days, false, true);
        config.seed = seed;
        let result = run_simulation(state.clone(), &config, &mut |_| {});
        let figures = &result.figures;
        assert!(figures.fair_share_violation < 0.02, "seed {seed}: {figures:?}");
        let end = days * 86_400.0;
        for (project, project_figures) in &figures.projects {
            let mut segments: Vec<(f64, f64)> = result
                .trace
                .iter()
                .filter_map(|event| match event {
                    TraceEvent::RunSegment { project: p, start, end, .. } if p == project => {
                        Some((*start, *end))
                    }
                    _ => None,
                })
                .collect();
            segments.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (mut last_end, mut longest) = (0.0f64, 0.0f64);
            for (start, end) in segments {
                longest = longest.max(start - last_end);
                last_end = last_end.max(end);
            }
            longest = longest.max(end - last_end);
            let share_of_run = project_figures.fair_share * end;
            assert!(
                longest <= share_of_run,
                "seed {seed}: {project} waited {:.0} h, its share of the run is {:.0} h",
                longest / 3600.0,
                share_of_run / 3600.0
            );
        }
    }
}
