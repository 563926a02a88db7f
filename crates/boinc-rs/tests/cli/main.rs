//! The `boinc-rs` commands end to end: app-test, demo, explain, host-info, sim, the data directory, and the GUI RPC controls.

#[path = "../served/mod.rs"]
mod served;
#[path = "../support/mod.rs"]
mod support;

mod app_test_cli;
mod data_dir;
mod demo;
mod explain_cli;
mod gui_rpc_cli;
mod host_info_cli;
mod sim_cli;
