//! The emulator (docs/design.md "Emulator"): BOINC's client-emulator scenarios run in virtual
//! time through the same policies as the live client, with emulated project servers and
//! host availability, producing BOINC's figures of merit, a trace and a timeline.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod availability;
pub mod disk_world;
pub mod engine;
pub mod fair_share;
pub mod figures;
pub mod notation;
pub mod project_server;
pub mod random;
pub mod timeline;
pub mod trace;
pub mod trace_figures;
pub mod world;
