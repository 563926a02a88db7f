//! The network side of a live client in one piece: a scheduler-RPC transport and a file
//! transfer sharing one HTTP client (its connections, its proxies), ready to go into
//! the client's [`boinc_runtime::client::Effects`], and the client itself for the
//! service's other requests (notice feeds, web RPCs), its proxy changed in one place.

use super::file_transfer::LiveFileTransfer;
use super::settings::{HttpSettings, HttpSetupError};
use super::shared_client::SharedClient;
use super::transport::HttpTransport;
use boinc_core::model::ProxyInfo;
use std::path::PathBuf;
use std::sync::Arc;

/// A live client's transport and file transfer.
#[derive(Clone)]
pub struct LiveNetwork {
    /// Scheduler RPCs and master pages.
    pub transport: Arc<HttpTransport>,
    /// Downloads and uploads in the data directory.
    pub file_transfer: Arc<LiveFileTransfer>,
    /// The HTTP client both share, for every other request of the client.
    pub client: SharedClient,
    settings: Arc<HttpSettings>,
}

impl LiveNetwork {
    /// The network side of a client whose data directory is `data_dir`.
    pub fn new(
        settings: HttpSettings,
        data_dir: impl Into<PathBuf>,
    ) -> Result<Self, HttpSetupError> {
        let client = SharedClient::new(settings.client()?, settings.proxy_label());
        let settings = Arc::new(settings);
        Ok(LiveNetwork {
            transport: Arc::new(HttpTransport::with_client(client.clone(), settings.clone())),
            file_transfer: Arc::new(LiveFileTransfer::with_client(
                client.clone(),
                settings.clone(),
                data_dir,
            )),
            client,
            settings,
        })
    }

    /// Sends every request from now on through `proxy`; one that cannot be used is
    /// refused and the proxy in force stays.
    pub fn use_proxy(&self, proxy: &ProxyInfo) -> Result<(), HttpSetupError> {
        let settings = HttpSettings { proxy: proxy.clone(), ..(*self.settings).clone() };
        self.client.replace(settings.client()?, settings.proxy_label());
        tracing::info!(proxy = ?proxy.choice(), "HTTP proxy changed");
        Ok(())
    }
}
