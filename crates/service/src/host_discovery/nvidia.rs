//! NVIDIA GPUs through NVML (issue "The host service", GPU discovery): count, model,
//! memory, driver and CUDA versions, and peak flops ([`super::gpu_peak_flops`]), with
//! each GPU's CUDA properties from CUDA's driver library ([`super::cuda_driver`]). The
//! libraries are loaded when discovery runs, so a host without the driver (or without
//! `libnvidia-ml.so.1`) gets one clear log line and goes on with its CPUs.

#[cfg(feature = "nvml")]
use super::cuda_driver::{properties_at, read_cuda_devices};
#[cfg(feature = "nvml")]
use super::gpu_peak_flops::{
    UNKNOWN_GPU_PEAK_FLOPS, encode_cuda_version, encode_driver_version, multiprocessors, peak_flops,
};
use boinc_core::model::{Coprocessor, CudaProperties, ResourceType};
#[cfg(feature = "nvml")]
use nvml_wrapper::Nvml;
#[cfg(feature = "nvml")]
use nvml_wrapper::enum_wrappers::device::Clock;
#[cfg(feature = "nvml")]
use std::ffi::OsStr;

/// The most devices read: more than any machine has, so a driver reporting nonsense
/// cannot make discovery loop for long.
#[cfg(feature = "nvml")]
const MAX_DEVICES: u32 = 64;

/// One NVIDIA GPU as NVML describes it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NvidiaDevice {
    /// NVML's device index (cc_config's `<device_num>`).
    pub index: u32,
    /// The model (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// Device memory, bytes.
    pub memory_bytes: f64,
    /// Compute capability, major and minor.
    pub compute_capability: (i32, i32),
    /// CUDA cores of all multiprocessors; `None` where the driver does not say (before 520).
    pub cuda_cores: Option<u32>,
    /// Streaming multiprocessors, from the cores and the compute capability.
    pub multiprocessors: Option<u32>,
    /// Highest shader (SM) clock, MHz.
    pub max_clock_mhz: u32,
    /// Peak flops: two per core per clock; without a core count, an assumed figure
    /// (`UNKNOWN_GPU_PEAK_FLOPS`).
    pub peak_flops: f64,
    /// The CUDA properties a request carries: CUDA's driver's where it answered, else
    /// what NVML tells of them (memory, clock, multiprocessors; the rest 0).
    pub properties: CudaProperties,
}

/// What NVML found.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NvidiaGpus {
    /// The driver's version string (`535.86.05`).
    pub driver_version: String,
    /// The driver's version as a request carries it (`<drvVersion>`).
    pub driver_version_code: u32,
    /// The CUDA version the driver supports, as a request carries it (`<cudaVersion>`).
    pub cuda_version: u32,
    /// Every device, by index.
    pub devices: Vec<NvidiaDevice>,
    /// Why CUDA's driver library gave no properties, where it did not.
    pub cuda_driver_problem: Option<String>,
}

/// Why no NVIDIA GPU is used: said once in the log, and by `host-info`.
#[derive(Debug, Clone, PartialEq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum NvidiaDiscoveryError {
    /// libnvidia-ml could not be loaded: no NVIDIA driver installed.
    #[error(
        "no NVIDIA GPU: the NVIDIA management library (libnvidia-ml.so.1) could not be loaded ({0}); install the NVIDIA driver to compute on an NVIDIA GPU"
    )]
    NoLibrary(String),
    /// The library loaded but the driver did not answer.
    #[error(
        "no NVIDIA GPU: the NVIDIA driver did not answer ({0}); check `nvidia-smi` and that the client's user may open /dev/nvidia*"
    )]
    Driver(String),
    /// The driver has no devices.
    #[error("no NVIDIA GPU: the NVIDIA driver lists no device")]
    NoDevices,
    /// This build leaves NVML out (boinc-service without its `nvml` feature).
    #[error(
        "no NVIDIA GPU: this build of boinc-rs leaves NVIDIA discovery out; build it with the `nvml` feature to compute on an NVIDIA GPU"
    )]
    NotBuilt,
    /// The GPU detector gave no answer ([`super::gpu_probe`]).
    #[error("no NVIDIA GPU: {0}")]
    Detector(String),
}

