//! A small HTTP server on 127.0.0.1 (actix-web, port 0, its own thread, stopped when
//! dropped) that answers as a project's server would or misbehaves on purpose, and
//! records what it was asked; a listener that resets every connection; a port that
//! refuses connections. For the transport's own tests; the acceptance tests run
//! against `boinc-rs project-server`.

#![allow(dead_code)]

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use boinc_core::protocol::{DataServerReply, DataServerRequest};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the server was asked.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub method: String,
    pub uri: String,
    /// Header names in lower case, with their values.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

#[derive(Default)]
struct Shared {
    requests: Mutex<Vec<Recorded>>,
    sent: AtomicU64,
    base: Mutex<String>,
}

/// The test server.
pub struct TestServer {
    port: u16,
    shared: Arc<Shared>,
    handle: actix_web::dev::ServerHandle,
    thread: Option<std::thread::JoinHandle<()>>,
}

const NOWORK: &str =
    include_str!("../../../../tests/fixtures/boinc-7.20.5/sched_reply_nowork_example.xml");

/// 100 MB.
pub const HUGE: u64 = 100_000_000;

fn record(shared: &Shared, request: &HttpRequest, body: &[u8]) {
    let headers = request
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_ascii_lowercase(), v.to_str().unwrap_or("?").to_owned()))
        .collect();
    shared.requests.lock().unwrap().push(Recorded {
        method: request.method().to_string(),
        uri: request.uri().to_string(),
        headers,
        body: body.to_vec(),
    });
}

/// A body of `total` bytes of 'x' in 64 KiB chunks, counted as they are sent.
fn counted_stream(
    shared: Arc<Shared>,
    total: u64,
) -> impl futures_util::Stream<Item = Result<web::Bytes, std::io::Error>> {
    futures_util::stream::unfold(0u64, move |sent| {
        let shared = shared.clone();
        async move {
            if sent >= total {
                return None;
            }
            let n = (total - sent).min(1 << 16);
            shared.sent.fetch_add(n, Ordering::Relaxed);
            Some((Ok(web::Bytes::from(vec![b'x'; n as usize])), sent + n))
        }
    })
}

async fn answer(
    request: HttpRequest,
    body: web::Bytes,
    shared: web::Data<Arc<Shared>>,
) -> HttpResponse {
    record(&shared, &request, &body);
    let base = shared.base.lock().unwrap().clone();
    match request.path() {
        "/master" => HttpResponse::Ok().content_type("text/html").body(format!(
            "<html><head><link rel=\"boinc_scheduler\" href=\"{base}/cgi\"></head></html>"
        )),
        "/redirect" => HttpResponse::Found().insert_header(("Location", "/master")).finish(),
        "/loop" => HttpResponse::Found().insert_header(("Location", "/loop")).finish(),
        "/reply" => HttpResponse::Ok().content_type("text/xml").body(NOWORK),
        "/500" => HttpResponse::InternalServerError().body("the server is broken"),
        "/html" => {
            HttpResponse::Ok().content_type("text/html").body("<html><body>Maintenance</body>")
        }
        "/hang" => {
            // A server that does not answer for a minute, on purpose: the client's
            // timeouts are under test.
            actix_web::rt::time::sleep(Duration::from_secs(60)).await;
            HttpResponse::Ok().body(NOWORK)
        }
        "/truncated" => {
            let half = &NOWORK.as_bytes()[..NOWORK.len() / 2];
            let stream = futures_util::stream::once(async move {
                Ok::<_, std::io::Error>(web::Bytes::copy_from_slice(half))
            });
            HttpResponse::Ok().no_chunking(NOWORK.len() as u64).streaming(stream)
        }
        "/huge_announced" => HttpResponse::Ok()
            .no_chunking(HUGE)
            .streaming(counted_stream(shared.get_ref().clone(), HUGE)),
        "/huge_streamed" | "/huge/rpc.php" => {
            HttpResponse::Ok().streaming(counted_stream(shared.get_ref().clone(), HUGE))
        }
        // A data server that holds the first UPLOAD_HELD bytes of every file.
        "/file_upload_handler" => match DataServerRequest::parse(&body) {
            Ok((DataServerRequest::FileSize { .. }, _)) => {
                HttpResponse::Ok().body(DataServerReply::file_size(UPLOAD_HELD).to_xml())
            }
            Ok((DataServerRequest::Upload { .. }, _)) => {
                HttpResponse::Ok().body(DataServerReply::success().to_xml())
            }
            Err(error) => {
                HttpResponse::Ok().body(DataServerReply::permanent(error.to_string()).to_xml())
            }
        },
        _ => HttpResponse::NotFound().finish(),
    }
}

