//! The simulated world: every effect over the emulated world of a scenario, and the
//! driver that runs the actors in virtual time. This module (with the `sim` command)
//! is the runtime's only door to the emulator.

mod disk;
pub(crate) mod driver;
pub mod effects;
mod run;
pub(crate) mod setup;

pub use boinc_emulator::engine::{SimConfig, SimResult};
pub use run::{paused_system, run_actor_simulation};
pub(crate) use setup::SimulatedWorld;
