//! The `boinc-rs` commands.

pub(crate) mod app_test;
pub(crate) mod example_app;
pub(crate) mod explain;
pub(crate) mod sim;
