//! Runs every scenario of one or more scenario folders (default `tests/scenarios`)
//! for 10 simulated days with the default policy, under `--boinc-compat` and faithfully,
//! and prints a markdown table next to BOINC's own emulator figures
//! (`boinc_10d/results.txt` in each scenario), with the acceptance margins checked.
//!
//! BOINC's fair-share violation is computed here, with boinc-rs's own definition
//! ([`boinc_emulator::fair_share`]), from BOINC's per-project, per-device usage in
//! `boinc_10d/resources.txt` and the app versions the scenario gives each project.
//! Scenarios without BOINC's figures (the shipped examples) are listed without them.
//!
//! `cargo run --release --example boinc_comparison [-- DIR ...]`

use boinc_core::Policy;
use boinc_core::model::{
    ClientState, GPU_PEAK_FLOPS_SCALE, ResourceMap, ResourceType, SECONDS_PER_DAY,
};
use boinc_core::protocol::{SourceText, StateFiles, load_state};
use boinc_emulator::engine::{SimConfig, run_simulation};
use boinc_emulator::fair_share::{ProjectProcessing, fair_share_violation};
use boinc_emulator::figures::FiguresOfMerit;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// BOINC's figures for one scenario, as its emulator printed them.
struct Reference {
    wasted: f64,
    idle: f64,
    share_violation: f64,
    /// From `resources.txt`, where the scenario has it.
    fair_share_violation: Option<f64>,
}

fn read_reference(dir: &Path, state: &ClientState) -> Option<Reference> {
    let text = std::fs::read_to_string(dir.join("boinc_10d/results.txt")).ok()?;
    let figure = |label: &str| {
        text.lines()
            .find(|l| l.to_ascii_lowercase().starts_with(label))
            .and_then(|l| l.split_whitespace().last())
            .and_then(|v| v.parse::<f64>().ok())
    };
    let resources = std::fs::read_to_string(dir.join("boinc_10d/resources.txt")).ok();
    Some(Reference {
        wasted: figure("wasted fraction")?,
        idle: figure("idle fraction")?,
        share_violation: figure("share violation")?,
        fair_share_violation: resources.and_then(|text| boinc_fair_share_violation(&text, state)),
    })
}

/// `key value key value ...` after the first `skip` words, as a map.
fn pairs(line: &str, skip: usize) -> HashMap<&str, &str> {
    let words: Vec<&str> = line.split_whitespace().skip(skip).collect();
    words.chunks(2).filter(|c| c.len() == 2).map(|c| (c[0], c[1])).collect()
}

/// BOINC's fair-share violation from its per-project, per-device usage: a device's
/// flops are its usage fraction × its capacity (CPU: `ncpus × p_fpops × total_time`;
/// GPU: `count × 0.2 × peak × count × gpu_active_time`, BOINC's valuation); the CPU part
/// of GPU jobs (`cpu_frac − cpu_by_cpujobs`) counts with the GPUs, split among GPU types
/// as their flops are. A project's devices are those the scenario gives it app versions
/// for.
fn boinc_fair_share_violation(text: &str, state: &ClientState) -> Option<f64> {
    let number = |map: &HashMap<&str, &str>, key: &str| map.get(key)?.parse::<f64>().ok();
    let header = text.lines().find(|l| l.starts_with("total_time"))?;
    let header = pairs(header, 0);
    let (total_time, gpu_time) =
        (number(&header, "total_time")?, number(&header, "gpu_active_time")?);
    let cpu_capacity = number(&header, "ncpus")? * number(&header, "p_fpops")? * total_time;
    let mut gpu_capacity: HashMap<String, (ResourceType, f64)> = HashMap::new();
    for line in text.lines().filter(|l| l.starts_with("rsc ")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let name = words.get(2)?;
        let resource = ResourceType::from_boinc_name(name)?;
        let map = pairs(line, 3);
        let (count, peak) = (number(&map, "count")?, number(&map, "peak_flops")?);
        gpu_capacity.insert(
            name.to_string(),
            (resource, count * GPU_PEAK_FLOPS_SCALE * peak * count * gpu_time),
        );
    }
    let mut projects = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("project ")) {
        let name = line.split_whitespace().nth(1)?;
        let map = pairs(line, 2);
        let id = state.projects.iter().position(|p| p.name == name)?;
        let mut devices = ResourceMap::from_fn(|_| false);
        for version in state.app_versions.iter().filter(|v| v.project.index() == id) {
            devices[version.usage.main_resource()] = true;
        }
        let mut used = ResourceMap::from_fn(|_| 0.0);
        used[ResourceType::Cpu] = number(&map, "cpu_by_cpujobs")? * cpu_capacity;
        let cpu_of_gpu_jobs =
            (number(&map, "cpu_frac")? - number(&map, "cpu_by_cpujobs")?) * cpu_capacity;
        let mut gpu_flops = ResourceMap::from_fn(|_| 0.0);
        for (key, value) in &map {
            let Some(gpu_name) =
                key.strip_suffix("_frac").and_then(|k| k.split_once('_')).map(|(_, n)| n)
            else {
                continue;
            };
            if let Some(&(resource, capacity)) = gpu_capacity.get(gpu_name) {
                gpu_flops[resource] += value.parse::<f64>().ok()? * capacity;
            }
        }
        let all_gpu: f64 = gpu_flops.0.iter().sum();
        for resource in ResourceType::GPUS {
            if all_gpu > 0.0 {
                used[resource] = gpu_flops[resource] * (1.0 + cpu_of_gpu_jobs / all_gpu);
            }
        }
        projects.push(ProjectProcessing { share: number(&map, "share")?, devices, used });
    }
    Some(fair_share_violation(&projects))
}

