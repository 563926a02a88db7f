//! The proxy the client's HTTP goes through (docs/design.md "Protocol facts": cc_config's
//! `<proxy_info>`, BOINC Manager's proxy dialog over GUI RPC): an HTTP proxy and a
//! SOCKS5 proxy, each with an optional user name and password, and the hosts reached
//! directly. BOINC's fields, kept as it keeps them.

use serde::{Deserialize, Serialize};

/// BOINC's port for a proxy whose port was never set.
pub const DEFAULT_PROXY_PORT: u16 = 80;

/// cc_config's `<proxy_info>`: which proxy the client's HTTP requests go through.
/// When neither `use_http_proxy` nor `use_socks_proxy` is set, the client takes the
/// proxies its environment names (`http_proxy`, `https_proxy`, `all_proxy`,
/// `no_proxy`), as BOINC does.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProxyInfo {
    /// Requests go through the HTTP proxy (`<use_http_proxy/>`).
    pub use_http_proxy: bool,
    /// Requests go through the SOCKS5 proxy (`<use_socks_proxy/>`); the HTTP proxy wins
    /// when both are set, as in BOINC.
    pub use_socks_proxy: bool,
    /// The HTTP proxy asks for a user name and password (`<use_http_auth/>`).
    pub use_http_auth: bool,
    /// The HTTP proxy's host (`<http_server_name>`).
    pub http_server_name: String,
    /// The HTTP proxy's port (`<http_server_port>`).
    pub http_server_port: u16,
    /// The HTTP proxy's user (`<http_user_name>`).
    pub http_user_name: String,
    /// The HTTP proxy's password (`<http_user_passwd>`).
    pub http_user_passwd: String,
    /// The SOCKS5 proxy's host (`<socks_server_name>`).
    pub socks_server_name: String,
    /// The SOCKS5 proxy's port (`<socks_server_port>`).
    pub socks_server_port: u16,
    /// The SOCKS5 proxy's user (`<socks5_user_name>`); none when empty.
    pub socks5_user_name: String,
    /// The SOCKS5 proxy's password (`<socks5_user_passwd>`).
    pub socks5_user_passwd: String,
    /// Host names are resolved by the SOCKS5 proxy, not here (`<socks5_remote_dns>`).
    pub socks5_remote_dns: bool,
    /// Hosts reached without the proxy, separated by commas (`<no_proxy>`).
    pub no_proxy: String,
    /// Don't look for the system's proxy (`<no_autodetect>`; a Windows setting BOINC
    /// keeps everywhere, kept so that it round-trips).
    pub no_autodetect: bool,
}

impl Default for ProxyInfo {
    fn default() -> Self {
        ProxyInfo {
            use_http_proxy: false,
            use_socks_proxy: false,
            use_http_auth: false,
            http_server_name: String::new(),
            http_server_port: DEFAULT_PROXY_PORT,
            http_user_name: String::new(),
            http_user_passwd: String::new(),
            socks_server_name: String::new(),
            socks_server_port: DEFAULT_PROXY_PORT,
            socks5_user_name: String::new(),
            socks5_user_passwd: String::new(),
            socks5_remote_dns: false,
            no_proxy: String::new(),
            no_autodetect: false,
        }
    }
}

/// The proxy a request goes through, decided from a [`ProxyInfo`].
#[derive(Clone, PartialEq, Eq)]
pub enum ProxyChoice {
    /// The proxies the environment names (none configured here).
    Environment,
    /// An HTTP proxy at `host:port`, with a user and password when it asks for them.
    Http {
        /// The proxy's host.
        host: String,
        /// The proxy's port.
        port: u16,
        /// User and password.
        credentials: Option<(String, String)>,
    },
    /// A SOCKS5 proxy at `host:port`.
    Socks5 {
        /// The proxy's host.
        host: String,
        /// The proxy's port.
        port: u16,
        /// User and password.
        credentials: Option<(String, String)>,
        /// Names resolved by the proxy.
        remote_dns: bool,
    },
}

