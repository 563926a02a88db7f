//! The host: CPUs, coprocessors, memory, disk, and the time statistics the estimates of
//! seed 000 ("Normalized CPU time": on-fraction, active-fraction) are made from.

use super::resource::{Coprocessor, ResourceMap, ResourceType};
use serde::{Deserialize, Serialize};

/// What the client knows about the machine it runs on (`<host_info>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Host {
    /// Logical CPUs (counting hyperthreads), `<p_ncpus>`.
    pub p_ncpus: u32,
    /// Benchmarked floating-point speed of one CPU, flops (`<p_fpops>`).
    pub p_fpops: f64,
    /// Physical memory, bytes (`<m_nbytes>`).
    pub m_nbytes: f64,
    /// Swap, bytes (`<m_swap>`).
    pub m_swap: f64,
    /// Size of the disk holding the data directory, bytes (`<d_total>`).
    pub d_total: f64,
    /// Free space on that disk, bytes (`<d_free>`).
    pub d_free: f64,
    /// Coprocessors by type; `None` where the host has none of that type.
    pub coprocessors: ResourceMap<Option<Coprocessor>>,
    /// What the host is, as a scheduler request describes it to projects.
    #[serde(default)]
    pub description: HostDescription,
}

/// The host as `<host_info>` describes it beyond the figures the policies use: its
/// identity on the network and to projects, its processor and operating system.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HostDescription {
    /// Offset from UTC, seconds (`<timezone>`).
    pub timezone: i32,
    /// Host name (`<domain_name>`).
    pub domain_name: String,
    /// Address (`<ip_addr>`).
    pub ip_addr: String,
    /// The host's cross-project identifier (`<host_cpid>`).
    pub host_cpid: String,
    /// Processor vendor (`<p_vendor>`).
    pub p_vendor: String,
    /// Processor model (`<p_model>`).
    pub p_model: String,
    /// Processor features, space-separated (`<p_features>`).
    pub p_features: String,
    /// Benchmarked integer speed of one CPU, operations per second (`<p_iops>`).
    pub p_iops: f64,
    /// Benchmarked memory bandwidth, bytes per second (`<p_membw>`).
    pub p_membw: f64,
    /// When the benchmarks ran (`<p_calculated>`).
    pub p_calculated: f64,
    /// Virtualisation extensions are off (`<p_vm_extensions_disabled>`).
    pub p_vm_extensions_disabled: bool,
    /// Processor cache, bytes (`<m_cache>`).
    pub m_cache: f64,
    /// Operating system (`<os_name>`).
    pub os_name: String,
    /// Operating system version (`<os_version>`).
    pub os_version: String,
}

/// Network transfer averages (`<net_stats>`): what a scheduler request tells projects
/// about the host's bandwidth.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct NetStats {
    /// Upload bandwidth, bytes per second (`<bwup>`).
    pub bwup: f64,
    /// Average upload rate (`<avg_up>`).
    pub avg_up: f64,
    /// When the upload average was updated (`<avg_time_up>`).
    pub avg_time_up: f64,
    /// Download bandwidth, bytes per second (`<bwdown>`).
    pub bwdown: f64,
    /// Average download rate (`<avg_down>`).
    pub avg_down: f64,
    /// When the download average was updated (`<avg_time_down>`).
    pub avg_time_down: f64,
}

impl Default for Host {
    fn default() -> Self {
        Host {
            p_ncpus: 1,
            p_fpops: 1e9,
            m_nbytes: 0.0,
            m_swap: 0.0,
            d_total: 0.0,
            d_free: 0.0,
            coprocessors: ResourceMap::default(),
            description: HostDescription::default(),
        }
    }
}

impl Host {
    /// Number of instances of a processing resource the hardware has (CPU: `p_ncpus`).
    pub fn hardware_instances(&self, resource: ResourceType) -> u32 {
        match resource {
            ResourceType::Cpu => self.p_ncpus,
            gpu => self.coprocessors[gpu].as_ref().map_or(0, |c| c.count),
        }
    }

    /// Flops one instance of the resource delivers to a real app.
    pub fn instance_flops(&self, resource: ResourceType) -> f64 {
        match resource {
            ResourceType::Cpu => self.p_fpops,
            gpu => self.coprocessors[gpu].as_ref().map_or(0.0, Coprocessor::effective_flops),
        }
    }

    /// Speed of one instance relative to one CPU: the weight seed 003 gives a resource's
    /// instance-seconds when debts of different resources are added up.
    pub fn relative_speed(&self, resource: ResourceType) -> f64 {
        if self.p_fpops > 0.0 { self.instance_flops(resource) / self.p_fpops } else { 1.0 }
    }
}

/// Long-run fractions of time the client runs and may compute (`<time_stats>`), used to
/// turn processing time into wall time (seed 000 "Normalized CPU time", note 5).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimeStats {
    /// Fraction of time the client is running at all.
    pub on_frac: f64,
    /// Fraction of that time the host is connected to the network (negative: unknown).
    pub connected_frac: f64,
    /// Fraction of running time both computing and the network are allowed.
    #[serde(default = "one")]
    pub cpu_and_network_available_frac: f64,
    /// Fraction of running time computation is allowed.
    pub active_frac: f64,
    /// Fraction of running time GPU computation is allowed.
    pub gpu_active_frac: f64,
    /// Emulator scenarios: mean length of an "on" period, seconds (`<on_lambda>`).
    pub on_lambda: Option<f64>,
    /// Emulator scenarios: mean length of a "connected" period (`<connected_lambda>`).
    pub connected_lambda: Option<f64>,
    /// Emulator scenarios: mean length of an "active" period (`<active_lambda>`).
    pub active_lambda: Option<f64>,
    /// Emulator scenarios: mean length of a "GPU active" period (`<gpu_active_lambda>`).
    pub gpu_active_lambda: Option<f64>,
}

impl Default for TimeStats {
    fn default() -> Self {
        TimeStats {
            on_frac: 1.0,
            connected_frac: 1.0,
            cpu_and_network_available_frac: 1.0,
            active_frac: 1.0,
            gpu_active_frac: 1.0,
            on_lambda: None,
            connected_lambda: None,
            active_lambda: None,
            gpu_active_lambda: None,
        }
    }
}

/// Serde's default for a fraction that is 1 unless a file says otherwise.
fn one() -> f64 {
    1.0
}

impl TimeStats {
    /// Fraction of wall time one instance of `resource` actually computes. BOINC's
    /// `gpu_active_frac` already includes `active_frac`'s suspensions.
    pub fn available_frac(&self, resource: ResourceType) -> f64 {
        let on = self.on_frac.clamp(0.0, 1.0);
        let frac = if resource.is_gpu() {
            on * self.gpu_active_frac.clamp(0.0, 1.0)
        } else {
            on * self.active_frac.clamp(0.0, 1.0)
        };
        // A zero fraction would make every estimate infinite; BOINC floors it the same way.
        frac.max(0.01)
    }
}
