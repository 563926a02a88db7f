//! boinc-actors: the runtime of boinc-rs (DESIGN.md "Actors"). The pure core decides;
//! these actix actors act: a SchedulerActor at the centre, a ProjectActor per project, a
//! TaskActor per active task, a ResourceActor per processing resource, a FetchActor and
//! a DiskActor, all on one arbiter, with every effect on the world behind a trait
//! (real effects for the live client, simulated ones for virtual time, journal-fed ones
//! for replay). The same decisions come out of the emulator and of these actors.
//!
//! - [`runtime`]: the actors, their messages, supervision and events;
//! - [`effects`]: the effect traits and their typed errors;
//! - [`sim`]: the simulated effects and the virtual-time driver;
//! - [`journal`]: the message journal and replay;
//! - [`live`]: the real world: the process host that runs apps, the wall-clock driver;
//! - [`app_api`]: the app's side of BOINC's API, for science apps written in Rust;
//! - [`client`]: the embedding API;
//! - [`project_server`]: `boinc-rs project-server`, a BOINC project on one machine.

#![warn(missing_docs)]

pub mod app_api;
pub mod client;
pub mod effects;
pub mod gui_rpc;
pub mod journal;
pub mod live;
pub mod project_server;
pub mod runtime;
pub mod sim;
pub mod state_files;

pub use client::{Client, ClientBuilder, ClientError, ClientHandle, Effects, RunReport};
pub use runtime::events::ClientEvent;
pub use runtime::messages::UserAction;
pub use sim::run_actor_simulation;
