//! What a task's processes use, from the operating system (issue "Running real apps",
//! measurement): CPU time and resident memory of the app's process and every process it
//! started, read from `/proc`. An app's own report of its CPU time is not trusted for
//! accounting or limits.
//!
//! The tree is found from the app's process through `/proc/PID/task/PID/children`, so a
//! poll reads two small files per process: cheap enough to poll every task every
//! second.

use std::io;
use std::sync::OnceLock;

/// The most processes of one task that are measured (an app that forks without bound
/// is still measured in bounded time).
const MAX_PROCESSES: usize = 256;

/// A task's use of the host at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct TreeUsage {
    /// CPU seconds of the processes alive now and of the children they waited for.
    pub(crate) cpu_seconds: f64,
    /// Resident memory of the processes alive now, bytes.
    pub(crate) resident_bytes: f64,
    /// Processes measured.
    pub(crate) processes: usize,
}

/// One process's figures from `/proc/PID/stat`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct StatFigures {
    /// utime + stime + cutime + cstime, in clock ticks.
    cpu_ticks: u64,
    /// Resident set, pages.
    resident_pages: u64,
}

fn clock_ticks_per_second() -> f64 {
    static TICKS: OnceLock<f64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
            .ok()
            .flatten()
            .filter(|&t| t > 0)
            .map_or(100.0, |t| t as f64)
    })
}

fn page_size() -> f64 {
    static PAGE: OnceLock<f64> = OnceLock::new();
    *PAGE.get_or_init(|| {
        nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
            .ok()
            .flatten()
            .filter(|&p| p > 0)
            .map_or(4096.0, |p| p as f64)
    })
}

/// Reads the figures from a `/proc/PID/stat` line. The command name (field 2) is in
/// parentheses and may hold spaces and parentheses itself, so fields are counted from
/// the last `)`.
fn parse_stat(line: &str) -> Option<StatFigures> {
    let after_name = &line[line.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // Field n of proc(5) is fields[n - 3]: state is field 3.
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<i64>().ok());
    let ticks = [field(14)?, field(15)?, field(16)?, field(17)?];
    let cpu_ticks = ticks.iter().map(|&t| u64::try_from(t).unwrap_or(0)).sum();
    let resident_pages = u64::try_from(field(24)?).unwrap_or(0);
    Some(StatFigures { cpu_ticks, resident_pages })
}

/// The children of `pid` (of its main thread: apps fork from their main thread).
fn children(pid: i32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .map(|text| text.split_whitespace().filter_map(|p| p.parse().ok()).collect())
        .unwrap_or_default()
}

/// Measures the process `pid` and its descendants. Fails only if `pid` itself cannot
/// be read (it is gone); descendants that vanish meanwhile are skipped.
pub(crate) fn measure_tree(pid: i32) -> io::Result<TreeUsage> {
    let mut usage = TreeUsage::default();
    let mut pending = vec![pid];
    let mut ticks = 0u64;
    let mut pages = 0u64;
    while let Some(next) = pending.pop() {
        if usage.processes >= MAX_PROCESSES {
            break;
        }
        let figures = match std::fs::read_to_string(format!("/proc/{next}/stat")) {
            Ok(line) => parse_stat(&line),
            Err(error) if next == pid => return Err(error),
            Err(_) => continue,
        };
        let Some(figures) = figures else {
            if next == pid {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "unreadable /proc stat"));
            }
            continue;
        };
        ticks = ticks.saturating_add(figures.cpu_ticks);
        pages = pages.saturating_add(figures.resident_pages);
        usage.processes += 1;
        pending.extend(children(next));
    }
    usage.cpu_seconds = ticks as f64 / clock_ticks_per_second();
    usage.resident_bytes = pages as f64 * page_size();
    Ok(usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_stat_line_with_an_awkward_name() {
        let line = "4242 (a (b) c) R 1 4242 4242 0 -1 4194304 100 0 0 0 250 50 7 3 20 0 1 0 \
                    12345 1000000 321 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0";
        assert_eq!(
            parse_stat(line),
            Some(StatFigures { cpu_ticks: 250 + 50 + 7 + 3, resident_pages: 321 })
        );
        assert_eq!(parse_stat("4242 (x) R 1"), None);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn measures_this_process() {
        let usage = measure_tree(std::process::id() as i32).unwrap();
        assert!(usage.processes >= 1);
        assert!(usage.resident_bytes > 0.0);
        assert!(measure_tree(i32::MAX).is_err());
    }
}
