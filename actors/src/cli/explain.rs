//! `boinc-rs explain`: what the scheduler would do at one instant, and why.

use anyhow::{Context, Result};
use boinc_actors::state_files::load_state_dir;
use boinc_core::Policy;
use boinc_core::decision::decide;
use boinc_core::explain::{Explanation, render_text, state_time};
use std::io::Write;
use std::path::Path;

/// Runs the command.
pub fn explain(
    dir: &Path,
    now: Option<f64>,
    last_schedule: Option<f64>,
    policy: Policy,
    json: bool,
) -> Result<()> {
    let state = load_state_dir(dir)?;
    let now = now.unwrap_or_else(|| state_time(&state));
    let last_schedule = last_schedule.unwrap_or(now - 60.0);
    let decision = decide(&state, policy, last_schedule, now);
    let explanation = Explanation::new(&state, &decision);
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &explanation).context("cannot write JSON")?;
        writeln!(out)?;
    } else {
        out.write_all(render_text(&explanation).as_bytes())?;
    }
    Ok(())
}
