//! The operating-system limits an app runs under, and how an exit under them reads
//! (issue 16 item 4; docs/app-isolation.md "Resource limits"). The process host sets
//! them in the app's process before it executes; the rules are here so that they are
//! the same wherever a task runs and can be tested without a process.
//!
//! - The address space (RLIMIT_AS) is capped at the memory the preferences allow
//!   running apps: the larger of `ram_max_used_busy_pct` and `ram_max_used_idle_pct` of
//!   the host's memory (the limit is set once per run, and a run may see both the busy
//!   and the idle user; the busy share is enforced by measurement, as BOINC does), never
//!   below [`ADDRESS_SPACE_FLOOR`]; no cap when the host's memory or the preference is
//!   unknown, and none for GPU tasks, whose drivers reserve address space far beyond
//!   the memory they use.
//! - The size of any file the app writes (RLIMIT_FSIZE) is capped at the job's
//!   `rsc_disk_bound` when the workunit gives one.
//! - An app that goes over a limit learns it from the kernel: SIGXFSZ (or EFBIG, when it
//!   catches the signal) for the file size, a failed allocation for the address space.
//!   Such an exit is read as the limit it hit (BOINC's disk- and memory-limit errors),
//!   not as a crash to restart.

use crate::model::{Prefs, ResourceUsage};
use crate::supervise::{AppExit, TaskLimit};

/// The smallest address-space limit set, bytes (2 GiB): a runtime's reservations
/// (thread stacks, allocator arenas, the program's own mapping) take hundreds of
/// megabytes of address space before an app computes anything, so a small host or a
/// small preference must not keep every app from starting.
pub const ADDRESS_SPACE_FLOOR: f64 = 2.0 * 1024.0 * 1024.0 * 1024.0;

/// What apps print when an allocation fails (lower case): Rust's allocation error,
/// C++'s `std::bad_alloc`, the C library's text for ENOMEM, Fortran's and Python's.
const ALLOCATION_FAILURE_TEXTS: [&str; 6] = [
    "memory allocation of",
    "bad_alloc",
    "cannot allocate memory",
    "out of memory",
    "allocation would exceed memory limit",
    "memoryerror",
];

/// The address-space limit of a task using `usage` on a host with `host_memory` bytes
/// under `prefs`, bytes; `None`: no limit.
pub fn address_space_limit(host_memory: f64, prefs: &Prefs, usage: &ResourceUsage) -> Option<f64> {
    if usage.coprocessor.is_some() || !(host_memory.is_finite() && host_memory > 0.0) {
        return None;
    }
    let percent = prefs.ram_max_used_busy_pct.max(prefs.ram_max_used_idle_pct);
    if !(percent.is_finite() && percent > 0.0) {
        return None;
    }
    Some((host_memory * percent.min(100.0) / 100.0).max(ADDRESS_SPACE_FLOOR).floor())
}

/// The file-size limit of a task whose workunit's disk bound is `disk_bound` bytes;
/// `None`: no limit (no bound given).
pub fn file_size_limit(disk_bound: f64) -> Option<u64> {
    (disk_bound.is_finite() && disk_bound >= 1.0).then(|| disk_bound.ceil() as u64)
}

/// Whether `text`, what an app wrote to its standard error, says an allocation failed.
pub fn allocation_failure_reported(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    ALLOCATION_FAILURE_TEXTS.iter().any(|failure| text.contains(failure))
}

/// What the process host knows of an exit that the limits may explain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExitUnderLimits<'a> {
    /// The run had a file-size limit.
    pub file_size_limited: bool,
    /// The process was killed by the signal a file-size limit sends (SIGXFSZ).
    pub file_size_signal: bool,
    /// The slot's files reached the disk bound (an app that caught SIGXFSZ got EFBIG
    /// and exited).
    pub slot_at_disk_bound: bool,
    /// The run had an address-space limit.
    pub address_space_limited: bool,
    /// What the app wrote to its standard error in this run (its tail).
    pub run_stderr: &'a str,
}

