//! The web dashboard of `boinc-rs run` (docs/dashboard.md), driven in headless Chromium
//! (chromedriver's WebDriver API) against the real binary fetching real jobs from
//! `boinc-rs project-server`: a wrong password and requests without the session (or
//! without its CSRF token) are refused; logged in, the volunteer sees the running tasks,
//! suspends one and sees it suspended (and GUI RPC says so too), changes a preference
//! (GUI RPC reads the new override and the client works by it), and attaches a second
//! project. `/metrics` is read with a Prometheus text-format parser and agrees with
//! GUI RPC. With BOINC_RS_SCREENSHOTS=DIR set, a 1280x800 PNG of each page is written
//! there (the README's screenshot command).

use crate::support;

use boinc_gui_rpc::{GuiRpcClient, PASSWORD_FILE};
use boinc_web::WEB_PORT_FILE;
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use support::project_server::ProjectServerProcess;
use support::service::{ServiceProcess, signal, start_service_with, wait_exit};
use support::wait::{poll_for, wait_for_or};
use support::webdriver::Browser;

const PASSWORD: &str = "dashboard-test-password";
/// The longest a wait for the client's work lasts (a first start benchmarks the CPUs,
/// and the example app is downloaded).
const WORK_WAIT: Duration = Duration::from_secs(240);
/// The longest a page takes to show what the client did.
const PAGE_WAIT: Duration = Duration::from_secs(20);
/// The pages, as the navigation lists them.
const PAGES: [&str; 7] =
    ["overview", "tasks", "projects", "schedule", "transfers", "log", "preferences"];

fn log_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let tail: Vec<char> = text.chars().rev().take(10_000).collect();
    tail.into_iter().rev().collect()
}

/// A project whose jobs run long enough to be watched, and a client attached to it
/// serving its dashboard on a port the system picks.
struct Setup {
    server: ProjectServerProcess,
    data: tempfile::TempDir,
    log: PathBuf,
    service: ServiceProcess,
    gui_rpc: String,
    web: String,
}

fn start() -> Setup {
    let server = ProjectServerProcess::start(&[
        "--job-seconds",
        "900",
        "--request-delay",
        "1",
        "--max-jobs-per-cpu",
        "2",
    ]);
    let data = tempfile::tempdir().expect("a data directory");
    let dir = data.path();
    let status = Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
        .args(["attach", "--dir"])
        .arg(dir)
        .args([server.url.as_str(), "dashboard_test_key"])
        .stdout(Stdio::null())
        .status()
        .expect("boinc-rs attach runs");
    assert!(status.success(), "boinc-rs attach failed");
    std::fs::write(dir.join(PASSWORD_FILE), PASSWORD).expect("the password");
    let log = dir.with_extension("log");
    let mut service = start_service_with(dir, &log, &["--web-port", "0"], &[]);
    let gui_rpc = format!("127.0.0.1:{}", service.gui_rpc_port());
    let port_file = dir.join(WEB_PORT_FILE);
    let web_port: u16 = wait_for_or(
        "the dashboard's port file",
        Duration::from_secs(10),
        || std::fs::read_to_string(&port_file).ok()?.trim().parse().ok(),
        || log_of(&log),
    );
    let web = format!("http://127.0.0.1:{web_port}");
    Setup { server, data, log, service, gui_rpc, web }
}

impl Setup {
    fn gui_rpc(&self, operation: &str) -> String {
        self.server.block_on(async {
            let mut client = GuiRpcClient::connect(&self.gui_rpc).await.expect("connects");
            client.authenticate(PASSWORD).await.expect("authenticates");
            client.call(operation).await.expect("answers")
        })
    }

    fn log(&self) -> String {
        log_of(&self.log)
    }
}

/// The `<tag>` blocks of a GUI RPC reply.
fn blocks<'a>(xml: &'a str, tag: &str) -> Vec<&'a str> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let mut found = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else { break };
        found.push(&after[..end]);
        rest = &after[end + close.len()..];
    }
    found
}

/// The text of `<name>` in a block.
fn field<'a>(block: &'a str, name: &str) -> Option<&'a str> {
    blocks(block, name).first().map(|text| text.trim())
}

fn number(block: &str, name: &str) -> f64 {
    field(block, name).and_then(|v| v.parse().ok()).unwrap_or(0.0)
}

/// What one HTTP request got: status, a header, the body.
struct Answer {
    status: u16,
    location: Option<String>,
    body: String,
}

