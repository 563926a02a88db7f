//! The tests' one support layer for scenarios and fixtures, shared by the cross-crate
//! tests (tests/) and the other crates' tests (which include this file by path): where
//! the reference scenarios, the shipped scenarios and the real BOINC fixtures are, loading them as
//! `boinc-rs sim --scenario` does, the run configuration every test uses, running the
//! emulator, and round-tripping a trace through JSON lines.

#![allow(dead_code)] // Each test binary uses a different subset.

use boinc_core::Policy;
use boinc_core::model::ClientState;
use boinc_core::protocol::{SourceText, StateFiles, load_state};
use boinc_emulator::engine::{SimConfig, SimResult, run_simulation};
use boinc_emulator::figures::FiguresOfMerit;
use boinc_emulator::trace::TraceEvent;
use std::fs;
use std::path::{Path, PathBuf};

/// Seconds per simulated day.
pub const DAY: f64 = 86_400.0;

/// The seed every acceptance run uses, so failures reproduce with `boinc-rs sim --seed 1`.
pub const SEED: u64 = 1;

/// The repository's root, whichever crate's tests include this file: the nearest
/// directory above the crate that holds the workspace's `Cargo.lock`.
pub fn repository_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").is_file())
        .unwrap_or(manifest)
        .to_path_buf()
}

/// The test data kept in the repository (tests/fixtures, tests/scenarios); a missing
/// directory is a broken test setup, never a pass.
pub fn shared_dir() -> PathBuf {
    let dir = repository_dir().join("tests");
    assert!(
        dir.is_dir(),
        "{} is missing: it holds the test data (fixtures, scenarios)",
        dir.display()
    );
    dir
}

/// The reference scenarios (with BOINC's figures in REFERENCE.md).
pub fn scenarios_dir() -> PathBuf {
    shared_dir().join("scenarios")
}

/// The scenarios shipped with the project (examples/scenarios).
pub fn shipped_scenarios_dir() -> PathBuf {
    repository_dir().join("examples/scenarios")
}

/// A scenario by name: a shipped one if there is one, else a shared one.
pub fn scenario_dir(name: &str) -> PathBuf {
    let shipped = shipped_scenarios_dir().join(name);
    if shipped.exists() { shipped } else { scenarios_dir().join(name) }
}

/// A file of the real BOINC captures, by its path under shared/fixtures.
pub fn fixture_path(relative: &str) -> PathBuf {
    shared_dir().join("fixtures").join(relative)
}

/// A fixture's text.
pub fn read_fixture(relative: &str) -> String {
    let path = fixture_path(relative);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// A fixture state file (client_state.xml) as the state reader reads it.
pub fn load_fixture(relative: &str) -> ClientState {
    boinc_core::protocol::parse_client_state(&read_fixture(relative), relative)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Every scenario directory, sorted by name.
pub fn scenario_names() -> Vec<String> {
    let root = scenarios_dir();
    let mut names: Vec<String> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.join("client_state.xml").is_file())
        .map(|path| path.file_name().expect("named").to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 8, "expected the eight shared scenarios, found {names:?}");
    names
}

fn read_optional(path: &Path) -> Option<String> {
    match fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => panic!("reading {}: {e}", path.display()),
    }
}

/// Loads a scenario (shipped, else shared) as `boinc-rs sim --scenario` does.
pub fn load_scenario(name: &str) -> ClientState {
    load_scenario_dir(&scenario_dir(name))
}

