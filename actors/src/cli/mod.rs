//! The `boinc-rs` commands.

pub(crate) mod control;
pub(crate) mod explain;
pub(crate) mod served_sim;
pub(crate) mod sim;
