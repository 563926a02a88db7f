//! The client's HTTP (docs/design.md "Protocol facts"; issue "Talking to real project
//! servers"): scheduler RPCs and master pages ([`HttpTransport`]), downloads and uploads
//! ([`LiveFileTransfer`]) and account manager RPCs, all over one reqwest client ([`SharedClient`]) with rustls, cc_config's proxy or the
//! environment's, bounded redirects and answers, and cc_config's stall timeout
//! ([`HttpSettings`]); [`LiveNetwork`] bundles them for a client's effects.

mod account_manager;
mod download;
mod exchange;
mod file_transfer;
mod network;
mod settings;
mod shared_client;
mod throttle;
mod transport;
mod upload;
mod watch;
mod web_rpc;

pub use account_manager::{MAX_ACCOUNT_MANAGER_REPLY, account_manager_rpc_url};
pub use file_transfer::LiveFileTransfer;
pub use network::LiveNetwork;
pub use settings::{
    HttpSettings, HttpSetupError, MAX_DATA_SERVER_REPLY, MAX_MASTER_PAGE, MAX_REDIRECTS,
    MAX_SCHEDULER_REPLY, MAX_UNANNOUNCED_DOWNLOAD,
};
pub use shared_client::SharedClient;
pub use transport::{HttpTransport, SCHEDULER_REQUEST_CONTENT_TYPE};
pub use web_rpc::{WEB_RPC_TIMEOUT, project_web_rpc};
