//! `boinc-rs sim`: runs a scenario in virtual time and prints BOINC's figures of merit.

use anyhow::{Context, Result, bail};
use boinc_core::Policy;
use boinc_core::model::{ClientState, SECONDS_PER_DAY};
use boinc_emulator::engine::{SimConfig, SimResult, try_run_simulation};
use boinc_emulator::figures::FiguresOfMerit;
use boinc_emulator::notation::{NotationOptions, scenario_from_notation};
use boinc_emulator::timeline::render_timeline;
use boinc_runtime::journal::Journal;
use boinc_runtime::sim::effects::Faults;
use boinc_runtime::sim::run_actor_simulation;
use boinc_runtime::state_files::load_state_dir_with_warnings;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where the scenario comes from and how to run it: the options of `boinc-rs sim`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimArgs {
    /// A scenario: a directory in BOINC's client-emulator format (client_state.xml,
    /// global_prefs.xml, cc_config.xml), or a text file in seed 000's notation
    /// (projects P(C,D,R), parameters as name = value, # comments).
    #[arg(long, value_name = "DIR|FILE")]
    pub scenario: Option<PathBuf>,
    /// A scenario in seed 000's notation instead, e.g. "P1(0.1,1,.5) P2(1,24,.25)"
    /// (C = hours of CPU per job, D = delay bound in hours, R = share fraction).
    #[arg(long, value_name = "TEXT")]
    pub notation: Option<String>,
    /// With --notation or a notation file: number of CPUs (the file's ncpus wins).
    #[arg(long, default_value_t = 1)]
    pub ncpus: u32,
    /// With --notation or a notation file: work buffer (min_queue), hours.
    #[arg(long, value_name = "H")]
    pub min_queue: Option<f64>,
    /// With --notation or a notation file: CPU scheduling period, hours.
    #[arg(long, value_name = "H")]
    pub sched_period: Option<f64>,
    /// With --notation or a notation file: keep preempted tasks in memory.
    #[arg(long, value_name = "BOOL", default_value_t = false, action = clap::ArgAction::Set)]
    pub leave_in_memory: bool,
    /// Simulated days.
    #[arg(long, default_value_t = 10.0)]
    pub days: f64,
    /// Policy family: seed (default), legacy or rec.
    #[arg(long, default_value = "seed")]
    pub policy: Policy,
    /// Run these policies on the same seed and print them side by side, e.g. seed,legacy,rec.
    #[arg(long, value_delimiter = ',', value_name = "P,P,...")]
    pub compare: Option<Vec<Policy>>,
    /// Seed of every random choice: the same seed gives the same run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write every event as JSON lines to this file.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Draw the run as an SVG timeline (one lane per CPU and GPU instance).
    #[arg(long, value_name = "FILE.svg")]
    pub timeline: Option<PathBuf>,
    /// Never ask servers for work: run only the jobs the scenario holds.
    #[arg(long)]
    pub existing_jobs_only: bool,
    /// Model the world as BOINC's own emulator does, so figures compare like with like.
    #[arg(long)]
    pub boinc_compat: bool,
    /// Which engine runs the scenario: `core` (the emulator's own loop, the default) or
    /// `actors` (the full actor system in virtual time, with simulated effects).
    #[arg(long, value_enum, default_value = "core")]
    pub engine: Engine,
    /// With `--engine actors`: record every message delivered to every actor, as JSON
    /// lines, for `boinc-rs replay`.
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// With `--engine actors`: the probability that a scheduler RPC fails although the
    /// server is up (fault injection).
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub inject_rpc_failures: f64,
    /// With `--engine actors`: the probability, at each poll of a computing task, that
    /// its app has crashed (fault injection).
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub inject_app_crashes: f64,
    /// With `--engine actors`: serve the running client over GUI RPC on this port of
    /// 127.0.0.1 (0: any free port, printed on stderr), so boinccmd, boinctui and
    /// `boinc-rs status` can watch and control it. The run is paced in wall-clock time
    /// (see --realtime-factor) and ends at its span or on `quit`.
    #[arg(long, value_name = "PORT")]
    pub gui_rpc_port: Option<u16>,
    /// With --gui-rpc-port: the directory of gui_rpc_auth.cfg (created there with a
    /// random password if missing), remote_hosts.cfg and the configuration files that
    /// read_cc_config and read_global_prefs_override re-read (default: the current
    /// directory, as for BOINC's client).
    #[arg(long, value_name = "DIR")]
    pub gui_rpc_dir: Option<PathBuf>,
    /// With --gui-rpc-port: simulated seconds per wall-clock second (default 1: real time).
    #[arg(long, value_name = "F")]
    pub realtime_factor: Option<f64>,
}

