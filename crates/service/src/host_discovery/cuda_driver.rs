//! NVIDIA GPUs' CUDA properties through CUDA's driver library (issue "What a real
//! project server sees", GPUs): memory, clock, multiprocessors, block and grid limits,
//! the figures a request's `<coproc_cuda>` carries and projects' plan classes read.
//! NVML ([`super::nvidia`]) finds the GPUs and their versions; this library tells what
//! NVML does not. Devices are matched to NVML's by PCI address, since the two number
//! them differently (CUDA puts the fastest first).
//!
//! `libcuda.so.1` ships with the NVIDIA driver and is loaded when discovery runs: a host
//! without it keeps NVML's figures. Every count read is bounded, and a device that
//! answers an error costs that device only.

use boinc_core::model::CudaProperties;
use libloading::Library;
use std::ffi::{c_char, c_int, c_uint};

/// The most devices read.
const MAX_DEVICES: c_int = 64;
/// A device name's buffer (CUDA's names are well under this).
const NAME_BYTES: usize = 256;

type CuResult = c_int;
const CUDA_SUCCESS: CuResult = 0;

/// `CUdevice_attribute` values (CUDA driver API).
const MAX_THREADS_PER_BLOCK: c_int = 1;
const MAX_BLOCK_DIM: [c_int; 3] = [2, 3, 4];
const MAX_GRID_DIM: [c_int; 3] = [5, 6, 7];
const MAX_SHARED_MEMORY_PER_BLOCK: c_int = 8;
const TOTAL_CONSTANT_MEMORY: c_int = 9;
const WARP_SIZE: c_int = 10;
const MAX_PITCH: c_int = 11;
const MAX_REGISTERS_PER_BLOCK: c_int = 12;
const CLOCK_RATE: c_int = 13;
const TEXTURE_ALIGNMENT: c_int = 14;
const GPU_OVERLAP: c_int = 15;
const MULTIPROCESSOR_COUNT: c_int = 16;
const PCI_BUS_ID: c_int = 33;
const PCI_DEVICE_ID: c_int = 34;
const PCI_DOMAIN_ID: c_int = 50;
const COMPUTE_CAPABILITY_MAJOR: c_int = 75;
const COMPUTE_CAPABILITY_MINOR: c_int = 76;

type CuInit = unsafe extern "C" fn(c_uint) -> CuResult;
type CuDeviceGetCount = unsafe extern "C" fn(*mut c_int) -> CuResult;
type CuDeviceGet = unsafe extern "C" fn(*mut c_int, c_int) -> CuResult;
type CuDeviceGetName = unsafe extern "C" fn(*mut c_char, c_int, c_int) -> CuResult;
type CuDeviceTotalMem = unsafe extern "C" fn(*mut usize, c_int) -> CuResult;
type CuDeviceGetAttribute = unsafe extern "C" fn(*mut c_int, c_int, c_int) -> CuResult;

/// A device's PCI address (domain, bus, device), as NVML also gives it.
pub type PciAddress = (u32, u32, u32);

/// One GPU as CUDA's driver describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct CudaDevice {
    /// CUDA's device ordinal.
    pub ordinal: i32,
    /// The model.
    pub name: String,
    /// Where it sits on the PCI bus.
    pub pci: PciAddress,
    /// Compute capability, major and minor.
    pub compute_capability: (i32, i32),
    /// The properties a request carries.
    pub properties: CudaProperties,
}

/// Why CUDA's driver told nothing (NVML's figures are used then).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CudaDriverError {
    /// libcuda could not be loaded.
    #[error(
        "the CUDA driver library (libcuda.so.1) could not be loaded ({0}); the NVIDIA driver's CUDA part is missing: reinstall the driver for the GPUs' full description"
    )]
    NoLibrary(String),
    /// The library answered an error.
    #[error("the CUDA driver library failed: {call} returned CUDA error {code}")]
    Call {
        /// The call that failed.
        call: &'static str,
        /// CUDA's error code.
        code: CuResult,
    },
}

/// Every GPU CUDA's driver lists, with its properties.
pub fn read_cuda_devices() -> Result<Vec<CudaDevice>, CudaDriverError> {
    // SAFETY: loading the driver's own library runs its initialisers, which is what
    // every CUDA program does; nothing else of ours runs in them.
    let library = unsafe { Library::new("libcuda.so.1") }
        .or_else(|_| unsafe { Library::new("libcuda.so") })
        .map_err(|e| CudaDriverError::NoLibrary(e.to_string()))?;
    let driver = Driver::bind(&library)?;
    // SAFETY: cuInit takes flags (0) and must come first.
    let code = unsafe { (driver.init)(0) };
    check("cuInit", code)?;
    let mut count: c_int = 0;
    // SAFETY: a valid out pointer.
    check("cuDeviceGetCount", unsafe { (driver.device_get_count)(&mut count) })?;
    let mut devices = Vec::new();
    for ordinal in 0..count.clamp(0, MAX_DEVICES) {
        match read_device(&driver, ordinal) {
            Ok(device) => devices.push(device),
            Err(error) => tracing::warn!(ordinal, %error, "CUDA device skipped"),
        }
    }
    Ok(devices)
}

/// The driver's entry points, resolved once per discovery.
struct Driver<'l> {
    init: libloading::Symbol<'l, CuInit>,
    device_get_count: libloading::Symbol<'l, CuDeviceGetCount>,
    device_get: libloading::Symbol<'l, CuDeviceGet>,
    device_get_name: libloading::Symbol<'l, CuDeviceGetName>,
    device_total_mem: libloading::Symbol<'l, CuDeviceTotalMem>,
    device_get_attribute: libloading::Symbol<'l, CuDeviceGetAttribute>,
}

