//! What a task's processes use, from the operating system (issue "Running real apps",
//! measurement): CPU time and resident memory of the app's process and every process it
//! started, read from `/proc`. An app's own report of its CPU time is not trusted for
//! accounting or limits.
//!
//! The tree is found from the app's process through the `children` files of its
//! threads; an app without children costs one read per poll, which also says whether
//! it has exited: cheap enough to poll every task every second.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::OnceLock;

/// The most processes of one task that are measured (an app that forks without bound
/// is still measured in bounded time).
const MAX_PROCESSES: usize = 256;
/// The most bytes read of one /proc file (a stat line is a few hundred bytes).
const PROC_READ_LIMIT: usize = 4096;

/// A task's use of the host at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct TreeUsage {
    /// CPU seconds of the processes alive now and of the children they waited for.
    pub(crate) cpu_seconds: f64,
    /// Resident memory of the processes alive now, bytes.
    pub(crate) resident_bytes: f64,
    /// Major page faults of the processes alive now and of the children they waited for.
    pub(crate) major_faults: u64,
    /// Processes measured.
    pub(crate) processes: usize,
    /// The app's process has exited (it waits, a zombie, to be reaped).
    pub(crate) exited: bool,
}

/// One process's figures from `/proc/PID/stat`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct StatFigures {
    /// The process state (`R`, `S`, `T`, `Z`, ...).
    state: u8,
    /// utime + stime + cutime + cstime, in clock ticks.
    cpu_ticks: u64,
    /// Resident set, pages.
    resident_pages: u64,
    /// majflt + cmajflt.
    major_faults: u64,
}

/// A system figure, or `default` where the system does not say.
fn system_figure(variable: nix::unistd::SysconfVar, default: f64) -> f64 {
    nix::unistd::sysconf(variable).ok().flatten().filter(|&v| v > 0).map_or(default, |v| v as f64)
}

/// The kernel's clock ticks per second, in which `/proc` counts CPU time.
pub(crate) fn clock_ticks_per_second() -> f64 {
    static TICKS: OnceLock<f64> = OnceLock::new();
    *TICKS.get_or_init(|| system_figure(nix::unistd::SysconfVar::CLK_TCK, 100.0))
}

fn page_size() -> f64 {
    static PAGE: OnceLock<f64> = OnceLock::new();
    *PAGE.get_or_init(|| system_figure(nix::unistd::SysconfVar::PAGE_SIZE, 4096.0))
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
    let faults = [field(12)?, field(13)?];
    let major_faults = faults.iter().map(|&f| u64::try_from(f).unwrap_or(0)).sum();
    let state = fields.first()?.bytes().next()?;
    Some(StatFigures { state, cpu_ticks, resident_pages, major_faults })
}

/// The swap a process holds, bytes (`VmSwap` in `/proc/PID/status`); `None` where it
/// cannot be read (the process is gone, or the kernel does not say).
pub(crate) fn swap_bytes(pid: i32) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    parse_vm_swap(&text)
}

/// The `VmSwap:` line of a status file, in bytes (the kernel writes kB).
fn parse_vm_swap(text: &str) -> Option<f64> {
    let line = text.lines().find_map(|line| line.strip_prefix("VmSwap:"))?;
    let kilobytes: f64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kilobytes * 1024.0)
}

/// Reads a small /proc file from its start into `buffer` (at most
/// [`PROC_READ_LIMIT`] bytes). These files are generated whole by one read: a read
/// that does not fill the buffer has reached the end.
fn read_proc(file: &File, buffer: &mut Vec<u8>) -> io::Result<()> {
    buffer.clear();
    buffer.resize(PROC_READ_LIMIT, 0);
    let read = file.read_at(buffer, 0)?;
    buffer.truncate(read);
    Ok(())
}

/// The children of a process, from its main thread's `children` file.
fn parse_children(text: &[u8]) -> impl Iterator<Item = i32> + '_ {
    text.split(|b| b.is_ascii_whitespace())
        .filter_map(|p| std::str::from_utf8(p).ok()?.parse().ok())
}

/// While an app has no children, they are looked for every this many polls.
const CHILD_SCAN_EVERY: u32 = 30;

/// The children of every thread of `pid` (a directory listing and one read per thread).
fn children_of_all_threads(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read(task.path().join("children")).ok())
        .flat_map(|text| parse_children(&text).collect::<Vec<_>>())
        .collect()
}

