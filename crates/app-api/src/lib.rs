//! The app's side of BOINC's API (docs/design.md "Protocol facts", App API; issue "Running
//! real apps"), for science apps written in Rust: [`BoincApp`] reads `init_data.xml`,
//! maps the slot's shared memory, answers the client's heartbeats and suspend, resume,
//! quit and abort requests, reports CPU time, checkpoints and fraction done, and
//! finishes the job. `boinc-rs example-app` is built on it.
//!
//! - `app.rs`: [`BoincApp`], what an app calls;
//! - `control_thread.rs`: the thread that talks to the client;
//! - `mapping.rs`: the shared-memory mapping.

mod app;
mod control_thread;
mod error;
mod mapping;

pub use app::{AppControl, BoincApp, EXIT_ABORTED_BY_CLIENT};
pub use error::AppApiError;
