//! Why computing, GPU computing or the network is suspended, in BOINC's numbers (its
//! `SUSPEND_REASON_*` codes, which `get_cc_status` reports as `task_suspend_reason`,
//! `gpu_suspend_reason` and `network_suspend_reason`: boinccmd and the Manager turn
//! them into words) and in `explain`'s words.

use crate::model::RunMode;
use serde::{Deserialize, Serialize};

/// One reason BOINC knows for a suspension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SuspendReason {
    /// The host runs on batteries and `run_on_batteries` is off.
    Batteries,
    /// The user is active and the preferences say not to compute then.
    UserActive,
    /// The user chose it (run mode "never", a snooze).
    UserRequest,
    /// Outside the time-of-day window.
    TimeOfDay,
    /// The CPU benchmarks are running.
    Benchmarks,
    /// The disk is over its limits.
    DiskSize,
    /// The CPU usage limit's duty cycle is in its off part.
    CpuThrottle,
    /// No input for `suspend_if_no_recent_input` minutes.
    NoRecentInput,
    /// The start delay (`<start_delay>`) has not passed yet.
    InitialDelay,
    /// A program named by `<exclusive_app>` is running.
    ExclusiveAppRunning,
    /// Other programs use more CPU than `suspend_cpu_usage`.
    CpuUsage,
    /// The daily transfer limit is used up.
    NetworkQuotaExceeded,
}

impl SuspendReason {
    /// BOINC's code (`SUSPEND_REASON_*` of its common_defs.h).
    pub fn code(self) -> i64 {
        match self {
            SuspendReason::Batteries => 1,
            SuspendReason::UserActive => 2,
            SuspendReason::UserRequest => 4,
            SuspendReason::TimeOfDay => 8,
            SuspendReason::Benchmarks => 16,
            SuspendReason::DiskSize => 32,
            SuspendReason::CpuThrottle => 64,
            SuspendReason::NoRecentInput => 128,
            SuspendReason::InitialDelay => 256,
            SuspendReason::ExclusiveAppRunning => 512,
            SuspendReason::CpuUsage => 1024,
            SuspendReason::NetworkQuotaExceeded => 2048,
        }
    }

    /// The reason in words, as BOINC's client logs it.
    pub fn words(self) -> &'static str {
        match self {
            SuspendReason::Batteries => "on batteries",
            SuspendReason::UserActive => "computer is in use",
            SuspendReason::UserRequest => "user request",
            SuspendReason::TimeOfDay => "time of day",
            SuspendReason::Benchmarks => "CPU benchmarks in progress",
            SuspendReason::DiskSize => "need disk space - check preferences",
            SuspendReason::CpuThrottle => "CPU throttled",
            SuspendReason::NoRecentInput => "no recent user activity",
            SuspendReason::InitialDelay => "initial delay",
            SuspendReason::ExclusiveAppRunning => "an exclusive app is running",
            SuspendReason::CpuUsage => "CPU is busy",
            SuspendReason::NetworkQuotaExceeded => "network transfer limit exceeded",
        }
    }
}

/// What is suspended now, and why (the first reason BOINC would name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SuspendReasons {
    /// Computing (every task).
    pub cpu: Option<SuspendReason>,
    /// GPU computing (beyond `cpu`: a GPU is suspended whenever computing is).
    pub gpu: Option<SuspendReason>,
    /// File transfers and scheduler RPCs.
    pub network: Option<SuspendReason>,
}

impl SuspendReasons {
    /// Nothing suspended.
    pub const NONE: SuspendReasons = SuspendReasons { cpu: None, gpu: None, network: None };
}

impl SuspendReasons {
    /// The reasons under the run modes (BOINC's order): "never" is the user's request
    /// and comes first; otherwise the host's reasons stand. The GPUs have a reason of
    /// their own only while computing runs.
    pub fn under_modes(self, computing: RunMode, gpu: RunMode, network: RunMode) -> Self {
        let user = |mode: RunMode, host: Option<SuspendReason>| {
            if mode == RunMode::Never { Some(SuspendReason::UserRequest) } else { host }
        };
        let cpu = user(computing, self.cpu);
        SuspendReasons {
            cpu,
            gpu: if cpu.is_none() { user(gpu, self.gpu) } else { None },
            network: user(network, self.network),
        }
    }
}

/// A reason's code, 0 for none (`get_cc_status`'s numbers).
pub fn reason_code(reason: Option<SuspendReason>) -> i64 {
    reason.map_or(0, SuspendReason::code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_boincs() {
        let codes: Vec<i64> = [
            SuspendReason::Batteries,
            SuspendReason::UserActive,
            SuspendReason::UserRequest,
            SuspendReason::TimeOfDay,
            SuspendReason::Benchmarks,
            SuspendReason::DiskSize,
            SuspendReason::CpuThrottle,
            SuspendReason::NoRecentInput,
            SuspendReason::InitialDelay,
            SuspendReason::ExclusiveAppRunning,
            SuspendReason::CpuUsage,
            SuspendReason::NetworkQuotaExceeded,
        ]
        .into_iter()
        .map(SuspendReason::code)
        .collect();
        assert_eq!(codes, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]);
        assert_eq!(reason_code(None), 0);
    }

    #[test]
    fn never_is_the_users_request_and_comes_first() {
        let host = SuspendReasons {
            cpu: Some(SuspendReason::TimeOfDay),
            gpu: Some(SuspendReason::UserActive),
            network: None,
        };
        let auto = host.under_modes(RunMode::Auto, RunMode::Auto, RunMode::Auto);
        assert_eq!(auto, SuspendReasons { gpu: None, ..host });
        let never = host.under_modes(RunMode::Never, RunMode::Auto, RunMode::Never);
        assert_eq!(never.cpu, Some(SuspendReason::UserRequest));
        assert_eq!(never.network, Some(SuspendReason::UserRequest));
        let running = SuspendReasons { cpu: None, ..host };
        let gpu = running.under_modes(RunMode::Auto, RunMode::Never, RunMode::Auto);
        assert_eq!(gpu.gpu, Some(SuspendReason::UserRequest));
        let busy = running.under_modes(RunMode::Auto, RunMode::Auto, RunMode::Auto);
        assert_eq!(busy.gpu, Some(SuspendReason::UserActive));
    }
}