/// Measures an app's process tree, poll after poll, in as few system calls as it can:
/// the app's own stat file stays open between polls (a read from the start regenerates
/// it), and the children of all its threads are looked for every
/// [`CHILD_SCAN_EVERY`] polls, or every poll once it has some. A poll of an app
/// without children reads one file: its CPU time, memory and whether it has exited.
#[derive(Debug)]
pub(crate) struct TreeMeter {
    pid: i32,
    stat: Option<File>,
    /// The app's children, as last found.
    children: Vec<i32>,
    polls: u32,
    buffer: Vec<u8>,
}

impl TreeMeter {
    /// A meter for the tree under `pid`.
    pub(crate) fn new(pid: i32) -> Self {
        TreeMeter {
            pid,
            stat: File::open(format!("/proc/{pid}/stat")).ok(),
            children: Vec::new(),
            polls: 0,
            buffer: Vec::with_capacity(PROC_READ_LIMIT),
        }
    }

    /// Measures the process and its descendants. Fails only if the process itself
    /// cannot be read; descendants that vanish meanwhile are skipped.
    pub(crate) fn measure(&mut self) -> io::Result<TreeUsage> {
        let stat = self.stat.as_ref().ok_or(io::ErrorKind::NotFound)?;
        read_proc(stat, &mut self.buffer)?;
        let figures = std::str::from_utf8(&self.buffer)
            .ok()
            .and_then(parse_stat)
            .ok_or(io::ErrorKind::InvalidData)?;
        let exited = matches!(figures.state, b'Z' | b'X');
        let mut ticks = figures.cpu_ticks;
        let mut pages = figures.resident_pages;
        let mut faults = figures.major_faults;
        let mut processes = 1;
        if !exited && (self.polls % CHILD_SCAN_EVERY == 0 || !self.children.is_empty()) {
            self.children = children_of_all_threads(self.pid);
        }
        self.polls = self.polls.wrapping_add(1);
        let mut pending = self.children.clone();
        let mut seen = 0;
        while let Some(next) = pending.pop() {
            seen += 1;
            if seen > MAX_PROCESSES {
                break;
            }
            let Some(figures) = std::fs::read_to_string(format!("/proc/{next}/stat"))
                .ok()
                .as_deref()
                .and_then(parse_stat)
            else {
                continue;
            };
            ticks = ticks.saturating_add(figures.cpu_ticks);
            pages = pages.saturating_add(figures.resident_pages);
            faults = faults.saturating_add(figures.major_faults);
            processes += 1;
            if let Ok(text) = std::fs::read(format!("/proc/{next}/task/{next}/children")) {
                pending.extend(parse_children(&text));
            }
        }
        Ok(TreeUsage {
            cpu_seconds: ticks as f64 / clock_ticks_per_second(),
            resident_bytes: pages as f64 * page_size(),
            major_faults: faults,
            processes,
            exited,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_stat_line_with_an_awkward_name() {
        let line = "4242 (a (b) c) R 1 4242 4242 0 -1 4194304 100 0 5 2 250 50 7 3 20 0 1 0 \
                    12345 1000000 321 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0";
        assert_eq!(
            parse_stat(line),
            Some(StatFigures {
                state: b'R',
                cpu_ticks: 250 + 50 + 7 + 3,
                resident_pages: 321,
                major_faults: 5 + 2
            })
        );
        assert_eq!(parse_stat("4242 (x) R 1"), None);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn reads_the_swap_of_a_process() {
        let status = "Name:\tapp\nVmRSS:\t  2048 kB\nVmSwap:\t     12 kB\nThreads:\t1\n";
        assert_eq!(parse_vm_swap(status), Some(12.0 * 1024.0));
        assert_eq!(parse_vm_swap("Name:\tkthread\n"), None);
        assert_eq!(parse_vm_swap("VmSwap:\tlots\n"), None);
        assert!(swap_bytes(std::process::id() as i32).is_some(), "this process has a VmSwap line");
        assert_eq!(swap_bytes(i32::MAX), None);
    }

    #[test]
    fn measures_a_process_and_its_children() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let mut meter = TreeMeter::new(std::process::id() as i32);
        let usage = meter.measure().unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        // The test runs on a thread other than the main one: its child is found all
        // the same.
        assert!(usage.processes >= 2, "this process and its child: {usage:?}");
        assert!(usage.resident_bytes > 0.0);
        assert!(TreeMeter::new(i32::MAX).measure().is_err());
    }
}