/// One request to the dashboard, redirects not followed.
fn request(
    setup: &Setup,
    method: reqwest::Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .expect("an HTTP client");
    let url = format!("{}{path}", setup.web);
    setup.server.block_on(async {
        let mut request = http.request(method, url).body(body.to_owned());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let reply = request.send().await.expect("the dashboard answers");
        let status = reply.status().as_u16();
        let location =
            reply.headers().get("location").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let body = reply.text().await.unwrap_or_default();
        Answer { status, location, body }
    })
}

const GET_RESULTS: &str = "<boinc_gui_rpc_request><get_results/></boinc_gui_rpc_request>";

/// Requests without a session, or without its CSRF token, are refused.
fn refused_without_session(setup: &Setup, session: Option<&str>) {
    let get = reqwest::Method::GET;
    let post = reqwest::Method::POST;
    let page = request(setup, get.clone(), "/tasks", &[], "");
    assert_eq!((page.status, page.location.as_deref()), (303, Some("/login")));
    let bridge = request(setup, post.clone(), "/api/rpc", &[], GET_RESULTS);
    assert_eq!(bridge.status, 401, "{}", bridge.body);
    let forged = [("cookie", "boinc_rs_session=0123456789abcdef"), ("x-csrf-token", "0")];
    let bridge = request(setup, post.clone(), "/api/rpc", &forged, GET_RESULTS);
    assert_eq!(bridge.status, 401, "a made-up session: {}", bridge.body);
    let stream = request(setup, get.clone(), "/api/events", &[], "");
    assert_eq!(stream.status, 401);
    let timeline = request(setup, get, "/api/timeline.svg", &[], "");
    assert_eq!(timeline.status, 401);
    if let Some(session) = session {
        let cookie = format!("boinc_rs_session={session}");
        let no_token = request(setup, post, "/api/rpc", &[("cookie", &cookie)], GET_RESULTS);
        assert_eq!(no_token.status, 403, "an action without the CSRF token: {}", no_token.body);
    }
}

/// The metrics, parsed by a Prometheus text-format parser: (name, labels) to value.
fn metrics(setup: &Setup) -> HashMap<(String, Vec<(String, String)>), f64> {
    let answer = request(setup, reqwest::Method::GET, "/metrics", &[], "");
    assert_eq!(answer.status, 200, "{}", answer.body);
    let lines = answer.body.lines().map(|line| Ok(line.to_owned()));
    let scrape = prometheus_parse::Scrape::parse(lines).expect("the metrics parse");
    assert!(scrape.docs.contains_key("boinc_tasks"), "a HELP line for boinc_tasks");
    scrape
        .samples
        .into_iter()
        .map(|sample| {
            let value = match sample.value {
                prometheus_parse::Value::Gauge(v)
                | prometheus_parse::Value::Counter(v)
                | prometheus_parse::Value::Untyped(v) => v,
                other => panic!("{}: not a plain value: {other:?}", sample.metric),
            };
            let mut labels: Vec<(String, String)> =
                sample.labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            labels.sort();
            ((sample.metric, labels), value)
        })
        .collect()
}

fn labels(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut labels: Vec<(String, String)> =
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    labels.sort();
    labels
}

/// What GUI RPC says, in the metrics' terms: tasks, running tasks, and per project
/// failures in a row, credit and disk use.
fn gui_rpc_figures(setup: &Setup, url: &str) -> Vec<f64> {
    let results = setup.gui_rpc("<get_results/>");
    let projects = setup.gui_rpc("<get_project_status/>");
    let disk = setup.gui_rpc("<get_disk_usage/>");
    let results = blocks(&results, "result");
    let running = results
        .iter()
        .filter(|r| field(r, "scheduler_state") == Some("2") && !r.contains("<suspended_via_gui/>"))
        .count();
    let project = blocks(&projects, "project")
        .into_iter()
        .find(|p| field(p, "master_url") == Some(url))
        .expect("the project in get_project_status");
    let disk_use = blocks(&disk, "project")
        .into_iter()
        .find(|p| field(p, "master_url") == Some(url))
        .map_or(0.0, |p| number(p, "disk_usage"));
    vec![
        results.len() as f64,
        running as f64,
        number(project, "nrpc_failures"),
        number(project, "user_total_credit"),
        disk_use,
    ]
}

fn metric_figures(setup: &Setup, url: &str) -> Vec<f64> {
    let metrics = metrics(setup);
    let sum = |name: &str| -> f64 {
        metrics.iter().filter(|((n, _), _)| n == name).map(|(_, v)| v).sum()
    };
    let of = |name: &str, pairs: &[(&str, &str)]| -> f64 {
        metrics.get(&(name.to_owned(), labels(pairs))).copied().unwrap_or_else(|| {
            panic!("no {name} {pairs:?} in the metrics: {:?}", metrics.keys().collect::<Vec<_>>())
        })
    };
    let rpcs = sum("boinc_project_rpcs_total");
    assert!(rpcs >= 1.0, "a scheduler RPC was made and counted");
    vec![
        sum("boinc_tasks"),
        sum("boinc_tasks_running"),
        of("boinc_project_rpc_failures", &[("project", url)]),
        of("boinc_project_user_total_credit", &[("project", url)]),
        of("boinc_disk_project_bytes", &[("project", url)]),
    ]
}

