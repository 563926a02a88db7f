//! GUI RPC operations carried out inside the client's process (docs/design.md "Protocol
//! facts", GUI RPC), for a front end that runs beside the server: the web dashboard
//! (crates/web) reads and steers the client through the very operations a `boinccmd`
//! connection sends, with the same event log, temporary modes and attach status, so
//! what one shows the other shows too.

use super::ops::{Afterwards, execute};
use super::remote_access::RemoteAccess;
use super::server::ServerShared;
use boinc_core::protocol::gui_rpc::Operation;
use boinc_runtime::client::ClientHandle;
use std::sync::Arc;

/// A GUI RPC server's operations without its socket; cheap to clone.
#[derive(Clone)]
pub struct LocalRpc(pub(crate) Arc<ServerShared>);

impl LocalRpc {
    /// Carries `operation` out as a connection would, and gives the reply's body (the
    /// XML inside `<boinc_gui_rpc_reply>`). A `quit` stops the client, as over the socket.
    pub async fn execute(&self, operation: Operation) -> Vec<u8> {
        let (body, afterwards) = execute(operation, &self.0).await;
        if afterwards == Afterwards::ShutDown {
            tracing::info!("quit requested through the local GUI RPC");
            self.0.client.shutdown();
        }
        body
    }

    /// The client the operations act on.
    pub fn client(&self) -> &ClientHandle {
        &self.0.client
    }

    /// The GUI RPC password (gui_rpc_auth.cfg): a front end asks its users for it.
    pub fn password(&self) -> &str {
        &self.0.password
    }

    /// Which hosts besides this one may use GUI RPC: a front end admits the same.
    pub fn remote_access(&self) -> &RemoteAccess {
        &self.0.remote
    }
}
