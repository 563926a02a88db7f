//! `boinc-rs host-info [--json]`: what host discovery finds on this machine (CPUs and
//! their benchmarked speed, memory, the data directory's disk, the OS, NVIDIA GPUs and
//! OpenCL platforms and devices, or why there are none), and everything a scheduler
//! request will say about the host: its `<host_info>` and `<coprocs>`, written as
//! `boinc-rs run` writes them, and the client's `<client_brand>`.

use anyhow::Result;
use boinc_core::control::{ClientIdentity, RpcCall, build_request};
use boinc_core::model::{ClientState, Host, Project, ProjectId, ResourceType};
use boinc_core::work_fetch::WorkRequest;
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
    let mut discovery = LiveHostDiscovery::new(&args.dir, Arc::new(SystemClock), settings);
    // GPUs are looked for as `run` looks for them: by a process of their own.
    if let Some(detector) = super::run::gpu_detector() {
        discovery = discovery.with_gpu_detector(detector);
    }
    let found = discovery.discover(seconds > 0.0)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&as_json(&found))?);
    } else {
        print_text(&found);
    }
    Ok(())
}

/// The host's part of a scheduler request from a client on this host: `<host_info>`
/// and `<coprocs>`, as the request writer writes them for any project.
fn request_host_xml(host: &Host) -> String {
    let mut state = ClientState { host: host.clone(), ..ClientState::default() };
    state.projects.push(Project::new("", "http://project.invalid/", 100.0));
    let call = RpcCall {
        request: WorkRequest {
            project: ProjectId(0),
            resources: Default::default(),
            work_req_seconds: 0.0,
        },
        reported: Vec::new(),
        estimated_delay: Default::default(),
    };
    let identity = ClientIdentity::default();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    build_request(&state, &call, &identity, now).host_xml()
}

fn as_json(found: &DiscoveredHost) -> serde_json::Value {
    let (nvidia, no_nvidia_reason) = match &found.nvidia {
        Ok(gpus) => (serde_json::to_value(gpus).unwrap_or_default(), None),
        Err(reason) => (serde_json::Value::Null, Some(reason.to_string())),
    };
    let (opencl, no_opencl_reason) = match &found.opencl {
        Ok(platforms) => (serde_json::to_value(platforms).unwrap_or_default(), None),
        Err(reason) => (serde_json::Value::Null, Some(reason.to_string())),
    };
    serde_json::json!({
        "host": found.host,
        "benchmarked": found.benchmark.is_some(),
        "nvidia": nvidia,
        "no_nvidia_reason": no_nvidia_reason,
        "opencl": opencl,
        "no_opencl_reason": no_opencl_reason,
        "client_brand": ClientIdentity::default().brand,
        "request_host_xml": request_host_xml(&found.host),
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
            match &gpus.cuda_driver_problem {
                None => println!("  cuda driver: every GPU's properties read"),
                Some(problem) => println!("  {problem}"),
            }
            if let Some(properties) = &d.nvidia_properties {
                println!(
                    "  described  totalGlobalMem {:.0}, {} multiprocessors, clockRate {} kHz, warpSize {}, maxThreadsPerBlock {}",
                    properties.total_global_mem,
                    properties.multiprocessor_count,
                    properties.clock_rate_khz,
                    properties.warp_size,
                    properties.max_threads_per_block
                );
            }
            if let Some(used) = &host.coprocessors[ResourceType::Nvidia] {
                println!("  scheduled on {} × {}", used.count, used.name);
            }
        }
        Err(reason) => println!("nvidia      {reason}"),
    }
    match &found.opencl {
        Ok(platforms) => {
            for platform in platforms {
                println!(
                    "opencl      {} ({}), {}",
                    platform.name, platform.vendor, platform.version
                );
                for found in &platform.devices {
                    let device = &found.device;
                    println!(
                        "  device {}  {} ({}), {}, {} compute units, {} MHz, {:.1} GB{}",
                        device.opencl_device_index,
                        device.name,
                        device.vendor,
                        device.opencl_device_version,
                        device.max_compute_units,
                        device.max_clock_frequency,
                        device.global_mem_size as f64 / GB,
                        if found.set_aside { ", set aside (not a GPU BOINC uses)" } else { "" }
                    );
                }
            }
        }
        Err(reason) => println!("opencl      {reason}"),
    }
    if let Some(brand) = ClientIdentity::default().brand {
        println!("brand       {brand}");
    }
    println!("\nwhat a scheduler request says about this host:\n{}", request_host_xml(host));
}
