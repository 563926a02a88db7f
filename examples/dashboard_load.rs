//! How fast the web dashboard loads a page of a host with many tasks, as JSON figures:
//! headless Chromium (through chromedriver) loads the tasks page and the overview of a
//! synthetic 16-CPU host with 500 tasks (paced in real time, served on free ports), and
//! the time from the start of navigation until the page has drawn the client's state is
//! read from the page (`performance.now()` when the first render ended), over 9 loads
//! each: median and slowest.
//!
//! Run: `cargo run --release -p boinc-rs --example dashboard_load [JOBS]` (needs
//! chromium and chromium-driver).

use boinc_core::model::{SyntheticHost, synthetic_host};
use boinc_gui_rpc::{GuiRpcConfig, GuiRpcServer, PASSWORD_FILE};
use boinc_runtime::Client;
use serde_json::json;
use std::time::Duration;

// The browser tests' WebDriver client, with what it uses, as siblings (it names them
// through `super`).
#[path = "../crates/boinc-rs/tests/support/peer_port.rs"]
mod peer_port;
#[path = "../crates/boinc-rs/tests/support/wait.rs"]
mod wait;
#[path = "../crates/boinc-rs/tests/support/webdriver.rs"]
mod webdriver;

/// Loads of each page measured.
const LOADS: usize = 9;
const PASSWORD: &str = "load";

/// Milliseconds from navigation to the first drawing of each of [`LOADS`] loads.
fn page_loads(browser: &webdriver::Browser, url: &str) -> Vec<f64> {
    (0..LOADS)
        .map(|_| {
            browser.goto(url);
            browser.wait_find("body[data-loaded=true]", Duration::from_secs(30));
            let ms = browser.execute("return Number(document.body.dataset.loadedMs)", json!([]));
            ms.as_f64().expect("the page's load time")
        })
        .collect()
}

fn summary(mut loads: Vec<f64>) -> serde_json::Value {
    loads.sort_by(f64::total_cmp);
    json!({ "median_ms": loads[loads.len() / 2], "slowest_ms": loads[loads.len() - 1], "loads_ms": loads })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let jobs: usize = std::env::args().nth(1).map(|n| n.parse()).transpose()?.unwrap_or(500);
    let state = synthetic_host(SyntheticHost {
        ncpus: 16,
        njobs: jobs,
        running_prefix: 16,
        seed: 1,
        now: 1.0e9,
    });
    let client = Client::builder().state(state).days(3650.0).realtime_factor(1.0).start()?;
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join(PASSWORD_FILE), PASSWORD)?;
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let web = runtime.block_on(async {
        let server =
            GuiRpcServer::bind(GuiRpcConfig::new(dir.path()).port(0), client.clone()).await?;
        let web = boinc_web::WebServer::bind(0, server.local())?;
        let address = web.local_addr();
        tokio::spawn(server.serve());
        tokio::spawn(web.serve());
        Ok::<_, Box<dyn std::error::Error>>(format!("http://{address}"))
    })?;
    let browser = webdriver::Browser::start();
    browser.goto(&format!("{web}/login"));
    let field = browser.wait_find("#password", Duration::from_secs(30));
    browser.fill(&field, PASSWORD);
    browser.click(&browser.wait_find("#login", Duration::from_secs(30)));
    browser.wait_find("body[data-loaded=true]", Duration::from_secs(30));
    let rows = {
        browser.goto(&format!("{web}/tasks"));
        browser.wait_find("body[data-loaded=true]", Duration::from_secs(30));
        browser.execute("return document.querySelectorAll('#tasks tbody tr').length", json!([]))
    };
    let tasks = summary(page_loads(&browser, &format!("{web}/tasks")));
    let breakdown = browser.execute(
        "return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))\
         .map(e => [e.name.replace(/^https?:\\/\\/[^/]+/, ''), Math.round(e.startTime), Math.round(e.responseEnd)])",
        json!([]),
    );
    let overview = summary(page_loads(&browser, &format!("{web}/overview")));
    drop(browser);
    client.shutdown();
    let _ = client.join();
    let figures = json!({
        "tasks": jobs,
        "task_rows_drawn": rows,
        "tasks_page": tasks,
        "overview_page": overview,
        "last_tasks_load_requests_ms": breakdown,
    });
    println!("{}", serde_json::to_string_pretty(&figures)?);
    Ok(())
}
