//! The actors' tests' support layer: the core's shared one (scenarios, fixtures, run
//! configurations, at tests/support) and what the live tests share on top of it (a
//! scratch data directory with the example app, task specs, a process host and a
//! driver).

#![allow(dead_code, unused_imports)] // Each test binary uses a different subset.

#[path = "../../../../tests/support/mod.rs"]
pub mod scenarios;

pub mod http;
pub mod live;
pub mod live_client;
pub mod project_server;
pub mod service;

pub use live::*;
