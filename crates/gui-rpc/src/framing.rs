//! Cutting a connection's bytes into requests (docs/design.md "Protocol facts", GUI RPC):
//! each request ends with the byte 0x03. A request may come in many reads or several in
//! one; the reader hands them out one at a time, in order. Memory stays bounded: a
//! request may not grow past the size limit, and all connections together may not hold
//! more than a shared budget of unfinished requests.

use boinc_core::protocol::gui_rpc::TERMINATOR;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::time::Instant;

/// Bytes read from the socket at a time.
const READ_CHUNK: usize = 4096;

/// What the reader found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Frame {
    /// A request (without its terminator).
    Request(Vec<u8>),
    /// The request grew past the size limit without its terminator.
    TooLarge,
    /// All connections together hold too many unfinished bytes to take these.
    Busy,
    /// The client spoke HTTP: a browser, or a web page trying its luck.
    Http,
    /// The client closed the connection (anything unfinished is dropped).
    Closed,
    /// The client sent nothing for too long, or took too long over a request.
    TimedOut,
}

/// How long a reader waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timeouts {
    /// For the first byte of a request.
    pub(crate) idle: Duration,
    /// From the first byte of a request to its terminator.
    pub(crate) request: Duration,
}

/// Bytes of unfinished requests held by all connections of a server.
#[derive(Debug, Default, Clone)]
pub(crate) struct BufferBudget {
    held: Arc<AtomicUsize>,
    limit: usize,
}

impl BufferBudget {
    /// A budget of `limit` bytes.
    pub(crate) fn new(limit: usize) -> Self {
        BufferBudget { held: Arc::new(AtomicUsize::new(0)), limit }
    }

    /// Takes `bytes` from the budget, if it has them.
    fn take(&self, bytes: usize) -> bool {
        let mut held = self.held.load(Ordering::Relaxed);
        loop {
            let Some(after) = held.checked_add(bytes).filter(|&after| after <= self.limit) else {
                return false;
            };
            match self.held.compare_exchange_weak(held, after, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => held = now,
            }
        }
    }

    /// Gives `bytes` back.
    fn give_back(&self, bytes: usize) {
        self.held.fetch_sub(bytes, Ordering::AcqRel);
    }

    /// Bytes held now.
    pub(crate) fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }
}

/// The requests of one connection.
pub(crate) struct RequestReader {
    /// Bytes read and not yet handed out.
    buffer: Vec<u8>,
    /// How much of `buffer` has been searched for a terminator.
    searched: usize,
    /// The largest request accepted.
    max_request: usize,
    /// The shared budget; `buffer.len()` bytes of it are this reader's.
    budget: BufferBudget,
    /// No request has been handed out yet (HTTP is recognised only at the start).
    first: bool,
}

/// Whether `bytes` start like an HTTP request.
fn looks_like_http(bytes: &[u8]) -> bool {
    ["GET ", "POST ", "HEAD ", "PUT ", "OPTIONS ", "DELETE "]
        .iter()
        .any(|method| bytes.starts_with(method.as_bytes()))
}

impl RequestReader {
    /// A reader for requests of at most `max_request` bytes, holding its unfinished
    /// bytes within `budget`.
    pub(crate) fn new(max_request: usize, budget: BufferBudget) -> Self {
        RequestReader { buffer: Vec::new(), searched: 0, max_request, budget, first: true }
    }

    /// Whether part of a request has arrived.
    pub(crate) fn has_partial(&self) -> bool {
        !self.buffer.is_empty()
    }

    /// The next complete request already read, if any.
    fn take_request(&mut self) -> Option<Vec<u8>> {
        let at = self.buffer[self.searched..].iter().position(|&b| b == TERMINATOR)?;
        let end = self.searched + at;
        let request = self.buffer[..end].to_vec();
        self.buffer.drain(..=end);
        self.budget.give_back(end + 1);
        self.searched = 0;
        self.first = false;
        Some(request)
    }

    /// Reads until a request is complete (or the connection ends, or a limit is hit).
    pub(crate) async fn next(
        &mut self,
        socket: &mut (impl AsyncRead + Unpin),
        timeouts: Timeouts,
    ) -> Frame {
        let mut chunk = [0u8; READ_CHUNK];
        let mut request_deadline = self.has_partial().then(|| Instant::now() + timeouts.request);
        loop {
            if let Some(request) = self.take_request() {
                return Frame::Request(request);
            }
            self.searched = self.buffer.len();
            if self.first && self.buffer.len() >= 8 && looks_like_http(&self.buffer) {
                return Frame::Http;
            }
            if self.buffer.len() > self.max_request {
                return Frame::TooLarge;
            }
            let deadline = match request_deadline {
                Some(deadline) => deadline,
                None => Instant::now() + timeouts.idle,
            };
            let read = match tokio::time::timeout_at(deadline, socket.read(&mut chunk)).await {
                Err(_) => return Frame::TimedOut,
                Ok(Ok(0) | Err(_)) => return Frame::Closed,
                Ok(Ok(read)) => read,
            };
            request_deadline.get_or_insert_with(|| Instant::now() + timeouts.request);
            if !self.budget.take(read) {
                return Frame::Busy;
            }
            self.buffer.extend_from_slice(&chunk[..read]);
        }
    }
}

