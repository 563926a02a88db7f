//! The live client's [`HostDiscovery`]: the machine ([`super::system_description`]),
//! its GPUs (NVML's and OpenCL's, found by [`super::gpu_probe`]), the CPU benchmarks ([`super::cpu_benchmark`]),
//! and once a second whether the user and power let it compute
//! ([`super::host_conditions`], the user's last input from [`super::user_activity`] and
//! other programs' CPU use from [`super::other_cpu`], judged by the core's `host_view`
//! under the preferences).

use super::cpu_benchmark::{BenchmarkResult, run_cpu_benchmarks};
use super::gpu_probe::{GpuDetector, GpuFindings, find_gpus};
use super::host_conditions::observe_host_conditions;
use super::nvidia::{NvidiaDiscoveryError, NvidiaGpus, best_device, usable_coprocessor};
use super::opencl::{OpenclDiscoveryError, OpenclPlatform};
use super::other_cpu::OtherCpuMeter;
use super::system_description::describe_system;
use super::user_activity::{UserActivity, UserActivitySources};
use super::virtualization::{Virtualization, detect_virtualization};
use boinc_core::control::{HostView, SuspendReason, host_view};
use boinc_core::model::{CcConfig, Coprocessor, Host, OpenclDevice, Prefs, ResourceType};
use boinc_runtime::effects::{Clock, HostDiscovery, HostDiscoveryError};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

/// How long each CPU benchmark runs by default (the real client's take about ten seconds
/// in all; two seconds each already steadies the figure within a few percent).
pub const DEFAULT_BENCHMARK_DURATION: Duration = Duration::from_secs(2);

/// What discovery follows from the user's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct DiscoverySettings {
    /// The preferences that say when the host may compute.
    pub prefs: Prefs,
    /// Look for no GPU (cc_config's `<no_gpus>`).
    pub no_gpus: bool,
    /// Use every NVIDIA GPU, not only the most capable ones (`<use_all_gpus>`).
    pub use_all_gpus: bool,
    /// NVIDIA devices never used (`<ignore_nvidia_dev>`).
    pub ignored_nvidia_devices: Vec<u32>,
    /// AMD devices never used (`<ignore_ati_dev>`).
    pub ignored_ati_devices: Vec<u32>,
    /// Intel GPU devices never used (`<ignore_intel_dev>`).
    pub ignored_intel_devices: Vec<u32>,
    /// No task computes for this many seconds after the client starts
    /// (`<start_delay>`).
    pub start_delay: f64,
    /// Programs whose running suspends computing (`<exclusive_app>`).
    pub exclusive_apps: Vec<String>,
    /// Programs whose running suspends GPU computing (`<exclusive_gpu_app>`).
    pub exclusive_gpu_apps: Vec<String>,
    /// How long each CPU benchmark runs.
    pub benchmark_duration: Duration,
}

impl Default for DiscoverySettings {
    fn default() -> Self {
        DiscoverySettings {
            prefs: Prefs::default(),
            no_gpus: false,
            use_all_gpus: false,
            ignored_nvidia_devices: Vec::new(),
            ignored_ati_devices: Vec::new(),
            ignored_intel_devices: Vec::new(),
            start_delay: 0.0,
            exclusive_apps: Vec::new(),
            exclusive_gpu_apps: Vec::new(),
            benchmark_duration: DEFAULT_BENCHMARK_DURATION,
        }
    }
}

impl DiscoverySettings {
    /// The settings that follow from the client's preferences and cc_config.xml (the
    /// reloaded configuration, `live::configuration_files`).
    pub fn follow(prefs: &Prefs, config: &CcConfig) -> Self {
        DiscoverySettings {
            prefs: prefs.clone(),
            no_gpus: config.no_gpus,
            use_all_gpus: config.use_all_gpus,
            ignored_nvidia_devices: config.ignore_nvidia_dev.clone(),
            ignored_ati_devices: config.ignore_ati_dev.clone(),
            ignored_intel_devices: config.ignore_intel_dev.clone(),
            start_delay: config.start_delay,
            exclusive_apps: config.exclusive_apps.clone(),
            exclusive_gpu_apps: config.exclusive_gpu_apps.clone(),
            benchmark_duration: DEFAULT_BENCHMARK_DURATION,
        }
    }
}

