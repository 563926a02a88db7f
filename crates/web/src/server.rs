//! The dashboard's HTTP server (docs/dashboard.md): actix-web on 127.0.0.1, or on every
//! interface when remote GUI RPC is allowed (the routes still refuse the hosts GUI RPC
//! refuses), one worker thread (a volunteer's client serves a browser or two, and the
//! work is the client's), stopped when the client's run ends.

use super::error::WebError;
use super::events::StreamSlots;
use super::history::SharedHistory;
use super::routes::{Dashboard, routes};
use super::sessions::Sessions;
use actix_web::{App, HttpServer, web};
use boinc_gui_rpc::LocalRpc;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::time::Duration;

/// The dashboard's port unless told otherwise (the one after GUI RPC's 31416).
pub const DEFAULT_WEB_PORT: u16 = 31417;

/// The file in the data directory that holds the dashboard's port while it serves (a
/// decimal number and a newline), as `gui_rpc_port` holds GUI RPC's.
pub const WEB_PORT_FILE: &str = "web_port";

/// How long open requests (an event stream, say) get to finish when the client stops.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// The dashboard, bound to its port, ready to serve.
pub struct WebServer {
    server: actix_web::dev::Server,
    address: SocketAddr,
    rpc: LocalRpc,
}

impl WebServer {
    /// Binds `port` (0: one the system picks) and prepares to serve the client behind
    /// `rpc`. Call it on a tokio runtime (or actix's).
    pub fn bind(port: u16, rpc: LocalRpc) -> Result<WebServer, WebError> {
        let ip = if rpc.remote_access().listens_remotely() {
            IpAddr::V4(Ipv4Addr::UNSPECIFIED)
        } else {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        };
        let asked = SocketAddr::new(ip, port);
        let bind_error = |source| WebError::Bind { address: asked.to_string(), source };
        let listener = TcpListener::bind(asked).map_err(bind_error)?;
        let address = listener.local_addr().map_err(bind_error)?;
        let history = SharedHistory::default();
        // Recorded from now until the client stops, on the caller's runtime.
        tokio::spawn(history.clone().record(rpc.client().events()));
        let dashboard = web::Data::new(Dashboard {
            rpc: rpc.clone(),
            sessions: Sessions::default(),
            streams: StreamSlots::default(),
            history,
        });
        let server =
            HttpServer::new(move || App::new().app_data(dashboard.clone()).configure(routes))
                .workers(1)
                .disable_signals()
                .shutdown_timeout(SHUTDOWN_GRACE.as_secs())
                .listen(listener)
                .map_err(bind_error)?
                .run();
        Ok(WebServer { server, address, rpc })
    }

    /// The address it listens on (its port, when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// Serves until the client's run ends.
    pub async fn serve(self) -> Result<(), WebError> {
        let WebServer { server, rpc, .. } = self;
        let handle = server.handle();
        let running = tokio::spawn(server);
        let _ = rpc.client().finished().await;
        handle.stop(true).await;
        let _ = running.await;
        Ok(())
    }
}
