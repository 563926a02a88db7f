//! Running a scenario through the actor system in virtual time.

use crate::client::{Client, ClientError};
use crate::journal::Journal;
use crate::sim::effects::Faults;
use boinc_core::model::ClientState;
use boinc_emulator::engine::{SimConfig, SimResult};

/// Runs a scenario through the actor system in virtual time: a current-thread tokio
/// runtime with a paused clock under an actix System, simulated effects, the same
/// control loop as the emulator's engine.
pub fn run_actor_simulation(
    state: ClientState,
    config: &SimConfig,
    faults: Faults,
    journal: Journal,
    progress: impl FnMut(f64) + Send + 'static,
) -> Result<SimResult, ClientError> {
    let system = paused_system()?;
    let builder = Client::builder()
        .state(state)
        .config(config.clone())
        .faults(faults)
        .journal(journal)
        .progress(progress)
        .on_paused_clock();
    let report = system.block_on(async move { builder.spawn()?.finished().await })?;
    report
        .simulation
        .ok_or_else(|| ClientError::Stopped("a simulated run reported no figures".into()))
}

/// An actix System on a current-thread tokio runtime whose clock is paused, so timers
/// follow virtual time.
pub fn paused_system() -> Result<actix_rt::SystemRunner, ClientError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .map_err(|e| ClientError::Stopped(format!("cannot start a runtime: {e}")))?;
    Ok(actix_rt::System::with_tokio_rt(move || runtime))
}
