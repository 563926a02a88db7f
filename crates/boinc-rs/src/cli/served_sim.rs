//! `boinc-rs sim --engine actors --gui-rpc-port P`: a simulated client paced in
//! wall-clock time with the GUI RPC server mounted over it, as `boinc-rs run` mounts it
//! over the live client, so the real tools and `boinc-rs status` can talk to it.

use super::sim::SimArgs;
use anyhow::{Context, Result, anyhow};
use boinc_core::model::ClientState;
use boinc_emulator::engine::{SimConfig, SimResult};
use boinc_gui_rpc::{GuiRpcConfig, GuiRpcServer, PASSWORD_FILE};
use boinc_runtime::Client;
use boinc_runtime::journal::Journal;
use boinc_runtime::sim::effects::Faults;

/// Runs the scenario paced, serving GUI RPC on `port`, until its span ends or a client
/// asks it to quit; returns the run's figures.
pub(crate) fn run_served(
    state: ClientState,
    config: &SimConfig,
    faults: Faults,
    journal: Journal,
    port: u16,
    args: &SimArgs,
) -> Result<SimResult> {
    let factor = args.realtime_factor.unwrap_or(1.0);
    let dir = match &args.gui_rpc_dir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot find the current directory")?,
    };
    let allow_remote = state.config.allow_remote_gui_rpc;
    let handle = Client::builder()
        .state(state)
        .config(config.clone())
        .faults(faults)
        .journal(journal)
        .realtime_factor(factor)
        .start()
        .map_err(|e| anyhow!("cannot start the simulated client: {e}"))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the GUI RPC server's runtime")?;
    let served = runtime.block_on(async {
        let mut config = GuiRpcConfig::new(&dir).port(port);
        config.allow_remote = allow_remote;
        let server = GuiRpcServer::bind(config, handle.clone()).await?;
        eprintln!(
            "boinc-rs sim: GUI RPC on {} (password in {}); {factor}x real time; \
             `boinc-rs quit` or `boinccmd --quit` ends the run",
            server.local_addr(),
            dir.join(PASSWORD_FILE).display()
        );
        server.serve().await
    });
    if served.is_err() {
        handle.shutdown();
    }
    let report = handle.join().map_err(|e| anyhow!("the actor system failed: {e}"))?;
    served?;
    report.simulation.ok_or_else(|| anyhow!("the simulated run reported no figures"))
}