/// /metrics agrees with GUI RPC: compared while GUI RPC's own view holds still (the
/// same before and after the metrics are read), a bounded number of times.
fn metrics_agree_with_gui_rpc(setup: &Setup, url: &str) {
    let mut last = None;
    for _ in 0..20 {
        let before = gui_rpc_figures(setup, url);
        let from_metrics = metric_figures(setup, url);
        let after = gui_rpc_figures(setup, url);
        if before == after {
            let close = before
                .iter()
                .zip(&from_metrics)
                .all(|(a, b)| (a - b).abs() <= 1e-6 * a.abs().max(1.0));
            assert!(close, "GUI RPC {before:?} and /metrics {from_metrics:?} disagree");
            return;
        }
        last = Some((before, after));
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("the client's state never held still long enough to compare: {last:?}");
}

fn log_in(browser: &Browser, setup: &Setup, password: &str) {
    browser.goto(&format!("{}/login", setup.web));
    let field = browser.wait_find("#password", PAGE_WAIT);
    browser.fill(&field, password);
    let button = browser.wait_find("#login", PAGE_WAIT);
    browser.click(&button);
}

/// Waits until the page has drawn what it shows (the script marks the body).
fn open_page(browser: &Browser, setup: &Setup, page: &str) {
    browser.goto(&format!("{}/{page}", setup.web));
    browser.wait_find("body[data-loaded=true]", PAGE_WAIT);
}

fn session_cookie(browser: &Browser) -> Option<serde_json::Value> {
    browser.cookies().into_iter().find(|c| c["name"] == json!("boinc_rs_session"))
}

#[test]
#[cfg_attr(
    not(peer_chromium),
    ignore = "chromium or chromedriver is missing: apt-get install chromium chromium-driver"
)]
fn a_volunteer_steers_the_client_from_the_dashboard() {
    let setup = start();
    let second = ProjectServerProcess::start(&[
        "--job-seconds",
        "900",
        "--request-delay",
        "1",
        "--name",
        "second test project",
    ]);
    refused_without_session(&setup, None);
    let browser = Browser::start();

    // A wrong password: the login page again, with the reason, and no session.
    log_in(&browser, &setup, "not-the-password");
    let problem = browser.wait_find("#problem", PAGE_WAIT);
    assert!(browser.text(&problem).contains("Wrong password"), "{}", browser.body_text());
    assert!(session_cookie(&browser).is_none(), "no session for a wrong password");

    // The right one: the overview, and a session cookie scripts cannot read and other
    // sites' pages cannot send.
    log_in(&browser, &setup, PASSWORD);
    poll_for(PAGE_WAIT, || browser.url().ends_with("/overview").then_some(()))
        .unwrap_or_else(|| panic!("not on the overview: {}", browser.url()));
    let cookie = session_cookie(&browser).expect("a session cookie");
    assert_eq!(cookie["httpOnly"], json!(true), "{cookie}");
    assert_eq!(cookie["sameSite"], json!("Strict"), "{cookie}");
    let readable = browser.execute("return document.cookie", json!([]));
    assert_eq!(readable, json!(""), "the page's scripts cannot read the session");
    let session = cookie["value"].as_str().expect("its value").to_owned();
    refused_without_session(&setup, Some(&session));

    // Running tasks on the tasks page.
    open_page(&browser, &setup, "tasks");
    let running = wait_for_or(
        "a running task on the tasks page",
        WORK_WAIT,
        || {
            let names = browser.execute(
                "return Array.from(document.querySelectorAll('#tasks tbody tr'))\
                 .filter(r => r.querySelector('.status').textContent === 'Running')\
                 .map(r => r.dataset.task)",
                json!([]),
            );
            names.as_array()?.first()?.as_str().map(str::to_owned)
        },
        || format!("{}\n\nthe service's log:\n{}", browser.body_text(), setup.log()),
    );
    let results = setup.gui_rpc("<get_results/>");
    let in_gui_rpc = blocks(&results, "result")
        .into_iter()
        .find(|r| field(r, "name") == Some(running.as_str()))
        .expect("the running task in get_results");
    assert_eq!(field(in_gui_rpc, "scheduler_state"), Some("2"), "{in_gui_rpc}");

    // Suspended from the page: the page says so, and so does GUI RPC.
    let suspend = browser
        .wait_find(&format!("tr[data-task='{running}'] button[data-action=suspend]"), PAGE_WAIT);
    browser.click(&suspend);
    let status = format!("tr[data-task='{running}'] .status");
    // Read in one script: the live updates redraw the table, so an element found in one
    // command may be gone by the next.
    poll_for(PAGE_WAIT, || {
        let shown = browser.execute(
            "const cell = document.querySelector(arguments[0]); return cell && cell.textContent",
            json!([status]),
        );
        (shown == json!("Suspended")).then_some(())
    })
    .unwrap_or_else(|| panic!("{running} not shown suspended:\n{}", browser.body_text()));
    let results = setup.gui_rpc("<get_results/>");
    let in_gui_rpc = blocks(&results, "result")
        .into_iter()
        .find(|r| field(r, "name") == Some(running.as_str()))
        .expect("the suspended task in get_results");
    assert!(in_gui_rpc.contains("<suspended_via_gui/>"), "{in_gui_rpc}");

    // A preference changed: the override GUI RPC reads, and the working set.
    open_page(&browser, &setup, "preferences");
    let cpus = browser.wait_find("#pref-max_ncpus_pct", PAGE_WAIT);
    browser.fill(&cpus, "50");
    browser.click(&browser.wait_find("#prefs-save", PAGE_WAIT));
    poll_for(PAGE_WAIT, || {
        let saved = browser.find("#prefs-status")?;
        browser.text(&saved).starts_with("Saved").then_some(())
    })
    .unwrap_or_else(|| panic!("the preferences were not saved:\n{}", browser.body_text()));
    let override_file = setup.gui_rpc("<get_global_prefs_override/>");
    assert_eq!(field(&override_file, "max_ncpus_pct").map(str::parse::<f64>), Some(Ok(50.0)));
    let working = setup.gui_rpc("<get_global_prefs_working/>");
    assert_eq!(field(&working, "max_ncpus_pct").map(str::parse::<f64>), Some(Ok(50.0)));
    // The client works by it: half the CPUs (at least one).
    let host = setup.gui_rpc("<get_host_info/>");
    let ncpus = number(&host, "p_ncpus");
    let half = (ncpus * 0.5).floor().max(1.0);
    let cpu = labels(&[("resource", "cpu")]);
    poll_for(PAGE_WAIT, || {
        let instances =
            metrics(&setup).get(&("boinc_resource_instances".to_owned(), cpu.clone())).copied();
        (instances == Some(half)).then_some(())
    })
    .unwrap_or_else(|| panic!("the client does not use {half} of {ncpus} CPUs:\n{}", setup.log()));

    // A second project attached from the projects page.
    open_page(&browser, &setup, "projects");
    browser.fill(&browser.wait_find("#attach-url", PAGE_WAIT), &second.url);
    browser.fill(&browser.wait_find("#attach-key", PAGE_WAIT), "second_project_key");
    browser.click(&browser.wait_find("#attach", PAGE_WAIT));
    browser.wait_find(&format!("tr[data-project='{}']", second.url), WORK_WAIT);
    let projects = setup.gui_rpc("<get_project_status/>");
    let attached: Vec<&str> =
        blocks(&projects, "project").into_iter().filter_map(|p| field(p, "master_url")).collect();
    assert!(attached.contains(&second.url.as_str()), "{attached:?}");

    metrics_agree_with_gui_rpc(&setup, &setup.server.url);

    if let Some(dir) = std::env::var_os("BOINC_RS_SCREENSHOTS") {
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).expect("the screenshot directory");
        browser.set_viewport(1280, 800);
        for page in PAGES {
            open_page(&browser, &setup, page);
            // Let the live updates draw once more (the timeline's picture loads apart).
            std::thread::sleep(Duration::from_secs(2));
            browser.screenshot(&dir.join(format!("dashboard-{page}.png")));
        }
        browser.goto(&format!("{}/login", setup.web));
        browser.screenshot(&dir.join("dashboard-login.png"));
    }

    // Stopped with the client: the port file goes, and so does the dashboard.
    drop(browser);
    let mut setup = setup;
    signal(&setup.service, nix::sys::signal::Signal::SIGTERM);
    let status = wait_exit(&mut setup.service, Duration::from_secs(30))
        .unwrap_or_else(|| panic!("no exit after SIGTERM:\n{}", setup.log()));
    assert!(status.success(), "{status}:\n{}", setup.log());
    assert!(!setup.data.path().join(WEB_PORT_FILE).exists(), "the port file is removed");
}
