//! Host discovery on the real machine (issue "The host service", host and GPU
//! discovery): [`LiveHostDiscovery`] and what it is made of.

mod cpu_benchmark;
mod cpu_info;
#[cfg(feature = "nvml")]
mod cuda_driver;
#[cfg(feature = "nvml")]
mod gpu_peak_flops;
mod gpu_probe;
mod host_conditions;
mod live_host_discovery;
mod logind_idle;
mod nvidia;
mod opencl;
mod other_cpu;
mod system_description;
mod user_activity;
mod virtualization;
mod x11_idle;

pub use cpu_benchmark::{BenchmarkResult, run_cpu_benchmarks};
pub use gpu_probe::{
    DEFAULT_DETECTION_TIMEOUT, GpuDetector, GpuFindings, GpuProbeError, find_gpus_here,
    read_gpu_findings, write_gpu_findings,
};
pub use host_conditions::{local_time_at, observe_host_conditions};
pub use live_host_discovery::{
    DEFAULT_BENCHMARK_DURATION, DiscoveredHost, DiscoverySettings, LiveHostDiscovery,
};
pub use nvidia::{NvidiaDevice, NvidiaDiscoveryError, NvidiaGpus};
pub use opencl::{OpenclDiscoveryError, OpenclFound, OpenclPlatform, discover_opencl};
pub use user_activity::UserActivitySources;
