//! How the client talks HTTP (docs/design.md "Protocol facts"; cc_config's
//! `http_transfer_timeout` and `http_transfer_timeout_bps`): the user agent the real
//! client sends, the stall rule, the bounds on redirects and answers, and the one
//! reqwest client (rustls, proxies from the environment) that scheduler RPCs and file
//! transfers share.

use boinc_core::control::ClientIdentity;
use boinc_core::model::CcConfig;
use boinc_core::protocol::ClientVersion;
use std::time::Duration;

/// The most redirects followed for one request.
pub const MAX_REDIRECTS: usize = 10;

/// The largest scheduler reply read, bytes. Real replies with hundreds of jobs are a
/// few megabytes; an answer far larger is refused unread beyond this.
pub const MAX_SCHEDULER_REPLY: u64 = 16 << 20;

/// The largest master page read, bytes.
pub const MAX_MASTER_PAGE: u64 = 1 << 20;

/// The largest data server reply read, bytes (a few lines of XML).
pub const MAX_DATA_SERVER_REPLY: u64 = 64 << 10;

/// The largest download whose size the project did not announce, bytes.
pub const MAX_UNANNOUNCED_DOWNLOAD: u64 = 1 << 30;

/// The longest wait for a connection, whatever the stall timeout (BOINC's).
const MAX_CONNECT_TIMEOUT: Duration = Duration::from_secs(120);

/// The client's HTTP settings.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpSettings {
    /// An exchange that moves fewer than `min_rate` bytes per second over this long
    /// fails (`http_transfer_timeout`).
    pub stall_timeout: Duration,
    /// Bytes per second below which an exchange counts as stalled
    /// (`http_transfer_timeout_bps`); at least a byte per `stall_timeout` is asked for
    /// even when it is 0, so that a silent server cannot hold an exchange for ever.
    pub min_rate: f64,
    /// The longest wait for a connection.
    pub connect_timeout: Duration,
    /// The most redirects followed.
    pub max_redirects: usize,
    /// The largest scheduler reply read, bytes.
    pub max_scheduler_reply: u64,
    /// The largest master page read, bytes.
    pub max_master_page: u64,
    /// A proxy for every request, instead of the ones the environment names
    /// (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`).
    pub proxy: Option<String>,
    /// What the client sends as `User-Agent` (`BOINC client (PLATFORM VERSION)`).
    pub user_agent: String,
    /// The version the client reports to data servers.
    pub client_version: ClientVersion,
}

impl HttpSettings {
    /// The settings of a client with `config` that says `identity` about itself.
    pub fn new(config: &CcConfig, identity: &ClientIdentity) -> HttpSettings {
        let stall_timeout = Duration::from_secs_f64(config.http_transfer_timeout.clamp(1.0, 1e6));
        HttpSettings {
            stall_timeout,
            min_rate: config.http_transfer_timeout_bps.max(0.0),
            connect_timeout: stall_timeout.min(MAX_CONNECT_TIMEOUT),
            max_redirects: MAX_REDIRECTS,
            max_scheduler_reply: MAX_SCHEDULER_REPLY,
            max_master_page: MAX_MASTER_PAGE,
            proxy: None,
            user_agent: format!("BOINC client ({} {})", identity.platform, identity.version),
            client_version: identity.version,
        }
    }

    /// The reqwest client for these settings.
    pub fn client(&self) -> Result<reqwest::Client, HttpSetupError> {
        let mut builder = reqwest::Client::builder()
            .use_rustls_tls()
            .user_agent(&self.user_agent)
            .connect_timeout(self.connect_timeout)
            .redirect(reqwest::redirect::Policy::limited(self.max_redirects));
        if let Some(proxy) = &self.proxy {
            let proxy = reqwest::Proxy::all(proxy).map_err(|e| HttpSetupError::Proxy {
                proxy: proxy.clone(),
                reason: e.to_string(),
            })?;
            builder = builder.proxy(proxy);
        }
        builder.build().map_err(|e| HttpSetupError::Client(e.to_string()))
    }
}

/// Why the HTTP client could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpSetupError {
    /// The proxy setting is not a usable URL.
    #[error("the proxy {proxy:?} cannot be used ({reason}); give it as http://HOST:PORT")]
    Proxy {
        /// The proxy as given.
        proxy: String,
        /// What is wrong.
        reason: String,
    },
    /// The HTTP client could not be built (the TLS setup failed).
    #[error("the HTTP client cannot be set up: {0}")]
    Client(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_agent_is_the_real_clients_form_and_timeouts_follow_cc_config() {
        let config = CcConfig { http_transfer_timeout: 30.0, ..CcConfig::default() };
        let settings = HttpSettings::new(&config, &ClientIdentity::default());
        assert_eq!(settings.user_agent, "BOINC client (x86_64-pc-linux-gnu 8.3.0)");
        assert_eq!(settings.stall_timeout, Duration::from_secs(30));
        assert_eq!(settings.connect_timeout, Duration::from_secs(30));
        let defaults = HttpSettings::new(&CcConfig::default(), &ClientIdentity::default());
        assert_eq!(defaults.connect_timeout, MAX_CONNECT_TIMEOUT);
        assert_eq!(defaults.min_rate, 10.0);
        assert!(defaults.client().is_ok());
        let bad = HttpSettings { proxy: Some("::nonsense".into()), ..defaults };
        assert!(matches!(bad.client(), Err(HttpSetupError::Proxy { .. })));
    }
}