/// Reads the NVIDIA GPUs: none in a build without NVML.
#[cfg(not(feature = "nvml"))]
pub fn discover_nvidia_gpus() -> Result<NvidiaGpus, NvidiaDiscoveryError> {
    Err(NvidiaDiscoveryError::NotBuilt)
}

/// Reads the NVIDIA GPUs through NVML.
#[cfg(feature = "nvml")]
pub fn discover_nvidia_gpus() -> Result<NvidiaGpus, NvidiaDiscoveryError> {
    let nvml = load_nvml()?;
    let driver = |e: nvml_wrapper::error::NvmlError| NvidiaDiscoveryError::Driver(e.to_string());
    let driver_version = nvml.sys_driver_version().map_err(driver)?;
    let cuda_version = nvml.sys_cuda_driver_version().map_or(0, encode_cuda_version);
    let count = nvml.device_count().map_err(driver)?.min(MAX_DEVICES);
    let (cuda_devices, cuda_driver_problem) = match read_cuda_devices() {
        Ok(devices) => (devices, None),
        Err(problem) => {
            tracing::info!(%problem, "NVIDIA GPUs described from NVML alone");
            (Vec::new(), Some(problem.to_string()))
        }
    };
    let mut devices = Vec::new();
    for index in 0..count {
        match read_device(&nvml, index, &cuda_devices) {
            Ok(device) => devices.push(device),
            Err(error) => {
                tracing::warn!(index, %error, "NVIDIA GPU skipped: NVML could not read it")
            }
        }
    }
    if devices.is_empty() {
        return Err(NvidiaDiscoveryError::NoDevices);
    }
    Ok(NvidiaGpus {
        driver_version_code: encode_driver_version(&driver_version),
        driver_version,
        cuda_version,
        devices,
        cuda_driver_problem,
    })
}

/// The library as the driver installs it (`.so.1`), else the development link.
#[cfg(feature = "nvml")]
fn load_nvml() -> Result<Nvml, NvidiaDiscoveryError> {
    let versioned = Nvml::builder().lib_path(OsStr::new("libnvidia-ml.so.1")).init();
    let error = match versioned.or_else(|_| Nvml::init()) {
        Ok(nvml) => return Ok(nvml),
        Err(error) => error,
    };
    use nvml_wrapper::error::NvmlError;
    Err(match error {
        NvmlError::LibloadingError(e) => NvidiaDiscoveryError::NoLibrary(e.to_string()),
        NvmlError::LibraryNotFound => NvidiaDiscoveryError::NoLibrary(error.to_string()),
        other => NvidiaDiscoveryError::Driver(other.to_string()),
    })
}

#[cfg(feature = "nvml")]
fn read_device(
    nvml: &Nvml,
    index: u32,
    cuda_devices: &[super::cuda_driver::CudaDevice],
) -> Result<NvidiaDevice, nvml_wrapper::error::NvmlError> {
    let device = nvml.device_by_index(index)?;
    let capability = device.cuda_compute_capability()?;
    let (major, minor) = (capability.major, capability.minor);
    let max_clock_mhz = device.max_clock_info(Clock::SM)?;
    let cuda_cores = device.num_cores().ok().filter(|&cores| cores > 0);
    let memory_bytes = device.memory_info().map_or(0.0, |memory| memory.total as f64);
    let multiprocessors = cuda_cores.map(|cores| multiprocessors(cores, major, minor));
    let pci = device.pci_info().ok().map(|pci| (pci.domain, pci.bus, pci.device));
    let properties =
        pci.and_then(|pci| properties_at(cuda_devices, pci)).unwrap_or(CudaProperties {
            total_global_mem: memory_bytes,
            clock_rate_khz: i32::try_from(max_clock_mhz.saturating_mul(1000)).unwrap_or(0),
            multiprocessor_count: multiprocessors.map_or(0, |m| i32::try_from(m).unwrap_or(0)),
            ..CudaProperties::default()
        });
    Ok(NvidiaDevice {
        index,
        name: device.name()?,
        memory_bytes,
        compute_capability: (major, minor),
        cuda_cores,
        multiprocessors,
        max_clock_mhz,
        peak_flops: cuda_cores
            .map_or(UNKNOWN_GPU_PEAK_FLOPS, |cores| peak_flops(cores, max_clock_mhz)),
        properties,
    })
}

