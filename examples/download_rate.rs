//! The client's download rate from `boinc-rs project-server` on loopback: a file of
//! 100 MB (or the size given) downloaded three times by the live file transfer (the
//! one a running client uses: reqwest over one connection pool, the stall rule, MD5
//! over the bytes as they are written, the staging file synced), from a project server
//! started in this process on a free port of 127.0.0.1; the median rate is printed,
//! as JSON with `--json`.
//!
//! Run: `cargo run --release -p boinc-rs --example download_rate -- [--json] [BYTES]`

use boinc_core::control::ClientIdentity;
use boinc_core::model::{CcConfig, FileId, ProjectId};
use boinc_core::transfer::{Direction, TransferOrder};
use boinc_project_server::{ProjectServer, ProjectServerConfig};
use boinc_runtime::effects::{FileTransfer, Transferred};
use boinc_service::http::{HttpSettings, LiveFileTransfer};
use std::time::Instant;

/// Downloads measured.
const RUNS: usize = 3;

/// Starts a project server on a thread of its own; returns its URL.
fn start_server(dir: std::path::PathBuf) -> Result<String, String> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        actix_web::rt::System::new().block_on(async move {
            let mut config = ProjectServerConfig::new(dir);
            config.generator.jobs = Some(0);
            match ProjectServer::bind(config) {
                Ok(server) => {
                    let _ = sender.send(Ok(server.url().to_owned()));
                    let _ = server.run().await;
                }
                Err(error) => {
                    let _ = sender.send(Err(error.to_string()));
                }
            }
        });
    });
    receiver.recv().map_err(|e| e.to_string())?
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let bytes: u64 = match args.iter().find(|a| !a.starts_with("--")) {
        Some(text) => text.parse().map_err(|_| format!("{text} is not a number of bytes"))?,
        None => 100_000_000,
    };
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let project_dir = scratch.path().join("project");
    let url = start_server(project_dir.clone())?;
    // The file, in the project's download directory.
    let content: Vec<u8> =
        (0..bytes).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let md5 = boinc_core::protocol::code_signing::md5_hex(&content);
    std::fs::write(project_dir.join("download").join("large_file"), &content)
        .map_err(|e| e.to_string())?;
    drop(content);
    let data = scratch.path().join("client");
    let settings = HttpSettings::new(&CcConfig::default(), &ClientIdentity::default());
    let transfer = LiveFileTransfer::new(settings, &data).map_err(|e| e.to_string())?;
    let order = TransferOrder {
        file: FileId(0),
        project: ProjectId(0),
        direction: Direction::Download,
        name: "large_file".into(),
        url: format!("{url}download/large_file"),
        path: "projects/p/large_file".into(),
        staging_path: "downloads/p/large_file".into(),
        nbytes: bytes as f64,
        max_nbytes: bytes as f64,
        md5_cksum: md5.clone(),
        executable: false,
        started: 0.0,
        max_bytes_sec: 0.0,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let local = tokio::task::LocalSet::new();
    let mut rates = Vec::new();
    for _ in 0..RUNS {
        transfer.discard(&order).map_err(|e| e.to_string())?;
        let started = Instant::now();
        let done = local
            .block_on(&runtime, transfer.download(&order, Box::new(|_| {})))
            .map_err(|e| e.to_string())?;
        let seconds = started.elapsed().as_secs_f64();
        if done != (Transferred::Downloaded { nbytes: bytes, md5: md5.clone() }) {
            return Err(format!("the download is not the file: {done:?}"));
        }
        rates.push(bytes as f64 / seconds / 1e6);
    }
    rates.sort_by(f64::total_cmp);
    let median = rates[RUNS / 2];
    if json {
        println!(
            "{}",
            serde_json::json!({
                "bytes": bytes,
                "runs": RUNS,
                "rates_mb_per_s": rates,
                "median_mb_per_s": median,
            })
        );
    } else {
        println!(
            "download of {bytes} bytes from project-server on loopback: median {median:.0} MB/s \
             over {RUNS} runs ({rates:.0?})"
        );
    }
    Ok(())
}
