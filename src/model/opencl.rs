//! A GPU as OpenCL describes it (BOINC's `OPENCL_DEVICE_PROP`): what a scheduler
//! request's `<coproc_opencl>` carries inside each GPU type's entry, so that projects
//! can send OpenCL apps (plan classes read the versions, memory and compute units).
//! Discovery is the live client's (boinc-service); the text is the protocol's
//! (`protocol/opencl_prop.rs`).

use super::resource::ResourceType;
use serde::{Deserialize, Serialize};

/// One OpenCL GPU device, with the figures BOINC's client reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenclDevice {
    /// The GPU type it counts as (by its vendor).
    pub resource: ResourceType,
    /// `CL_DEVICE_NAME`.
    pub name: String,
    /// `CL_DEVICE_VENDOR`.
    pub vendor: String,
    /// `CL_DEVICE_VENDOR_ID`.
    pub vendor_id: u64,
    /// `CL_DEVICE_AVAILABLE`.
    pub available: bool,
    /// `CL_DEVICE_HALF_FP_CONFIG`, `CL_DEVICE_SINGLE_FP_CONFIG`,
    /// `CL_DEVICE_DOUBLE_FP_CONFIG` (bit fields; 0: not supported).
    pub half_fp_config: u64,
    /// See `half_fp_config`.
    pub single_fp_config: u64,
    /// See `half_fp_config`: a GPU without double precision has 0.
    pub double_fp_config: u64,
    /// `CL_DEVICE_ENDIAN_LITTLE`.
    pub endian_little: bool,
    /// `CL_DEVICE_EXECUTION_CAPABILITIES`.
    pub execution_capabilities: u64,
    /// `CL_DEVICE_EXTENSIONS`, space-separated.
    pub extensions: String,
    /// `CL_DEVICE_GLOBAL_MEM_SIZE`, bytes.
    pub global_mem_size: u64,
    /// `CL_DEVICE_LOCAL_MEM_SIZE`, bytes.
    pub local_mem_size: u64,
    /// `CL_DEVICE_MAX_CLOCK_FREQUENCY`, MHz.
    pub max_clock_frequency: u64,
    /// `CL_DEVICE_MAX_COMPUTE_UNITS`.
    pub max_compute_units: u64,
    /// NVIDIA's compute capability through OpenCL (`cl_nv_device_attribute_query`);
    /// (0, 0) for other vendors.
    pub nv_compute_capability: (u64, u64),
    /// `CL_PLATFORM_VERSION` of its platform (`OpenCL 3.0 CUDA 12.2.148`).
    pub opencl_platform_version: String,
    /// `CL_DEVICE_VERSION` (`OpenCL 3.0 CUDA`).
    pub opencl_device_version: String,
    /// `CL_DRIVER_VERSION`.
    pub opencl_driver_version: String,
    /// Its number among its type's GPUs (BOINC's `device_num`).
    pub device_num: u32,
    /// Estimated peak speed, flops.
    pub peak_flops: f64,
    /// Its index among its platform's devices (`opencl_device_index`).
    pub opencl_device_index: u32,
}

impl Default for OpenclDevice {
    /// An empty description (a CPU's: not yet given a GPU type).
    fn default() -> Self {
        OpenclDevice {
            resource: ResourceType::Cpu,
            name: String::new(),
            vendor: String::new(),
            vendor_id: 0,
            available: false,
            half_fp_config: 0,
            single_fp_config: 0,
            double_fp_config: 0,
            endian_little: false,
            execution_capabilities: 0,
            extensions: String::new(),
            global_mem_size: 0,
            local_mem_size: 0,
            max_clock_frequency: 0,
            max_compute_units: 0,
            nv_compute_capability: (0, 0),
            opencl_platform_version: String::new(),
            opencl_device_version: String::new(),
            opencl_driver_version: String::new(),
            device_num: 0,
            peak_flops: 0.0,
            opencl_device_index: 0,
        }
    }
}
