//! The simulated world: every effect over the emulated world of a scenario, and the
//! driver that runs the actors in virtual time.

pub(crate) mod driver;
pub mod effects;
mod run;

pub use run::{paused_system, run_actor_simulation};
