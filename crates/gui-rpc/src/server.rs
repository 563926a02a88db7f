//! The GUI RPC server (docs/design.md "Protocol facts", GUI RPC): a TCP listener on
//! 127.0.0.1 (every interface when remote hosts are allowed), port 31416 unless told
//! otherwise, serving one running client through its [`ClientHandle`]. Each connection
//! is a task of its own, taking one request at a time; the server stops when the
//! client's run ends.
//!
//! ```no_run
//! # async fn mount(client: boinc_runtime::ClientHandle) -> Result<(), boinc_gui_rpc::GuiRpcError> {
//! use boinc_gui_rpc::{GuiRpcConfig, GuiRpcServer};
//! let server = GuiRpcServer::bind(GuiRpcConfig::new("/var/lib/boinc-rs"), client).await?;
//! println!("GUI RPC on {}", server.local_addr());
//! server.serve().await // until the client stops
//! # }
//! ```

use super::auth::load_or_create_password;
use super::config::{GuiRpcConfig, Limits};
use super::connection::serve_connection;
use super::error::GuiRpcError;
use super::framing::BufferBudget;
use super::host_services::HostServices;
use super::message_feed::{MessageSink, feed};
use super::modes::TemporaryModes;
use super::registry::Registry;
use super::remote_access::RemoteAccess;
use super::web_rpcs::WebRpcs;
use boinc_core::Time;
use boinc_core::control::MessagePriority;
use boinc_core::protocol::platform::boinc_platform;
use boinc_runtime::client::ClientHandle;
use boinc_runtime::runtime::events::ClientEvent;
use boinc_runtime::runtime::messages::StateSnapshot;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// How long the accept loop pauses after an accept error (out of file descriptors,
/// say) before it tries again.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The server's connection registry, locked.
pub(crate) fn registry(shared: &ServerShared) -> MutexGuard<'_, Registry> {
    locked(&shared.registry)
}

/// What every connection of a server shares.
pub(crate) struct ServerShared {
    pub(crate) client: ClientHandle,
    pub(crate) password: String,
    pub(crate) remote: RemoteAccess,
    pub(crate) limits: Limits,
    pub(crate) budget: BufferBudget,
    pub(crate) log: MessageSink,
    pub(crate) platform: String,
    pub(crate) data_dir: PathBuf,
    pub(crate) host: Option<Arc<dyn HostServices>>,
    pub(crate) registry: Mutex<Registry>,
    modes: Mutex<TemporaryModes>,
    /// The client's time when the server started, and the latest seen (f64 bits).
    start_time: AtomicU64,
    last_time: AtomicU64,
    attach: Mutex<(i32, Vec<String>)>,
    account_manager: Mutex<(i32, Option<String>)>,
    pub(crate) web_rpcs: WebRpcs,
}

impl ServerShared {
    pub(crate) fn modes(&self) -> MutexGuard<'_, TemporaryModes> {
        locked(&self.modes)
    }

    /// Notes the client's time from a snapshot.
    pub(crate) fn saw(&self, snapshot: &StateSnapshot) {
        self.last_time.store(snapshot.time.to_bits(), Ordering::Relaxed);
    }

    /// The latest client time seen.
    pub(crate) fn client_time(&self) -> Time {
        f64::from_bits(self.last_time.load(Ordering::Relaxed))
    }

    /// The client's time when the server started.
    pub(crate) fn client_start_time(&self) -> Time {
        f64::from_bits(self.start_time.load(Ordering::Relaxed))
    }

    pub(crate) fn attach_status(&self) -> (i32, Vec<String>) {
        locked(&self.attach).clone()
    }

    pub(crate) fn set_attach_status(&self, error_num: i32, messages: Vec<String>) {
        *locked(&self.attach) = (error_num, messages);
    }

    pub(crate) fn account_manager_status(&self) -> (i32, Option<String>) {
        locked(&self.account_manager).clone()
    }

    pub(crate) fn set_account_manager_status(&self, error_num: i32, message: Option<String>) {
        *locked(&self.account_manager) = (error_num, message);
    }
}

/// A view of a running server's load, for the host and for tests.
#[derive(Clone)]
pub struct ServerMonitor(Arc<ServerShared>);

impl ServerMonitor {
    /// Connections open now.
    pub fn connections(&self) -> usize {
        registry(&self.0).len()
    }

    /// Bytes of unfinished requests held now, over all connections.
    pub fn buffered_bytes(&self) -> usize {
        self.0.budget.held()
    }
}

