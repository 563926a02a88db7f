//! A project server's side of seed 000's "Scheduler work-send policy" and seed 004's
//! "Scheduling Server Changes", pure: what a server may send a host given only the
//! host's scheduler request. The emulated servers and `boinc-rs project-server` both
//! fill their replies with it.
//!
//! - [`ResourceOffer`]: one requested resource's share of a reply: how much work the
//!   request asks for on it, the EDF check of each job against the host's queue, and the
//!   reasons, in BOINC's words, when nothing could be sent;
//! - [`DiskBudget`]: the disk space a whole reply may fill.

mod disk_budget;
mod edf_check;
mod resource_offer;

pub use disk_budget::DiskBudget;
pub use resource_offer::{JobOffer, Refusal, ResourceOffer, duration_correction};
