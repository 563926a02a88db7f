//! What runs on the machine, read from Linux's /proc, for the tests that check what a
//! client says of its tasks against the processes behind them: the processes working in
//! a data directory's slots, the CPU time they used, and the zombies a parent leaves
//! unreaped.

#![allow(dead_code)] // Each test binary uses a different part.

use std::path::{Path, PathBuf};

/// A live (not zombie) process whose working directory is under `slots`: its pid and
/// that directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotProcess {
    pub pid: i32,
    pub cwd: PathBuf,
    /// Its state letter in /proc (R, S, D, T for stopped, ...).
    pub state: char,
}

/// The processes (not zombies) working in a directory under `slots`.
pub fn processes_in(slots: &Path) -> Vec<SlotProcess> {
    let slots = std::fs::canonicalize(slots).unwrap_or_else(|_| slots.to_owned());
    pids()
        .filter_map(|pid| {
            let state = state(pid).filter(|s| *s != 'Z' && *s != 'X')?;
            let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?;
            cwd.starts_with(&slots).then_some(SlotProcess { pid, cwd, state })
        })
        .collect()
}

/// The zombie children of `parent`: processes that ended and were never waited for.
pub fn zombie_children(parent: i32) -> Vec<i32> {
    pids().filter(|&pid| state(pid) == Some('Z') && parent_of(pid) == Some(parent)).collect()
}

/// The CPU time, user and system, seconds, that the processes working under `slots`
/// have used so far.
pub fn cpu_seconds_in(slots: &Path) -> f64 {
    // /proc counts in USER_HZ, which Linux fixes at 100 for user space.
    let ticks = 100.0;
    processes_in(slots)
        .iter()
        .filter_map(|p| {
            let fields = stat_fields(p.pid)?;
            // utime and stime: the 14th and 15th fields, the 12th and 13th after the
            // command.
            let used: u64 =
                fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
            Some(used as f64 / ticks)
        })
        .sum()
}

fn pids() -> impl Iterator<Item = i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
}

/// The fields of /proc/PID/stat after the command (which may hold spaces and parens).
fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    Some(after.split_whitespace().map(str::to_owned).collect())
}

fn state(pid: i32) -> Option<char> {
    stat_fields(pid)?.first()?.chars().next()
}

fn parent_of(pid: i32) -> Option<i32> {
    stat_fields(pid)?.get(1)?.parse().ok()
}
