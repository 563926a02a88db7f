//! The `boinc-rs` commands.

pub(crate) mod app_test;
pub(crate) mod attach;
pub(crate) mod control;
pub(crate) mod demo;
pub(crate) mod example_app;
pub(crate) mod explain;
pub(crate) mod host_info;
pub(crate) mod project_server;
pub(crate) mod run;
pub(crate) mod served_sim;
pub(crate) mod sim;
