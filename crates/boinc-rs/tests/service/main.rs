//! The host service (`boinc-rs run`): its life, its account manager, GUI RPC peers (boinccmd, boinctui, hostile clients) against it, and its web dashboard in headless Chromium.

#[path = "../served/mod.rs"]
mod served;
#[path = "../support/mod.rs"]
mod support;

mod account_manager_service;
mod anonymous_platform;
mod app_config_live;
mod boinccmd_service;
mod detach_attach;
mod gpu_detection;
mod gui_rpc_hostile;
mod gui_rpc_peers;
mod live_replay;
mod manager_ops;
mod proxies;
mod service;
mod user_activity;
mod volunteer_controls;
mod volunteer_view;
mod web_dashboard;
