//! GPUs through OpenCL (issue "What a real project server sees", GPUs): every
//! platform the ICD loader lists (NVIDIA's, AMD's, Intel's, Mesa's, pocl's), every
//! device of each, with the figures BOINC's client reports in `<coproc_opencl>`.
//! Devices that are not GPUs (pocl's CPU device, say) are listed but set aside, as
//! BOINC's client sets them aside: the CPUs are counted once, as CPUs.
//!
//! `libOpenCL.so.1` (the ICD loader) is loaded when discovery runs, so the binary
//! runs where none is installed; the loader then finds the vendors' drivers by the
//! files in `/etc/OpenCL/vendors` (or `OCL_ICD_VENDORS`). Every list and text read is
//! bounded, and a driver that answers an error for one device costs that device only.

use boinc_core::model::{OpenclDevice, ResourceType};
use libloading::{Library, Symbol};
use std::ffi::c_void;
use std::sync::OnceLock;

/// The most platforms and devices per platform read.
const MAX_PLATFORMS: u32 = 16;
const MAX_DEVICES: u32 = 64;
/// The longest text read from a driver (an extension list is a few KB).
const MAX_TEXT: usize = 64 * 1024;

type ClInt = i32;
type ClUint = u32;
type Handle = *mut c_void;

const CL_SUCCESS: ClInt = 0;
/// `CL_PLATFORM_NOT_FOUND_KHR`: the loader found no vendor's driver.
const CL_PLATFORM_NOT_FOUND_KHR: ClInt = -1001;
const CL_DEVICE_NOT_FOUND: ClInt = -1;

const CL_PLATFORM_VERSION: u32 = 0x0901;
const CL_PLATFORM_NAME: u32 = 0x0902;
const CL_PLATFORM_VENDOR: u32 = 0x0903;

const CL_DEVICE_TYPE_ALL: u64 = 0xFFFF_FFFF;
const CL_DEVICE_TYPE_CPU: u64 = 1 << 1;
const CL_DEVICE_TYPE_GPU: u64 = 1 << 2;

const CL_DEVICE_TYPE: u32 = 0x1000;
const CL_DEVICE_VENDOR_ID: u32 = 0x1001;
const CL_DEVICE_MAX_COMPUTE_UNITS: u32 = 0x1002;
const CL_DEVICE_MAX_CLOCK_FREQUENCY: u32 = 0x100C;
const CL_DEVICE_SINGLE_FP_CONFIG: u32 = 0x101B;
const CL_DEVICE_GLOBAL_MEM_SIZE: u32 = 0x101F;
const CL_DEVICE_LOCAL_MEM_SIZE: u32 = 0x1023;
const CL_DEVICE_ENDIAN_LITTLE: u32 = 0x1026;
const CL_DEVICE_AVAILABLE: u32 = 0x1027;
const CL_DEVICE_EXECUTION_CAPABILITIES: u32 = 0x1029;
const CL_DEVICE_NAME: u32 = 0x102B;
const CL_DEVICE_VENDOR: u32 = 0x102C;
const CL_DRIVER_VERSION: u32 = 0x102D;
const CL_DEVICE_VERSION: u32 = 0x102F;
const CL_DEVICE_EXTENSIONS: u32 = 0x1030;
const CL_DEVICE_DOUBLE_FP_CONFIG: u32 = 0x1032;
const CL_DEVICE_HALF_FP_CONFIG: u32 = 0x1033;
const CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV: u32 = 0x4000;
const CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV: u32 = 0x4001;

type GetPlatformIds = unsafe extern "C" fn(ClUint, *mut Handle, *mut ClUint) -> ClInt;
type GetPlatformInfo = unsafe extern "C" fn(Handle, u32, usize, *mut c_void, *mut usize) -> ClInt;
type GetDeviceIds = unsafe extern "C" fn(Handle, u64, ClUint, *mut Handle, *mut ClUint) -> ClInt;
type GetDeviceInfo = unsafe extern "C" fn(Handle, u32, usize, *mut c_void, *mut usize) -> ClInt;