/// The most capable device not in `excluded` (highest compute capability, then peak
/// flops, then memory): the one a request describes.
pub fn best_device<'g>(gpus: &'g NvidiaGpus, excluded: &[u32]) -> Option<&'g NvidiaDevice> {
    gpus.devices.iter().filter(|d| !excluded.contains(&d.index)).max_by(|a, b| {
        a.compute_capability
            .cmp(&b.compute_capability)
            .then(a.peak_flops.total_cmp(&b.peak_flops))
            .then(a.memory_bytes.total_cmp(&b.memory_bytes))
    })
}

/// How much less memory or speed a GPU may have and still count as the best one's
/// equal when the client uses only the most capable GPUs (cc_config's `use_all_gpus`
/// off): the real client's loose comparison.
const EQUAL_MEMORY_SHARE: f64 = 0.7;
const EQUAL_SPEED_SHARE: f64 = 0.9;

/// The NVIDIA coprocessor the client schedules on: the most capable device (highest
/// compute capability, then peak flops, then memory) and, unless `use_all_gpus`, only
/// the devices equal to it; every device with `use_all_gpus`. Devices in `excluded`
/// (cc_config's `<ignore_nvidia_dev>`) are left out. `None` when no device is left.
pub fn usable_coprocessor(
    gpus: &NvidiaGpus,
    use_all_gpus: bool,
    excluded: &[u32],
) -> Option<Coprocessor> {
    let candidates: Vec<&NvidiaDevice> =
        gpus.devices.iter().filter(|d| !excluded.contains(&d.index)).collect();
    let best = best_device(gpus, excluded)?;
    let equal = |d: &&NvidiaDevice| {
        d.compute_capability == best.compute_capability
            && d.memory_bytes >= best.memory_bytes * EQUAL_MEMORY_SHARE
            && d.peak_flops >= best.peak_flops * EQUAL_SPEED_SHARE
    };
    let count = candidates.iter().filter(|d| use_all_gpus || equal(d)).count();
    Some(Coprocessor {
        resource: ResourceType::Nvidia,
        name: best.name.clone(),
        count: u32::try_from(count).unwrap_or(u32::MAX),
        peak_flops: best.peak_flops,
        available_ram: best.memory_bytes,
    })
}

#[cfg(all(test, feature = "nvml"))]
mod tests {
    use super::*;

    fn device(
        index: u32,
        name: &str,
        capability: (i32, i32),
        cores: u32,
        memory_gb: f64,
    ) -> NvidiaDevice {
        NvidiaDevice {
            index,
            name: name.into(),
            memory_bytes: memory_gb * 1e9,
            compute_capability: capability,
            cuda_cores: Some(cores),
            multiprocessors: Some(multiprocessors(cores, capability.0, capability.1)),
            max_clock_mhz: 1500,
            peak_flops: peak_flops(cores, 1500),
            properties: CudaProperties::default(),
        }
    }

    fn gpus(devices: Vec<NvidiaDevice>) -> NvidiaGpus {
        NvidiaGpus {
            driver_version: "535.86.05".into(),
            driver_version_code: 53586,
            cuda_version: 12020,
            devices,
            cuda_driver_problem: None,
        }
    }

    #[test]
    fn only_the_most_capable_gpus_unless_all_are_wanted() {
        let found = gpus(vec![
            device(0, "old", (6, 1), 2560, 8.0),
            device(1, "new", (8, 6), 8704, 10.0),
            device(2, "new", (8, 6), 8704, 10.0),
        ]);
        let best = usable_coprocessor(&found, false, &[]).expect("a GPU");
        assert_eq!((best.name.as_str(), best.count), ("new", 2));
        assert_eq!(best.peak_flops, peak_flops(8704, 1500));
        assert_eq!(usable_coprocessor(&found, true, &[]).expect("all").count, 3);
        let one = usable_coprocessor(&found, false, &[2]).expect("one left");
        assert_eq!(one.count, 1);
        assert_eq!(usable_coprocessor(&found, false, &[0, 1, 2]), None, "all excluded");
    }

    #[test]
    fn this_machine_without_a_driver_says_why() {
        // On a host with an NVIDIA driver this finds its GPUs instead; both are fine,
        // but an error must name what to do.
        match discover_nvidia_gpus() {
            Ok(found) => assert!(!found.devices.is_empty()),
            Err(error) => assert!(error.to_string().starts_with("no NVIDIA GPU"), "{error}"),
        }
    }
}
