//! The host: CPUs, coprocessors, memory, disk, and the time statistics the estimates of
//! seed 000 ("Normalized CPU time": on-fraction, active-fraction) are made from.

use super::resource::{Coprocessor, ResourceMap, ResourceType};
use serde::{Deserialize, Serialize};

/// The most CPUs a host is taken to have: far beyond any real machine, and small enough
/// that what is sized by the CPU count stays small. State files and configurations that
/// claim more are refused or clamped.
pub const MAX_CPUS: u32 = 65_536;
/// The most instances of one GPU type a host is taken to have.
pub const MAX_GPU_INSTANCES: u32 = 1024;
/// The most flops one CPU or GPU instance is taken to deliver (an exaflops): beyond it,
/// sums of flops over a run overflow.
pub const MAX_INSTANCE_FLOPS: f64 = 1e18;

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
    /// The NVIDIA driver's version as BOINC encodes it, major × 100 + minor (`535.86`
    /// → 53586; `<drvVersion>` of `<coproc_cuda>`); 0: none found.
    #[serde(default)]
    pub nvidia_driver_version: u32,
    /// The highest CUDA version the NVIDIA driver supports, major × 1000 + minor × 10
    /// (`12.2` → 12020; `<cudaVersion>`); 0: none found.
    #[serde(default)]
    pub cuda_version: u32,
    /// The compute capability of the first NVIDIA GPU, major and minor (`<major>`,
    /// `<minor>` of `<coproc_cuda>`); (0, 0): none found.
    #[serde(default)]
    pub nvidia_compute_capability: (i32, i32),
    /// The first NVIDIA GPU's CUDA properties (memory, clock, multiprocessors, block
    /// and grid limits), where the driver told them.
    #[serde(default)]
    pub nvidia_properties: Option<super::CudaProperties>,
    /// VirtualBox's version where it is installed (`<virtualbox_version>`; projects
    /// send virtual-machine apps only to hosts that have it), empty otherwise.
    #[serde(default)]
    pub virtualbox_version: String,
    /// Docker's or Podman's version where one is installed (`<docker_version>`), empty
    /// otherwise.
    #[serde(default)]
    pub docker_version: String,
    /// Which of them it is, BOINC's numbering (`<docker_type>`: 1 Docker, 2 Podman).
    #[serde(default)]
    pub docker_type: u32,
    /// Every GPU OpenCL found, usable or not (CPU devices are set aside, as BOINC's
    /// client does): each GPU type's entry of a request carries its first device's
    /// description. Found afresh at every start, never kept in the state file.
    #[serde(default)]
    pub opencl_gpus: Vec<super::OpenclDevice>,
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

/// BOINC runs its CPU benchmarks again after this long, seconds (five days).
pub const BENCHMARK_PERIOD: f64 = 5.0 * 86_400.0;

impl Host {
    /// The host as discovery found it (`discovered`), keeping what discovery does not
    /// find again: the host's identity (`host_cpid`), its address and time zone when
    /// discovery has none, and the benchmark figures when discovery ran no benchmark
    /// (`p_calculated` of 0).
    pub fn refreshed(&self, discovered: Host) -> Host {
        let mut host = discovered;
        let (old, new) = (&self.description, &mut host.description);
        if !old.host_cpid.is_empty() {
            new.host_cpid.clone_from(&old.host_cpid);
        }
        if new.ip_addr.is_empty() {
            new.ip_addr.clone_from(&old.ip_addr);
        }
        if new.timezone == 0 {
            new.timezone = old.timezone;
        }
        if new.p_calculated == 0.0 && old.p_calculated > 0.0 {
            host.p_fpops = self.p_fpops;
            let new = &mut host.description;
            // The memory bandwidth is not benchmarked: discovery's figure stands.
            new.p_iops = old.p_iops;
            new.p_calculated = old.p_calculated;
        }
        host
    }

