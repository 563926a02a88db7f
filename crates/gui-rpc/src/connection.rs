//! One GUI RPC connection (docs/design.md "Protocol facts", GUI RPC): requests read one at a
//! time, each answered before the next is read; the session decides, the operations
//! act, and the connection closes when the session says so, when a limit is hit, when
//! the client goes quiet for too long, or when the server needs its place.

use super::auth::new_nonce;
use super::framing::{Frame, RequestReader, Timeouts};
use super::ops::{Afterwards, execute};
use super::remote_access::is_local;
use super::server::ServerShared;
use super::session::{Session, Step};
use boinc_core::protocol::gui_rpc::{self as protocol, frame_reply, parse_request};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// What BOINC's client answers a browser.
const HTTP_REFUSAL: &[u8] = b"HTTP/1.0 403 Access denied\n\nAccess denied\n";

/// Removes the connection from the registry however it ends.
struct Registered {
    shared: Arc<ServerShared>,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        super::server::registry(&self.shared).remove(self.id);
    }
}

/// Writes `bytes` within the write timeout; false when the client is gone or too slow.
async fn send(socket: &mut TcpStream, bytes: &[u8], shared: &ServerShared) -> bool {
    matches!(
        tokio::time::timeout(shared.limits.write_timeout, socket.write_all(bytes)).await,
        Ok(Ok(()))
    )
}

/// Serves one connection until it closes.
pub(crate) async fn serve_connection(
    mut socket: TcpStream,
    peer: SocketAddr,
    shared: Arc<ServerShared>,
    id: u64,
    evict: Arc<Notify>,
) {
    let registered = Registered { shared: shared.clone(), id };
    let mut session = Session::new(is_local(peer.ip()), &shared.password);
    let mut reader = RequestReader::new(shared.limits.max_request_bytes, shared.budget.clone());
    let timeouts =
        Timeouts { idle: shared.limits.idle_timeout, request: shared.limits.request_timeout };
    loop {
        let frame = tokio::select! {
            frame = reader.next(&mut socket, timeouts) => frame,
            () = evict.notified() => {
                tracing::debug!(%peer, "GUI RPC connection closed to make room");
                break;
            }
        };
        let request = match frame {
            Frame::Request(request) => request,
            Frame::TooLarge => {
                let message = format!(
                    "request too large: more than {} bytes without a terminator",
                    shared.limits.max_request_bytes
                );
                send(&mut socket, &frame_reply(&protocol::error(&message)), &shared).await;
                break;
            }
            Frame::Busy => {
                let message = "the server is busy with other requests; try again";
                send(&mut socket, &frame_reply(&protocol::error(message)), &shared).await;
                break;
            }
            Frame::Http => {
                send(&mut socket, HTTP_REFUSAL, &shared).await;
                break;
            }
            Frame::Closed | Frame::TimedOut => break,
        };
        super::server::registry(&shared).started(id, Instant::now());
        let (reply, close, afterwards) = match session.step(parse_request(&request), new_nonce) {
            Step::Reply(body) => (Some(body), false, Afterwards::Continue),
            Step::ReplyAndClose(body) => (Some(body), true, Afterwards::Continue),
            Step::Close => (None, true, Afterwards::Continue),
            Step::Execute(operation) => {
                let (body, afterwards) = execute(operation, &shared).await;
                (Some(body), false, afterwards)
            }
        };
        let sent = match reply {
            Some(body) => send(&mut socket, &frame_reply(&body), &shared).await,
            None => true,
        };
        super::server::registry(&shared).answered(id, Instant::now());
        if afterwards == Afterwards::ShutDown {
            tracing::info!(%peer, "quit requested over GUI RPC");
            shared.client.shutdown();
        }
        if close || !sent {
            break;
        }
    }
    drop(registered);
}
