//! A port for a peer that must be told which port to listen on. Our own servers bind
//! port 0 and say which port they got (`boinc-rs project-server` in DIR/url, `boinc-rs
//! run` in DIR/gui_rpc_port, the in-process servers through `local_addr`), so a test
//! never guesses a port for them. The real BOINC client cannot: `--gui_rpc_port 0` is
//! not "any port" to it, and it tells nobody where it listens. For it alone a test picks
//! a port the system has just handed out and taken back, and since another process may
//! take that port before the peer binds it, the peer is started again on another port
//! when it could not bind, a bounded number of times.

#![allow(dead_code)] // Each test binary uses a different part.

/// How many ports a peer is tried on before the test gives up.
pub const PEER_PORT_TRIES: usize = 3;

/// A TCP port of 127.0.0.1 that was free a moment ago (bound and released at once).
/// Only for a peer that cannot bind port 0 and report the port; start it with
/// [`start_on_an_unused_port`], which tries another port when this one was taken.
pub fn unused_port_for_a_peer() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("the system gives a port")
}

/// Starts a peer on a port from [`unused_port_for_a_peer`]: `start(port)` starts it and
/// waits (bounded) until it serves, giving it back, or stops it and says why when it
/// could not bind the port (another process took it); then another port is tried, at
/// most [`PEER_PORT_TRIES`] in all. Any other failure is `start`'s to panic on.
pub fn start_on_an_unused_port<T>(
    what: &str,
    mut start: impl FnMut(u16) -> Result<T, String>,
) -> T {
    let mut failures = Vec::new();
    for _ in 0..PEER_PORT_TRIES {
        let port = unused_port_for_a_peer();
        match start(port) {
            Ok(peer) => return peer,
            Err(why) => failures.push(format!("port {port}: {why}")),
        }
    }
    panic!("{what} could not bind a port in {PEER_PORT_TRIES} tries:\n{}", failures.join("\n"))
}