    /// Whether the CPU benchmarks are due at `now`: never run, or run more than
    /// [`BENCHMARK_PERIOD`] ago (or in the future, by a clock set back).
    pub fn benchmark_due(&self, now: f64) -> bool {
        let age = now - self.description.p_calculated;
        self.description.p_calculated <= 0.0 || !(0.0..=BENCHMARK_PERIOD).contains(&age)
    }

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
    /// How long the client has run, and computing was allowed, in all (BOINC's
    /// `total_*` and `session_*` figures).
    #[serde(default)]
    pub totals: TimeTotals,
}

/// The durations BOINC's client keeps beside its fractions and reports to projects:
/// since statistics began, and in this session of the client. All 0 until a session
/// has started ([`TimeTotals::start_session`]).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct TimeTotals {
    /// When this session of the client started (`<client_start_time>`).
    pub client_start_time: f64,
    /// When the statistics began (`<total_start_time>`).
    pub total_start_time: f64,
    /// Seconds the client has run since then (`<total_duration>`).
    pub total_duration: f64,
    /// Seconds of them computing was allowed (`<total_active_duration>`).
    pub total_active_duration: f64,
    /// Seconds of them GPU computing was allowed (`<total_gpu_active_duration>`).
    pub total_gpu_active_duration: f64,
    /// How long the previous session ran (`<previous_uptime>`).
    pub previous_uptime: f64,
    /// Seconds of this session computing was allowed (`<session_active_duration>`).
    pub session_active_duration: f64,
    /// Seconds of this session GPU computing was allowed.
    pub session_gpu_active_duration: f64,
    /// When the figures were last brought up to date (the state file's `<now>`).
    pub last_update: f64,
}

impl TimeTotals {
    /// Whether a session has started: until then there is nothing to report.
    pub fn started(&self) -> bool {
        self.client_start_time > 0.0
    }

    /// Whether any figure is kept: a state file writes them back then, even one whose
    /// session start was lost, so that nothing read is dropped on the next save.
    pub fn recorded(&self) -> bool {
        *self != TimeTotals::default()
    }

    /// The client starts a session at `now`: the previous one's length becomes
    /// `previous_uptime`, and the statistics begin if they had not.
    pub fn start_session(&mut self, now: f64) {
        if self.started() && self.last_update >= self.client_start_time {
            self.previous_uptime = self.last_update - self.client_start_time;
        }
        self.client_start_time = now;
        self.session_active_duration = 0.0;
        self.session_gpu_active_duration = 0.0;
        if self.total_start_time <= 0.0 {
            self.total_start_time = now;
        }
        self.last_update = now;
    }

    /// `dt` seconds went by, with computing (`active`) and GPU computing (`gpu_active`)
    /// allowed or not. Nothing is counted before a session starts.
    pub fn advance(&mut self, dt: f64, active: bool, gpu_active: bool) {
        if !(self.started() && dt > 0.0 && dt.is_finite()) {
            return;
        }
        self.total_duration += dt;
        self.last_update += dt;
        if active {
            self.total_active_duration += dt;
            self.session_active_duration += dt;
        }
        if gpu_active {
            self.total_gpu_active_duration += dt;
            self.session_gpu_active_duration += dt;
        }
    }
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
            totals: TimeTotals::default(),
        }
    }
}

/// The chance of reporting a job late that [`TimeStats::late_report_margin`] accepts.
pub const LATE_REPORT_RISK: f64 = 0.05;

/// The mean length of an "up" spell of a time statistic whose `*_lambda` is unknown: one
/// day (the emulator draws its periods with the same default).
pub const DEFAULT_SPELL: f64 = 86_400.0;

/// Serde's default for a fraction that is 1 unless a file says otherwise.
fn one() -> f64 {
    1.0
}