impl ProxyInfo {
    /// Which proxy requests go through. A proxy switched on with no host falls back to
    /// the environment's, as BOINC ignores such a setting.
    pub fn choice(&self) -> ProxyChoice {
        let credentials = |user: &str, password: &str| {
            (!user.is_empty()).then(|| (user.to_string(), password.to_string()))
        };
        let http_host = host_of(&self.http_server_name);
        let socks_host = host_of(&self.socks_server_name);
        if self.use_http_proxy && !http_host.is_empty() {
            return ProxyChoice::Http {
                host: http_host.to_string(),
                port: self.http_server_port,
                // BOINC sends the credentials only with `use_http_auth`; a Manager that
                // filled in a user name without ticking it still means it.
                credentials: credentials(&self.http_user_name, &self.http_user_passwd),
            };
        }
        if self.use_socks_proxy && !socks_host.is_empty() {
            return ProxyChoice::Socks5 {
                host: socks_host.to_string(),
                port: self.socks_server_port,
                credentials: credentials(&self.socks5_user_name, &self.socks5_user_passwd),
                remote_dns: self.socks5_remote_dns,
            };
        }
        ProxyChoice::Environment
    }

    /// The hosts reached directly: `no_proxy`'s names, trimmed, empty ones left out.
    pub fn no_proxy_hosts(&self) -> Vec<&str> {
        self.no_proxy.split([',', ' ']).map(str::trim).filter(|h| !h.is_empty()).collect()
    }
}

/// A proxy host as the Manager may give it (`http://proxy.example.org/`) without the
/// scheme and slashes around it.
fn host_of(name: &str) -> &str {
    let name = name.trim();
    let name = name.split_once("://").map_or(name, |(_, rest)| rest);
    name.trim_end_matches('/')
}

// The passwords stay out of logs and panics: Debug shows whether one is set.
impl std::fmt::Debug for ProxyInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyInfo")
            .field("use_http_proxy", &self.use_http_proxy)
            .field("use_socks_proxy", &self.use_socks_proxy)
            .field("use_http_auth", &self.use_http_auth)
            .field("http_server_name", &self.http_server_name)
            .field("http_server_port", &self.http_server_port)
            .field("http_user_name", &self.http_user_name)
            .field("http_user_passwd", &hidden(&self.http_user_passwd))
            .field("socks_server_name", &self.socks_server_name)
            .field("socks_server_port", &self.socks_server_port)
            .field("socks5_user_name", &self.socks5_user_name)
            .field("socks5_user_passwd", &hidden(&self.socks5_user_passwd))
            .field("socks5_remote_dns", &self.socks5_remote_dns)
            .field("no_proxy", &self.no_proxy)
            .field("no_autodetect", &self.no_autodetect)
            .finish()
    }
}

impl std::fmt::Debug for ProxyChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProxyChoice::Environment => f.write_str("Environment"),
            ProxyChoice::Http { host, port, credentials } => f
                .debug_struct("Http")
                .field("host", host)
                .field("port", port)
                .field("user", &credentials.as_ref().map(|(user, _)| user))
                .finish(),
            ProxyChoice::Socks5 { host, port, credentials, remote_dns } => f
                .debug_struct("Socks5")
                .field("host", host)
                .field("port", port)
                .field("user", &credentials.as_ref().map(|(user, _)| user))
                .field("remote_dns", remote_dns)
                .finish(),
        }
    }
}

fn hidden(password: &str) -> &'static str {
    if password.is_empty() { "" } else { "(set)" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_http_proxy_wins_and_an_unnamed_one_falls_back_to_the_environment() {
        let mut info = ProxyInfo::default();
        assert_eq!(info.choice(), ProxyChoice::Environment);
        info.use_socks_proxy = true;
        info.socks_server_name = "socks.example.org".into();
        info.socks_server_port = 1080;
        info.socks5_user_name = "u".into();
        info.socks5_user_passwd = "secret".into();
        assert_eq!(
            info.choice(),
            ProxyChoice::Socks5 {
                host: "socks.example.org".into(),
                port: 1080,
                credentials: Some(("u".into(), "secret".into())),
                remote_dns: false,
            }
        );
        info.use_http_proxy = true;
        assert!(matches!(info.choice(), ProxyChoice::Socks5 { .. }));
        info.http_server_name = " http://proxy.example.org/ ".into();
        info.http_server_port = 3128;
        assert_eq!(
            info.choice(),
            ProxyChoice::Http { host: "proxy.example.org".into(), port: 3128, credentials: None }
        );
        assert!(!format!("{info:?}").contains("secret"));
        assert!(
            !format!("{:?}", ProxyInfo { use_http_proxy: false, ..info }.choice())
                .contains("secret")
        );
    }

    #[test]
    fn no_proxy_takes_commas_and_spaces() {
        let info = ProxyInfo { no_proxy: "a.org, b.org,,c.org d.org".into(), ..Default::default() };
        assert_eq!(info.no_proxy_hosts(), ["a.org", "b.org", "c.org", "d.org"]);
    }
}
