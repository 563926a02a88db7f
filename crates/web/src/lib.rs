//! boinc-web: the local web dashboard of `boinc-rs run` and its Prometheus metrics
//! (docs/dashboard.md). A volunteer sees and steers the client from a browser: every
//! page reads the client through GUI RPC operations carried out in this process
//! ([`boinc_gui_rpc::LocalRpc`]), and every action is one, so the dashboard, `boinccmd`
//! and the BOINC Manager always agree. Logging in takes the GUI RPC password; remote
//! browsers are admitted under remote GUI RPC's rules. `GET /metrics` serves the same
//! state in Prometheus' text format.
//!
//! ```no_run
//! # async fn mount(rpc: boinc_gui_rpc::LocalRpc) -> Result<(), boinc_web::WebError> {
//! let server = boinc_web::WebServer::bind(0, rpc)?;
//! println!("dashboard on http://{}/", server.local_addr());
//! server.serve().await // until the client stops
//! # }
//! ```

#![warn(missing_docs)]

mod account_lookup;
mod assets;
mod error;
mod events;
mod explain;
mod history;
mod metrics;
mod routes;
mod server;
mod sessions;
mod timeline;

pub use error::WebError;
pub use server::{DEFAULT_WEB_PORT, WEB_PORT_FILE, WebServer};
