//! The scenarios shipped in examples/scenarios (the README's quick start runs one of
//! them): every project gets to compute and finishes jobs, and a task the state file
//! left suspended in memory runs again although no process survived into the run.

use boinc_core::Policy;
use boinc_core::emulator::engine::{SimConfig, SimResult, run_simulation};
use boinc_core::emulator::trace::TraceEvent;
use boinc_core::model::ClientState;
use boinc_core::protocol::{SourceText, StateFiles, load_state};
use std::path::{Path, PathBuf};

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scenarios")
}

fn load(name: &str) -> ClientState {
    let dir = examples_dir().join(name);
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).ok();
    let client_state = read("client_state.xml")
        .unwrap_or_else(|| panic!("{}: no client_state.xml", dir.display()));
    let (prefs, config) = (read("global_prefs.xml"), read("cc_config.xml"));
    load_state(&StateFiles {
        client_state: SourceText { name: "client_state.xml", text: &client_state },
        global_prefs: prefs.as_deref().map(|text| SourceText { name: "global_prefs.xml", text }),
        global_prefs_override: None,
        cc_config: config.as_deref().map(|text| SourceText { name: "cc_config.xml", text }),
    })
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn run(name: &str, days: f64, boinc_compat: bool) -> SimResult {
    let config = SimConfig {
        scenario: name.into(),
        policy: Policy::default(),
        seed: 1,
        duration: days * 86_400.0,
        boinc_compat,
        existing_jobs_only: false,
        trace: true,
    };
    run_simulation(load(name), &config, &mut |_| {})
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
            let result = run(name, 3.0, boinc_compat);
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