/// The bytes of every upload `/file_upload_handler` says it holds already.
pub const UPLOAD_HELD: u64 = 10_000;

impl TestServer {
    /// A server on 127.0.0.1, on the port the system gave it.
    pub fn start() -> TestServer {
        let shared = Arc::new(Shared::default());
        let data = shared.clone();
        let (sender, receiver) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let system = actix_web::rt::System::new();
            system.block_on(async move {
                let server = HttpServer::new(move || {
                    App::new()
                        .app_data(web::Data::new(data.clone()))
                        .app_data(web::PayloadConfig::new(1 << 24))
                        .default_service(web::to(answer))
                })
                .workers(1)
                .disable_signals()
                .bind(("127.0.0.1", 0))
                .expect("binds");
                let port = server.addrs()[0].port();
                let server = server.run();
                sender.send((port, server.handle())).expect("the test waits");
                let _ = server.await;
            });
        });
        let (port, handle) =
            receiver.recv_timeout(Duration::from_secs(30)).expect("the server starts");
        *shared.base.lock().unwrap() = format!("http://127.0.0.1:{port}");
        TestServer { port, shared, handle, thread: Some(thread) }
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }

    pub fn last_request(&self) -> Option<Recorded> {
        self.shared.requests.lock().unwrap().last().cloned()
    }

    /// Bytes of large bodies sent so far.
    pub fn bytes_sent(&self) -> u64 {
        self.shared.sent.load(Ordering::Relaxed)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        block_on(self.handle.stop(false));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A listener on 127.0.0.1 (port 0) that resets every connection it accepts.
pub struct ResettingListener {
    port: u16,
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ResettingListener {
    pub fn start() -> ResettingListener {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binds");
        let port = listener.local_addr().expect("an address").port();
        listener.set_nonblocking(true).expect("non-blocking");
        let (stop, stopped) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                while stopped.try_recv().is_err() {
                    if let Ok(Ok((stream, _))) =
                        tokio::time::timeout(Duration::from_millis(50), listener.accept()).await
                    {
                        // Linger 0: closing sends a reset (and a zero linger never
                        // blocks the drop, which is what the deprecation warns of).
                        #[allow(deprecated)]
                        let _ = stream.set_linger(Some(Duration::ZERO));
                        drop(stream);
                    }
                }
            });
        });
        ResettingListener { port, stop: Some(stop), thread: Some(thread) }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/cgi", self.port)
    }
}

impl Drop for ResettingListener {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A port of 127.0.0.1 nothing listens on, for as long as this lives: a socket bound to
/// a port the system picked and never told to listen, so a connection to it is refused
/// and no other process can take the port meanwhile (as it could one bound and
/// released).
pub struct ClosedPort {
    socket: tokio::net::TcpSocket,
}

impl ClosedPort {
    pub fn new() -> ClosedPort {
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket.bind(([127, 0, 0, 1], 0).into()).expect("binds");
        ClosedPort { socket }
    }

    pub fn port(&self) -> u16 {
        self.socket.local_addr().expect("an address").port()
    }
}

/// Runs `future` (an effect's, which need not be `Send`) to its end on a runtime of its
/// own.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, future)
}

/// This process's resident memory, bytes.
pub fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS");
    kb * 1024
}
