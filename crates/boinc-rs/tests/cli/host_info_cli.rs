//! `boinc-rs host-info --json` on this machine: the CPUs and memory sysinfo reports, the
//! disk of the directory given, benchmark figures, and the NVIDIA GPUs or why there are
//! none.

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
    assert_eq!(host["p_ncpus"].as_u64(), Some(system.cpus().len() as u64));
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
