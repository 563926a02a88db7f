//! How much load boinc-rs's GUI RPC server takes, as JSON figures: requests per second
//! from several clients at once (`get_state` of a host with many tasks, and the small
//! `get_cc_status`), and the resident memory of 1,000 idle connections.
//!
//! Run: `cargo run --release -p boinc-rs --example gui_rpc_load [JOBS]` (default: a
//! synthetic 16-CPU host with 500 tasks, paced in real time, served on a free port).

use boinc_core::model::{SyntheticHost, synthetic_host};
use boinc_gui_rpc::{GuiRpcClient, GuiRpcConfig, GuiRpcServer, PASSWORD_FILE};
use boinc_runtime::Client;
use std::time::{Duration, Instant};

/// Concurrent clients in the throughput runs.
const CLIENTS: usize = 4;
/// How long each throughput run lasts.
const SECONDS: f64 = 3.0;
/// Idle connections opened for the memory figure.
const IDLE_CONNECTIONS: usize = 1000;

fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?.to_string();
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kb| kb * 1024)
}

/// Requests per second of `operation` from [`CLIENTS`] connections at once.
async fn throughput(address: &str, password: &str, operation: &str) -> Result<f64, String> {
    let deadline = Instant::now() + Duration::from_secs_f64(SECONDS);
    let mut workers = Vec::new();
    for _ in 0..CLIENTS {
        let (address, password, operation) =
            (address.to_string(), password.to_string(), operation.to_string());
        workers.push(tokio::spawn(async move {
            let mut client = GuiRpcClient::connect(&address).await.map_err(|e| e.to_string())?;
            client.authenticate(&password).await.map_err(|e| e.to_string())?;
            let mut done = 0u64;
            while Instant::now() < deadline {
                client.call(&operation).await.map_err(|e| e.to_string())?;
                done += 1;
            }
            Ok::<u64, String>(done)
        }));
    }
    let mut total = 0;
    for worker in workers {
        total += worker.await.map_err(|e| e.to_string())??;
    }
    Ok(total as f64 / SECONDS)
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
    std::fs::write(dir.path().join(PASSWORD_FILE), "load")?;
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let figures = runtime.block_on(async {
        let server =
            GuiRpcServer::bind(GuiRpcConfig::new(dir.path()).port(0), client.clone()).await?;
        let address = server.local_addr().to_string();
        let monitor = server.monitor();
        tokio::spawn(server.serve());
        let mut probe = GuiRpcClient::connect(&address).await?;
        let state_bytes = probe.call("<get_state/>").await?.len();
        let get_state = throughput(&address, "load", "<get_state/>").await?;
        let get_cc_status = throughput(&address, "load", "<get_cc_status/>").await?;
        let before = resident_bytes();
        let mut idle = Vec::with_capacity(IDLE_CONNECTIONS);
        for _ in 0..IDLE_CONNECTIONS {
            idle.push(tokio::net::TcpStream::connect(&address).await?);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let with = resident_bytes();
        let open = monitor.connections();
        drop(idle);
        Ok::<_, Box<dyn std::error::Error>>(serde_json::json!({
            "tasks": jobs,
            "get_state_reply_bytes": state_bytes,
            "clients": CLIENTS,
            "get_state_per_second": get_state.round(),
            "get_cc_status_per_second": get_cc_status.round(),
            "idle_connections": IDLE_CONNECTIONS,
            "server_connections_open": open,
            "resident_bytes_before": before,
            "resident_bytes_with_connections": with,
            "resident_bytes_per_connection": with.saturating_sub(before) / IDLE_CONNECTIONS as u64,
        }))
    })?;
    client.shutdown();
    let _ = client.join();
    println!("{}", serde_json::to_string_pretty(&figures)?);
    Ok(())
}