impl SimArgs {
    /// The options of seed 000's notation given on the command line.
    pub fn notation_options(&self) -> NotationOptions {
        NotationOptions {
            ncpus: self.ncpus,
            min_queue_hours: self.min_queue,
            sched_period_hours: self.sched_period,
            leave_in_memory: self.leave_in_memory,
        }
    }
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

/// Drops `#` comments, so a notation file can say what it tests and what a good scheduler
/// does; the notation itself has no `#`.
fn strip_comments(text: &str) -> String {
    text.lines()
        .map(|line| line.split_once('#').map_or(line, |(before, _)| before))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reads a scenario file in seed 000's notation; parameters written in the file win over
/// the `--ncpus`-style options, which default to the notation's own defaults.
fn load_notation_file(path: &Path, options: &NotationOptions) -> Result<ClientState> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the scenario file {}", path.display()))?;
    scenario_from_notation(&strip_comments(&text), options).with_context(|| {
        format!(
            "{} is not a scenario in seed 000's notation; give a scenario directory or a \
             text file of projects P(C, D, R) and name = value parameters",
            path.display()
        )
    })
}

/// Loads a scenario: a directory in BOINC's client-emulator format, or a file in seed
/// 000's notation (its name, less the extension, names the scenario).
pub(crate) fn load_scenario_path(
    path: &Path,
    options: &NotationOptions,
) -> Result<(String, ClientState)> {
    if !path.exists() {
        bail!(
            "{} does not exist: give a scenario directory (client_state.xml, global_prefs.xml, \
             cc_config.xml) or a text file in seed 000's notation",
            path.display()
        );
    }
    if path.is_file() {
        let name = path
            .file_stem()
            .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        return Ok((name, load_notation_file(path, options)?));
    }
    let name = path
        .file_name()
        .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    let (state, warnings) = load_state_dir_with_warnings(path)?;
    warn(&warnings);
    Ok((name, state))
}

/// Tells the user what loading the state had to drop or change.
pub(crate) fn warn(warnings: &[String]) {
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
}

fn load_scenario(args: &SimArgs) -> Result<(String, ClientState)> {
    match (&args.scenario, &args.notation) {
        (Some(path), None) => load_scenario_path(path, &args.notation_options()),
        (None, Some(text)) => {
            let state = scenario_from_notation(text, &args.notation_options())
                .context("cannot read the scenario notation")?;
            Ok(("notation".to_string(), state))
        }
        (Some(_), Some(_)) => bail!("give either --scenario DIR or --notation TEXT, not both"),
        (None, None) => bail!(
            "give a scenario: --scenario DIR, --scenario FILE (seed 000's notation) or \
             --notation \"P1(C,D,R) ...\""
        ),
    }
}

/// Which engine runs a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// The emulator's own event loop.
    Core,
    /// The actor system in virtual time.
    Actors,
}

