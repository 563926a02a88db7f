//! What can go wrong when serving GUI RPC or talking to a GUI RPC server.

use std::path::PathBuf;

/// A GUI RPC server could not start or stopped, or a GUI RPC call failed.
#[derive(Debug, thiserror::Error)]
pub enum GuiRpcError {
    /// The port could not be bound.
    #[error(
        "cannot listen on {address}: {source}; another BOINC client (or boinc-rs) may be using \
         the port: stop it or choose another with --gui-rpc-port"
    )]
    Bind {
        /// The address asked for.
        address: String,
        /// Why.
        source: std::io::Error,
    },
    /// The password file could not be read or created.
    #[error(
        "cannot read or create the GUI RPC password file {path}: {source}; check the data \
         directory's permissions"
    )]
    PasswordFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The remote hosts file could not be read.
    #[error("cannot read {path}: {source}; fix its permissions or remove it")]
    RemoteHostsFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Listening failed while serving.
    #[error("the GUI RPC listener failed: {0}")]
    Accept(std::io::Error),
    /// A client could not reach the server.
    #[error(
        "cannot connect to the client's GUI RPC port at {address}: {source}; is the client \
         running (boinc-rs run, or boinc-rs sim --gui-rpc-port) and is the port right?"
    )]
    Connect {
        /// Where.
        address: String,
        /// Why.
        source: std::io::Error,
    },
    /// The connection failed or timed out during a call.
    #[error("the GUI RPC connection failed: {0}")]
    Io(#[from] std::io::Error),
    /// The server took too long to answer.
    #[error("the client did not answer within {0} seconds")]
    Timeout(u64),
    /// The server closed the connection without a reply (after a refused password, say).
    #[error("the client closed the connection without answering")]
    Closed,
    /// The server's reply is larger than a client accepts.
    #[error("the client's reply is larger than {0} bytes")]
    ReplyTooLarge(usize),
    /// The server refused the password.
    #[error(
        "the client refused the password; give the one in the client's gui_rpc_auth.cfg \
         (--passwd, or --dir DIR holding that file)"
    )]
    Unauthorized,
    /// The server answered with an error.
    #[error("the client said: {0}")]
    Refused(String),
    /// The reply could not be read.
    #[error("the client's reply is not what GUI RPC sends: {0}")]
    BadReply(String),
}
