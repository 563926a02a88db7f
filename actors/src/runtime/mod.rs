//! The actors (docs/design.md "Actors"): one per thing with a life of its own, each a thin
//! shell that turns messages into calls of the pure core and effects, with the messages
//! they exchange, what they share, and the events a host program hears.

pub mod context;
pub mod disk;
pub mod events;
pub mod fetch;
pub mod live_disk;
pub mod messages;
pub(crate) mod occupancy;
pub mod poll_bell;
pub mod project;
pub mod resource;
pub mod scheduler;
pub mod supervision;
pub mod task;
pub(crate) mod task_links;
pub mod time_text;
pub(crate) mod transfers;

pub use disk::DiskActor;
pub use fetch::FetchActor;
pub use project::ProjectActor;
pub use resource::ResourceActor;
pub use scheduler::SchedulerActor;
pub use task::TaskActor;