/// Runs one simulation on the chosen engine.
fn run_engine(state: ClientState, config: &SimConfig, args: &SimArgs) -> Result<(SimResult, f64)> {
    if args.engine == Engine::Core {
        if args.journal.is_some() || args.inject_rpc_failures > 0.0 || args.inject_app_crashes > 0.0
        {
            bail!("--journal and fault injection need --engine actors");
        }
        if args.gui_rpc_port.is_some() || args.realtime_factor.is_some() {
            bail!("--gui-rpc-port and --realtime-factor need --engine actors");
        }
        return run_one(state, config);
    }
    for (name, p) in [
        ("--inject-rpc-failures", args.inject_rpc_failures),
        ("--inject-app-crashes", args.inject_app_crashes),
    ] {
        if !(0.0..=1.0).contains(&p) {
            bail!("{name} is a probability: give a number from 0 to 1, not {p}");
        }
    }
    let journal = match &args.journal {
        Some(path) => Journal::to_file(path)?,
        None => Journal::off(),
    };
    let faults = Faults {
        rpc_failure_rate: args.inject_rpc_failures,
        app_crash_rate: args.inject_app_crashes,
        ..Faults::default()
    };
    let started = Instant::now();
    let result = match args.gui_rpc_port {
        Some(port) => super::served_sim::run_served(state, config, faults, journal, port, args)?,
        None => run_actor_simulation(state, config, faults, journal, |_| {})
            .map_err(|e| anyhow::anyhow!("the actor system failed: {e}"))?,
    };
    Ok((result, started.elapsed().as_secs_f64()))
}

