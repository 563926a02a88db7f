//! A GUI RPC client (docs/design.md "Protocol facts", GUI RPC): what `boinc-rs status`,
//! `tasks`, `project` and `quit` use to talk to a running client, boinc-rs or BOINC's
//! own. One connection, one request at a time, each reply read to its terminator
//! within a time and size limit.

use super::auth::nonce_hash;
use super::error::GuiRpcError;
use boinc_core::protocol::gui_rpc::{ReplyOutcome, TERMINATOR, read_nonce, read_outcome};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The longest a call waits for its reply.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The largest reply accepted (a big client's `get_state` is a few megabytes).
const MAX_REPLY_BYTES: usize = 256 << 20;

const OPEN: &str = "<boinc_gui_rpc_reply>";
const CLOSE: &str = "</boinc_gui_rpc_reply>";

/// A connection to a client's GUI RPC port.
pub struct GuiRpcClient {
    stream: TcpStream,
    buffer: Vec<u8>,
}

impl GuiRpcClient {
    /// Connects to `address` (`host:port`).
    pub async fn connect(address: &str) -> Result<Self, GuiRpcError> {
        let connecting = tokio::time::timeout(CALL_TIMEOUT, TcpStream::connect(address));
        let stream = match connecting.await {
            Ok(Ok(stream)) => stream,
            Ok(Err(source)) => {
                return Err(GuiRpcError::Connect { address: address.to_string(), source });
            }
            Err(_) => return Err(GuiRpcError::Timeout(CALL_TIMEOUT.as_secs())),
        };
        Ok(GuiRpcClient { stream, buffer: Vec::new() })
    }

    /// Sends one request (the operation's XML) and returns the reply's body, the text
    /// inside `<boinc_gui_rpc_reply>`.
    pub async fn call(&mut self, operation: &str) -> Result<String, GuiRpcError> {
        let request =
            format!("<boinc_gui_rpc_request>\n{operation}\n</boinc_gui_rpc_request>\n\u{3}");
        let exchange = async {
            self.stream.write_all(request.as_bytes()).await?;
            self.read_reply().await
        };
        match tokio::time::timeout(CALL_TIMEOUT, exchange).await {
            Ok(reply) => reply,
            Err(_) => Err(GuiRpcError::Timeout(CALL_TIMEOUT.as_secs())),
        }
    }

    async fn read_reply(&mut self) -> Result<String, GuiRpcError> {
        let mut chunk = [0u8; 64 * 1024];
        loop {
            if let Some(end) = self.buffer.iter().position(|&b| b == TERMINATOR) {
                let reply: Vec<u8> = self.buffer.drain(..=end).take(end).collect();
                let text = String::from_utf8_lossy(&reply);
                let start = text
                    .find(OPEN)
                    .ok_or_else(|| GuiRpcError::BadReply(text.chars().take(80).collect()))?;
                let stop = text
                    .rfind(CLOSE)
                    .ok_or_else(|| GuiRpcError::BadReply(text.chars().take(80).collect()))?;
                return Ok(text.get(start + OPEN.len()..stop).unwrap_or("").trim().to_string());
            }
            if self.buffer.len() > MAX_REPLY_BYTES {
                return Err(GuiRpcError::ReplyTooLarge(MAX_REPLY_BYTES));
            }
            let read = self.stream.read(&mut chunk).await?;
            if read == 0 {
                return Err(GuiRpcError::Closed);
            }
            self.buffer.extend_from_slice(&chunk[..read]);
        }
    }

    /// Authenticates with `password` (`<auth1/>`, then md5(nonce + password)).
    pub async fn authenticate(&mut self, password: &str) -> Result<(), GuiRpcError> {
        let reply = self.call("<auth1/>").await?;
        let nonce = read_nonce(&reply).ok_or_else(|| GuiRpcError::BadReply(reply.clone()))?;
        let hash = nonce_hash(&nonce, password);
        let answer = format!("<auth2>\n<nonce_hash>{hash}</nonce_hash>\n</auth2>");
        match self.call(&answer).await {
            Ok(reply) => match read_outcome(&reply) {
                ReplyOutcome::Authorized => Ok(()),
                ReplyOutcome::Unauthorized => Err(GuiRpcError::Unauthorized),
                _ => Err(GuiRpcError::BadReply(reply)),
            },
            // A refused password closes the connection.
            Err(GuiRpcError::Closed) => Err(GuiRpcError::Unauthorized),
            Err(error) => Err(error),
        }
    }

    /// Sends a control operation and checks that it succeeded.
    pub async fn command(&mut self, operation: &str) -> Result<(), GuiRpcError> {
        let reply = self.call(operation).await?;
        match read_outcome(&reply) {
            ReplyOutcome::Success => Ok(()),
            ReplyOutcome::Unauthorized => Err(GuiRpcError::Unauthorized),
            ReplyOutcome::Error(message) => Err(GuiRpcError::Refused(message)),
            _ => Err(GuiRpcError::BadReply(reply)),
        }
    }
}
