//! `boinc-rs host-info --json` on this machine: the CPUs and memory sysinfo reports, the
//! disk of the directory given, benchmark figures, the NVIDIA GPUs and the OpenCL
//! platforms or why there are none, and what a scheduler request says of the host.

use std::process::Command;

#[test]
fn host_info_reports_this_machine() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
        .args(["host-info", "--json", "--benchmark-seconds", "0.05", "--dir"])
        .arg(dir.path())
        .output()
        .expect("boinc-rs runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let found: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let host = &found["host"];
    let mut system = sysinfo::System::new();
    system.refresh_memory();
    system.refresh_cpu_list(sysinfo::CpuRefreshKind::nothing());
    let ncpus = host["p_ncpus"].as_u64().expect("p_ncpus");
    assert!(ncpus >= 1 && ncpus <= system.cpus().len() as u64, "the CPUs it may run on");
    assert_eq!(host["m_nbytes"].as_f64(), Some(system.total_memory() as f64));
    assert!(host["d_total"].as_f64().expect("d_total") > 0.0);
    assert_eq!(found["benchmarked"], true);
    assert!(host["p_fpops"].as_f64().expect("p_fpops") > 0.0);
    assert!(host["description"]["p_calculated"].as_f64().expect("p_calculated") > 0.0);
    // Either the GPUs found, or (on the build machines) the reason there are none.
    match found["nvidia"].as_object() {
        Some(nvidia) => assert!(!nvidia["devices"].as_array().expect("devices").is_empty()),
        None => {
            let reason = found["no_nvidia_reason"].as_str().expect("a reason");
            assert!(reason.starts_with("no NVIDIA GPU"), "{reason}");
            assert!(host["coprocessors"][1].is_null());
        }
    }
}

#[test]
fn bad_benchmark_time_is_refused() {
    let output = Command::new(env!("CARGO_BIN_EXE_boinc-rs"))
        .args(["host-info", "--benchmark-seconds=-1"])
        .output()
        .expect("boinc-rs runs");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--benchmark-seconds"));
}

fn host_info_json(prefix: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> serde_json::Value {
    let (program, args) = match prefix.split_first() {
        Some((program, args)) => (program.to_string(), args.to_vec()),
        None => (env!("CARGO_BIN_EXE_boinc-rs").to_string(), Vec::new()),
    };
    let mut command = Command::new(program);
    command.args(args);
    if !prefix.is_empty() {
        command.arg(env!("CARGO_BIN_EXE_boinc-rs"));
    }
    command.args(["host-info", "--json", "--benchmark-seconds", "0"]);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("boinc-rs runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("JSON")
}

/// Started as `taskset -c 0 boinc-rs`, the client counts the one CPU it may use, as
/// BOINC's does; the request says so, with the rest of what BOINC sends of the host.
#[test]
fn the_request_describes_the_host_as_boinc_does() {
    let found = host_info_json(&["taskset", "-c", "0"], &[]);
    assert_eq!(found["host"]["p_ncpus"], 1, "the affinity's one CPU");
    let xml = found["request_host_xml"].as_str().expect("the request's host part");
    assert!(xml.contains("<p_ncpus>1</p_ncpus>"), "{xml}");
    for element in ["<ip_addr>", "<p_model>", "<os_version>", "<wsl_available>0</wsl_available>"] {
        assert!(xml.contains(element), "{element} in {xml}");
    }
    assert!(xml.contains("<p_membw>1000000000.000000</p_membw>"), "{xml}");
    let os_version = found["host"]["description"]["os_version"].as_str().expect("os_version");
    assert!(os_version.contains("|libc "), "the C library's version: {os_version}");
    let brand = found["client_brand"].as_str().expect("the brand");
    assert!(brand.starts_with("boinc-rs "), "{brand}");
}

/// The real enumeration through the ICD loader, against pocl: its platform and its
/// CPU device are listed, and the CPU device is set aside (no GPU), as BOINC's client
/// sets it aside.
#[test]
#[cfg_attr(
    not(peer_opencl_pocl),
    ignore = "needs the OpenCL ICD loader and pocl: apt-get install ocl-icd-libopencl1 pocl-opencl-icd"
)]
fn opencl_discovery_lists_pocls_cpu_device_and_sets_it_aside() {
    let found = host_info_json(&[], &[]);
    let platforms = found["opencl"].as_array().unwrap_or_else(|| panic!("platforms: {found}"));
    let pocl = platforms
        .iter()
        .find(|p| p["name"].as_str().is_some_and(|n| n.contains("Portable Computing Language")))
        .unwrap_or_else(|| panic!("pocl's platform among {platforms:?}"));
    assert!(pocl["version"].as_str().expect("a version").starts_with("OpenCL "), "{pocl}");
    let devices = pocl["devices"].as_array().expect("devices");
    assert!(!devices.is_empty(), "{pocl}");
    for device in devices {
        assert_eq!(device["set_aside"], true, "a CPU device is not a GPU: {device}");
        assert!(device["device"]["max_compute_units"].as_u64().expect("units") > 0);
        assert!(device["device"]["global_mem_size"].as_u64().expect("memory") > 0);
    }
    // pocl has no GPU: no coprocessor, nothing in the request's <coprocs>.
    assert!(found["host"]["description"]["opencl_gpus"].as_array().expect("gpus").is_empty());
    let xml = found["request_host_xml"].as_str().expect("the request's host part");
    assert!(!xml.contains("<coproc_opencl>"), "{xml}");
}

/// With no ICD at all (the loader pointed at an empty vendors directory), discovery
/// says why there is no OpenCL and the client goes on with its CPUs.
#[test]
#[cfg_attr(
    not(peer_opencl_pocl),
    ignore = "needs the OpenCL ICD loader: apt-get install ocl-icd-libopencl1 pocl-opencl-icd"
)]
fn with_no_icd_opencl_discovery_says_why() {
    let empty = tempfile::tempdir().expect("an empty vendors directory");
    let found = host_info_json(&[], &[("OCL_ICD_VENDORS", empty.path().as_os_str())]);
    assert!(found["opencl"].is_null(), "{found}");
    let reason = found["no_opencl_reason"].as_str().expect("a reason");
    assert!(reason.contains("lists no platform"), "{reason}");
    assert!(found["host"]["p_ncpus"].as_u64().expect("CPUs") >= 1);
}
