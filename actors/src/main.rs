//! `boinc-rs`: the command-line front end of boinc-rs.
//!
//! `boinc-rs explain --state DIR` reads a BOINC data directory or emulator scenario and
//! prints what the scheduler would decide at one instant, and why.

use anyhow::{Context, Result};
use boinc_core::Policy;
use boinc_core::decision::decide;
use boinc_core::explain::{Explanation, render_text, state_time};
use boinc_core::protocol::{SourceText, StateFiles, load_state};
use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};

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
}

/// Reads a file of the state directory; `None` when an optional file is absent.
fn read_optional(dir: &Path, name: &str) -> Result<Option<String>> {
    let path = dir.join(name);
    match std::fs::read(&path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn explain(
    dir: &Path,
    now: Option<f64>,
    last_schedule: Option<f64>,
    policy: Policy,
    json: bool,
) -> Result<()> {
    let client_state = read_optional(dir, "client_state.xml")?.with_context(|| {
        format!(
            "{} has no client_state.xml: point --state at a BOINC data directory or scenario",
            dir.display()
        )
    })?;
    let global_prefs = read_optional(dir, "global_prefs.xml")?;
    let global_prefs_override = read_optional(dir, "global_prefs_override.xml")?;
    let cc_config = read_optional(dir, "cc_config.xml")?;
    let files = StateFiles {
        client_state: SourceText { name: "client_state.xml", text: &client_state },
        global_prefs: global_prefs
            .as_deref()
            .map(|text| SourceText { name: "global_prefs.xml", text }),
        global_prefs_override: global_prefs_override
            .as_deref()
            .map(|text| SourceText { name: "global_prefs_override.xml", text }),
        cc_config: cc_config.as_deref().map(|text| SourceText { name: "cc_config.xml", text }),
    };
    let state = load_state(&files)
        .with_context(|| format!("cannot load the state in {}", dir.display()))?;
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

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Explain { state, now, last_schedule, policy, json } => {
            explain(&state, now, last_schedule, policy, json)
        }
    }
}