/// Why OpenCL found no GPU: said once in the log, and by `host-info`.
#[derive(Debug, Clone, PartialEq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum OpenclDiscoveryError {
    /// The ICD loader is not installed.
    #[error(
        "no OpenCL: the OpenCL ICD loader (libOpenCL.so.1) could not be loaded ({0}); install ocl-icd-libopencl1 and your GPU vendor's OpenCL driver to compute on an AMD or Intel GPU"
    )]
    NoLibrary(String),
    /// The loader has no vendor driver.
    #[error(
        "no OpenCL: the ICD loader lists no platform (no driver in /etc/OpenCL/vendors); install your GPU vendor's OpenCL driver"
    )]
    NoPlatforms,
    /// The loader answered an error.
    #[error("no OpenCL: {call} failed with OpenCL error {code}")]
    Call {
        /// The OpenCL function.
        call: std::borrow::Cow<'static, str>,
        /// Its error code.
        code: i32,
    },
    /// The GPU detector gave no answer ([`super::gpu_probe`]).
    #[error("no OpenCL: {0}")]
    Detector(String),
}

/// One OpenCL device found, GPU or not.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OpenclFound {
    /// Its description (`resource` is its GPU type; for a device set aside, the CPU).
    pub device: OpenclDevice,
    /// `CL_DEVICE_TYPE` bits.
    pub device_type: u64,
    /// Set aside: not a GPU, or a GPU of a vendor BOINC has no type for.
    pub set_aside: bool,
}

/// One platform and its devices.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OpenclPlatform {
    /// `CL_PLATFORM_NAME`.
    pub name: String,
    /// `CL_PLATFORM_VENDOR`.
    pub vendor: String,
    /// `CL_PLATFORM_VERSION`.
    pub version: String,
    /// Its devices.
    pub devices: Vec<OpenclFound>,
}

impl OpenclPlatform {
    /// The GPUs of all `platforms` that count, numbered within their type as BOINC's
    /// `device_num`.
    pub fn gpus(platforms: &[OpenclPlatform]) -> Vec<OpenclDevice> {
        let mut gpus: Vec<OpenclDevice> = Vec::new();
        for found in platforms.iter().flat_map(|p| &p.devices).filter(|f| !f.set_aside) {
            let mut device = found.device.clone();
            device.device_num =
                gpus.iter().filter(|d| d.resource == device.resource).count() as u32;
            gpus.push(device);
        }
        gpus
    }
}

/// The loader's functions, loaded once for the process (a loader is never unloaded:
/// drivers keep threads of their own).
struct Loader {
    get_platform_ids: GetPlatformIds,
    get_platform_info: GetPlatformInfo,
    get_device_ids: GetDeviceIds,
    get_device_info: GetDeviceInfo,
}

fn loader() -> Result<&'static Loader, OpenclDiscoveryError> {
    static LOADER: OnceLock<Result<Loader, String>> = OnceLock::new();
    LOADER.get_or_init(load).as_ref().map_err(|e| OpenclDiscoveryError::NoLibrary(e.clone()))
}

fn load() -> Result<Loader, String> {
    // SAFETY: loading the ICD loader runs its initialisers, which only set up its own
    // state; the library is leaked so that the functions stay valid.
    let library = unsafe { Library::new("libOpenCL.so.1") }.map_err(|e| e.to_string())?;
    let library: &'static Library = Box::leak(Box::new(library));
    fn symbol<T: Copy>(library: &'static Library, name: &[u8]) -> Result<T, String> {
        // SAFETY: each `T` below is the function's type in the OpenCL 1.2 headers, and
        // the library outlives the program (leaked above).
        let found: Symbol<T> = unsafe { library.get(name) }.map_err(|e| e.to_string())?;
        Ok(*found)
    }
    Ok(Loader {
        get_platform_ids: symbol(library, b"clGetPlatformIDs\0")?,
        get_platform_info: symbol(library, b"clGetPlatformInfo\0")?,
        get_device_ids: symbol(library, b"clGetDeviceIDs\0")?,
        get_device_info: symbol(library, b"clGetDeviceInfo\0")?,
    })
}

/// Lists every platform and device the ICD loader knows.
pub fn discover_opencl() -> Result<Vec<OpenclPlatform>, OpenclDiscoveryError> {
    let cl = loader()?;
    let mut ids = vec![std::ptr::null_mut(); MAX_PLATFORMS as usize];
    let mut count: ClUint = 0;
    // SAFETY: `ids` has room for MAX_PLATFORMS handles; `count` is a valid out pointer.
    let code = unsafe { (cl.get_platform_ids)(MAX_PLATFORMS, ids.as_mut_ptr(), &mut count) };
    match code {
        CL_SUCCESS => {}
        CL_PLATFORM_NOT_FOUND_KHR => return Err(OpenclDiscoveryError::NoPlatforms),
        code => return Err(OpenclDiscoveryError::Call { call: "clGetPlatformIDs".into(), code }),
    }
    ids.truncate(count.min(MAX_PLATFORMS) as usize);
    if ids.is_empty() {
        return Err(OpenclDiscoveryError::NoPlatforms);
    }
    Ok(ids.into_iter().map(|platform| read_platform(cl, platform)).collect())
}

