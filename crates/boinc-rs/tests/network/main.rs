//! The client against project servers over loopback HTTP: transfers, scheduler RPCs, `boinc-rs project-server` with and without faults, its account manager, and the real BOINC client against it.

#[path = "../support/mod.rs"]
mod support;

mod anonymous_platform_real_client;
mod failure_paths;
mod file_transfers;
mod http_transport;
mod project_server_account_manager;
mod project_server_client;
mod project_server_client_faults;
mod project_server_faults;
mod project_server_real_client;
mod project_server_reports;
mod side_by_side;
