//! Real apps under the client's supervision: isolation, misbehaving apps, a real BOINC-API app, and tasks run, suspended and finished.

#[path = "../support/mod.rs"]
mod support;

mod app_isolation;
mod bad_apps;
mod boinc_api_app;
mod cpu_throttle;
mod live_apps;