fn load(dir: &Path) -> Result<ClientState, String> {
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
    load_state(&files).map_err(|e| e.to_string())
}

fn run(dir: &Path, state: ClientState, boinc_compat: bool) -> FiguresOfMerit {
    let config = SimConfig {
        scenario: dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        policy: Policy::Seed,
        seed: 1,
        duration: 10.0 * SECONDS_PER_DAY,
        boinc_compat,
        existing_jobs_only: false,
        trace: false,
    };
    run_simulation(state, &config, &mut |_| {}).figures
}

fn scenario_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = match std::fs::read_dir(root) {
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
    dirs
}

fn figures(f: &FiguresOfMerit) -> String {
    format!(
        "{:.4} / {:.4} / {:.4} / {:.4}",
        f.wasted_fraction, f.idle_fraction, f.share_violation, f.fair_share_violation
    )
}

fn main() {
    let mut roots: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if roots.is_empty() {
        roots.push(PathBuf::from("tests/scenarios"));
    }
    println!(
        "| scenario | BOINC wasted / idle / share viol. / fair-share viol. | boinc-rs (--boinc-compat) | within margins | better on | boinc-rs (faithful) |"
    );
    println!("|---|---|---|---|---|---|");
    let (mut better_count, mut within_count, mut total) = (0, 0, 0);
    for dir in roots.iter().flat_map(|root| scenario_dirs(root)) {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let state = match load(&dir) {
            Ok(state) => state,
            Err(e) => {
                eprintln!("{name}: {e}");
                std::process::exit(1);
            }
        };
        let reference = read_reference(&dir, &state);
        let compat = run(&dir, state.clone(), true);
        let faithful = run(&dir, state, false);
        let (ours, faithful) = (figures(&compat), figures(&faithful));
        let Some(reference) = reference else {
            println!("| {name} | (no BOINC run) | {ours} | – | – | {faithful} |");
            continue;
        };
        total += 1;
        let fair = reference.fair_share_violation.unwrap_or(reference.share_violation);
        let within = compat.wasted_fraction <= reference.wasted + 0.005
            && compat.idle_fraction <= reference.idle + 0.01
            && compat.fair_share_violation <= fair + 0.02;
        // Better means better at the precision printed, not by a rounding error.
        const VISIBLE: f64 = 1e-4;
        let mut better = Vec::new();
        if compat.wasted_fraction <= reference.wasted - VISIBLE {
            better.push("wasted");
        }
        if compat.fair_share_violation <= fair - VISIBLE {
            better.push("fair-share violation");
        }
        within_count += usize::from(within);
        better_count += usize::from(!better.is_empty());
        println!(
            "| {name} | {:.4} / {:.4} / {:.4} / {} | {ours} | {} | {} | {faithful} |",
            reference.wasted,
            reference.idle,
            reference.share_violation,
            reference.fair_share_violation.map_or("–".to_string(), |v| format!("{v:.4}")),
            if within { "yes" } else { "NO" },
            if better.is_empty() { "–".to_string() } else { better.join(", ") },
        );
    }
    println!();
    println!(
        "{within_count} of {total} within BOINC + (0.005 wasted, 0.01 idle, 0.02 fair-share violation); strictly better on wasted or fair-share violation on {better_count} of {total}."
    );
}