/// A GUI RPC server bound to its port, ready to serve.
pub struct GuiRpcServer {
    listener: TcpListener,
    shared: Arc<ServerShared>,
    events: tokio::sync::mpsc::Receiver<ClientEvent>,
}

impl GuiRpcServer {
    /// Reads (or creates) the password file and the remote hosts file in the data
    /// directory, binds the port, and starts recording the client's events. Call it on
    /// a tokio runtime; the client may run anywhere.
    pub async fn bind(config: GuiRpcConfig, client: ClientHandle) -> Result<Self, GuiRpcError> {
        GuiRpcServer::bind_with(config, client, None).await
    }

    /// [`GuiRpcServer::bind`] for a host that can attach new projects and talk to
    /// account managers.
    pub async fn bind_with(
        config: GuiRpcConfig,
        client: ClientHandle,
        host: Option<Arc<dyn HostServices>>,
    ) -> Result<Self, GuiRpcError> {
        let password = load_or_create_password(&config.data_dir)?;
        let remote = RemoteAccess::load(&config.data_dir, config.allow_remote).await?;
        let ip = if remote.listens_remotely() {
            if password.is_empty() {
                tracing::warn!(
                    "remote GUI RPC is allowed but gui_rpc_auth.cfg is empty: remote clients \
                     cannot authenticate until it holds a password"
                );
            }
            IpAddr::V4(Ipv4Addr::UNSPECIFIED)
        } else {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        };
        let address = SocketAddr::new(ip, config.port);
        let listener = TcpListener::bind(address)
            .await
            .map_err(|source| GuiRpcError::Bind { address: address.to_string(), source })?;
        let events = client.events();
        let start = client.snapshot().await.map(|s| s.time).unwrap_or(0.0);
        let log = MessageSink::default();
        let shared = Arc::new(ServerShared {
            client,
            password,
            remote,
            limits: config.limits,
            budget: BufferBudget::new(config.limits.max_buffered_bytes),
            log,
            platform: boinc_platform(),
            data_dir: config.data_dir,
            host,
            registry: Mutex::new(Registry::default()),
            modes: Mutex::new(TemporaryModes::default()),
            start_time: AtomicU64::new(start.to_bits()),
            last_time: AtomicU64::new(start.to_bits()),
            attach: Mutex::new((0, Vec::new())),
            account_manager: Mutex::new((0, None)),
            web_rpcs: WebRpcs::default(),
        });
        let listening = listener.local_addr().map_err(GuiRpcError::Accept)?;
        shared.log.push(
            start,
            "",
            MessagePriority::Info,
            &format!("GUI RPC server listening on {listening}"),
        );
        Ok(GuiRpcServer { listener, shared, events })
    }

    /// The address the server listens on (its port, when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// The event log the server shows; the host may add its own messages.
    pub fn messages(&self) -> MessageSink {
        self.shared.log.clone()
    }

    /// The server's operations for a front end in this process (the web dashboard),
    /// valid while it serves.
    pub fn local(&self) -> super::local::LocalRpc {
        super::local::LocalRpc(self.shared.clone())
    }

    /// A view of the server's load that stays valid while it serves.
    pub fn monitor(&self) -> ServerMonitor {
        ServerMonitor(self.shared.clone())
    }

    /// Serves until the client's run ends; then closes every connection.
    pub async fn serve(self) -> Result<(), GuiRpcError> {
        let GuiRpcServer { listener, shared, events } = self;
        let feeder = tokio::spawn(feed(events, shared.log.clone()));
        let mut connections = JoinSet::new();
        let finished = shared.client.clone();
        let finished = finished.finished();
        tokio::pin!(finished);
        loop {
            tokio::select! {
                _ = &mut finished => break,
                accepted = listener.accept() => match accepted {
                    Ok((socket, peer)) => {
                        if !shared.remote.allows(peer.ip()) {
                            tracing::debug!(%peer, "GUI RPC connection from a host not allowed");
                            continue;
                        }
                        let admitted =
                            registry(&shared).admit(shared.limits.max_connections, Instant::now());
                        let Some((id, evict)) = admitted else {
                            tracing::warn!(%peer, "GUI RPC: every connection is busy; refused one");
                            continue;
                        };
                        connections.spawn(serve_connection(socket, peer, shared.clone(), id, evict));
                    }
                    Err(error) => {
                        tracing::warn!(%error, "GUI RPC: accepting a connection failed; retrying");
                        tokio::time::sleep(ACCEPT_RETRY).await;
                    }
                },
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        feeder.abort();
        connections.shutdown().await;
        Ok(())
    }
}
