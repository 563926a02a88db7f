//! The `boinc-rs` commands.

pub(crate) mod explain;
pub(crate) mod sim;
