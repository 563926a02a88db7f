//! boinc-gui-rpc: the GUI RPC server (docs/design.md "Protocol facts", GUI RPC): the real `boinccmd`,
//! `boinctui` and BOINC Manager, and boinc-rs's own `status`, `tasks`, `project` and
//! `quit` commands, control a running client through it. The protocol itself (reading
//! requests, rendering replies) is the core's `boinc_core::protocol::gui_rpc`; this
//! module frames, authenticates, limits and carries operations out.
//!
//! Mounting it over any running client: [`GuiRpcServer::bind`] with a
//! [`GuiRpcConfig`] and the client's [`boinc_runtime::ClientHandle`], then
//! [`GuiRpcServer::serve`] until the client stops.

#![warn(missing_docs)]

mod auth;
mod client;
mod config;
mod config_files;
mod connection;
mod error;
mod event_log_file;
mod framing;
mod host_services;
mod local;
mod message_feed;
mod modes;
mod ops;
mod registry;
mod remote_access;
mod server;
mod session;
mod web_rpcs;

pub use auth::{PASSWORD_FILE, load_or_create_password, nonce_hash, read_password};
pub use client::GuiRpcClient;
pub use config::{DEFAULT_PORT, GuiRpcConfig, Limits};
pub use config_files::PROJECT_INIT_FILE;
pub use error::GuiRpcError;
pub use event_log_file::{EVENT_LOG_FILE, OLD_EVENT_LOG_FILE};
pub use host_services::{AccountManagerInfo, HostServices};
pub use local::LocalRpc;
pub use message_feed::MessageSink;
pub use remote_access::{REMOTE_HOSTS_FILE, RemoteAccess, is_local};
pub use server::{GuiRpcServer, ServerMonitor};