/// Everything one discovery found: the host as the state keeps it and the details
/// behind it (`boinc-rs host-info` prints them).
#[derive(Debug, Clone, PartialEq)]
pub struct DiscoveredHost {
    /// The host, GPUs included, as the client schedules on it.
    pub host: Host,
    /// The NVIDIA GPUs, or why there are none.
    pub nvidia: Result<NvidiaGpus, NvidiaDiscoveryError>,
    /// The benchmark figures, when the benchmarks ran.
    pub benchmark: Option<BenchmarkResult>,
    /// What OpenCL found: every platform and device, or why none.
    pub opencl: Result<Vec<OpenclPlatform>, OpenclDiscoveryError>,
}

/// Host discovery on the machine the client runs on.
pub struct LiveHostDiscovery {
    data_dir: PathBuf,
    clock: Arc<dyn Clock>,
    /// When the client started (the discovery is made at its start): `<start_delay>`
    /// counts from here.
    started: f64,
    settings: RwLock<DiscoverySettings>,
    /// Other programs' CPU use, measured while `suspend_cpu_usage` asks for it.
    other_cpu: Mutex<Option<OtherCpuMeter>>,
    /// Where the user's input is looked for.
    activity_sources: UserActivitySources,
    /// The user's activity, watched from the first look on.
    activity: Mutex<Option<UserActivity>>,
    /// The program GPUs are looked for with; `None`: in this process.
    gpu_detector: Option<GpuDetector>,
}

impl LiveHostDiscovery {
    /// Discovery for a client whose data directory is `data_dir`.
    pub fn new(
        data_dir: impl Into<PathBuf>,
        clock: Arc<dyn Clock>,
        settings: DiscoverySettings,
    ) -> Self {
        LiveHostDiscovery {
            data_dir: data_dir.into(),
            started: clock.now(),
            clock,
            settings: RwLock::new(settings),
            other_cpu: Mutex::new(None),
            activity_sources: UserActivitySources::default(),
            activity: Mutex::new(None),
            gpu_detector: None,
        }
    }

    /// The user's input is looked for in `sources` only (every source of the host's by
    /// default).
    pub fn with_user_activity_sources(mut self, sources: UserActivitySources) -> Self {
        self.activity_sources = sources;
        self
    }

    /// GPUs are looked for by `detector`, a process of its own, so that a driver that
    /// crashes or hangs cannot take the client with it ([`super::gpu_probe`]).
    pub fn with_gpu_detector(mut self, detector: GpuDetector) -> Self {
        self.gpu_detector = Some(detector);
        self
    }

    /// Follows a new configuration (a reload of cc_config.xml or the preferences); the
    /// next availability check and description use it.
    pub fn set_settings(&self, settings: DiscoverySettings) {
        *self.settings.write().unwrap_or_else(PoisonError::into_inner) = settings;
    }

