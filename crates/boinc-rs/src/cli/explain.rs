//! `boinc-rs explain`: what the scheduler would do at one instant, and why: in a saved
//! state, or in the middle of an emulator run of a scenario.

use super::sim::{load_scenario_path, warn};
use anyhow::{Context, Result, bail};
use boinc_core::Policy;
use boinc_core::decision::decide;
use boinc_core::explain::{Explanation, render_text, state_time};
use boinc_core::model::SECONDS_PER_DAY;
use boinc_emulator::engine::{SimConfig, run_to_snapshot};
use boinc_emulator::notation::NotationOptions;
use boinc_runtime::state_files::load_state_dir_with_warnings;
use boinc_service::host_discovery::{local_time_at, observe_host_conditions};
use std::io::Write;
use std::path::PathBuf;

/// The most simulated days `explain --after-days` runs (a year: enough to reach any
/// state a scenario gets into, and bounded whatever is typed).
const MAX_AFTER_DAYS: f64 = 366.0;

/// Where the state to explain comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A saved data directory or scenario, as it is.
    State(PathBuf),
    /// A scenario run in virtual time for `days` first (as `boinc-rs sim` runs it).
    Scenario {
        /// The scenario: a directory, or a file in seed 000's notation.
        path: PathBuf,
        /// Simulated days before the state is explained.
        days: f64,
        /// The run's seed.
        seed: u64,
        /// BOINC-emulator modelling.
        boinc_compat: bool,
    },
}

/// Runs the command.
pub fn explain(
    source: &Source,
    now: Option<f64>,
    last_schedule: Option<f64>,
    policy: Policy,
    json: bool,
) -> Result<()> {
    let (state, default_now, default_last) = match source {
        Source::State(dir) => {
            let (state, warnings) = load_state_dir_with_warnings(dir)?;
            warn(&warnings);
            let now = state_time(&state);
            (state, now, None)
        }
        Source::Scenario { path, days, seed, boinc_compat } => {
            if !(days.is_finite() && *days >= 0.0 && *days <= MAX_AFTER_DAYS) {
                bail!(
                    "--after-days must be a number of days from 0 to {MAX_AFTER_DAYS}, not {days}"
                );
            }
            let (name, state) = load_scenario_path(path, &NotationOptions::default())?;
            let config = SimConfig {
                scenario: name,
                policy,
                seed: *seed,
                duration: days * SECONDS_PER_DAY,
                boinc_compat: *boinc_compat,
                existing_jobs_only: false,
                trace: false,
            };
            let snapshot = run_to_snapshot(state, &config);
            (snapshot.state, snapshot.now, Some(snapshot.last_schedule))
        }
    };
    let now = now.unwrap_or(default_now);
    if !now.is_finite() {
        bail!("--now must be a time in seconds since the Unix epoch, not {now}");
    }
    let last_schedule = last_schedule.or(default_last).unwrap_or(now - 60.0);
    if !last_schedule.is_finite() {
        bail!("--last-schedule must be a time in seconds, not {last_schedule}");
    }
    let decision = decide(&state, policy, last_schedule, now);
    let mut explanation = Explanation::new(&state, &decision);
    if let Source::State(_) = source {
        // A data directory is this host's: its conditions (user, power, programs) as
        // observed now, the time-of-day windows at the instant explained.
        let mut conditions =
            observe_host_conditions(&state.config.exclusive_apps, &state.config.exclusive_gpu_apps);
        conditions.local_time = local_time_at(now);
        explanation = explanation.with_host(&state, &conditions);
    }
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &explanation).context("cannot write JSON")?;
        writeln!(out)?;
    } else {
        out.write_all(render_text(&explanation).as_bytes())?;
    }
    Ok(())
}
