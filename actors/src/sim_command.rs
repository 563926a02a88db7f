//! `boinc-rs sim`: runs a scenario in virtual time and prints BOINC's figures of merit.

use crate::state_dir::load_state_dir;
use anyhow::{Context, Result, bail};
use boinc_core::Policy;
use boinc_core::emulator::engine::{SimConfig, SimResult, run_simulation};
use boinc_core::emulator::figures::FiguresOfMerit;
use boinc_core::emulator::notation::{NotationOptions, scenario_from_notation};
use boinc_core::emulator::timeline::render_timeline;
use boinc_core::model::{ClientState, SECONDS_PER_DAY};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where the scenario comes from and how to run it.
pub struct SimArgs {
    /// A scenario directory in BOINC's emulator format.
    pub scenario: Option<PathBuf>,
    /// Seed 000's notation instead of a directory.
    pub notation: Option<String>,
    /// Options of the notation.
    pub notation_options: NotationOptions,
    /// Simulated days.
    pub days: f64,
    /// The policy (ignored when `compare` is given).
    pub policy: Policy,
    /// Policies to compare side by side.
    pub compare: Option<Vec<Policy>>,
    /// RNG seed.
    pub seed: u64,
    /// Print JSON.
    pub json: bool,
    /// Write the trace here.
    pub trace: Option<PathBuf>,
    /// Write the SVG timeline here.
    pub timeline: Option<PathBuf>,
    /// Never fetch work.
    pub existing_jobs_only: bool,
    /// BOINC-emulator modelling.
    pub boinc_compat: bool,
}

/// One run's figures as printed, with what was run.
#[derive(Serialize)]
struct RunReport<'a> {
    scenario: &'a str,
    policy: Policy,
    seed: u64,
    boinc_compat: bool,
    #[serde(flatten)]
    figures: &'a FiguresOfMerit,
}

fn load_scenario(args: &SimArgs) -> Result<(String, ClientState)> {
    match (&args.scenario, &args.notation) {
        (Some(dir), None) => {
            let name = dir
                .file_name()
                .map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned());
            Ok((name, load_state_dir(dir)?))
        }
        (None, Some(text)) => {
            let state = scenario_from_notation(text, &args.notation_options)
                .context("cannot read the scenario notation")?;
            Ok(("notation".to_string(), state))
        }
        (Some(_), Some(_)) => bail!("give either --scenario DIR or --notation TEXT, not both"),
        (None, None) => bail!("give a scenario: --scenario DIR or --notation \"P1(C,D,R) ...\""),
    }
}

/// Runs one simulation with a progress bar that appears only for runs longer than a second.
fn run_one(state: ClientState, config: &SimConfig) -> (SimResult, f64) {
    let started = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    let mut progress = |fraction: f64| {
        if bar.is_none() && started.elapsed() > Duration::from_secs(1) {
            let b = ProgressBar::new(1000);
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} simulating {msg} [{bar:40}] {percent}% ({eta})",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.set_message(config.scenario.clone());
            bar = Some(b);
        }
        if let Some(b) = &bar {
            b.set_position((fraction * 1000.0) as u64);
        }
    };
    let result = run_simulation(state, config, &mut progress);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    (result, started.elapsed().as_secs_f64())
}

fn write_trace(path: &Path, result: &SimResult) -> Result<()> {
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = BufWriter::new(file);
    for event in &result.trace {
        serde_json::to_writer(&mut out, event)?;
        out.write_all(b"\n")?;
    }
    out.flush().with_context(|| format!("cannot write {}", path.display()))
}

fn print_figures(
    out: &mut impl Write,
    name: &str,
    policy: Policy,
    args: &SimArgs,
    f: &FiguresOfMerit,
) -> Result<()> {
    writeln!(
        out,
        "boinc-rs sim: scenario {name}, policy {policy}, seed {}, {:.1} days{}, {:.3} s wall",
        args.seed,
        f.sim_days,
        if args.boinc_compat { " (boinc-compat)" } else { "" },
        f.wall_seconds
    )?;
    writeln!(out, "  idle fraction     {:.4}", f.idle_fraction)?;
    writeln!(out, "  wasted fraction   {:.4}", f.wasted_fraction)?;
    writeln!(out, "  share violation   {:.4}", f.share_violation)?;
    writeln!(out, "  monotony          {:.4}", f.monotony)?;
    writeln!(out, "  RPCs per job      {:.4}", f.rpcs_per_job)?;
    writeln!(
        out,
        "  {:<16} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "project", "cpu", "nvidia", "amd", "intel", "jobs done", "missed"
    )?;
    for (project, p) in &f.projects {
        let usage = |key: &str| p.usage.get(key).map_or("-".to_string(), |u| format!("{:.4}", u));
        writeln!(
            out,
            "  {:<16} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            project,
            usage("cpu"),
            usage("nvidia"),
            usage("amd"),
            usage("intel"),
            p.jobs_done,
            p.deadlines_missed
        )?;
    }
    Ok(())
}