impl<'l> Driver<'l> {
    fn bind(library: &'l Library) -> Result<Self, CudaDriverError> {
        let missing = |e: libloading::Error| CudaDriverError::NoLibrary(e.to_string());
        // SAFETY: each symbol is given the signature of CUDA's driver API.
        unsafe {
            Ok(Driver {
                init: library.get(b"cuInit\0").map_err(missing)?,
                device_get_count: library.get(b"cuDeviceGetCount\0").map_err(missing)?,
                device_get: library.get(b"cuDeviceGet\0").map_err(missing)?,
                device_get_name: library.get(b"cuDeviceGetName\0").map_err(missing)?,
                device_total_mem: library.get(b"cuDeviceTotalMem_v2\0").map_err(missing)?,
                device_get_attribute: library.get(b"cuDeviceGetAttribute\0").map_err(missing)?,
            })
        }
    }
}

fn check(call: &'static str, code: CuResult) -> Result<(), CudaDriverError> {
    if code == CUDA_SUCCESS { Ok(()) } else { Err(CudaDriverError::Call { call, code }) }
}

fn read_device(driver: &Driver<'_>, ordinal: c_int) -> Result<CudaDevice, CudaDriverError> {
    let mut device: c_int = 0;
    // SAFETY: a valid out pointer and an ordinal below the driver's count.
    check("cuDeviceGet", unsafe { (driver.device_get)(&mut device, ordinal) })?;
    let attribute = |attribute: c_int| -> Result<c_int, CudaDriverError> {
        let mut value: c_int = 0;
        // SAFETY: a valid out pointer and a device handle from cuDeviceGet.
        let code = unsafe { (driver.device_get_attribute)(&mut value, attribute, device) };
        check("cuDeviceGetAttribute", code).map(|()| value)
    };
    let mut name = [0 as c_char; NAME_BYTES];
    // SAFETY: the buffer holds NAME_BYTES bytes and the driver is told so.
    let code = unsafe { (driver.device_get_name)(name.as_mut_ptr(), NAME_BYTES as c_int, device) };
    check("cuDeviceGetName", code)?;
    let name: Vec<u8> = name.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    let mut memory: usize = 0;
    // SAFETY: a valid out pointer and a device handle.
    check("cuDeviceTotalMem", unsafe { (driver.device_total_mem)(&mut memory, device) })?;
    let unsigned = |value: c_int| u32::try_from(value).unwrap_or(0);
    let bytes = |value: c_int| f64::from(value.max(0));
    let triple = |ids: [c_int; 3]| -> Result<[i32; 3], CudaDriverError> {
        Ok([attribute(ids[0])?, attribute(ids[1])?, attribute(ids[2])?])
    };
    Ok(CudaDevice {
        ordinal,
        name: String::from_utf8_lossy(&name).trim().to_string(),
        pci: (
            unsigned(attribute(PCI_DOMAIN_ID)?),
            unsigned(attribute(PCI_BUS_ID)?),
            unsigned(attribute(PCI_DEVICE_ID)?),
        ),
        compute_capability: (
            attribute(COMPUTE_CAPABILITY_MAJOR)?,
            attribute(COMPUTE_CAPABILITY_MINOR)?,
        ),
        properties: CudaProperties {
            total_global_mem: memory as f64,
            shared_mem_per_block: bytes(attribute(MAX_SHARED_MEMORY_PER_BLOCK)?),
            regs_per_block: attribute(MAX_REGISTERS_PER_BLOCK)?,
            warp_size: attribute(WARP_SIZE)?,
            mem_pitch: bytes(attribute(MAX_PITCH)?),
            max_threads_per_block: attribute(MAX_THREADS_PER_BLOCK)?,
            max_threads_dim: triple(MAX_BLOCK_DIM)?,
            max_grid_size: triple(MAX_GRID_DIM)?,
            clock_rate_khz: attribute(CLOCK_RATE)?,
            total_const_mem: bytes(attribute(TOTAL_CONSTANT_MEMORY)?),
            texture_alignment: bytes(attribute(TEXTURE_ALIGNMENT)?),
            device_overlap: attribute(GPU_OVERLAP)? != 0,
            multiprocessor_count: attribute(MULTIPROCESSOR_COUNT)?,
        },
    })
}

/// The properties of the CUDA device at `pci` among `devices`.
pub fn properties_at(devices: &[CudaDevice], pci: PciAddress) -> Option<CudaProperties> {
    devices.iter().find(|d| d.pci == pci).map(|d| d.properties)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_without_the_library_says_what_to_do() {
        // On a host with the NVIDIA driver this lists its GPUs instead; both are fine,
        // but every listed GPU must carry real figures.
        match read_cuda_devices() {
            Ok(devices) => {
                for device in devices {
                    assert!(device.properties.total_global_mem > 0.0, "{device:?}");
                    assert!(device.properties.multiprocessor_count > 0, "{device:?}");
                    assert!(device.compute_capability.0 > 0, "{device:?}");
                }
            }
            Err(error) => assert!(error.to_string().contains("CUDA driver"), "{error}"),
        }
    }

    #[test]
    fn devices_are_matched_by_pci_address() {
        let device = |ordinal, pci, sms| CudaDevice {
            ordinal,
            name: "GPU".into(),
            pci,
            compute_capability: (8, 6),
            properties: CudaProperties { multiprocessor_count: sms, ..Default::default() },
        };
        let devices = [device(0, (0, 0x41, 0), 82), device(1, (0, 0x01, 0), 68)];
        assert_eq!(properties_at(&devices, (0, 0x01, 0)).map(|p| p.multiprocessor_count), Some(68));
        assert_eq!(properties_at(&devices, (1, 0x01, 0)), None, "another domain");
    }
}