impl Drop for RequestReader {
    fn drop(&mut self) {
        self.budget.give_back(self.buffer.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const WAIT: Timeouts =
        Timeouts { idle: Duration::from_secs(5), request: Duration::from_secs(5) };

    fn reader(max: usize) -> RequestReader {
        RequestReader::new(max, BufferBudget::new(1 << 20))
    }

    async fn frames(mut input: &[u8], max: usize) -> Vec<Frame> {
        let mut reader = reader(max);
        let mut out = Vec::new();
        loop {
            let frame = reader.next(&mut input, WAIT).await;
            let done = !matches!(frame, Frame::Request(_));
            out.push(frame);
            if done {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn requests_in_order_however_they_arrive() {
        let got = frames(b"<a/>\x03<b/>\x03<c/>", 100).await;
        assert_eq!(
            got,
            [Frame::Request(b"<a/>".to_vec()), Frame::Request(b"<b/>".to_vec()), Frame::Closed]
        );
    }

    #[tokio::test]
    async fn limits_and_http() {
        assert_eq!(frames(&[b'x'; 300], 100).await, [Frame::TooLarge]);
        assert_eq!(frames(b"GET / HTTP/1.0\r\n\r\n", 100).await, [Frame::Http]);
        assert_eq!(frames(b"", 100).await, [Frame::Closed]);
        let mut tight = RequestReader::new(100, BufferBudget::new(10));
        assert_eq!(tight.next(&mut &b"0123456789abcdef"[..], WAIT).await, Frame::Busy);
    }

    #[tokio::test]
    async fn the_budget_is_given_back() {
        let budget = BufferBudget::new(1000);
        {
            let mut reader = RequestReader::new(100, budget.clone());
            let mut input: &[u8] = b"<a/>\x03<partial";
            assert_eq!(reader.next(&mut input, WAIT).await, Frame::Request(b"<a/>".to_vec()));
            assert_eq!(budget.held(), 8);
            assert_eq!(reader.next(&mut input, WAIT).await, Frame::Closed);
        }
        assert_eq!(budget.held(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_that_never_ends_times_out() {
        let (mut client, mut server) = tokio::io::duplex(64);
        let mut reader = reader(100);
        let timeouts =
            Timeouts { idle: Duration::from_secs(600), request: Duration::from_secs(30) };
        tokio::io::AsyncWriteExt::write_all(&mut client, b"<boinc_gui_rpc_request>")
            .await
            .expect("write");
        let started = Instant::now();
        assert_eq!(reader.next(&mut server, timeouts).await, Frame::TimedOut);
        assert_eq!(started.elapsed(), Duration::from_secs(30));
        let mut idle = self::reader(100);
        let started = Instant::now();
        assert_eq!(idle.next(&mut server, timeouts).await, Frame::TimedOut);
        assert_eq!(started.elapsed(), Duration::from_secs(600));
        drop(client);
    }

    proptest! {
        /// Cut anywhere into reads of any size, the same requests come out.
        #[test]
        fn reads_of_any_size(requests in proptest::collection::vec("[a-z<>/]{0,20}", 0..6), cut in 1usize..7) {
            let mut wire = Vec::new();
            for request in &requests {
                wire.extend_from_slice(request.as_bytes());
                wire.push(TERMINATOR);
            }
            let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().expect("runtime");
            let got = runtime.block_on(async {
                let mut socket = tokio_test_reader(wire, cut);
                let mut reader = reader(1000);
                let mut got = Vec::new();
                while let Frame::Request(request) = reader.next(&mut socket, WAIT).await {
                    got.push(String::from_utf8(request).expect("utf-8"));
                }
                got
            });
            prop_assert_eq!(got, requests);
        }
    }

    /// A reader that returns at most `cut` bytes per read.
    fn tokio_test_reader(wire: Vec<u8>, cut: usize) -> impl AsyncRead + Unpin {
        struct Slow(Vec<u8>, usize, usize);
        impl AsyncRead for Slow {
            fn poll_read(
                mut self: std::pin::Pin<&mut Self>,
                _: &mut std::task::Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                let (at, cut) = (self.1, self.2);
                let end = (at + cut).min(self.0.len()).min(at + buf.remaining());
                buf.put_slice(&self.0[at..end]);
                self.1 = end;
                std::task::Poll::Ready(Ok(()))
            }
        }
        Slow(wire, 0, cut)
    }
}