/// Reads one figure out of a run's figures.
type FigureOf = fn(&FiguresOfMerit) -> f64;

fn print_comparison(
    out: &mut impl Write,
    name: &str,
    args: &SimArgs,
    runs: &[(Policy, FiguresOfMerit)],
) -> Result<()> {
    writeln!(
        out,
        "boinc-rs sim --compare: scenario {name}, seed {}, {:.1} days{}",
        args.seed,
        args.days,
        if args.boinc_compat { " (boinc-compat)" } else { "" }
    )?;
    write!(out, "  {:<18}", "")?;
    for (policy, _) in runs {
        write!(out, " {:>10}", policy.name())?;
    }
    writeln!(out)?;
    let rows: [(&str, FigureOf); 6] = [
        ("idle fraction", |f| f.idle_fraction),
        ("wasted fraction", |f| f.wasted_fraction),
        ("share violation", |f| f.share_violation),
        ("monotony", |f| f.monotony),
        ("RPCs per job", |f| f.rpcs_per_job),
        ("wall seconds", |f| f.wall_seconds),
    ];
    for (label, value) in rows {
        write!(out, "  {label:<18}")?;
        for (_, figures) in runs {
            write!(out, " {:>10.4}", value(figures))?;
        }
        writeln!(out)?;
    }
    let missed = |f: &FiguresOfMerit| f.projects.values().map(|p| p.deadlines_missed).sum::<u32>();
    write!(out, "  {:<18}", "deadlines missed")?;
    for (_, figures) in runs {
        write!(out, " {:>10}", missed(figures))?;
    }
    writeln!(out)?;
    Ok(())
}

/// Runs the command.
pub fn sim(args: SimArgs) -> Result<()> {
    if !(args.days.is_finite() && args.days > 0.0) {
        bail!("--days must be a positive number of days, not {}", args.days);
    }
    let (name, state) = load_scenario(&args)?;
    let policies = args.compare.clone().unwrap_or_else(|| vec![args.policy]);
    let keep_trace = args.trace.is_some() || args.timeline.is_some();
    if keep_trace && policies.len() > 1 {
        bail!("--trace and --timeline record one run: drop --compare or name one policy");
    }
    let mut runs = Vec::new();
    for &policy in &policies {
        let config = SimConfig {
            scenario: name.clone(),
            policy,
            seed: args.seed,
            duration: args.days * SECONDS_PER_DAY,
            boinc_compat: args.boinc_compat,
            existing_jobs_only: args.existing_jobs_only,
            trace: keep_trace,
        };
        let (result, wall) = run_one(state.clone(), &config);
        if let Some(path) = &args.trace {
            write_trace(path, &result)?;
        }
        if let Some(path) = &args.timeline {
            std::fs::write(path, render_timeline(&result.trace))
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        let mut figures = result.figures;
        figures.wall_seconds = wall;
        runs.push((policy, figures));
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        if args.compare.is_some() {
            let reports: std::collections::BTreeMap<&str, RunReport> = runs
                .iter()
                .map(|(policy, figures)| {
                    let report = RunReport {
                        scenario: &name,
                        policy: *policy,
                        seed: args.seed,
                        boinc_compat: args.boinc_compat,
                        figures,
                    };
                    (policy.name(), report)
                })
                .collect();
            serde_json::to_writer_pretty(&mut out, &reports)?;
        } else {
            let (policy, figures) = &runs[0];
            let report = RunReport {
                scenario: &name,
                policy: *policy,
                seed: args.seed,
                boinc_compat: args.boinc_compat,
                figures,
            };
            serde_json::to_writer_pretty(&mut out, &report)?;
        }
        writeln!(out)?;
    } else if args.compare.is_some() {
        print_comparison(&mut out, &name, &args, &runs)?;
    } else {
        let (policy, figures) = &runs[0];
        print_figures(&mut out, &name, *policy, &args, figures)?;
    }
    Ok(())
}
