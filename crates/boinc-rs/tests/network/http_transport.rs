//! The HTTP transport against small servers on 127.0.0.1 that answer as a project
//! would, or misbehave as a broken one does: the request carries the real client's
//! headers, replies and master pages are read, and every failure (HTTP 500, a body
//! that is not XML, silence, a reset, a cut-off answer, 100 MB, redirect loops) is the
//! RPC error seed 002's backoff acts on, within bounded time and memory. A proxy named
//! in the settings carries the requests.

use crate::support;

use boinc_core::control::ClientIdentity;
use boinc_core::model::{CcConfig, ProxyInfo};
use boinc_core::protocol::SchedulerRequest;
use boinc_core::protocol::acct_mgr::parse_acct_mgr_request;
use boinc_runtime::effects::{RpcError, SchedulerTransport};
use boinc_service::http::{
    HttpSettings, HttpTransport, MAX_ACCOUNT_MANAGER_REPLY, MAX_MASTER_PAGE, MAX_REDIRECTS,
    MAX_SCHEDULER_REPLY, SCHEDULER_REQUEST_CONTENT_TYPE,
};
use std::time::{Duration, Instant};
use support::http::{Recorded, TestServer, block_on};

const REPLY: &str =
    include_str!("../../../../tests/fixtures/boinc-7.20.5/sched_reply_nowork_example.xml");
const HEADERS: &str =
    include_str!("../../../../tests/fixtures/boinc-7.20.5/sched_request_http_headers.txt");

fn settings(timeout: f64) -> HttpSettings {
    let config = CcConfig { http_transfer_timeout: timeout, ..CcConfig::default() };
    HttpSettings::new(&config, &ClientIdentity::default())
}

fn transport(timeout: f64) -> HttpTransport {
    HttpTransport::new(settings(timeout)).expect("a transport")
}

fn request() -> SchedulerRequest<'static> {
    SchedulerRequest {
        authenticator: "abc".into(),
        platform_name: "x86_64-pc-linux-gnu".into(),
        ..Default::default()
    }
}

fn rpc(
    transport: &HttpTransport,
    url: &str,
) -> Result<boinc_core::protocol::SchedulerReply, RpcError> {
    block_on(transport.scheduler_rpc(url, &request()))
}

#[test]
fn a_scheduler_request_carries_the_real_clients_headers_and_its_reply_is_read() {
    let server = TestServer::start();
    let reply = rpc(&transport(30.0), &server.url("/reply")).expect("a reply");
    assert_eq!(
        reply.request_delay,
        boinc_core::protocol::SchedulerReply::from_xml(REPLY).unwrap().request_delay
    );
    let Recorded { method, headers, body, .. } = server.last_request().expect("the request");
    assert_eq!(method, "POST");
    // Every header of the real client's request, with the same values where they do
    // not depend on the request (Accept-Encoding is left out: this client takes
    // answers unencoded, and says so by not offering encodings).
    for line in HEADERS.lines().skip(1).filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once(": ").expect("a header line");
        let name = name.to_ascii_lowercase();
        let ours = headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str());
        match name.as_str() {
            "accept-encoding" => assert_eq!(ours, None),
            "host" => assert_eq!(ours, Some(server.host().as_str())),
            "content-length" => assert_eq!(ours, Some(body.len().to_string().as_str())),
            "user-agent" => assert_eq!(ours, Some("BOINC client (x86_64-pc-linux-gnu 8.3.0)")),
            "content-type" => {
                assert_eq!(
                    (ours, value),
                    (Some(SCHEDULER_REQUEST_CONTENT_TYPE), SCHEDULER_REQUEST_CONTENT_TYPE)
                )
            }
            _ => assert_eq!(ours, Some(value), "{name}"),
        }
    }
    let sent =
        SchedulerRequest::from_xml(&String::from_utf8(body).expect("text")).expect("a request");
    assert_eq!(sent.authenticator, "abc");
}

#[test]
fn a_master_page_names_the_schedulers_and_one_redirect_is_followed() {
    let server = TestServer::start();
    let transport = transport(30.0);
    let page = block_on(transport.master_page(&server.url("/master"))).expect("a page");
    assert_eq!(page.scheduler_urls, [server.url("/cgi")]);
    let page = block_on(transport.master_page(&server.url("/redirect"))).expect("followed");
    assert_eq!(page.scheduler_urls, [server.url("/cgi")]);
    let looping = block_on(transport.master_page(&server.url("/loop")));
    assert_eq!(
        looping,
        Err(RpcError::TooManyRedirects { url: server.url("/loop"), limit: MAX_REDIRECTS })
    );
}

