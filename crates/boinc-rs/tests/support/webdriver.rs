//! Headless Chromium for the web dashboard's tests, driven through chromedriver's W3C
//! WebDriver API (JSON over HTTP, sent with reqwest). chromedriver cannot be told to
//! take port 0 and say which it got, so it is started on a port the system just handed
//! out, and again on another when that one was taken (support/peer_port.rs). The
//! browser window is 1280x800; the driver is stopped when the [`Browser`] is dropped.

#![allow(dead_code)] // Each test binary uses a different part.

use super::peer_port::start_on_an_unused_port;
use super::wait::poll_for;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How long chromedriver may take to answer its status request after it starts.
const DRIVER_START: Duration = Duration::from_secs(30);
/// The longest one WebDriver command may take (a page load, a screenshot).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// A browser session.
pub struct Browser {
    driver: Child,
    base: String,
    session: String,
    runtime: tokio::runtime::Runtime,
    http: reqwest::Client,
}

/// A chromedriver process, stopped when dropped before it is handed over.
struct Driver(Option<Child>);

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(child) = &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Browser {
    /// Starts chromedriver and a headless Chromium session with a 1280x800 window.
    pub fn start() -> Browser {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let http = reqwest::Client::builder()
            .timeout(COMMAND_TIMEOUT)
            .pool_max_idle_per_host(0)
            .build()
            .expect("an HTTP client");
        let (driver, base) = start_on_an_unused_port("chromedriver", |port| {
            let child = Command::new("chromedriver")
                .arg(format!("--port={port}"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("chromedriver does not start: {e}"))?;
            let mut driver = Driver(Some(child));
            let base = format!("http://127.0.0.1:{port}");
            let ready = poll_for(DRIVER_START, || {
                if let Some(child) = &mut driver.0 {
                    if let Ok(Some(status)) = child.try_wait() {
                        return Some(Err(format!("chromedriver exited: {status}")));
                    }
                }
                let status = runtime.block_on(async {
                    let reply = http.get(format!("{base}/status")).send().await.ok()?;
                    reply.json::<Value>().await.ok()
                });
                let ready = status.is_some_and(|s| s["value"]["ready"] == json!(true));
                ready.then_some(Ok(()))
            });
            match ready {
                Some(Ok(())) => Ok((driver.0.take().expect("the driver"), base)),
                Some(Err(why)) => Err(why),
                None => Err(format!("chromedriver was not ready within {DRIVER_START:?}")),
            }
        });
        let mut browser = Browser { driver, base, session: String::new(), runtime, http };
        let capabilities = json!({
            "capabilities": { "alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {
                    "binary": "/usr/bin/chromium",
                    "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                             "--disable-dev-shm-usage", "--window-size=1280,800",
                             "--hide-scrollbars", "--no-first-run"],
                },
            }},
        });
        let created = browser.send(reqwest::Method::POST, "/session", Some(capabilities));
        browser.session = created["sessionId"].as_str().expect("a session id").to_owned();
        browser
    }

    fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.base);
        let answer = self.runtime.block_on(async {
            let mut request = self.http.request(method.clone(), &url);
            if let Some(body) = &body {
                request = request.json(body);
            }
            let reply = request.send().await?;
            reply.json::<Value>().await
        });
        let answer = answer.unwrap_or_else(|e| panic!("WebDriver {method} {path}: {e}"));
        let value = answer["value"].clone();
        if let Some(error) = value.get("error").and_then(Value::as_str) {
            panic!("WebDriver {method} {path}: {error}: {}", value["message"]);
        }
        value
    }

    /// A command of this session, its value; panics on a WebDriver error.
    pub fn command(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        self.send(method, &format!("/session/{}{path}", self.session), body)
    }

    /// Loads `url` (returns once the page has loaded).
    pub fn goto(&self, url: &str) {
        self.command(reqwest::Method::POST, "/url", Some(json!({ "url": url })));
    }

    /// The page's URL now.
    pub fn url(&self) -> String {
        self.command(reqwest::Method::GET, "/url", None).as_str().unwrap_or_default().to_owned()
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page: its result.
    pub fn execute(&self, script: &str, args: Value) -> Value {
        self.command(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({ "script": script, "args": args })),
        )
    }

    /// The first element matching `css`, if there is one now.
    pub fn find(&self, css: &str) -> Option<String> {
        let found = self.command(
            reqwest::Method::POST,
            "/elements",
            Some(json!({ "using": "css selector", "value": css })),
        );
        // An element reference is an object with one member, the element's id.
        found.as_array()?.first()?.as_object()?.values().next()?.as_str().map(str::to_owned)
    }

    /// The first element matching `css`, waited for at most `limit`.
    pub fn wait_find(&self, css: &str, limit: Duration) -> String {
        poll_for(limit, || self.find(css)).unwrap_or_else(|| {
            panic!("no element {css} within {limit:?} at {}:\n{}", self.url(), self.body_text())
        })
    }

    /// Clicks the element.
    pub fn click(&self, element: &str) {
        self.command(reqwest::Method::POST, &format!("/element/{element}/click"), Some(json!({})));
    }

    /// Empties the input element, then types `text` into it.
    pub fn fill(&self, element: &str, text: &str) {
        self.command(reqwest::Method::POST, &format!("/element/{element}/clear"), Some(json!({})));
        self.command(
            reqwest::Method::POST,
            &format!("/element/{element}/value"),
            Some(json!({ "text": text })),
        );
    }

    /// The element's visible text.
    pub fn text(&self, element: &str) -> String {
        let value = self.command(reqwest::Method::GET, &format!("/element/{element}/text"), None);
        value.as_str().unwrap_or_default().to_owned()
    }

    /// The page's visible text (for failure messages).
    pub fn body_text(&self) -> String {
        self.execute("return document.body ? document.body.innerText : ''", json!([]))
            .as_str()
            .unwrap_or_default()
            .chars()
            .take(4000)
            .collect()
    }

    /// Accepts the open `confirm()` dialog.
    pub fn accept_alert(&self) {
        self.command(reqwest::Method::POST, "/alert/accept", Some(json!({})));
    }

    /// The session's cookies, as WebDriver describes them.
    pub fn cookies(&self) -> Vec<Value> {
        let cookies = self.command(reqwest::Method::GET, "/cookie", None);
        cookies.as_array().cloned().unwrap_or_default()
    }

    /// Sets the viewport's size, by sizing the window around it.
    pub fn set_viewport(&self, width: u32, height: u32) {
        let inner = self.execute(
            "return [window.innerWidth, window.innerHeight, window.outerWidth, window.outerHeight]",
            json!([]),
        );
        let number = |i: usize| inner[i].as_u64().unwrap_or(0) as u32;
        let (extra_w, extra_h) =
            (number(2).saturating_sub(number(0)), number(3).saturating_sub(number(1)));
        self.command(
            reqwest::Method::POST,
            "/window/rect",
            Some(json!({ "width": width + extra_w, "height": height + extra_h })),
        );
    }

    /// Writes a PNG of the viewport to `path`.
    pub fn screenshot(&self, path: &Path) {
        use base64::Engine;
        let encoded = self.command(reqwest::Method::GET, "/screenshot", None);
        let png = base64::engine::general_purpose::STANDARD
            .decode(encoded.as_str().unwrap_or_default())
            .expect("a base64 PNG");
        std::fs::write(path, png).expect("the screenshot is written");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let url = format!("{}/session/{}", self.base, self.session);
            let http = &self.http;
            let _ = self.runtime.block_on(async { http.delete(url).send().await });
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
