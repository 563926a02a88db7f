//! `boinc-rs host-info [--json]`: what host discovery finds on this machine (CPUs and
//! their benchmarked speed, memory, the data directory's disk, the OS, NVIDIA GPUs or
//! why there are none), as `boinc-rs run` would describe it to projects.

use anyhow::Result;
use boinc_core::model::ResourceType;
use boinc_runtime::effects::SystemClock;
use boinc_service::host_discovery::{DiscoveredHost, DiscoverySettings, LiveHostDiscovery};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The arguments of `host-info`.
#[derive(clap::Args)]
pub(crate) struct HostInfoArgs {
    /// The data directory whose disk is measured (default: the current directory).
    #[arg(long, value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// Seconds each CPU benchmark runs on every CPU (0: skip them; `p_fpops` then shows
    /// the default of 10⁹ the real client also reports without benchmarks).
    #[arg(long, value_name = "S", default_value_t = 2.0)]
    benchmark_seconds: f64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs discovery and prints what it found.
pub(crate) fn host_info(args: &HostInfoArgs) -> Result<()> {
    let seconds = args.benchmark_seconds;
    anyhow::ensure!(
        seconds.is_finite() && (0.0..=600.0).contains(&seconds),
        "--benchmark-seconds must be between 0 and 600"
    );
    let settings = DiscoverySettings {
        benchmark_duration: Duration::from_secs_f64(seconds),
        ..DiscoverySettings::default()
    };
    let discovery = LiveHostDiscovery::new(&args.dir, Arc::new(SystemClock), settings);
    let found = discovery.discover(seconds > 0.0)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&as_json(&found))?);
    } else {
        print_text(&found);
    }
    Ok(())
}

fn as_json(found: &DiscoveredHost) -> serde_json::Value {
    let (nvidia, no_nvidia_reason) = match &found.nvidia {
        Ok(gpus) => (serde_json::to_value(gpus).unwrap_or_default(), None),
        Err(reason) => (serde_json::Value::Null, Some(reason.to_string())),
    };
    serde_json::json!({
        "host": found.host,
        "benchmarked": found.benchmark.is_some(),
        "nvidia": nvidia,
        "no_nvidia_reason": no_nvidia_reason,
    })
}

fn print_text(found: &DiscoveredHost) {
    let host = &found.host;
    let d = &host.description;
    const GB: f64 = 1e9;
    println!("host        {}", d.domain_name);
    println!("os          {} / {}", d.os_name, d.os_version);
    println!("cpus        {} × {} ({})", host.p_ncpus, d.p_model, d.p_vendor);
    println!("features    {}", d.p_features);
    match found.benchmark {
        Some(_) => println!(
            "benchmarks  {:.0} M Whetstone instructions/s, {:.0} M integer operations/s per CPU",
            host.p_fpops / 1e6,
            d.p_iops / 1e6
        ),
        None => println!("benchmarks  skipped (p_fpops {:.0e}, the default)", host.p_fpops),
    }
    println!(
        "memory      {:.2} GB, swap {:.2} GB, cache {:.0} KB",
        host.m_nbytes / GB,
        host.m_swap / GB,
        d.m_cache / 1024.0
    );
    println!("disk        {:.2} GB free of {:.2} GB", host.d_free / GB, host.d_total / GB);
    match &found.nvidia {
        Ok(gpus) => {
            println!(
                "nvidia      driver {} (drvVersion {}), CUDA {} ",
                gpus.driver_version, gpus.driver_version_code, gpus.cuda_version
            );
            for device in &gpus.devices {
                println!(
                    "  gpu {}     {}, {:.1} GB, compute {}.{}, {} cores, {} MHz, {:.2} TFLOPS peak",
                    device.index,
                    device.name,
                    device.memory_bytes / GB,
                    device.compute_capability.0,
                    device.compute_capability.1,
                    device.cuda_cores.map_or("unknown".to_string(), |c| c.to_string()),
                    device.max_clock_mhz,
                    device.peak_flops / 1e12
                );
            }
            if let Some(used) = &host.coprocessors[ResourceType::Nvidia] {
                println!("  scheduled on {} × {}", used.count, used.name);
            }
        }
        Err(reason) => println!("nvidia      {reason}"),
    }
}
