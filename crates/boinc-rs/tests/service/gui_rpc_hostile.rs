//! boinc-rs's GUI RPC server under hostile or broken clients (issue "GUI RPC server",
//! bad input): requests without the terminator, requests over 1 MB, garbage, HTTP,
//! thousands of connections at once. Nothing panics, memory stays bounded, and other
//! connections go on being served.

use crate::served;
use crate::support;

use boinc_core::protocol::gui_rpc::{read_cc_status, read_tasks};
use boinc_gui_rpc::{GuiRpcClient, GuiRpcError, Limits};
use served::{PASSWORD, Served, WAIT};
use std::time::Duration;
use support::http::resident_bytes;
use support::wait::wait_until_async;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const REQUEST_START: &[u8] = b"<boinc_gui_rpc_request>\n";
const REQUEST_END: &[u8] = b"\n</boinc_gui_rpc_request>\n\x03";

fn request(body: &str) -> Vec<u8> {
    [REQUEST_START, body.as_bytes(), REQUEST_END].concat()
}

/// Reads until the terminator, EOF or `wait`; returns what came.
async fn read_reply(stream: &mut TcpStream, wait: Duration) -> (Vec<u8>, bool) {
    let mut reply = Vec::new();
    let mut chunk = [0u8; 65536];
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (reply, true),
            Ok(Ok(n)) => {
                reply.extend_from_slice(&chunk[..n]);
                if reply.last() == Some(&0x03) {
                    return (reply, false);
                }
            }
            Err(_) => return (reply, false),
        }
    }
}

/// A well-behaved client's view: the modes, over a fresh connection.
async fn still_served(served: &Served) {
    let mut client = GuiRpcClient::connect(&served.host()).await.expect("connects");
    let status = read_cc_status(&client.call("<get_cc_status/>").await.expect("a reply"))
        .expect("cc_status");
    assert_eq!(status.task_mode, 2);
}

#[test]
fn a_request_without_its_terminator_waits_alone_and_times_out() {
    let limits = Limits { request_timeout: Duration::from_secs(1), ..Limits::default() };
    let served = Served::start_with(limits);
    served.block_on(async {
        let mut stuck = TcpStream::connect(served.address).await.expect("connects");
        stuck
            .write_all(b"<boinc_gui_rpc_request>\n<get_state/>\n</boinc_gui_rpc_request>\n")
            .await
            .expect("sent");
        let (reply, closed) = read_reply(&mut stuck, Duration::from_millis(300)).await;
        assert!(reply.is_empty() && !closed, "no reply before the terminator");
        assert!(served.monitor.buffered_bytes() > 0);
        still_served(&served).await;
        let (reply, closed) = read_reply(&mut stuck, Duration::from_secs(5)).await;
        assert!(reply.is_empty() && closed, "closed once the request timed out");
        wait_until_async("its bytes to be given back", WAIT, || {
            served.monitor.buffered_bytes() == 0
        })
        .await;
    });
}

#[test]
fn an_oversized_request_is_refused_and_closed() {
    let served = Served::start();
    served.block_on(async {
        let mut big = TcpStream::connect(served.address).await.expect("connects");
        let flood = vec![b'x'; (1 << 20) + 4096];
        // The server may close while we still write: that is the point.
        let _ = big.write_all(&flood).await;
        let (reply, _) = read_reply(&mut big, Duration::from_secs(10)).await;
        let text = String::from_utf8_lossy(&reply);
        assert!(text.contains("<error>request too large"), "{text}");
        let (rest, closed) = read_reply(&mut big, Duration::from_secs(5)).await;
        assert!(rest.is_empty() && closed);
        still_served(&served).await;
        assert_eq!(served.monitor.buffered_bytes(), 0);
    });
}

#[test]
fn garbage_gets_answers_and_the_connection_goes_on() {
    let served = Served::start();
    served.block_on(async {
        let mut stream = TcpStream::connect(served.address).await.expect("connects");
        let garbage: [&[u8]; 5] = [
            b"\x00\xff\xfe garbage \x01\x03",
            b"<boinc_gui_rpc_request><get_state></boinc_gui_rpc_request>\x03",
            b"<boinc_gui_rpc_request>\x03",
            b"<<<<>>>>&&&;;\x03",
            b"<boinc_gui_rpc_request><bogus_op/></boinc_gui_rpc_request>\x03",
        ];
        for bytes in garbage {
            stream.write_all(bytes).await.expect("sent");
            let (reply, closed) = read_reply(&mut stream, Duration::from_secs(5)).await;
            let text = String::from_utf8_lossy(&reply);
            assert!(!closed && text.starts_with("<boinc_gui_rpc_reply>\n<error>"), "{text}");
        }
        // Then a real request on the same connection.
        stream
            .write_all(&request("<get_results>\n<active_only>0</active_only>\n</get_results>"))
            .await
            .expect("sent");
        let (reply, _) = read_reply(&mut stream, Duration::from_secs(5)).await;
        let text = String::from_utf8_lossy(&reply);
        let body = text
            .trim_start_matches("<boinc_gui_rpc_reply>")
            .trim_end_matches('\u{3}')
            .replace("</boinc_gui_rpc_reply>", "");
        assert_eq!(read_tasks(&body).expect("tasks").len(), served.snapshot().state.jobs.len());

        let mut browser = TcpStream::connect(served.address).await.expect("connects");
        browser.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n").await.expect("sent");
        let (reply, closed) = read_reply(&mut browser, Duration::from_secs(5)).await;
        assert!(
            reply.starts_with(b"HTTP/1.0 403") && closed,
            "{}",
            String::from_utf8_lossy(&reply)
        );
    });
}

