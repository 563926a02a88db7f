//! BOINC's figures of merit for an emulator run (DESIGN.md "Emulator": idle fraction,
//! wasted fraction, share violation, monotony, RPCs per job), with the per-project usage,
//! jobs done and deadlines missed.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One project's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProjectFigures {
    /// Flops used on each resource as a fraction of that resource's capacity, keyed
    /// `cpu`, `nvidia`, `amd`, `intel` (only resources the host has).
    pub usage: BTreeMap<String, f64>,
    /// Jobs finished computing.
    pub jobs_done: u32,
    /// Jobs reported after their deadline.
    pub deadlines_missed: u32,
    /// Jobs received.
    pub jobs_received: u32,
    /// Successful scheduler RPCs.
    pub rpcs: u32,
}

/// The figures of merit of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FiguresOfMerit {
    /// (capacity − flops used) / capacity.
    pub idle_fraction: f64,
    /// Flops used by jobs reported after their deadlines / capacity.
    pub wasted_fraction: f64,
    /// Σ over projects |U_p − U·s_p| / U.
    pub share_violation: f64,
    /// 1 − 1/(x+1), x = Σ_p S_p / (n² × scheduling period).
    pub monotony: f64,
    /// Successful RPCs / (2 × jobs received).
    pub rpcs_per_job: f64,
    /// Simulated days.
    pub sim_days: f64,
    /// Wall-clock seconds the run took (filled in by the caller, which has a clock).
    pub wall_seconds: f64,
    /// Per project, keyed by name.
    pub projects: BTreeMap<String, ProjectFigures>,
}
