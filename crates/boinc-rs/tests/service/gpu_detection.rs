//! GPUs are looked for by a process of its own (`boinc-rs detect-gpus`), as BOINC's
//! client runs itself to detect them: the vendors' libraries and drivers are never
//! loaded into the long-running client, so a driver that crashes cannot take it down
//! and its libraries' memory does not stay mapped.

use crate::support;

use std::time::Duration;
use support::service::start_service;
use support::wait::wait_for_or;

#[test]
#[cfg_attr(
    not(peer_opencl_pocl),
    ignore = "needs the OpenCL ICD loader and pocl: apt-get install ocl-icd-libopencl1 pocl-opencl-icd"
)]
fn the_client_finds_gpus_without_loading_their_drivers() {
    let dir = tempfile::tempdir().expect("a data directory");
    let log = dir.path().join("service.log");
    let mut service = start_service(dir.path(), &log);
    service.gui_rpc_port();
    let read_log = || std::fs::read_to_string(&log).unwrap_or_default();
    // The detector ran and pocl's device was seen (and set aside: it is a CPU).
    wait_for_or(
        "the detector's findings in the log",
        Duration::from_secs(30),
        || read_log().contains("OpenCL device found").then_some(()),
        read_log,
    );
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", service.id()))
        .expect("the client's memory map");
    for library in ["libOpenCL", "libpocl", "libnvidia-ml", "libcuda"] {
        assert!(!maps.contains(library), "{library} is mapped in the client:\n{maps}");
    }
}