/// Two requests in one write are answered one after the other, in order (BOINC's own
/// client drops the second; a client that waits for each reply sees no difference).
#[test]
fn requests_sent_together_are_answered_in_order() {
    let served = Served::start();
    served.block_on(async {
        let mut stream = TcpStream::connect(served.address).await.expect("connects");
        let both = [request("<get_message_count/>"), request("<exchange_versions/>")].concat();
        stream.write_all(&both).await.expect("sent");
        let mut replies = Vec::new();
        while replies.iter().filter(|&&b| b == 0x03).count() < 2 {
            let (more, closed) = read_reply(&mut stream, Duration::from_secs(5)).await;
            assert!(!more.is_empty() && !closed, "both replies come");
            replies.extend(more);
        }
        let text = String::from_utf8_lossy(&replies);
        let (first, second) = text.split_once('\u{3}').expect("two replies");
        assert!(first.contains("<seqno>"), "{first}");
        assert!(second.contains("<server_version>"), "{second}");
    });
}

#[test]
fn two_refusals_close_the_connection() {
    let served = Served::start();
    served.block_on(async {
        let mut stream = TcpStream::connect(served.address).await.expect("connects");
        for close_expected in [false, true] {
            stream.write_all(&request("<quit/>")).await.expect("sent");
            let (reply, _) = read_reply(&mut stream, Duration::from_secs(5)).await;
            assert!(String::from_utf8_lossy(&reply).contains("<unauthorized/>"));
            if close_expected {
                let (rest, closed) = read_reply(&mut stream, Duration::from_secs(5)).await;
                assert!(rest.is_empty() && closed);
            }
        }
        assert!(matches!(
            GuiRpcClient::connect(&served.host())
                .await
                .expect("connects")
                .authenticate("wrong")
                .await,
            Err(GuiRpcError::Unauthorized)
        ));
    });
    assert!(!served.snapshot().running.is_empty(), "nobody quit it");
}

/// 3,000 connections at once against a limit of 1,024, while a tool polls on its own
/// connection: the tool is never cut off, the server keeps within its limit, a
/// newcomer is served after the flood, and memory grows by little.
#[test]
fn thousands_of_connections() {
    let files = raise_file_limit(16_384);
    // Each flood connection costs a descriptor here and, while admitted, one in the
    // server (this process too): leave room for the server's 1,024 and the rest.
    let flood_size = 3000.min(files.saturating_sub(1500) as usize);
    assert!(
        flood_size > 1100,
        "only {files} files may be open: raise the hard limit (ulimit -Hn) to test a flood"
    );
    let served = Served::start();
    served.block_on(async {
        let mut tool = GuiRpcClient::connect(&served.host()).await.expect("connects");
        tool.authenticate(PASSWORD).await.expect("authenticated");
        tool.call("<get_state/>").await.expect("state");
        let before = resident_bytes();
        let mut flood = Vec::new();
        for _ in 0..flood_size {
            match TcpStream::connect(served.address).await {
                Ok(stream) => flood.push(stream),
                Err(error) => panic!("connecting the flood failed: {error}"),
            }
            if flood.len() % 500 == 0 {
                tool.call("<get_state/>").await.expect("the polling tool is still served");
            }
        }
        // Time for the server to take in the flood, on purpose: the bound must hold once
        // it has, and nothing counts what it has accepted (past the bound each new
        // connection evicts an idle one, so the count of open ones stops telling).
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(served.monitor.connections() <= 1024, "{} open", served.monitor.connections());
        tool.call("<get_cc_status/>").await.expect("the polling tool is still served");
        still_served(&served).await;
        let grown = resident_bytes().saturating_sub(before);
        assert!(grown < 64 << 20, "resident memory grew by {grown} bytes");
        drop(flood);
    });
}

/// Many connections each sending a large unfinished request: the server holds no
/// more than its budget of unfinished bytes, and answers the rest with "busy".
#[test]
fn unfinished_requests_stay_within_the_budget() {
    raise_file_limit(1024);
    let budget = 2 << 20;
    let served = Served::start_with(Limits { max_buffered_bytes: budget, ..Limits::default() });
    served.block_on(async {
        let mut senders = Vec::new();
        for _ in 0..40 {
            let mut stream = TcpStream::connect(served.address).await.expect("connects");
            let chunk = vec![b'y'; 200 << 10];
            let _ = stream.write_all(&chunk).await;
            senders.push(stream);
        }
        // Time for the server to read what the senders sent, on purpose: the budget must
        // hold once it has, and nothing counts what it has read (past the budget a
        // request is answered "busy" instead of held).
        tokio::time::sleep(Duration::from_millis(300)).await;
        let held = served.monitor.buffered_bytes();
        assert!(held <= budget, "{held} bytes held");
        let mut busy = 0;
        for stream in &mut senders {
            let (reply, _) = read_reply(stream, Duration::from_millis(200)).await;
            if String::from_utf8_lossy(&reply).contains("busy") {
                busy += 1;
            }
        }
        assert!(busy > 0, "some were told the server is busy");
        still_served(&served).await;
        drop(senders);
        wait_until_async("the unfinished requests' bytes to be given back", WAIT, || {
            served.monitor.buffered_bytes() == 0
        })
        .await;
    });
}

/// Raises the open-file limit towards `wanted`; returns the limit now.
fn raise_file_limit(wanted: u64) -> u64 {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("the file limit");
    let target = wanted.min(hard);
    if soft < target {
        setrlimit(Resource::RLIMIT_NOFILE, target, hard).expect("raising the file limit");
    }
    getrlimit(Resource::RLIMIT_NOFILE).expect("the file limit").0
}
