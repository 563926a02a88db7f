//! Emulator speed (issue 3 acceptance): whole `boinc-rs sim` runs of the shared scenarios,
//! default policy, loaded from their files as the command line loads them.
//!
//! - `s2/100d/boinc-compat`: 100 simulated days of s2 under BOINC's emulator modelling.
//!   Target: median under 0.1 s (BOINC's emulator built with -O2: 2.0 s).
//! - `s2/100d/faithful`: the same with the default, faithful host model.
//! - `big_host/10d/boinc-compat`: 10 simulated days of big_host. Target: median under 0.2 s
//!   (BOINC's emulator built optimised: 12.4 s).
//! - `seed_scenario1/100d/boinc-compat`: 100 simulated days of seed_scenario1 (two CPUs,
//!   one project of short jobs). Target: median under 0.05 s (BOINC's emulator: 1.96 s).
//!
//! Run: `cargo bench -p boinc-core --bench emulator` (about two minutes). Under
//! `cargo test --all-targets` criterion runs each case once, unoptimised; there the horizons
//! shrink to one simulated day so the test suite stays quick while still exercising the
//! whole path from files to figures.

use boinc_core::Policy;
use boinc_core::model::{ClientState, SECONDS_PER_DAY};
use boinc_core::protocol::{SourceText, StateFiles, load_state};
use boinc_emulator::engine::{SimConfig, run_simulation};
use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the shared scenarios live: beside the repository, as in the commands.
fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("shared").join("scenarios")
}

/// Reads one optional file of a scenario directory.
fn read_optional(dir: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(name)).ok()
}

/// Loads a scenario directory as `boinc-rs sim --scenario` does; `None` (with a note on
/// stderr) when the directory or its client_state.xml is missing or unreadable, so a
/// checkout without the shared scenarios still builds and runs its other benches.
fn load_scenario(name: &str) -> Option<ClientState> {
    let dir = scenarios_dir().join(name);
    let Some(client_state) = read_optional(&dir, "client_state.xml") else {
        eprintln!("skipping {name}: no readable {}/client_state.xml", dir.display());
        return None;
    };
    let global_prefs = read_optional(&dir, "global_prefs.xml");
    let cc_config = read_optional(&dir, "cc_config.xml");
    let files = StateFiles {
        client_state: SourceText { name: "client_state.xml", text: &client_state },
        global_prefs: global_prefs
            .as_deref()
            .map(|text| SourceText { name: "global_prefs.xml", text }),
        global_prefs_override: None,
        cc_config: cc_config.as_deref().map(|text| SourceText { name: "cc_config.xml", text }),
    };
    match load_state(&files) {
        Ok(state) => Some(state),
        Err(e) => {
            eprintln!("skipping {name}: {e}");
            None
        }
    }
}

/// `cargo bench` passes `--bench`; anything else (`cargo test --all-targets`) is a smoke run.
fn benchmarking() -> bool {
    std::env::args().any(|arg| arg == "--bench")
}

fn bench_scenario(c: &mut Criterion, scenario: &str, days: f64, boinc_compat: bool) {
    let Some(state) = load_scenario(scenario) else { return };
    let days = if benchmarking() { days } else { days.min(1.0) };
    let config = SimConfig {
        scenario: scenario.to_string(),
        policy: Policy::Seed,
        seed: 1,
        duration: days * SECONDS_PER_DAY,
        boinc_compat,
        existing_jobs_only: false,
        trace: false,
    };
    let model = if boinc_compat { "boinc-compat" } else { "faithful" };
    let mut group = c.benchmark_group(format!("{scenario}/{days}d"));
    // A run takes 0.1 to 1 s: flat sampling keeps ten samples within the measurement
    // time instead of criterion's default 1 + 2 + … + 10 iterations.
    group.sampling_mode(SamplingMode::Flat);
    // The clone is part of what `boinc-rs sim` does too, and costs microseconds.
    group.bench_function(model, |b| {
        b.iter(|| run_simulation(black_box(state.clone()), &config, &mut |_| {}).figures)
    });
    group.finish();
}

fn bench_emulator(c: &mut Criterion) {
    bench_scenario(c, "s2", 100.0, true);
    bench_scenario(c, "s2", 100.0, false);
    bench_scenario(c, "big_host", 10.0, true);
    bench_scenario(c, "seed_scenario1", 100.0, true);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(10));
    targets = bench_emulator
}
criterion_main!(benches);
