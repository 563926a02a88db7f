//! How a GUI RPC server is set up (docs/design.md "Protocol facts", GUI RPC): where it
//! listens, where its password and remote-host files are, and the limits that keep
//! hostile clients from using up memory, connections or time.

use std::path::PathBuf;
use std::time::Duration;

/// BOINC's GUI RPC port.
pub const DEFAULT_PORT: u16 = 31416;

/// The limits a server enforces. The defaults let every real tool work (boinctui keeps
/// one connection and polls every two seconds; boinccmd connects once per command)
/// while a flood of connections or bytes cannot take the server down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once. When a new one would go over, the server closes a
    /// connection that never completed a request (oldest first), or else the one idle
    /// longest, or else refuses the new one.
    pub max_connections: usize,
    /// The largest request accepted, bytes (the real tools send a few hundred).
    pub max_request_bytes: usize,
    /// Bytes of partial requests all connections may hold at once.
    pub max_buffered_bytes: usize,
    /// How long a request may take to arrive once it has started.
    pub request_timeout: Duration,
    /// How long a connection may sit between requests before it is closed.
    pub idle_timeout: Duration,
    /// How long writing a reply may take (a client that never reads is let go).
    pub write_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 1024,
            max_request_bytes: 1 << 20,
            max_buffered_bytes: 64 << 20,
            request_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(600),
            write_timeout: Duration::from_secs(60),
        }
    }
}

/// A GUI RPC server's setup.
#[derive(Debug, Clone)]
pub struct GuiRpcConfig {
    /// The TCP port (0: any free port; [`super::GuiRpcServer::local_addr`] says which).
    pub port: u16,
    /// The directory holding gui_rpc_auth.cfg (created there on first start when
    /// missing), remote_hosts.cfg, cc_config.xml and the preferences files: the client's
    /// data directory.
    pub data_dir: PathBuf,
    /// cc_config.xml's `<allow_remote_gui_rpc>`: any host may connect (with the password).
    pub allow_remote: bool,
    /// The limits.
    pub limits: Limits,
}

impl GuiRpcConfig {
    /// A server on BOINC's port for the client whose data directory is `data_dir`, local
    /// connections only unless remote_hosts.cfg there names other hosts.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        GuiRpcConfig {
            port: DEFAULT_PORT,
            data_dir: data_dir.into(),
            allow_remote: false,
            limits: Limits::default(),
        }
    }

    /// The same on another port.
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }
}
