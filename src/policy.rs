//! The selectable policy families (docs/design.md "Policies"): the newest seeds by default,
//! the older ones kept for comparison in the emulator.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Which family of scheduling and work-fetch policies to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// Seed 000 CPU scheduling (EDF + short-term debt, scheduling-period hysteresis) with
    /// seed 003 per-resource work fetch.
    #[default]
    Seed,
    /// Seed 001: anticipated debt, running > preempted > new, ETTPRC work fetch.
    Legacy,
    /// Modern BOINC: recent estimated credit (REC) priorities, per-resource fetch.
    Rec,
}

impl Policy {
    /// Every policy, in the order `--compare` lists them.
    pub const ALL: [Policy; 3] = [Policy::Seed, Policy::Legacy, Policy::Rec];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Seed => "seed",
            Policy::Legacy => "legacy",
            Policy::Rec => "rec",
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A policy name that is not one of `seed`, `legacy`, `rec`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown policy `{0}`: use one of seed, legacy, rec")]
pub struct UnknownPolicy(pub String);

impl FromStr for Policy {
    type Err = UnknownPolicy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "seed" => Ok(Policy::Seed),
            "legacy" => Ok(Policy::Legacy),
            "rec" => Ok(Policy::Rec),
            _ => Err(UnknownPolicy(s.to_string())),
        }
    }
}
