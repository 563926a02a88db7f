//! The actors' tests' support layer: the core's shared one (scenarios, fixtures, run
//! configurations, at tests/support) and what the live tests share on top of it (a
//! scratch data directory with the example app, task specs, a process host and a
//! driver), the processes they start (`boinc-rs project-server`, `boinc-rs run`) and
//! bounded waits.

#![allow(dead_code, unused_imports)] // Each test binary uses a different subset.

#[path = "../../../../tests/support/mod.rs"]
pub mod scenarios;

pub mod host_prefs;
pub mod http;
pub mod in_process;
pub mod live;
pub mod live_client;
pub mod live_processes;
pub mod peer_port;
pub mod project_server;
pub mod service;
pub mod volunteer_apps;
pub mod wait;
pub mod webdriver;

pub use live::*;
pub use wait::{wait_for, wait_for_or, wait_until, wait_until_or};
