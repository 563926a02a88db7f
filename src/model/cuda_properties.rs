//! An NVIDIA GPU's CUDA device properties as a scheduler request and the state file
//! carry them (`<coproc_cuda>`'s `<totalGlobalMem>` … `<multiProcessorCount>`, the
//! fields of CUDA's device description). Project servers read them: plan classes need
//! the GPU's memory (`totalGlobalMem`) and estimate its speed from the clock and the
//! multiprocessors where a client gives no peak flops.

use serde::{Deserialize, Serialize};

/// One NVIDIA GPU's CUDA properties; a figure the driver did not give is 0, as in
/// BOINC's requests.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CudaProperties {
    /// Device memory, bytes (`<totalGlobalMem>`).
    pub total_global_mem: f64,
    /// Shared memory a thread block may use, bytes (`<sharedMemPerBlock>`).
    pub shared_mem_per_block: f64,
    /// 32-bit registers a thread block may use (`<regsPerBlock>`).
    pub regs_per_block: i32,
    /// Threads in a warp (`<warpSize>`).
    pub warp_size: i32,
    /// Largest pitch of a pitched allocation, bytes (`<memPitch>`).
    pub mem_pitch: f64,
    /// Threads in a block at most (`<maxThreadsPerBlock>`).
    pub max_threads_per_block: i32,
    /// A block's largest size in x, y and z (`<maxThreadsDim>`, three numbers).
    pub max_threads_dim: [i32; 3],
    /// A grid's largest size in x, y and z (`<maxGridSize>`, three numbers).
    pub max_grid_size: [i32; 3],
    /// Shader clock, kHz (`<clockRate>`).
    pub clock_rate_khz: i32,
    /// Constant memory, bytes (`<totalConstMem>`).
    pub total_const_mem: f64,
    /// Texture base address alignment, bytes (`<textureAlignment>`).
    pub texture_alignment: f64,
    /// Copies to and from the device overlap kernels (`<deviceOverlap>`).
    pub device_overlap: bool,
    /// Streaming multiprocessors (`<multiProcessorCount>`).
    pub multiprocessor_count: i32,
}
