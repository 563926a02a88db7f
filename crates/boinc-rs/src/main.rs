//! `boinc-rs`: the command-line front end of boinc-rs.
//!
//! - `boinc-rs explain --state DIR`: what the scheduler would decide at one instant, and why.
//! - `boinc-rs sim --scenario DIR`: a scenario in virtual time, with BOINC's figures of merit
//!   (`--engine actors`: through the actor system; `--journal FILE` records it).
//! - `boinc-rs replay FILE`: re-runs a journal's actors (a simulated run's or a live
//!   one's, `run --journal FILE`) and checks every decision.
//! - `boinc-rs app-test EXE`: runs one app under the client's process supervision and
//!   reports how it behaved.
//! - `boinc-rs example-app`: the science app shipped with boinc-rs (run by a client).
//! - `boinc-rs status`, `tasks`, `project URL ACTION`, `quit`: control a running client
//!   over GUI RPC.
//! - `boinc-rs project-server --dir DIR`: a BOINC project on this machine (master page,
//!   scheduler, downloads, uploads, signed apps, a work generator).
//! - `boinc-rs attach --dir DIR URL AUTHENTICATOR`: writes a project's account file.
//! - `boinc-rs host-info [--json]`: what host discovery finds on this machine.

mod cli;

use anyhow::Result;
use boinc_core::Policy;
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
        #[arg(
            long,
            value_name = "DIR",
            required_unless_present = "scenario",
            conflicts_with = "scenario"
        )]
        state: Option<PathBuf>,
        /// Instead of a saved state: an emulator scenario (directory, or a file in seed
        /// 000's notation), run in virtual time for --after-days, and the client's state
        /// explained where the run stopped.
        #[arg(long, value_name = "DIR|FILE", requires = "after_days")]
        scenario: Option<PathBuf>,
        /// With --scenario: simulated days to run before explaining.
        #[arg(long, value_name = "D", requires = "scenario")]
        after_days: Option<f64>,
        /// With --scenario: the run's seed (as `sim --seed`).
        #[arg(long, default_value_t = 1, requires = "scenario")]
        seed: u64,
        /// With --scenario: model the world as BOINC's emulator does (as `sim`).
        #[arg(long, requires = "scenario")]
        boinc_compat: bool,
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
    Sim(cli::sim::SimArgs),
    /// Re-run the actors from a journal written by `sim --engine actors --journal FILE`
    /// or `run --journal FILE` (offline: no network, processes or clock) and check every
    /// decision; exits non-zero at the first divergence.
    Replay {
        /// The journal (JSON lines).
        #[arg(value_name = "FILE")]
        journal: PathBuf,
    },
    /// Run one app under the client's process supervision, in a scratch data directory
    /// without a server, and report how it behaved: exit status, checkpoints, progress,
    /// CPU time, suspensions honoured, restarts, outputs.
    AppTest(cli::app_test::AppTestArgs),
    /// The example science app: real work for some CPU seconds or flops, with
    /// checkpoints, progress and BOINC's app API. A client runs it in a slot directory.
    ExampleApp(cli::example_app::ExampleAppArgs),
    /// Show a running client's modes, projects and task counts (over GUI RPC).
    Status(cli::control::Connection),
    /// List a running client's tasks (over GUI RPC).
    Tasks(cli::control::Connection),
    /// Suspend, resume, update or detach a project of a running client (over GUI RPC).
    Project {
        /// The project's master URL.
        #[arg(value_name = "URL")]
        url: String,
        /// What to do.
        #[arg(value_enum)]
        action: cli::control::ProjectCommand,
        #[command(flatten)]
        connection: cli::control::Connection,
    },
    /// Ask a running client to quit (over GUI RPC).
    Quit(cli::control::Connection),
    /// Join, sync with, leave or show a running client's account manager (over GUI RPC).
    AcctMgr {
        #[command(subcommand)]
        command: cli::control::AccountManagerCommand,
        #[command(flatten)]
        connection: cli::control::Connection,
    },
    /// Run a BOINC project on this machine: master page, scheduler, downloads and
    /// uploads, apps signed with its own key, a work generator. Clients (boinc-rs or
    /// the real BOINC client) attach to the URL it prints.
    ProjectServer(cli::project_server::ProjectServerArgs),
    /// Attach a data directory's client to a project: writes the project's account file
    /// (account_<url>.xml), which a running client takes in.
    Attach(cli::attach::AttachArgs),
    /// Show what host discovery finds on this machine: CPUs and their benchmarked
    /// speed, memory, disk, OS, NVIDIA GPUs (or why none is used).
    HostInfo(cli::host_info::HostInfoArgs),
    /// Look for GPUs and print what was found as JSON, then exit: `run` and
    /// `host-info` run this in a process of its own, so that a GPU driver that crashes
    /// or hangs cannot take the client with it.
    #[command(hide = true)]
    DetectGpus,
    /// Run the client as a service on a data directory: real jobs of the attached
    /// projects, the state kept across restarts, GUI RPC for boinccmd and boinctui.
    Run(cli::run::RunArgs),
    /// Show boinc-rs at work: a local project server and a client attached to it run
    /// real jobs for about a minute, then a summary.
    Demo(cli::demo::DemoArgs),
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

