//! boinc-actors: the runtime of boinc-rs (DESIGN.md "Actors"). The pure core decides;
//! these actix actors act: a SchedulerActor at the centre, a ProjectActor per project, a
//! TaskActor per active task, a ResourceActor per processing resource and a FetchActor,
//! all on one arbiter, with every effect on the world behind a trait (simulated effects
//! for virtual time, journal-fed effects for replay). The same decisions come out of the
//! emulator and of these actors.

#![warn(missing_docs)]

pub mod actors;
pub mod client;
pub mod context;
pub mod effects;
pub mod events;
pub mod journal;
pub mod messages;
pub mod replay;
pub mod sim_effects;
pub mod state_files;

pub use client::{Client, ClientBuilder, ClientError, ClientHandle, run_actor_simulation};
pub use events::ClientEvent;
pub use messages::UserAction;
