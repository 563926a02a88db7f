//! What the host is and whether it may work (docs/design.md "The boundary between the core
//! and the world"; issue "The host service", host and GPU discovery): the live client
//! reads the machine (`live::host_discovery`: sysinfo, NVML, /proc and /sys), the simulated one reports the
//! scenario's host and its emulated availability.

use boinc_core::control::HostView;
use boinc_core::model::Host;
use std::path::PathBuf;

/// Why the host could not be described.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HostDiscoveryError {
    /// The data directory's disk could not be measured.
    #[error(
        "cannot measure the disk of the data directory {dir}: {reason}; check that the directory exists"
    )]
    DataDirectory {
        /// The data directory.
        dir: PathBuf,
        /// What the system said.
        reason: String,
    },
}

/// What the host is and whether it may work.
pub trait HostDiscovery: Send + Sync {
    /// The host's availability now. Called once a second: it must be cheap.
    fn availability(&self) -> HostView;
    /// What the host is: CPUs and their speed, memory, swap, the data directory's disk,
    /// the operating system, the GPUs. Called at start and when the user asks; with
    /// `run_benchmarks` it runs the CPU benchmarks (seconds on every CPU), so a live
    /// client calls it off its arbiter. Without, the benchmark figures are defaults and
    /// `p_calculated` is 0: `Host::refreshed` keeps the previous ones.
    fn describe(&self, run_benchmarks: bool) -> Result<Host, HostDiscoveryError>;
}