    fn settings(&self) -> DiscoverySettings {
        self.settings.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Describes the host with every detail; runs the CPU benchmarks (seconds, on every
    /// CPU) when `run_benchmarks`.
    pub fn discover(&self, run_benchmarks: bool) -> Result<DiscoveredHost, HostDiscoveryError> {
        let settings = self.settings();
        // The tools' versions and the OpenCL drivers take a second or more to answer
        // (a driver initialises its compiler): they are asked on a thread of their own
        // while the machine is described and benchmarked, so the client's start waits
        // for the longer of the two, not for both.
        let no_gpus = settings.no_gpus;
        let detector = self.gpu_detector.as_ref();
        std::thread::scope(|scope| {
            let slow = scope.spawn(move || {
                let gpus = if no_gpus {
                    tracing::info!("GPUs not looked for: cc_config.xml says no_gpus");
                    GpuFindings {
                        nvidia: Err(NvidiaDiscoveryError::NoDevices),
                        opencl: Err(OpenclDiscoveryError::NoPlatforms),
                    }
                } else {
                    find_gpus(detector)
                };
                (detect_virtualization(), gpus)
            });
            let described = self.discover_here(&settings, run_benchmarks);
            let (tools, gpus) =
                slow.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            described.map(|found| found.with(tools, gpus, &settings))
        })
    }

    /// What [`LiveHostDiscovery::discover`] finds on its own thread: the machine and the
    /// benchmarks.
    fn discover_here(
        &self,
        settings: &DiscoverySettings,
        run_benchmarks: bool,
    ) -> Result<DiscoveredHost, HostDiscoveryError> {
        let mut host = describe_system(&self.data_dir)?;
        let benchmark =
            run_benchmarks.then(|| run_cpu_benchmarks(host.p_ncpus, settings.benchmark_duration));
        if let Some(figures) = benchmark {
            host.p_fpops = figures.fpops;
            host.description.p_iops = figures.iops;
            host.description.p_calculated = self.clock.now();
        }
        let nvidia = Err(NvidiaDiscoveryError::NoDevices);
        let opencl = Err(OpenclDiscoveryError::NoPlatforms);
        Ok(DiscoveredHost { host, nvidia, opencl, benchmark })
    }
}

impl DiscoveredHost {
    /// The host with the tools' versions and the GPUs found.
    fn with(
        mut self,
        tools: Virtualization,
        gpus: GpuFindings,
        settings: &DiscoverySettings,
    ) -> DiscoveredHost {
        let description = &mut self.host.description;
        description.virtualbox_version = tools.virtualbox_version;
        description.docker_version = tools.docker_version;
        description.docker_type = tools.docker_type;
        self.take_nvidia(gpus.nvidia, settings);
        self.take_opencl(gpus.opencl, settings);
        self
    }

    /// NVML's GPUs become the host's NVIDIA coprocessor.
    fn take_nvidia(
        &mut self,
        nvidia: Result<NvidiaGpus, NvidiaDiscoveryError>,
        settings: &DiscoverySettings,
    ) {
        let host = &mut self.host;
        match &nvidia {
            Ok(gpus) if !settings.no_gpus => {
                host.coprocessors[ResourceType::Nvidia] = usable_coprocessor(
                    gpus,
                    settings.use_all_gpus,
                    &settings.ignored_nvidia_devices,
                );
                host.description.nvidia_driver_version = gpus.driver_version_code;
                host.description.cuda_version = gpus.cuda_version;
                // A request describes the GPU the client schedules on.
                if let Some(best) = best_device(gpus, &settings.ignored_nvidia_devices) {
                    host.description.nvidia_compute_capability = best.compute_capability;
                    host.description.nvidia_properties = Some(best.properties);
                }
                for device in &gpus.devices {
                    tracing::info!(
                        index = device.index,
                        model = %device.name,
                        memory_bytes = device.memory_bytes,
                        peak_flops = device.peak_flops,
                        driver = %gpus.driver_version,
                        "NVIDIA GPU found"
                    );
                }
            }
            Ok(_) => {}
            Err(reason) => tracing::info!("{reason}; computing on the CPUs only"),
        }
        self.nvidia = nvidia;
    }

    /// What OpenCL found: AMD's and Intel's GPUs, and every GPU's OpenCL description.
    fn take_opencl(
        &mut self,
        opencl: Result<Vec<OpenclPlatform>, OpenclDiscoveryError>,
        settings: &DiscoverySettings,
    ) {
        match &opencl {
            Ok(platforms) => {
                let gpus = OpenclPlatform::gpus(platforms);
                take_opencl_gpus(&mut self.host, &gpus, settings);
                for found in platforms.iter().flat_map(|p| &p.devices) {
                    tracing::info!(
                        device = %found.device.name,
                        vendor = %found.device.vendor,
                        version = %found.device.opencl_device_version,
                        set_aside = found.set_aside,
                        "OpenCL device found"
                    );
                }
                self.host.description.opencl_gpus = gpus;
            }
            Err(reason) => tracing::info!("{reason}"),
        }
        self.opencl = opencl;
    }
}

/// The AMD and Intel GPUs OpenCL found become the host's coprocessors of those types
/// (BOINC finds them only through OpenCL); NVIDIA's are NVML's, which knows more. The
/// devices cc_config says to ignore (`<ignore_ati_dev>`, `<ignore_intel_dev>`) are left
/// out.
fn take_opencl_gpus(host: &mut Host, gpus: &[OpenclDevice], settings: &DiscoverySettings) {
    for resource in [ResourceType::Amd, ResourceType::Intel] {
        let ignored = match resource {
            ResourceType::Amd => &settings.ignored_ati_devices,
            _ => &settings.ignored_intel_devices,
        };
        let of_type: Vec<&OpenclDevice> = gpus
            .iter()
            .filter(|d| d.resource == resource && !ignored.contains(&d.device_num))
            .collect();
        let Some(first) = of_type.first() else { continue };
        host.coprocessors[resource] = Some(Coprocessor {
            resource,
            name: first.name.clone(),
            count: of_type.len() as u32,
            peak_flops: first.peak_flops,
            available_ram: first.global_mem_size as f64,
        });
    }
}

impl LiveHostDiscovery {
    /// Seconds since the user's last input, from every source watched.
    fn user_idle_seconds(&self) -> Option<f64> {
        let mut activity = self.activity.lock().unwrap_or_else(PoisonError::into_inner);
        activity
            .get_or_insert_with(|| UserActivity::new(self.activity_sources.clone()))
            .idle_seconds(std::time::Instant::now())
    }

    /// Other programs' CPU use, when a preference judges it (the meter starts with the
    /// preference, and stops with it: reading every process costs a little each second).
    fn other_cpu_percent(&self, prefs: &Prefs) -> Option<f64> {
        let mut meter = self.other_cpu.lock().unwrap_or_else(PoisonError::into_inner);
        if prefs.reported.suspend_cpu_usage <= 0.0 {
            *meter = None;
            return None;
        }
        meter.get_or_insert_with(OtherCpuMeter::here).measure(std::time::Instant::now())
    }
}

/// `view` while the client is in its `<start_delay>` (`since_start` seconds after its
/// start): computing suspended for the initial delay, as BOINC names it before any
/// other reason, the network as it was.
fn initial_delay(mut view: HostView, since_start: f64, start_delay: f64) -> HostView {
    if since_start < start_delay {
        view.suspend.cpu = Some(SuspendReason::InitialDelay);
        view.active = false;
        view.gpu_active = false;
    }
    view
}

impl HostDiscovery for LiveHostDiscovery {
    fn availability(&self) -> HostView {
        let settings = self.settings();
        let mut conditions =
            observe_host_conditions(&settings.exclusive_apps, &settings.exclusive_gpu_apps);
        conditions.other_cpu_percent = self.other_cpu_percent(&settings.prefs);
        conditions.user_idle_seconds = self.user_idle_seconds();
        let view = host_view(&conditions, &settings.prefs);
        initial_delay(view, self.clock.now() - self.started, settings.start_delay)
    }

    fn describe(&self, run_benchmarks: bool) -> Result<Host, HostDiscoveryError> {
        self.discover(run_benchmarks).map(|found| found.host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use boinc_runtime::effects::SystemClock;

    #[test]
    fn this_host_is_described_with_its_benchmarks() {
        let dir = tempfile::tempdir().expect("temp dir");
        let settings = DiscoverySettings {
            benchmark_duration: Duration::from_millis(20),
            ..Default::default()
        };
        let discovery = LiveHostDiscovery::new(dir.path(), Arc::new(SystemClock), settings);
        let found = discovery.discover(true).expect("described");
        let figures = found.benchmark.expect("benchmarks ran");
        assert_eq!(found.host.p_fpops, figures.fpops);
        assert_eq!(found.host.description.p_iops, figures.iops);
        assert!(found.host.description.p_calculated > 1.7e9, "stamped with the clock");
        // No driver on the build machines: no NVIDIA coprocessor, and the reason why.
        match &found.nvidia {
            Ok(gpus) => assert!(
                found.host.coprocessors[ResourceType::Nvidia].is_some() || gpus.devices.is_empty()
            ),
            Err(_) => assert!(found.host.coprocessors[ResourceType::Nvidia].is_none()),
        }
        let skipped = discovery.describe(false).expect("described");
        assert_eq!(skipped.description.p_calculated, 0.0, "no benchmark: the old figures stay");
    }

    #[test]
    fn no_gpus_looks_for_none() {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = CcConfig { no_gpus: true, ignore_nvidia_dev: vec![1], ..CcConfig::default() };
        let settings = DiscoverySettings::follow(&Prefs::default(), &config);
        assert_eq!(settings.ignored_nvidia_devices, vec![1]);
        let discovery = LiveHostDiscovery::new(dir.path(), Arc::new(SystemClock), settings);
        let found = discovery.discover(false).expect("described");
        assert!(found.nvidia.is_err() && found.host.coprocessors[ResourceType::Nvidia].is_none());
    }

    #[test]
    fn availability_follows_the_preferences() {
        let dir = tempfile::tempdir().expect("temp dir");
        // The input devices' times only, as observe_host_conditions reads them, and no
        // check of other programs' CPU use (the build machine is busy).
        let sources = UserActivitySources {
            devices: true,
            x_displays: Some(Vec::new()),
            interrupts: None,
            logind: false,
        };
        let discovery =
            LiveHostDiscovery::new(dir.path(), Arc::new(SystemClock), DiscoverySettings::default())
                .with_user_activity_sources(sources);
        assert!(discovery.availability().on);
        // Computing only while idle, with an idle time longer than any uptime: a user
        // with a terminal is busy; a host without one (a container) is always idle.
        let mut prefs =
            Prefs { run_if_user_active: false, idle_time_to_run: 1e9, ..Prefs::default() };
        prefs.reported.suspend_cpu_usage = 0.0;
        discovery.set_settings(DiscoverySettings { prefs, ..Default::default() });
        let conditions = observe_host_conditions(&[], &[]);
        assert_eq!(discovery.availability().active, conditions.user_idle_seconds.is_none());
        // An exclusive app that runs (this test's own program) suspends computing.
        let me = std::env::current_exe().expect("test binary");
        let name = me.file_name().expect("name").to_string_lossy().into_owned();
        let mut quiet = Prefs::default();
        quiet.reported.suspend_cpu_usage = 0.0;
        let settings = DiscoverySettings {
            prefs: quiet.clone(),
            exclusive_apps: vec![name.clone()],
            ..Default::default()
        };
        discovery.set_settings(settings);
        let view = discovery.availability();
        assert_eq!(view.suspend.cpu, Some(boinc_core::control::SuspendReason::ExclusiveAppRunning));
        assert!(!view.active);
        // An exclusive GPU app suspends GPU computing only.
        let settings = DiscoverySettings {
            prefs: quiet,
            exclusive_gpu_apps: vec![name],
            ..Default::default()
        };
        discovery.set_settings(settings);
        let view = discovery.availability();
        assert_eq!(view.suspend.gpu, Some(boinc_core::control::SuspendReason::ExclusiveAppRunning));
        assert!(view.active && !view.gpu_active);
    }

    #[test]
    fn other_programs_cpu_use_suspends_computing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut prefs = Prefs::default();
        prefs.reported.suspend_cpu_usage = 1.0;
        let settings = DiscoverySettings { prefs, ..Default::default() };
        let discovery = LiveHostDiscovery::new(dir.path(), Arc::new(SystemClock), settings);
        assert!(discovery.availability().active, "nothing measured yet");
        // A spinning program the client did not start, for four seconds.
        let spinner = std::process::Command::new("sh")
            .args(["-c", "timeout 4 sh -c 'while :; do :; done' &"])
            .status()
            .expect("sh");
        assert!(spinner.success());
        std::thread::sleep(Duration::from_millis(1500));
        let view = discovery.availability();
        assert_eq!(view.suspend.cpu, Some(boinc_core::control::SuspendReason::CpuUsage));
        // 0 turns the check off.
        let mut off = Prefs::default();
        off.reported.suspend_cpu_usage = 0.0;
        discovery.set_settings(DiscoverySettings { prefs: off, ..Default::default() });
        assert!(discovery.availability().active);
    }

    #[test]
    fn no_task_computes_during_the_start_delay() {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = CcConfig { start_delay: 3600.0, ..CcConfig::default() };
        let settings = DiscoverySettings::follow(&Prefs::default(), &config);
        let discovery = LiveHostDiscovery::new(dir.path(), Arc::new(SystemClock), settings);
        let view = discovery.availability();
        assert_eq!(view.suspend.cpu, Some(SuspendReason::InitialDelay));
        assert!(!view.active && !view.gpu_active);
        assert_eq!(view.suspend.network, None, "the network is not delayed");
        // Once the delay is over (here: a delay of 0), computing may start.
        discovery.set_settings(DiscoverySettings::follow(&Prefs::default(), &CcConfig::default()));
        assert_ne!(discovery.availability().suspend.cpu, Some(SuspendReason::InitialDelay));
        let view = initial_delay(HostView { active: true, ..discovery.availability() }, 31.0, 30.0);
        assert!(view.active, "31 s after a start delay of 30 s");
    }

    #[test]
    fn ignored_amd_and_intel_devices_are_not_used() {
        let device = |resource, device_num| OpenclDevice {
            resource,
            device_num,
            name: format!("gpu {device_num}"),
            ..OpenclDevice::default()
        };
        let gpus = [
            device(ResourceType::Amd, 0),
            device(ResourceType::Amd, 1),
            device(ResourceType::Intel, 0),
        ];
        let config =
            CcConfig { ignore_ati_dev: vec![0], ignore_intel_dev: vec![0], ..CcConfig::default() };
        let mut host = Host::default();
        take_opencl_gpus(&mut host, &gpus, &DiscoverySettings::follow(&Prefs::default(), &config));
        let amd = host.coprocessors[ResourceType::Amd].as_ref().expect("one AMD GPU left");
        assert_eq!((amd.count, amd.name.as_str()), (1, "gpu 1"));
        assert!(host.coprocessors[ResourceType::Intel].is_none(), "the only Intel GPU ignored");
        let mut host = Host::default();
        take_opencl_gpus(&mut host, &gpus, &DiscoverySettings::default());
        assert_eq!(host.coprocessors[ResourceType::Amd].as_ref().map(|c| c.count), Some(2));
    }
}
