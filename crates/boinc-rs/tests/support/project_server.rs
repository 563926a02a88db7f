//! The real `boinc-rs project-server` process for the tests of clients: started on
//! 127.0.0.1 and a free port with its project directory in a temp dir, asked for its
//! `/status`, told to misbehave through `/admin/faults` and `/admin/rotate_key`, and
//! killed (by its own process id) when dropped.

#![allow(dead_code)]

use super::http::{block_on, free_port};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running project server.
pub struct ProjectServerProcess {
    child: Child,
    /// The project directory (records, keys, downloads, uploads, its log).
    pub dir: tempfile::TempDir,
    /// The master URL (`http://127.0.0.1:PORT/`).
    pub url: String,
}

/// How long a start may take (the first start makes the project's signing key and
/// signs the example app, a binary of a few hundred megabytes in a debug build).
const START_TIMEOUT: Duration = Duration::from_secs(120);

impl ProjectServerProcess {
    /// Starts `boinc-rs project-server` with `args` after `--dir` and `--port`.
    pub fn start(args: &[&str]) -> ProjectServerProcess {
        let dir = tempfile::tempdir().expect("a project directory");
        let port = free_port();
        let log = std::fs::File::create(dir.path().join("server.log")).expect("a log file");
        let child = Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
            .arg("project-server")
            .arg("--dir")
            .arg(dir.path().join("project"))
            .args(["--port", &port.to_string()])
            .args(args)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("the log"))
            .stderr(log)
            .spawn()
            .expect("boinc-rs project-server starts");
        let url = format!("http://127.0.0.1:{port}/");
        let server = ProjectServerProcess { child, dir, url };
        let started = Instant::now();
        while server.try_status().is_none() {
            assert!(
                started.elapsed() < START_TIMEOUT,
                "the project server did not answer within {START_TIMEOUT:?}; its log:\n{}",
                server.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    /// The project directory.
    pub fn project_dir(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// `url` + `path` (without its leading slash).
    pub fn at(&self, path: &str) -> String {
        format!("{}{}", self.url, path.trim_start_matches('/'))
    }

    fn try_status(&self) -> Option<serde_json::Value> {
        block_on(async {
            let response = reqwest::get(self.at("status")).await.ok()?;
            response.json().await.ok()
        })
    }

    /// `GET /status`.
    pub fn status(&self) -> serde_json::Value {
        self.try_status().expect("the project server answers /status")
    }

    /// A counter of `/status` (`jobs_sent`, `results_received`, `results_validated`).
    pub fn counter(&self, name: &str) -> u64 {
        self.status()[name].as_u64().unwrap_or_else(|| panic!("no {name} in /status"))
    }

    /// `POST /admin/faults` with `rules` (a rule or a list, as JSON).
    pub fn add_faults(&self, rules: serde_json::Value) {
        self.admin(reqwest::Method::POST, "admin/faults", rules);
    }

    /// `DELETE /admin/faults`.
    pub fn clear_faults(&self) {
        self.admin(reqwest::Method::DELETE, "admin/faults", serde_json::Value::Null);
    }

    /// `POST /admin/rotate_key` with the new key's `signature` ("signed", "none", "bad").
    pub fn rotate_key(&self, signature: &str) -> serde_json::Value {
        self.admin(
            reqwest::Method::POST,
            "admin/rotate_key",
            serde_json::json!({ "signature": signature }),
        )
    }

    /// `PUT /admin/account_manager` with `config` (the manager role's projects and users).
    pub fn set_account_manager(&self, config: serde_json::Value) -> serde_json::Value {
        self.admin(reqwest::Method::PUT, "admin/account_manager", config)
    }

    fn admin(
        &self,
        method: reqwest::Method,
        path: &str,
        body: serde_json::Value,
    ) -> serde_json::Value {
        block_on(async {
            let client = reqwest::Client::new();
            let mut request = client.request(method, self.at(path));
            if !body.is_null() {
                request = request.json(&body);
            }
            let response = request.send().await.expect("the admin request");
            let status = response.status();
            let text = response.text().await.expect("the admin answer");
            assert!(status.is_success(), "{path}: HTTP {status}: {text}");
            serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
        })
    }

    /// The files the project received (its upload directory).
    pub fn uploads(&self) -> Vec<PathBuf> {
        files_under(&self.project_dir().join("upload"))
    }
}

/// Every plain file under `dir`.
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

impl Drop for ProjectServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