fn read_platform(cl: &Loader, platform: Handle) -> OpenclPlatform {
    let text = |param| {
        // SAFETY: `platform` came from clGetPlatformIDs.
        read_text(|size, value, size_ret| unsafe {
            (cl.get_platform_info)(platform, param, size, value, size_ret)
        })
    };
    let version = text(CL_PLATFORM_VERSION);
    let mut devices = vec![std::ptr::null_mut(); MAX_DEVICES as usize];
    let mut count: ClUint = 0;
    // SAFETY: `devices` has room for MAX_DEVICES handles.
    let code = unsafe {
        (cl.get_device_ids)(
            platform,
            CL_DEVICE_TYPE_ALL,
            MAX_DEVICES,
            devices.as_mut_ptr(),
            &mut count,
        )
    };
    if code != CL_SUCCESS && code != CL_DEVICE_NOT_FOUND {
        tracing::warn!(code, "OpenCL: a platform did not list its devices");
        count = 0;
    }
    devices.truncate(count.min(MAX_DEVICES) as usize);
    let devices = devices
        .into_iter()
        .enumerate()
        .map(|(index, device)| read_device(cl, device, index as u32, &version))
        .collect();
    OpenclPlatform {
        name: text(CL_PLATFORM_NAME),
        vendor: text(CL_PLATFORM_VENDOR),
        version,
        devices,
    }
}

fn read_device(cl: &Loader, device: Handle, index: u32, platform_version: &str) -> OpenclFound {
    // SAFETY (both closures): `device` came from clGetDeviceIDs.
    let text = |param| {
        read_text(|size, value, size_ret| unsafe {
            (cl.get_device_info)(device, param, size, value, size_ret)
        })
    };
    let number = |param, width: usize| {
        read_number(width, |size, value| unsafe {
            (cl.get_device_info)(device, param, size, value, std::ptr::null_mut())
        })
    };
    // cl_uint figures are 4 bytes, cl_ulong and bit fields 8, cl_bool 4.
    let device_type = number(CL_DEVICE_TYPE, 8);
    let vendor = text(CL_DEVICE_VENDOR);
    let resource = gpu_type(device_type, &vendor);
    let mut found = OpenclDevice {
        resource: resource.unwrap_or(ResourceType::Cpu),
        name: text(CL_DEVICE_NAME),
        vendor,
        vendor_id: number(CL_DEVICE_VENDOR_ID, 4),
        available: number(CL_DEVICE_AVAILABLE, 4) != 0,
        half_fp_config: number(CL_DEVICE_HALF_FP_CONFIG, 8),
        single_fp_config: number(CL_DEVICE_SINGLE_FP_CONFIG, 8),
        double_fp_config: number(CL_DEVICE_DOUBLE_FP_CONFIG, 8),
        endian_little: number(CL_DEVICE_ENDIAN_LITTLE, 4) != 0,
        execution_capabilities: number(CL_DEVICE_EXECUTION_CAPABILITIES, 8),
        extensions: text(CL_DEVICE_EXTENSIONS),
        global_mem_size: number(CL_DEVICE_GLOBAL_MEM_SIZE, 8),
        local_mem_size: number(CL_DEVICE_LOCAL_MEM_SIZE, 8),
        max_clock_frequency: number(CL_DEVICE_MAX_CLOCK_FREQUENCY, 4),
        max_compute_units: number(CL_DEVICE_MAX_COMPUTE_UNITS, 4),
        opencl_platform_version: platform_version.to_string(),
        opencl_device_version: text(CL_DEVICE_VERSION),
        opencl_driver_version: text(CL_DRIVER_VERSION),
        opencl_device_index: index,
        ..OpenclDevice::default()
    };
    if resource == Some(ResourceType::Nvidia)
        && found.extensions.contains("cl_nv_device_attribute_query")
    {
        found.nv_compute_capability = (
            number(CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, 4),
            number(CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, 4),
        );
    }
    found.peak_flops = estimated_peak_flops(&found);
    OpenclFound { device: found, device_type, set_aside: resource.is_none() }
}