/// Logs go to stderr, filtered by `RUST_LOG` (e.g. `RUST_LOG=boinc_runtime=debug` shows
/// every decision and effect); by default only warnings and errors, except for a
/// server, whose log of requests is its record of work. A client's cc_config.xml
/// `<log_flags>` add to the filter while it runs (`boinc_service::log_filter`).
/// A service's log is JSON lines with `--log-json` (for journald or a log collector).
fn install_logging(default: &str, json: bool) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let base = std::env::var("RUST_LOG").ok().filter(|v| !v.trim().is_empty());
    let filter = boinc_service::log_filter::reloadable_filter(base.as_deref().unwrap_or(default));
    // Colour only for a person at a terminal: a log file or journald gets plain text.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let log = tracing_subscriber::fmt::layer().with_ansi(colour).with_writer(std::io::stderr);
    let registry = tracing_subscriber::registry().with(filter);
    let _ = if json { registry.with(log.json()).try_init() } else { registry.with(log).try_init() };
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let json = matches!(&cli.command, Command::Run(args) if args.log_json);
    install_logging(
        match cli.command {
            Command::ProjectServer(_) | Command::Run(_) => "info",
            _ => "warn",
        },
        json,
    );
    match run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) if is_broken_pipe(&error) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("Error: {error:?}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// `boinc-rs replay FILE`.
fn replay_command(path: &std::path::Path) -> Result<()> {
    let recorded = boinc_runtime::journal::read_journal(path)?;
    let report = boinc_runtime::journal::replay(recorded)
        .map_err(|e| anyhow::anyhow!("cannot replay {}: {e}", path.display()))?;
    match report.divergence {
        None => {
            println!(
                "replayed {} messages of {}: every decision is the recorded one",
                report.entries,
                path.display()
            );
            Ok(())
        }
        Some(divergence) => {
            eprintln!("{divergence}");
            std::process::exit(1);
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Explain {
            state,
            scenario,
            after_days,
            seed,
            boinc_compat,
            now,
            last_schedule,
            policy,
            json,
        } => {
            let source = match (state, scenario, after_days) {
                (Some(dir), _, _) => cli::explain::Source::State(dir),
                (None, Some(path), Some(days)) => {
                    cli::explain::Source::Scenario { path, days, seed, boinc_compat }
                }
                _ => anyhow::bail!("give --state DIR, or --scenario PATH with --after-days D"),
            };
            cli::explain::explain(&source, now, last_schedule, policy, json)
        }
        Command::Sim(args) => cli::sim::sim(args),
        Command::Replay { journal } => replay_command(&journal),
        Command::AppTest(args) => cli::app_test::app_test(args),
        Command::ExampleApp(args) => cli::example_app::example_app(args),
        Command::Status(connection) => cli::control::status(&connection),
        Command::Tasks(connection) => cli::control::tasks(&connection),
        Command::Project { url, action, connection } => {
            cli::control::project(&connection, &url, action)
        }
        Command::Quit(connection) => cli::control::quit(&connection),
        Command::AcctMgr { command, connection } => {
            cli::control::account_manager(&connection, &command)
        }
        Command::ProjectServer(args) => cli::project_server::project_server(args),
        Command::Attach(args) => cli::attach::attach(&args),
        Command::HostInfo(args) => cli::host_info::host_info(&args),
        Command::DetectGpus => {
            let mut out = std::io::stdout().lock();
            boinc_service::host_discovery::write_gpu_findings(&mut out)?;
            Ok(())
        }
        Command::Run(args) => cli::run::run(args),
        Command::Demo(args) => cli::demo::demo(&args),
    }
}
