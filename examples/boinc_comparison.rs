//! Runs every scenario of a BOINC scenario folder (default `../shared/scenarios`) for 10
//! simulated days with the default policy, under `--boinc-compat` and faithfully, and
//! prints a markdown table next to BOINC's own emulator figures (`boinc_10d/results.txt`
//! in each scenario), with the acceptance margins checked.
//!
//! `cargo run --release --example boinc_comparison [-- SCENARIOS_DIR]`

use boinc_core::Policy;
use boinc_core::emulator::engine::{SimConfig, run_simulation};
use boinc_core::emulator::figures::FiguresOfMerit;
use boinc_core::model::SECONDS_PER_DAY;
use boinc_core::protocol::{SourceText, StateFiles, load_state};
use std::path::{Path, PathBuf};

/// BOINC's figures for one scenario, as its emulator printed them.
struct Reference {
    wasted: f64,
    idle: f64,
    share_violation: f64,
}

fn read_reference(dir: &Path) -> Option<Reference> {
    let text = std::fs::read_to_string(dir.join("boinc_10d/results.txt")).ok()?;
    let figure = |label: &str| {
        text.lines()
            .find(|l| l.to_ascii_lowercase().starts_with(label))
            .and_then(|l| l.split_whitespace().last())
            .and_then(|v| v.parse::<f64>().ok())
    };
    Some(Reference {
        wasted: figure("wasted fraction")?,
        idle: figure("idle fraction")?,
        share_violation: figure("share violation")?,
    })
}

fn run(dir: &Path, boinc_compat: bool) -> Result<FiguresOfMerit, String> {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    let client_state = read("client_state.xml").ok_or("no client_state.xml")?;
    let prefs = read("global_prefs.xml");
    let config = read("cc_config.xml");
    let files = StateFiles {
        client_state: SourceText { name: "client_state.xml", text: &client_state },
        global_prefs: prefs.as_deref().map(|text| SourceText { name: "global_prefs.xml", text }),
        global_prefs_override: None,
        cc_config: config.as_deref().map(|text| SourceText { name: "cc_config.xml", text }),
    };
    let state = load_state(&files).map_err(|e| e.to_string())?;
    let config = SimConfig {
        scenario: dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        policy: Policy::Seed,
        seed: 1,
        duration: 10.0 * SECONDS_PER_DAY,
        boinc_compat,
        existing_jobs_only: false,
        trace: false,
    };
    Ok(run_simulation(state, &config, &mut |_| {}).figures)
}

fn main() {
    let root =
        std::env::args().nth(1).map_or_else(|| PathBuf::from("../shared/scenarios"), PathBuf::from);
    let mut dirs: Vec<PathBuf> = match std::fs::read_dir(&root) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join("client_state.xml").is_file())
            .collect(),
        Err(e) => {
            eprintln!("cannot read {}: {e}", root.display());
            std::process::exit(1);
        }
    };
    dirs.sort();
    println!(
        "| scenario | BOINC wasted / idle / share viol. | boinc-rs (--boinc-compat) | within margins | better on | boinc-rs (faithful) |"
    );
    println!("|---|---|---|---|---|---|");
    let (mut better_count, mut within_count, mut total) = (0, 0, 0);
    for dir in dirs {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let (compat, faithful) = match (run(&dir, true), run(&dir, false)) {
            (Ok(c), Ok(f)) => (c, f),
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("{name}: {e}");
                std::process::exit(1);
            }
        };
        let ours = format!(
            "{:.4} / {:.4} / {:.4}",
            compat.wasted_fraction, compat.idle_fraction, compat.share_violation
        );
        let faithful = format!(
            "{:.4} / {:.4} / {:.4}",
            faithful.wasted_fraction, faithful.idle_fraction, faithful.share_violation
        );
        let Some(reference) = read_reference(&dir) else {
            println!("| {name} | (no reference) | {ours} | – | – | {faithful} |");
            continue;
        };
        total += 1;
        let within = compat.wasted_fraction <= reference.wasted + 0.005
            && compat.idle_fraction <= reference.idle + 0.01
            && compat.share_violation <= reference.share_violation + 0.02;
        // Better means better at the precision printed, not by a rounding error.
        const VISIBLE: f64 = 1e-4;
        let mut better = Vec::new();
        if compat.wasted_fraction <= reference.wasted - VISIBLE {
            better.push("wasted");
        }
        if compat.share_violation <= reference.share_violation - VISIBLE {
            better.push("share violation");
        }
        within_count += usize::from(within);
        better_count += usize::from(!better.is_empty());
        println!(
            "| {name} | {:.4} / {:.4} / {:.4} | {ours} | {} | {} | {faithful} |",
            reference.wasted,
            reference.idle,
            reference.share_violation,
            if within { "yes" } else { "NO" },
            if better.is_empty() { "–".to_string() } else { better.join(", ") },
        );
    }
    println!();
    println!(
        "{within_count} of {total} within BOINC + (0.005 wasted, 0.01 idle, 0.02 share violation); strictly better on wasted or share violation on {better_count} of {total}."
    );
}