impl TimeStats {
    /// How long before its deadline a job must finish so that the client can most
    /// likely still report it: for each of the two processes that must be up for the
    /// client to reach a server (the client running, the host connected), the time `m`
    /// beyond which a down spell rarely lasts, `P(down) × e^(−m / mean down spell) ≤`
    /// [`LATE_REPORT_RISK`] (down spells taken as exponential, as the emulator draws
    /// them), summed. 0 for a host that is always on and connected.
    pub fn late_report_margin(&self) -> f64 {
        let margin = |frac: f64, lambda: Option<f64>| {
            if !frac.is_finite() || frac >= 1.0 {
                return 0.0;
            }
            let up = frac.max(0.01);
            let down = 1.0 - up;
            if down <= LATE_REPORT_RISK {
                return 0.0;
            }
            let mean_up = lambda.filter(|l| l.is_finite() && *l > 0.0).unwrap_or(DEFAULT_SPELL);
            let mean_down = mean_up * down / up;
            mean_down * (down / LATE_REPORT_RISK).ln()
        };
        // A negative connected fraction means "unknown": taken as always connected.
        let connected = if self.connected_frac < 0.0 { 1.0 } else { self.connected_frac };
        margin(self.on_frac, self.on_lambda) + margin(connected, self.connected_lambda)
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_always_in_reach_needs_no_margin() {
        assert_eq!(TimeStats::default().late_report_margin(), 0.0);
        // Down 5% of the time or less: a down spell rarely matters.
        let rarely_off = TimeStats { on_frac: 0.96, ..TimeStats::default() };
        assert_eq!(rarely_off.late_report_margin(), 0.0);
    }

    #[test]
    fn the_margin_is_how_long_a_down_spell_rarely_outlasts() {
        // On 60% of the time in 4-hour spells: off spells average 4 × 0.4 / 0.6 hours; the
        // chance of being off and staying off m more is 0.4 × e^(−m / mean), 5% at the
        // margin.
        let stats =
            TimeStats { on_frac: 0.6, on_lambda: Some(4.0 * 3600.0), ..TimeStats::default() };
        let mean_off = 4.0 * 3600.0 * 0.4 / 0.6;
        let margin = stats.late_report_margin();
        assert!((margin - mean_off * (0.4f64 / LATE_REPORT_RISK).ln()).abs() < 1e-6);
        assert!((0.4 * (-margin / mean_off).exp() - LATE_REPORT_RISK).abs() < 1e-12);
        // Offline half of the time on top of that adds its own margin.
        let offline =
            TimeStats { connected_frac: 0.5, connected_lambda: Some(3.0 * 3600.0), ..stats };
        let mean_offline = 3.0 * 3600.0;
        let expected = margin + mean_offline * (0.5f64 / LATE_REPORT_RISK).ln();
        assert!((offline.late_report_margin() - expected).abs() < 1e-6);
        // An unknown connected fraction is no reason for a margin.
        let unknown = TimeStats { connected_frac: -1.0, ..TimeStats::default() };
        assert_eq!(unknown.late_report_margin(), 0.0);
    }

    #[test]
    fn a_refresh_keeps_identity_and_benchmarks_discovery_did_not_redo() {
        let mut old = Host { p_fpops: 4.2e9, ..Host::default() };
        old.description.host_cpid = "abc".into();
        old.description.p_calculated = 1000.0;
        old.description.p_iops = 9e9;
        old.description.timezone = 3600;
        let mut found = Host { p_ncpus: 16, p_fpops: 2e9, ..Host::default() };
        found.description.os_name = "Linux Debian".into();
        found.description.p_membw = 1e9;
        let host = old.refreshed(found.clone());
        assert_eq!(host.description.p_membw, 1e9, "never benchmarked: discovery's figure");
        assert_eq!((host.p_ncpus, host.p_fpops), (16, 4.2e9));
        assert_eq!(host.description.host_cpid, "abc");
        assert_eq!((host.description.p_iops, host.description.timezone), (9e9, 3600));
        assert_eq!(host.description.os_name, "Linux Debian");
        found.description.p_calculated = 2000.0;
        assert_eq!(old.refreshed(found).p_fpops, 2e9, "a new benchmark wins");
        assert!(!old.benchmark_due(1000.0 + BENCHMARK_PERIOD));
        assert!(old.benchmark_due(1001.0 + BENCHMARK_PERIOD));
        assert!(old.benchmark_due(999.0), "a clock set back");
        assert!(Host::default().benchmark_due(5.0));
    }
}
