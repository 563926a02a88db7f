//! boinc-runtime: the actors of boinc-rs (docs/design.md "Actors"). The pure core
//! decides; these actix actors act: a SchedulerActor at the centre, a ProjectActor per
//! project, a TaskActor per active task, a ResourceActor per processing resource, a
//! FetchActor and a DiskActor, all on one arbiter, with every effect on the world behind
//! a trait (the live effects are boinc-service's, the simulated ones are here, and
//! journal-fed ones replay a run). The same decisions come out of the emulator and of
//! these actors.
//!
//! - [`runtime`]: the actors, their messages, supervision and events;
//! - [`effects`]: the effect traits and their typed errors;
//! - [`sim`]: the simulated effects and the virtual-time driver;
//! - [`journal`]: the message journal and replay;
//! - [`client`]: the embedding API (a client over simulated effects or a host's own),
//!   and the wall-clock driver of a client in real time;
//! - [`state_files`], [`configuration_files`]: a data directory's state and
//!   configuration files read into the core's model.

#![warn(missing_docs)]

pub mod client;
pub mod configuration_files;
pub mod effects;
pub mod journal;
pub mod runtime;
pub mod sim;
pub mod state_files;

pub use client::{Client, ClientBuilder, ClientError, ClientHandle, Effects, RunReport};
pub use runtime::events::{ClientEvent, SuspendedActivity};
pub use runtime::messages::UserAction;
pub use sim::run_actor_simulation;
