//! The actors (DESIGN.md "Actors"): one per thing with a life of its own, each a thin
//! shell that turns messages into calls of the pure core and effects.

pub mod disk;
pub mod fetch;
pub mod project;
pub mod resource;
pub mod scheduler;
pub mod task;

pub use disk::DiskActor;
pub use fetch::FetchActor;
pub use project::ProjectActor;
pub use resource::ResourceActor;
pub use scheduler::SchedulerActor;
pub use task::TaskActor;
