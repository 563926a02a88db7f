//! A `boinc-rs project-server` process for tests: started in a temporary directory on a
//! free port of 127.0.0.1, asked over HTTP, stopped (SIGTERM, then SIGKILL) when dropped.

#![allow(dead_code)] // Each test binary uses a different part.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the server may take to start (it checksums the app it serves).
pub const START_WAIT: Duration = Duration::from_secs(120);

/// What the server answered a plain HTTP request.
#[derive(Debug)]
pub struct HttpAnswer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpAnswer {
    async fn read(response: reqwest::Response) -> Result<HttpAnswer, reqwest::Error> {
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or_default().to_owned()))
            .collect();
        Ok(HttpAnswer { status, headers, body: response.bytes().await?.to_vec() })
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// A running project server.
pub struct Project {
    pub url: String,
    pub dir: PathBuf,
    child: Child,
    runtime: tokio::runtime::Runtime,
    http: reqwest::Client,
    _temp: Option<tempfile::TempDir>,
}

/// The boinc-rs binary.
pub fn boinc_rs() -> &'static str {
    env!("CARGO_BIN_EXE_boinc-rs")
}

impl Project {
    /// A server in a new temporary directory, with these extra arguments.
    pub fn start(args: &[&str]) -> Project {
        let temp = tempfile::tempdir().expect("temp dir");
        let dir = temp.path().to_owned();
        let mut project = Project::start_in(&dir, args);
        project._temp = Some(temp);
        project
    }

    /// A server in `dir` (kept), with these extra arguments.
    pub fn start_in(dir: &Path, args: &[&str]) -> Project {
        let url_file = dir.join("url");
        let _ = std::fs::remove_file(&url_file);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("server.log"))
            .expect("server log");
        let child = Command::new(boinc_rs())
            .arg("project-server")
            .arg("--dir")
            .arg(dir)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("boinc-rs project-server starts");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            // The runtime runs only inside `block_on`, so a pooled connection the server
            // closed meanwhile would be found dead only when reused: no reuse.
            .pool_max_idle_per_host(0)
            .build()
            .expect("HTTP client");
        let mut project =
            Project { url: String::new(), dir: dir.to_owned(), child, runtime, http, _temp: None };
        let deadline = Instant::now() + START_WAIT;
        loop {
            if let Ok(url) = std::fs::read_to_string(&url_file) {
                project.url = url.trim().to_owned();
                break;
            }
            if let Ok(Some(status)) = project.child.try_wait() {
                panic!("the project server exited at start ({status}): {}", project.log());
            }
            assert!(
                Instant::now() < deadline,
                "the project server did not start: {}",
                project.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        project
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Runs a future on the test's runtime.
    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// The HTTP client.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// `GET /status`.
    pub fn status(&self) -> Value {
        let url = format!("{}status", self.url);
        self.block_on(async {
            let response = self.http.get(&url).send().await.expect("status answers");
            response.json::<Value>().await.expect("status is JSON")
        })
    }

    /// A figure of `/status`.
    pub fn figure(&self, name: &str) -> u64 {
        self.status()[name].as_u64().unwrap_or_else(|| panic!("/status has no {name}"))
    }

    /// POSTs JSON to an admin path; returns the status code and body.
    pub fn admin(&self, path: &str, body: Value) -> (u16, String) {
        let url = format!("{}admin/{path}", self.url);
        self.block_on(async {
            let response = self.http.post(&url).json(&body).send().await.expect("admin answers");
            (response.status().as_u16(), response.text().await.unwrap_or_default())
        })
    }

    /// PUTs JSON to `path`; returns the status code and body.
    pub fn put(&self, path: &str, body: Value) -> (u16, String) {
        let url = format!("{}{path}", self.url);
        self.block_on(async {
            let response =
                self.http.put(&url).json(&body).send().await.expect("the server answers");
            (response.status().as_u16(), response.text().await.unwrap_or_default())
        })
    }

    /// GETs `path`; returns the status code and body.
    pub fn get_text(&self, path: &str) -> (u16, String) {
        let url = format!("{}{path}", self.url);
        self.block_on(async {
            let response = self.http.get(&url).send().await.expect("the server answers");
            (response.status().as_u16(), response.text().await.unwrap_or_default())
        })
    }

    /// POSTs `body` to `path` (an error when the transport fails).
    pub fn post(&self, path: &str, body: Vec<u8>) -> Result<HttpAnswer, reqwest::Error> {
        let url = format!("{}{path}", self.url);
        self.block_on(async {
            HttpAnswer::read(self.http.post(&url).body(body).send().await?).await
        })
    }

    /// GETs `path` with these headers (an error when the transport fails).
    pub fn get(&self, path: &str, headers: &[(&str, &str)]) -> Result<HttpAnswer, reqwest::Error> {
        let url = format!("{}{path}", self.url);
        self.block_on(async {
            let mut request = self.http.get(&url);
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            HttpAnswer::read(request.send().await?).await
        })
    }

    /// Waits (at most `limit`) until `/status` satisfies `done`; returns it.
    pub fn wait_for(&self, what: &str, limit: Duration, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let status = self.status();
            if done(&status) {
                return status;
            }
            assert!(Instant::now() < deadline, "waited {limit:?} for {what}; /status: {status:#}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Stops the server with SIGTERM (SIGKILL after 15 s) and waits for it.
    pub fn stop(&mut self) {
        stop_child(&mut self.child, Signal::SIGTERM, Duration::from_secs(15));
    }

    /// Kills the server with SIGKILL, as a crash would.
    pub fn kill(&mut self) {
        stop_child(&mut self.child, Signal::SIGKILL, Duration::from_secs(15));
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Sends `signal` to `child` and waits for it, up to `limit`; then SIGKILL.
pub fn stop_child(child: &mut Child, signal: Signal, limit: Duration) {
    if matches!(child.try_wait(), Ok(Some(_))) {
        return;
    }
    let pid = Pid::from_raw(child.id() as i32);
    let _ = kill(pid, signal);
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = kill(pid, Signal::SIGKILL);
    let _ = child.wait();
}

/// A free TCP port on 127.0.0.1 (free when asked: a test binds it soon after).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port")
}
