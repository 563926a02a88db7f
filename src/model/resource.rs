//! Processing resources (seed 003 "Terminology"): the CPU and each coprocessor type are
//! separate processing resources, each with its own instance count and speed.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Index, IndexMut};

/// The kinds of processing resource a host can have (seed 003, "PRSC").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResourceType {
    /// The host's CPUs.
    Cpu,
    /// NVIDIA GPUs (BOINC's `CUDA` / `NVIDIA` coprocessor type).
    Nvidia,
    /// AMD GPUs (BOINC's `ATI` / `CAL` coprocessor type).
    Amd,
    /// Intel GPUs (BOINC's `intel_gpu` coprocessor type).
    Intel,
}

impl ResourceType {
    /// Every resource type, CPU first; the order is the index order of [`ResourceMap`].
    pub const ALL: [ResourceType; 4] =
        [ResourceType::Cpu, ResourceType::Nvidia, ResourceType::Amd, ResourceType::Intel];
    /// The coprocessor types only.
    pub const GPUS: [ResourceType; 3] =
        [ResourceType::Nvidia, ResourceType::Amd, ResourceType::Intel];

    /// Position of this resource in a [`ResourceMap`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether this is a coprocessor (GPU) rather than the CPU.
    pub fn is_gpu(self) -> bool {
        self != ResourceType::Cpu
    }

    /// The key used in JSON output and on the command line: `cpu`, `nvidia`, `amd`, `intel`.
    pub fn key(self) -> &'static str {
        match self {
            ResourceType::Cpu => "cpu",
            ResourceType::Nvidia => "nvidia",
            ResourceType::Amd => "amd",
            ResourceType::Intel => "intel",
        }
    }

    /// The name BOINC uses in state files and scheduler messages (`<rsc_backoff_time><name>`).
    pub fn boinc_name(self) -> &'static str {
        match self {
            ResourceType::Cpu => "CPU",
            ResourceType::Nvidia => "NVIDIA",
            ResourceType::Amd => "ATI",
            ResourceType::Intel => "intel_gpu",
        }
    }

    /// Reads a coprocessor type as BOINC spells it in `<coproc><type>`, `<rsc_type>`,
    /// `<rsc_backoff_time><name>` or in our own keys; `None` for an unknown type.
    pub fn from_boinc_name(name: &str) -> Option<ResourceType> {
        match name.trim().to_ascii_lowercase().as_str() {
            "cpu" => Some(ResourceType::Cpu),
            "nvidia" | "cuda" | "coproc_cuda" => Some(ResourceType::Nvidia),
            "ati" | "amd" | "cal" | "amd/ati" | "coproc_ati" => Some(ResourceType::Amd),
            "intel_gpu" | "intel" | "coproc_intel_gpu" => Some(ResourceType::Intel),
            _ => None,
        }
    }
}

impl fmt::Display for ResourceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// A value per processing resource, indexed by [`ResourceType`]. Fixed size, so it is
/// cheap to copy around on the decision path.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ResourceMap<T>(pub [T; 4]);

impl<T> ResourceMap<T> {
    /// Builds a map by calling `f` for each resource type.
    pub fn from_fn(mut f: impl FnMut(ResourceType) -> T) -> Self {
        ResourceMap(ResourceType::ALL.map(&mut f))
    }

    /// Iterates over (resource, value) pairs, CPU first.
    pub fn iter(&self) -> impl Iterator<Item = (ResourceType, &T)> {
        ResourceType::ALL.into_iter().zip(self.0.iter())
    }

    /// Iterates mutably over (resource, value) pairs, CPU first.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (ResourceType, &mut T)> {
        ResourceType::ALL.into_iter().zip(self.0.iter_mut())
    }

    /// Applies `f` to each value.
    pub fn map<U>(&self, mut f: impl FnMut(ResourceType, &T) -> U) -> ResourceMap<U> {
        ResourceMap::from_fn(|r| f(r, &self.0[r.index()]))
    }
}

impl<T> Index<ResourceType> for ResourceMap<T> {
    type Output = T;
    fn index(&self, r: ResourceType) -> &T {
        &self.0[r.index()]
    }
}

impl<T> IndexMut<ResourceType> for ResourceMap<T> {
    fn index_mut(&mut self, r: ResourceType) -> &mut T {
        &mut self.0[r.index()]
    }
}

/// BOINC values what a GPU delivers to a real app at this fraction of its advertised
/// peak flops (the `0.2 × peak_flops` of the client's relative-speed estimate).
pub const GPU_PEAK_FLOPS_SCALE: f64 = 0.2;

/// One coprocessor type present on the host (seed 003: "number of instances" and speed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coprocessor {
    /// Which GPU type.
    pub resource: ResourceType,
    /// The model name the driver reports.
    pub name: String,
    /// Number of instances (devices) of this type.
    pub count: u32,
    /// Advertised peak flops of one instance.
    pub peak_flops: f64,
    /// Device memory of one instance, bytes (0 when unknown).
    pub available_ram: f64,
}

impl Coprocessor {
    /// The flops one instance is expected to deliver to a real app.
    pub fn effective_flops(&self) -> f64 {
        self.peak_flops * GPU_PEAK_FLOPS_SCALE
    }
}