/// The GPU type of a device: by its vendor, for GPUs only (BOINC counts a CPU's OpenCL
/// device as nothing more: the CPUs are counted once, as CPUs).
fn gpu_type(device_type: u64, vendor: &str) -> Option<ResourceType> {
    if device_type & CL_DEVICE_TYPE_GPU == 0 || device_type & CL_DEVICE_TYPE_CPU != 0 {
        return None;
    }
    let vendor = vendor.to_ascii_lowercase();
    if vendor.contains("nvidia") {
        Some(ResourceType::Nvidia)
    } else if vendor.contains("advanced micro devices")
        || vendor.contains("amd")
        || vendor.contains("ati ")
    {
        Some(ResourceType::Amd)
    } else if vendor.contains("intel") {
        Some(ResourceType::Intel)
    } else {
        None
    }
}

/// Peak flops from what OpenCL says: compute units × lanes per unit × 2 (a fused
/// multiply-add) × clock. The lanes per unit are the vendors' usual figures (AMD 64,
/// NVIDIA 128, Intel 8 per execution unit); NVML's figure replaces this for NVIDIA.
fn estimated_peak_flops(device: &OpenclDevice) -> f64 {
    let lanes = match device.resource {
        ResourceType::Amd => 64.0,
        ResourceType::Nvidia => 128.0,
        ResourceType::Intel => 8.0,
        ResourceType::Cpu => 0.0,
    };
    device.max_compute_units as f64 * lanes * 2.0 * device.max_clock_frequency as f64 * 1e6
}

/// A text answer of a driver: asked for its size first, bounded, NUL and spaces trimmed
/// (empty on any error).
fn read_text(call: impl Fn(usize, *mut c_void, *mut usize) -> ClInt) -> String {
    let mut size = 0usize;
    if call(0, std::ptr::null_mut(), &mut size) != CL_SUCCESS || size == 0 {
        return String::new();
    }
    let mut buffer = vec![0u8; size.min(MAX_TEXT)];
    if call(buffer.len(), buffer.as_mut_ptr().cast(), std::ptr::null_mut()) != CL_SUCCESS {
        // A text longer than the bound: its start is not worth a second protocol.
        return String::new();
    }
    let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
    String::from_utf8_lossy(&buffer[..end]).trim().to_string()
}

/// A number answer of `width` bytes (4: cl_uint or cl_bool, 8: cl_ulong or a bit
/// field); 0 on any error.
fn read_number(width: usize, call: impl Fn(usize, *mut c_void) -> ClInt) -> u64 {
    let mut bytes = [0u8; 8];
    let width = width.min(8);
    if call(width, bytes.as_mut_ptr().cast()) != CL_SUCCESS {
        return 0;
    }
    match width {
        4 => u64::from(u32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])),
        _ => u64::from_ne_bytes(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_count_by_type_and_vendor() {
        assert_eq!(gpu_type(CL_DEVICE_TYPE_GPU, "NVIDIA Corporation"), Some(ResourceType::Nvidia));
        assert_eq!(
            gpu_type(CL_DEVICE_TYPE_GPU, "Advanced Micro Devices, Inc."),
            Some(ResourceType::Amd)
        );
        assert_eq!(gpu_type(CL_DEVICE_TYPE_GPU, "Intel(R) Corporation"), Some(ResourceType::Intel));
        assert_eq!(gpu_type(CL_DEVICE_TYPE_CPU, "Intel(R) Corporation"), None, "a CPU device");
        assert_eq!(gpu_type(CL_DEVICE_TYPE_GPU, "Mesa/X.org"), None, "no BOINC type");
    }

    #[test]
    fn gpus_are_numbered_within_their_type() {
        let found = |resource, set_aside| OpenclFound {
            device: OpenclDevice { resource, ..OpenclDevice::default() },
            device_type: CL_DEVICE_TYPE_GPU,
            set_aside,
        };
        let platforms = [OpenclPlatform {
            name: "p".into(),
            vendor: "v".into(),
            version: "OpenCL 3.0".into(),
            devices: vec![
                found(ResourceType::Amd, false),
                found(ResourceType::Cpu, true),
                found(ResourceType::Intel, false),
                found(ResourceType::Amd, false),
            ],
        }];
        let gpus = OpenclPlatform::gpus(&platforms);
        let numbered: Vec<_> = gpus.iter().map(|d| (d.resource, d.device_num)).collect();
        assert_eq!(
            numbered,
            [(ResourceType::Amd, 0), (ResourceType::Intel, 0), (ResourceType::Amd, 1)]
        );
    }
}