/// Runs one simulation with a progress bar that appears only for runs longer than a second.
fn run_one(state: ClientState, config: &SimConfig) -> Result<(SimResult, f64)> {
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
    let result = try_run_simulation(state, config, &mut progress);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let result = result.with_context(|| format!("cannot simulate {}", config.scenario))?;
    Ok((result, started.elapsed().as_secs_f64()))
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
    writeln!(out, "  fair-share viol.  {:.4}", f.fair_share_violation)?;
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
    // Only runs that emulate the disk (scenarios with file sizes) have disk figures.
    if f.projects.values().any(|p| p.files_deleted.is_some()) {
        writeln!(out, "  {:<16} {:>15} {:>13}", "disk", "violations", "files deleted")?;
        for (project, p) in &f.projects {
            writeln!(
                out,
                "  {:<16} {:>15} {:>13}",
                project,
                p.disk_violations.unwrap_or(0),
                p.files_deleted.unwrap_or(0)
            )?;
        }
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
    let rows: [(&str, FigureOf); 7] = [
        ("idle fraction", |f| f.idle_fraction),
        ("wasted fraction", |f| f.wasted_fraction),
        ("share violation", |f| f.share_violation),
        ("fair-share viol.", |f| f.fair_share_violation),
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

/// The longest run `sim` makes, simulated days (ten years): enough for any question a
/// scenario answers, and a bound on the time a mistyped `--days` costs.
const MAX_DAYS: f64 = 3653.0;

/// The longest run whose trace `sim` keeps (`--trace`, `--timeline`): a year. A trace
/// grows with every event (big_host: about 4.5 MB per ten simulated days) and is written at
/// the end.
const MAX_TRACED_DAYS: f64 = 366.0;

/// Runs the command.
pub fn sim(args: SimArgs) -> Result<()> {
    if !(args.days.is_finite() && args.days > 0.0 && args.days <= MAX_DAYS) {
        bail!("--days must be a positive number of days up to {MAX_DAYS}, not {}", args.days);
    }
    let keeps_trace = args.trace.is_some() || args.timeline.is_some();
    if keeps_trace && args.days > MAX_TRACED_DAYS {
        bail!(
            "--trace and --timeline keep every event of the run in memory: give --days up to \
             {MAX_TRACED_DAYS} with them, not {}",
            args.days
        );
    }
    let (name, state) = load_scenario(&args)?;
    let policies = args.compare.clone().unwrap_or_else(|| vec![args.policy]);
    let keep_trace = args.trace.is_some() || args.timeline.is_some();
    if keep_trace && policies.len() > 1 {
        bail!("--trace and --timeline record one run: drop --compare or name one policy");
    }
    if args.gui_rpc_port.is_some() && policies.len() > 1 {
        bail!("--gui-rpc-port serves one run: drop --compare or name one policy");
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
        let (result, wall) = run_engine(state.clone(), &config, &args)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use boinc_core::model::ResourceType;
    use boinc_emulator::engine::run_simulation;

    fn shipped() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios")
    }

    fn args_for(scenario: PathBuf) -> SimArgs {
        SimArgs {
            scenario: Some(scenario),
            notation: None,
            ncpus: 1,
            min_queue: None,
            sched_period: None,
            leave_in_memory: false,
            days: 2.0,
            policy: Policy::Seed,
            compare: None,
            seed: 1,
            json: false,
            trace: None,
            timeline: None,
            existing_jobs_only: false,
            boinc_compat: false,
            engine: Engine::Core,
            journal: None,
            inject_rpc_failures: 0.0,
            inject_app_crashes: 0.0,
            gui_rpc_port: None,
            gui_rpc_dir: None,
            realtime_factor: None,
        }
    }

    #[test]
    fn comments_are_dropped_and_the_notation_kept() {
        let text = "# about\nP1(0.1, 1, .5) # short jobs\n  # indented\nncpus = 2";
        assert_eq!(strip_comments(text), "\nP1(0.1, 1, .5) \n  \nncpus = 2");
    }

    #[test]
    fn the_seed_notation_file_loads_with_its_own_parameters() {
        let mut args = args_for(shipped().join("seed_scenario1.txt"));
        args.sched_period = Some(2.0);
        let (name, state) = load_scenario(&args).expect("seed_scenario1.txt loads");
        assert_eq!(name, "seed_scenario1");
        assert_eq!(state.host.p_ncpus, 2, "ncpus = 2 in the file wins over the default 1");
        let names: Vec<&str> = state.projects.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["P1", "P2", "P3"]);
        assert!(!state.prefs.leave_apps_in_memory);
        let period = state.prefs.cpu_scheduling_period_minutes;
        assert!((period - 60.0).abs() < 1e-9, "the file's period wins over --sched-period 2");
    }

    #[test]
    fn a_file_that_is_not_notation_is_refused_with_its_name() {
        let path = shipped().join("desktop_gpu/client_state.xml");
        let err = load_scenario(&args_for(path)).expect_err("XML is not the notation");
        assert!(format!("{err:#}").contains("client_state.xml"), "{err:#}");
    }

    /// Every shipped scenario runs, and every device it has does some work.
    #[test]
    fn every_shipped_scenario_runs() {
        let mut scenarios: Vec<PathBuf> = std::fs::read_dir(shipped())
            .expect("examples/scenarios is readable")
            .map(|entry| entry.expect("directory entry").path())
            .filter(|path| path.join("client_state.xml").is_file() || path.is_file())
            .collect();
        scenarios.sort();
        assert!(
            scenarios.len() >= 4,
            "desktop_gpu, cpu_only, gpu_host, seed_scenario1: {scenarios:?}"
        );
        for path in scenarios {
            let args = args_for(path.clone());
            let (name, state) = load_scenario(&args)
                .unwrap_or_else(|e| panic!("{} does not load: {e:#}", path.display()));
            let has_gpu = state.instances(ResourceType::Nvidia) > 0;
            let config = SimConfig {
                scenario: name,
                policy: Policy::Seed,
                seed: 1,
                duration: args.days * SECONDS_PER_DAY,
                boinc_compat: false,
                existing_jobs_only: false,
                trace: false,
            };
            let result = run_simulation(state, &config, &mut |_| {});
            let figures = result.figures;
            assert!(
                figures.idle_fraction < 0.5,
                "{}: idle {} in two days",
                path.display(),
                figures.idle_fraction
            );
            let done: u32 = figures.projects.values().map(|p| p.jobs_done).sum();
            assert!(done > 0, "{}: no job finished in two days", path.display());
            if has_gpu {
                let gpu: f64 =
                    figures.projects.values().filter_map(|p| p.usage.get("nvidia")).sum();
                assert!(gpu > 0.5, "{}: the GPUs did {gpu} of their capacity", path.display());
            }
        }
    }
}
