//! `boinc-rs`: the command-line front end of boinc-rs.
//!
//! - `boinc-rs explain --state DIR`: what the scheduler would decide at one instant, and why.
//! - `boinc-rs sim --scenario DIR`: a scenario in virtual time, with BOINC's figures of merit.

mod explain_command;
mod sim_command;
mod state_dir;

use anyhow::Result;
use boinc_core::Policy;
use boinc_core::emulator::notation::NotationOptions;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "boinc-rs", version, about = "A BOINC-compatible volunteer-computing client core")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show what the scheduler would do now, and why: run list, projected completions,
    /// shortfalls, debts and the work request.
    Explain {
        /// A BOINC data directory or emulator scenario: client_state.xml, and optionally
        /// global_prefs.xml, global_prefs_override.xml, cc_config.xml.
        #[arg(long, value_name = "DIR")]
        state: PathBuf,
        /// The instant to decide at, seconds since the Unix epoch (default: the latest
        /// time recorded in the state, so a saved state is explained as of when it was saved).
        #[arg(long, value_name = "T")]
        now: Option<f64>,
        /// When the previous decision was enforced (default: one minute before `now`,
        /// the client's scheduling poll interval).
        #[arg(long, value_name = "T")]
        last_schedule: Option<f64>,
        /// Policy family: seed (default), legacy or rec.
        #[arg(long, default_value = "seed")]
        policy: Policy,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run a scenario in virtual time and print BOINC's figures of merit.
    Sim {
        /// A scenario: a directory in BOINC's client-emulator format (client_state.xml,
        /// global_prefs.xml, cc_config.xml), or a text file in seed 000's notation
        /// (projects P(C,D,R), parameters as name = value, # comments).
        #[arg(long, value_name = "DIR|FILE")]
        scenario: Option<PathBuf>,
        /// A scenario in seed 000's notation instead, e.g. "P1(0.1,1,.5) P2(1,24,.25)"
        /// (C = hours of CPU per job, D = delay bound in hours, R = share fraction).
        #[arg(long, value_name = "TEXT")]
        notation: Option<String>,
        /// With --notation or a notation file: number of CPUs (the file's ncpus wins).
        #[arg(long, default_value_t = 1)]
        ncpus: u32,
        /// With --notation or a notation file: work buffer (min_queue), hours.
        #[arg(long, value_name = "H")]
        min_queue: Option<f64>,
        /// With --notation or a notation file: CPU scheduling period, hours.
        #[arg(long, value_name = "H")]
        sched_period: Option<f64>,
        /// With --notation or a notation file: keep preempted tasks in memory.
        #[arg(long, value_name = "BOOL", default_value_t = false, action = clap::ArgAction::Set)]
        leave_in_memory: bool,
        /// Simulated days.
        #[arg(long, default_value_t = 10.0)]
        days: f64,
        /// Policy family: seed (default), legacy or rec.
        #[arg(long, default_value = "seed")]
        policy: Policy,
        /// Run these policies on the same seed and print them side by side, e.g. seed,legacy,rec.
        #[arg(long, value_delimiter = ',', value_name = "P,P,...")]
        compare: Option<Vec<Policy>>,
        /// Seed of every random choice: the same seed gives the same run.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Write every event as JSON lines to this file.
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Draw the run as an SVG timeline (one lane per CPU and GPU instance).
        #[arg(long, value_name = "FILE.svg")]
        timeline: Option<PathBuf>,
        /// Never ask servers for work: run only the jobs the scenario holds.
        #[arg(long)]
        existing_jobs_only: bool,
        /// Model the world as BOINC's own emulator does, so figures compare like with like.
        #[arg(long)]
        boinc_compat: bool,
    },
}

/// Whether an error is only the reader of our output going away (`| head`): not a
/// failure of the command.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    let broken = Some(std::io::ErrorKind::BrokenPipe);
    error.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().map(std::io::Error::kind) == broken
            || cause.downcast_ref::<serde_json::Error>().and_then(serde_json::Error::io_error_kind)
                == broken
    })
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) if is_broken_pipe(&error) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("Error: {error:?}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Explain { state, now, last_schedule, policy, json } => {
            explain_command::explain(&state, now, last_schedule, policy, json)
        }
        Command::Sim {
            scenario,
            notation,
            ncpus,
            min_queue,
            sched_period,
            leave_in_memory,
            days,
            policy,
            compare,
            seed,
            json,
            trace,
            timeline,
            existing_jobs_only,
            boinc_compat,
        } => sim_command::sim(sim_command::SimArgs {
            scenario,
            notation,
            notation_options: NotationOptions {
                ncpus,
                min_queue_hours: min_queue,
                sched_period_hours: sched_period,
                leave_in_memory,
            },
            days,
            policy,
            compare,
            seed,
            json,
            trace,
            timeline,
            existing_jobs_only,
            boinc_compat,
        }),
    }
}
