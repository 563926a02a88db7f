//! The emulated project servers (docs/design.md "Emulator"; seed 000 "Scheduler work-send
//! policy"; seed 004 "Scheduling Server Changes"): each reads a scheduler request and
//! answers a scheduler reply, as a real server does.

mod job_generation;
mod reply_builder;
mod server;

pub use job_generation::{Catalogue, MIN_FLOPS_FRACTION, ServedApp, ServedVersion};
pub use reply_builder::{SentJob, ServerAnswer};
pub use server::{EmulatedServer, MAX_JOBS_PER_REQUEST, ServerBuffers};