/// The limit behind `exit`, if the facts show one: the exit then ends the task with
/// that limit's error instead of the crash or exit status it looks like.
pub fn limit_behind_exit(exit: &AppExit, facts: &ExitUnderLimits<'_>) -> Option<TaskLimit> {
    if !matches!(exit, AppExit::Signal(_) | AppExit::ExitStatus(_)) {
        return None;
    }
    if facts.file_size_limited && (facts.file_size_signal || facts.slot_at_disk_bound) {
        return Some(TaskLimit::Disk);
    }
    if facts.address_space_limited && allocation_failure_reported(facts.run_stderr) {
        return Some(TaskLimit::Memory);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ResourceType;

    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

    fn cpu() -> ResourceUsage {
        ResourceUsage { avg_ncpus: 1.0, coprocessor: None }
    }

    #[test]
    fn the_address_space_follows_the_larger_memory_share() {
        let prefs =
            Prefs { ram_max_used_busy_pct: 50.0, ram_max_used_idle_pct: 90.0, ..Prefs::default() };
        assert_eq!(
            address_space_limit(16.0 * GIB, &prefs, &cpu()),
            Some((0.9 * 16.0 * GIB).floor())
        );
        let busy_larger =
            Prefs { ram_max_used_busy_pct: 75.0, ram_max_used_idle_pct: 10.0, ..prefs.clone() };
        assert_eq!(address_space_limit(8.0 * GIB, &busy_larger, &cpu()), Some(6.0 * GIB));
        let over = Prefs { ram_max_used_idle_pct: 250.0, ..prefs.clone() };
        assert_eq!(
            address_space_limit(8.0 * GIB, &over, &cpu()),
            Some(8.0 * GIB),
            "capped at 100 %"
        );
    }

    #[test]
    fn a_small_preference_or_host_gets_the_floor() {
        let prefs =
            Prefs { ram_max_used_busy_pct: 1.0, ram_max_used_idle_pct: 1.0, ..Prefs::default() };
        assert_eq!(address_space_limit(16.0 * GIB, &prefs, &cpu()), Some(ADDRESS_SPACE_FLOOR));
        assert_eq!(
            address_space_limit(0.5 * GIB, &Prefs::default(), &cpu()),
            Some(ADDRESS_SPACE_FLOOR)
        );
    }

    #[test]
    fn no_address_space_limit_when_unknown_or_for_gpu_tasks() {
        let prefs = Prefs::default();
        assert_eq!(address_space_limit(0.0, &prefs, &cpu()), None);
        assert_eq!(address_space_limit(f64::NAN, &prefs, &cpu()), None);
        let unset =
            Prefs { ram_max_used_busy_pct: 0.0, ram_max_used_idle_pct: f64::NAN, ..prefs.clone() };
        assert_eq!(address_space_limit(16.0 * GIB, &unset, &cpu()), None);
        let gpu = ResourceUsage { avg_ncpus: 0.1, coprocessor: Some((ResourceType::Nvidia, 1.0)) };
        assert_eq!(address_space_limit(16.0 * GIB, &prefs, &gpu), None);
    }

    #[test]
    fn the_file_size_follows_the_disk_bound_when_given() {
        assert_eq!(file_size_limit(1e8), Some(100_000_000));
        assert_eq!(file_size_limit(1000.5), Some(1001));
        for none in [0.0, -5.0, 0.5, f64::NAN, f64::INFINITY] {
            assert_eq!(file_size_limit(none), None, "{none}");
        }
    }

    #[test]
    fn allocation_failures_are_recognised_in_the_apps_words() {
        for text in [
            "memory allocation of 4294967296 bytes failed\n",
            "terminate called after throwing an instance of 'std::bad_alloc'",
            "fopen: Cannot allocate memory",
            "Fatal: OUT OF MEMORY",
            "MemoryError",
        ] {
            assert!(allocation_failure_reported(text), "{text}");
        }
        assert!(!allocation_failure_reported("example-app: starting at iteration 0"));
        assert!(!allocation_failure_reported(""));
    }

    #[test]
    fn exits_under_limits_read_as_the_limit_they_hit() {
        let none = ExitUnderLimits {
            file_size_limited: false,
            file_size_signal: false,
            slot_at_disk_bound: false,
            address_space_limited: false,
            run_stderr: "memory allocation of 8 bytes failed",
        };
        let xfsz = AppExit::Signal(25);
        let abort = AppExit::Signal(6);
        assert_eq!(limit_behind_exit(&xfsz, &none), None, "no limit set: a crash");
        let file = ExitUnderLimits { file_size_limited: true, file_size_signal: true, ..none };
        assert_eq!(limit_behind_exit(&xfsz, &file), Some(TaskLimit::Disk));
        let efbig = ExitUnderLimits { file_size_limited: true, slot_at_disk_bound: true, ..none };
        assert_eq!(limit_behind_exit(&AppExit::ExitStatus(1), &efbig), Some(TaskLimit::Disk));
        let memory = ExitUnderLimits { address_space_limited: true, ..none };
        assert_eq!(limit_behind_exit(&abort, &memory), Some(TaskLimit::Memory));
        assert_eq!(limit_behind_exit(&AppExit::ExitStatus(3), &memory), Some(TaskLimit::Memory));
        let other_crash = ExitUnderLimits { run_stderr: "segmentation fault", ..memory };
        assert_eq!(limit_behind_exit(&abort, &other_crash), None, "a crash stays a crash");
        for exit in [AppExit::Finished, AppExit::EarlyExit, AppExit::Hung] {
            assert_eq!(limit_behind_exit(&exit, &file), None, "{exit:?}");
        }
    }
}
