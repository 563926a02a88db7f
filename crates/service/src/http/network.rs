//! The network side of a live client in one piece: a scheduler-RPC transport and a file
//! transfer sharing one HTTP client (its connections, its proxies), ready to go into
//! the client's [`boinc_runtime::client::Effects`].

use super::file_transfer::LiveFileTransfer;
use super::settings::{HttpSettings, HttpSetupError};
use super::transport::HttpTransport;
use std::path::PathBuf;
use std::sync::Arc;

/// A live client's transport and file transfer.
#[derive(Clone)]
pub struct LiveNetwork {
    /// Scheduler RPCs and master pages.
    pub transport: Arc<HttpTransport>,
    /// Downloads and uploads in the data directory.
    pub file_transfer: Arc<LiveFileTransfer>,
}

impl LiveNetwork {
    /// The network side of a client whose data directory is `data_dir`.
    pub fn new(
        settings: HttpSettings,
        data_dir: impl Into<PathBuf>,
    ) -> Result<Self, HttpSetupError> {
        let client = settings.client()?;
        let settings = Arc::new(settings);
        Ok(LiveNetwork {
            transport: Arc::new(HttpTransport::with_client(client.clone(), settings.clone())),
            file_transfer: Arc::new(LiveFileTransfer::with_client(client, settings, data_dir)),
        })
    }
}
