//! The real `boinc-rs project-server` process for tests: started with its project in a
//! temporary directory on 127.0.0.1 and port 0, so the system picks the port and no two
//! tests can race for one; the server writes its URL, with the port it got, to DIR/url
//! (atomically, once it listens), which is where the test learns it. Asked over HTTP
//! (`/status`, `/admin/…` to misbehave on purpose, any route), stopped with SIGTERM
//! (SIGKILL when it does not go) when dropped.

#![allow(dead_code)] // Each test binary uses a different part.

use super::service::stop_child;
use super::wait::{holds_within, wait_for_or};
use boinc_project_server::URL_FILE;
use nix::sys::signal::Signal;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How long the server may take to start (the first start makes the project's signing
/// key and signs the example app, a binary of a few hundred megabytes in a debug build).
pub const START_WAIT: Duration = Duration::from_secs(120);

/// How long a stop may take before the server is killed.
const STOP_WAIT: Duration = Duration::from_secs(15);

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
pub struct ProjectServerProcess {
    /// The master URL (`http://127.0.0.1:PORT/`), as the server wrote it to DIR/url.
    pub url: String,
    /// The project directory (records, keys, downloads, uploads, the inbox).
    pub dir: PathBuf,
    /// The server's stdout and stderr (beside the project directory, not in it).
    log: PathBuf,
    child: Child,
    runtime: tokio::runtime::Runtime,
    http: reqwest::Client,
    _temp: tempfile::TempDir,
}

impl ProjectServerProcess {
    /// Starts `boinc-rs project-server --dir DIR --port 0` with `args` after them, and
    /// waits (bounded) until it has written DIR/url.
    pub fn start(args: &[&str]) -> ProjectServerProcess {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let dir = temp.path().join("project");
        let log = temp.path().join("server.log");
        let log_file = std::fs::File::create(&log).expect("the server's log");
        let mut child = Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
            .arg("project-server")
            .arg("--dir")
            .arg(&dir)
            .args(["--port", "0"])
            .args(args)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().expect("the log"))
            .stderr(log_file)
            .spawn()
            .expect("boinc-rs project-server starts");
        let url_file = dir.join(URL_FILE);
        let url = wait_for_or(
            "the project server to write its URL",
            START_WAIT,
            || {
                if let Ok(Some(status)) = child.try_wait() {
                    panic!("the project server exited at start ({status}):\n{}", read(&log));
                }
                let url = std::fs::read_to_string(&url_file).ok()?;
                Some(url.trim().to_owned())
            },
            || read(&log),
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            // The runtime runs only inside `block_on`, so a pooled connection the server
            // closed meanwhile would be found dead only when reused: no reuse.
            .pool_max_idle_per_host(0)
            .build()
            .expect("an HTTP client");
        ProjectServerProcess { url, dir, log, child, runtime, http, _temp: temp }
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        read(&self.log)
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `url` + `path` (without its leading slash).
    pub fn at(&self, path: &str) -> String {
        format!("{}{}", self.url, path.trim_start_matches('/'))
    }

    /// Runs a future on the test's runtime.
    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// The HTTP client.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// `GET /status`, or `None` when the server does not answer it.
    pub fn try_status(&self) -> Option<Value> {
        let url = self.at("status");
        self.block_on(async { self.http.get(&url).send().await.ok()?.json().await.ok() })
    }

    /// `GET /status`.
    pub fn status(&self) -> Value {
        self.try_status()
            .unwrap_or_else(|| panic!("the project server answers /status:\n{}", self.log()))
    }

    /// A counter of `/status` (`jobs_sent`, `results_received`, `results_validated`…).
    pub fn counter(&self, name: &str) -> u64 {
        self.status()[name].as_u64().unwrap_or_else(|| panic!("no {name} in /status"))
    }

    /// Waits (at most `limit`) until `/status` satisfies `done`; returns it.
    pub fn wait_for(&self, what: &str, limit: Duration, done: impl Fn(&Value) -> bool) -> Value {
        self.wait_for_or(what, limit, done, || format!("the server's log:\n{}", self.log()))
    }

    /// [`ProjectServerProcess::wait_for`] with `report()` in the panic's message (the
    /// client's log, say).
    pub fn wait_for_or(
        &self,
        what: &str,
        limit: Duration,
        done: impl Fn(&Value) -> bool,
        report: impl FnOnce() -> String,
    ) -> Value {
        let mut last = Value::Null;
        let held = holds_within(limit, || {
            last = self.status();
            done(&last)
        });
        assert!(held, "waited {limit:?} for {what}, in vain\n{}\n/status: {last:#}", report());
        last
    }

    /// POSTs JSON to `admin/PATH`; returns the status code and body.
    pub fn admin(&self, path: &str, body: Value) -> (u16, String) {
        self.send(reqwest::Method::POST, &format!("admin/{path}"), body)
    }

    /// PUTs JSON to `path`; returns the status code and body.
    pub fn put(&self, path: &str, body: Value) -> (u16, String) {
        self.send(reqwest::Method::PUT, path, body)
    }

    /// GETs `path`; returns the status code and body.
    pub fn get_text(&self, path: &str) -> (u16, String) {
        self.send(reqwest::Method::GET, path, Value::Null)
    }

    /// Sends `body` as JSON (none when null) to `path`; returns the status code and body.
    fn send(&self, method: reqwest::Method, path: &str, body: Value) -> (u16, String) {
        let url = self.at(path);
        self.block_on(async {
            let mut request = self.http.request(method, &url);
            if !body.is_null() {
                request = request.json(&body);
            }
            let response = request.send().await.expect("the server answers");
            (response.status().as_u16(), response.text().await.unwrap_or_default())
        })
    }

    /// Sends an admin request that must succeed; returns its answer as JSON (null when
    /// it is not JSON).
    fn must(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        let (status, text) = self.send(method, path, body);
        assert!((200..300).contains(&status), "{path}: HTTP {status}: {text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    /// POSTs `body` to `path` (an error when the transport fails).
    pub fn post(&self, path: &str, body: Vec<u8>) -> Result<HttpAnswer, reqwest::Error> {
        let url = self.at(path);
        self.block_on(async {
            HttpAnswer::read(self.http.post(&url).body(body).send().await?).await
        })
    }

    /// GETs `path` with these headers (an error when the transport fails).
    pub fn get(&self, path: &str, headers: &[(&str, &str)]) -> Result<HttpAnswer, reqwest::Error> {
        let url = self.at(path);
        self.block_on(async {
            let mut request = self.http.get(&url);
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            HttpAnswer::read(request.send().await?).await
        })
    }

    /// `POST /admin/faults` with `rules` (a rule or a list, as JSON).
    pub fn add_faults(&self, rules: Value) {
        self.must(reqwest::Method::POST, "admin/faults", rules);
    }

    /// `DELETE /admin/faults`.
    pub fn clear_faults(&self) {
        self.must(reqwest::Method::DELETE, "admin/faults", Value::Null);
    }

    /// `POST /admin/rotate_key` with the new key's `signature` ("signed", "none", "bad").
    pub fn rotate_key(&self, signature: &str) -> Value {
        self.must(
            reqwest::Method::POST,
            "admin/rotate_key",
            serde_json::json!({ "signature": signature }),
        )
    }

    /// `PUT /admin/account_manager` with `config` (the manager role's projects and users).
    pub fn set_account_manager(&self, config: Value) -> Value {
        self.must(reqwest::Method::PUT, "admin/account_manager", config)
    }

    /// The files the project received (its upload directory).
    pub fn uploads(&self) -> Vec<PathBuf> {
        files_under(&self.dir.join("upload"))
    }

    /// Stops the server with SIGTERM (SIGKILL when it does not go in time) and waits
    /// for it.
    pub fn stop(&mut self) {
        stop_child(&mut self.child, Signal::SIGTERM, STOP_WAIT);
    }

    /// Kills the server with SIGKILL, as a crash would.
    pub fn kill(&mut self) {
        stop_child(&mut self.child, Signal::SIGKILL, STOP_WAIT);
    }
}

impl Drop for ProjectServerProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Every plain file under `dir`, sorted (none when it is missing).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}
