//! The actor runtime in virtual time: the actors against the emulator, supervision, nothing waits, and the boundary between the runtime and the emulator.

#[path = "../../../tests/support/mod.rs"]
mod scenarios;

mod actor_runtime;
mod never_waits;
mod runtime_boundary;
mod supervision;