/// Loads any scenario directory (client_state.xml, optional global_prefs.xml and
/// cc_config.xml) as `boinc-rs sim --scenario` does.
pub fn load_scenario_dir(dir: &Path) -> ClientState {
    let client_state = read_optional(&dir.join("client_state.xml"))
        .unwrap_or_else(|| panic!("{} has no client_state.xml", dir.display()));
    let global_prefs = read_optional(&dir.join("global_prefs.xml"));
    let cc_config = read_optional(&dir.join("cc_config.xml"));
    let files = StateFiles {
        client_state: SourceText { name: "client_state.xml", text: &client_state },
        global_prefs: global_prefs
            .as_deref()
            .map(|text| SourceText { name: "global_prefs.xml", text }),
        global_prefs_override: None,
        cc_config: cc_config.as_deref().map(|text| SourceText { name: "cc_config.xml", text }),
    };
    load_state(&files).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// Runs a shared scenario with the default policy.
pub fn run(name: &str, days: f64, boinc_compat: bool, trace: bool) -> SimResult {
    run_state(name, load_scenario(name), days, boinc_compat, trace)
}

/// The configuration every test run uses: the default policy, seed [`SEED`].
pub fn sim_config(name: &str, days: f64, boinc_compat: bool, trace: bool) -> SimConfig {
    SimConfig {
        scenario: name.to_string(),
        policy: Policy::default(),
        seed: SEED,
        duration: days * DAY,
        boinc_compat,
        existing_jobs_only: false,
        trace,
    }
}

/// Runs a loaded scenario state with the default policy.
pub fn run_state(
    name: &str,
    state: ClientState,
    days: f64,
    boinc_compat: bool,
    trace: bool,
) -> SimResult {
    run_simulation(state, &sim_config(name, days, boinc_compat, trace), &mut |_| {})
}

/// Writes the trace as JSON lines, as `--trace` does, and reads it back.
pub fn json_lines_round_trip(trace: &[TraceEvent]) -> Vec<TraceEvent> {
    let mut text = String::new();
    for event in trace {
        text.push_str(&serde_json::to_string(event).expect("trace events serialise"));
        text.push('\n');
    }
    text.lines()
        .enumerate()
        .map(|(number, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("trace line {}: {e}: {line}", number + 1))
        })
        .collect()
}

/// Checks that every figure is a finite number in its range and that work got done;
/// `what` names the run in failure messages.
pub fn assert_sane(what: &str, figures: &FiguresOfMerit, days: f64) {
    let fractions = [
        ("idle fraction", figures.idle_fraction),
        ("wasted fraction", figures.wasted_fraction),
        ("monotony", figures.monotony),
    ];
    for (name, value) in fractions {
        assert!(value.is_finite() && (0.0..=1.0).contains(&value), "{what}: {name} = {value}");
    }
    assert!(
        figures.wasted_fraction <= 1.0 - figures.idle_fraction + 1e-12,
        "{what}: wasted {} exceeds the used fraction {}",
        figures.wasted_fraction,
        1.0 - figures.idle_fraction
    );
    // Σ_p |U_p − U·s_p| ≤ Σ_p U_p + U·Σ_p s_p = 2U (a run at the bound may round a last
    // bit over it).
    let share_violation = figures.share_violation;
    assert!(
        share_violation.is_finite() && (0.0..=2.0 + 1e-12).contains(&share_violation),
        "{what}: share violation = {share_violation}"
    );
    // The same bound holds for the fair-share violation, T being a division of U.
    let fair_share_violation = figures.fair_share_violation;
    assert!(
        fair_share_violation.is_finite() && (0.0..=2.0 + 1e-12).contains(&fair_share_violation),
        "{what}: fair-share violation = {fair_share_violation}"
    );
    let rpcs_per_job = figures.rpcs_per_job;
    assert!(
        rpcs_per_job.is_finite() && rpcs_per_job > 0.0,
        "{what}: RPCs per job = {rpcs_per_job}"
    );
    assert!((figures.sim_days - days).abs() < 1e-9, "{what}: {} simulated days", figures.sim_days);
    assert!(!figures.projects.is_empty(), "{what}: no projects");
    let mut jobs_done = 0;
    let mut usage_per_resource = std::collections::BTreeMap::<&str, f64>::new();
    for (project, p) in &figures.projects {
        for (resource, &usage) in &p.usage {
            assert!(
                usage.is_finite() && (0.0..=1.0 + 1e-12).contains(&usage),
                "{what}: {project} uses {usage} of {resource}"
            );
            *usage_per_resource.entry(resource).or_default() += usage;
        }
        jobs_done += p.jobs_done;
    }
    for (resource, usage) in usage_per_resource {
        assert!(usage <= 1.0 + 1e-9, "{what}: projects use {usage} of {resource} together");
    }
    assert!(jobs_done > 0, "{what}: no job finished");
}
