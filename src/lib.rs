//! boinc-core: the pure, deterministic scheduling core of boinc-rs.
//!
//! Everything here is a function of a snapshot of the client state and the time `now`
//! (plus a random source where a policy is randomised): no clock, no I/O, no threads.
//! The emulator, the actors and the host service all call these same functions.

#![warn(missing_docs)]
// The parsers of outside input live here. Without unsafe code a hostile input cannot
// corrupt memory; what is left to look for (a panic, runaway memory or time) is what
// the tests and the fuzz targets check.
#![forbid(unsafe_code)]

pub mod accounting;
pub mod control;
pub mod cpu_sched;
pub mod decision;
pub mod disk;
pub mod enforce;
pub mod estimate;
pub mod explain;
pub mod model;
pub mod policy;
pub mod protocol;
pub mod rpc_policy;
pub mod rr_sim;
pub mod supervise;
pub mod transfer;
pub mod work_fetch;
pub mod work_send;

pub use policy::Policy;

/// Time in seconds since the Unix epoch (wall or virtual), as BOINC keeps it.
pub type Time = f64;
