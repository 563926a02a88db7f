//! How the client talks HTTP (docs/design.md "Protocol facts"; cc_config's
//! `http_transfer_timeout`, `http_transfer_timeout_bps` and `<proxy_info>`): the user agent
//! the real client sends, the stall rule, the bounds on redirects and answers, and the one
//! reqwest client (rustls; cc_config's HTTP or SOCKS5 proxy, else the environment's) that
//! scheduler RPCs, file transfers, notice feeds and web RPCs share.

use boinc_core::control::ClientIdentity;
use boinc_core::model::{CcConfig, ProxyChoice, ProxyInfo};
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
    /// cc_config's proxy for every request; when it names none, the environment's
    /// (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`) are followed.
    pub proxy: ProxyInfo,
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
            proxy: (*config.proxy).clone(),
            user_agent: format!("BOINC client ({} {})", identity.platform, identity.version),
            client_version: identity.version,
        }
    }

    /// The proxy cc_config names, as `scheme://host:port` (no credentials), for
    /// messages; `None` when the environment's proxies are followed.
    pub fn proxy_label(&self) -> Option<String> {
        match self.proxy.choice() {
            ProxyChoice::Environment => None,
            ProxyChoice::Http { host, port, .. } => Some(format!("http://{host}:{port}")),
            ProxyChoice::Socks5 { host, port, .. } => Some(format!("socks5://{host}:{port}")),
        }
    }

    /// The reqwest client for these settings.
    pub fn client(&self) -> Result<reqwest::Client, HttpSetupError> {
        let mut builder = reqwest::Client::builder()
            .use_rustls_tls()
            .user_agent(&self.user_agent)
            .connect_timeout(self.connect_timeout)
            .redirect(reqwest::redirect::Policy::limited(self.max_redirects));
        if let Some(proxy) = proxy(&self.proxy)? {
            // An explicit proxy also turns the environment's off.
            builder = builder.proxy(proxy);
        }
        builder.build().map_err(|e| HttpSetupError::Client(e.to_string()))
    }
}

/// The reqwest proxy `info` names (`None`: the environment's). The credentials go into
/// the proxy URL, percent-encoded, where reqwest takes a SOCKS5 proxy's; an HTTP
/// proxy's are sent as its `Proxy-Authorization`.
fn proxy(info: &ProxyInfo) -> Result<Option<reqwest::Proxy>, HttpSetupError> {
    let (scheme, host, port, credentials) = match info.choice() {
        ProxyChoice::Environment => return Ok(None),
        ProxyChoice::Http { host, port, credentials } => ("http", host, port, credentials),
        // socks5h: the proxy resolves names (BOINC's socks5_remote_dns).
        ProxyChoice::Socks5 { host, port, credentials, remote_dns } => {
            (if remote_dns { "socks5h" } else { "socks5" }, host, port, credentials)
        }
    };
    let bad = |reason: String| HttpSetupError::Proxy {
        proxy: format!("{scheme}://{host}:{port}"),
        reason,
    };
    let mut url = reqwest::Url::parse(&format!("{scheme}://proxy.invalid"))
        .map_err(|e| bad(e.to_string()))?;
    url.set_host(Some(&host)).map_err(|e| bad(format!("the host: {e}")))?;
    url.set_port(Some(port)).map_err(|()| bad("the port".into()))?;
    if let Some((user, password)) = &credentials {
        url.set_username(user).map_err(|()| bad("the user name".into()))?;
        url.set_password(Some(password)).map_err(|()| bad("the password".into()))?;
    }
    let mut proxy = reqwest::Proxy::all(url.as_str()).map_err(|e| bad(e.to_string()))?;
    if scheme == "http"
        && let Some((user, password)) = &credentials
    {
        proxy = proxy.basic_auth(user, password);
    }
    let direct = info.no_proxy_hosts().join(",");
    Ok(Some(proxy.no_proxy(reqwest::NoProxy::from_string(&direct))))
}

/// Why the HTTP client could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpSetupError {
    /// The proxy setting cannot be used.
    #[error(
        "the proxy {proxy} cannot be used ({reason}); correct <proxy_info> in cc_config.xml \
         or in the Manager's proxy dialog"
    )]
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
        let proxy = ProxyInfo {
            use_http_proxy: true,
            http_server_name: "bad host".into(),
            ..ProxyInfo::default()
        };
        let bad = HttpSettings { proxy, ..defaults.clone() };
        assert!(matches!(bad.client(), Err(HttpSetupError::Proxy { .. })));
        for (use_http_proxy, use_socks_proxy) in [(true, false), (false, true)] {
            let proxy = ProxyInfo {
                use_http_proxy,
                use_socks_proxy,
                http_server_name: "proxy.example.org".into(),
                socks_server_name: "[::1]".into(),
                http_user_name: "a user".into(),
                http_user_passwd: "p@ss:word/".into(),
                socks5_user_name: "u".into(),
                socks5_user_passwd: "%:@".into(),
                no_proxy: "localhost, example.com".into(),
                ..ProxyInfo::default()
            };
            let settings = HttpSettings { proxy, ..defaults.clone() };
            assert!(settings.client().is_ok(), "{:?}", settings.proxy);
        }
    }
}