#[test]
fn http_errors_and_answers_that_are_not_replies_are_typed_failures() {
    let server = TestServer::start();
    let transport = transport(30.0);
    assert_eq!(
        rpc(&transport, &server.url("/500")),
        Err(RpcError::Http { url: server.url("/500"), status: 500 })
    );
    match rpc(&transport, &server.url("/html")) {
        Err(RpcError::Malformed { what, problem, .. }) => {
            assert_eq!(what, "scheduler reply");
            assert!(!problem.is_empty());
        }
        other => panic!("{other:?}"),
    }
    // Cut off after half its announced length.
    match rpc(&transport, &server.url("/truncated")) {
        Err(RpcError::Interrupted { reason, .. }) => assert!(!reason.is_empty()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_silent_server_times_out_by_cc_config_http_transfer_timeout() {
    let server = TestServer::start();
    let started = Instant::now();
    match rpc(&transport(2.0), &server.url("/hang")) {
        Err(RpcError::Timeout { reason, .. }) => {
            assert!(reason.contains("http_transfer_timeout"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    let waited = started.elapsed();
    assert!(waited >= Duration::from_secs(2) && waited < Duration::from_secs(10), "{waited:?}");
}

#[test]
fn a_reset_connection_and_a_closed_port_are_connection_failures() {
    let reset = support::http::ResettingListener::start();
    match rpc(&transport(30.0), &reset.url()) {
        Err(RpcError::Interrupted { .. } | RpcError::Connect { .. }) => {}
        other => panic!("{other:?}"),
    }
    let closed = support::http::ClosedPort::new();
    match rpc(&transport(30.0), &format!("http://127.0.0.1:{}/cgi", closed.port())) {
        Err(RpcError::Connect { reason, .. }) => assert!(!reason.is_empty()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_reply_of_100_mb_is_refused_without_being_held() {
    let server = TestServer::start();
    let transport = transport(30.0);
    let before = support::http::resident_bytes();
    // Announced: refused before its body is read.
    let announced = rpc(&transport, &server.url("/huge_announced"));
    assert_eq!(
        announced,
        Err(RpcError::TooLarge { url: server.url("/huge_announced"), limit: MAX_SCHEDULER_REPLY })
    );
    // Streamed without a length: cut off at the limit.
    let streamed = rpc(&transport, &server.url("/huge_streamed"));
    assert_eq!(
        streamed,
        Err(RpcError::TooLarge { url: server.url("/huge_streamed"), limit: MAX_SCHEDULER_REPLY })
    );
    let grown = support::http::resident_bytes().saturating_sub(before);
    assert!(grown < 3 * MAX_SCHEDULER_REPLY, "resident memory grew by {grown} bytes");
    assert!(
        server.bytes_sent() < 60_000_000,
        "the client stopped reading: {}",
        server.bytes_sent()
    );
    // A master page is bounded the same way, by its own smaller limit.
    let sent_before = server.bytes_sent();
    let page = block_on(transport.master_page(&server.url("/huge_streamed")));
    assert_eq!(
        page,
        Err(RpcError::TooLarge { url: server.url("/huge_streamed"), limit: MAX_MASTER_PAGE })
    );
    let sent = server.bytes_sent() - sent_before;
    assert!(sent < 30_000_000, "the client stopped reading the page: {sent}");
    // And an account manager's reply by its own.
    let sent_before = server.bytes_sent();
    let request = parse_acct_mgr_request("<acct_mgr_request><name>v</name></acct_mgr_request>")
        .expect("a request");
    let manager = block_on(transport.account_manager_rpc(&server.url("/huge"), &request));
    assert_eq!(
        manager,
        Err(RpcError::TooLarge {
            url: server.url("/huge/rpc.php"),
            limit: MAX_ACCOUNT_MANAGER_REPLY
        })
    );
    let sent = server.bytes_sent() - sent_before;
    assert!(sent < 30_000_000, "the client stopped reading the manager's reply: {sent}");
}

#[test]
fn a_proxy_in_the_settings_carries_the_requests() {
    let server = TestServer::start();
    let proxy = TestServer::start();
    let settings = HttpSettings { proxy: http_proxy(port_of(&proxy.url(""))), ..settings(30.0) };
    let transport = HttpTransport::new(settings).expect("a transport");
    let page = block_on(transport.master_page(&server.url("/master"))).expect("a page");
    // The proxy answered (the project's server was never asked).
    assert_eq!(page.scheduler_urls, [proxy.url("/cgi")]);
    let asked = proxy.last_request().expect("the proxy was asked");
    assert_eq!(asked.uri, server.url("/master"));
    assert!(server.last_request().is_none());
}

#[test]
fn a_proxy_that_is_down_is_named_in_the_error() {
    let server = TestServer::start();
    // A port that was free a moment ago: nothing listens there.
    let down = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a port")
        .port();
    for proxy in [
        http_proxy(down),
        ProxyInfo {
            use_socks_proxy: true,
            socks_server_name: "127.0.0.1".into(),
            socks_server_port: down,
            ..ProxyInfo::default()
        },
    ] {
        let settings = HttpSettings { proxy, ..settings(30.0) };
        let transport = HttpTransport::new(settings).expect("a transport");
        let error =
            block_on(transport.master_page(&server.url("/master"))).expect_err("the proxy is down");
        assert!(matches!(error, RpcError::Connect { .. }), "{error:?}");
        let message = error.to_string();
        assert!(message.contains("through the proxy"), "{message}");
        assert!(message.contains(&format!("127.0.0.1:{down}")), "{message}");
        assert!(server.last_request().is_none(), "the project was reached around the proxy");
    }
}

fn http_proxy(port: u16) -> ProxyInfo {
    ProxyInfo {
        use_http_proxy: true,
        http_server_name: "127.0.0.1".into(),
        http_server_port: port,
        ..ProxyInfo::default()
    }
}

fn port_of(url: &str) -> u16 {
    url.trim_end_matches('/').rsplit(':').next().and_then(|p| p.parse().ok()).expect("a port")
}
