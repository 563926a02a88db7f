//! The CPU other programs use (BOINC's "suspend when non-BOINC CPU usage is above",
//! `suspend_cpu_usage`): the host's busy CPU time from `/proc/stat` less what the
//! client and its apps used over the same interval (the client's process tree, apps
//! and their children included), as a percentage of the whole host. The core judges it
//! (`control::host_view`, BOINC's "CPU is busy").

use crate::process::{TreeMeter, clock_ticks_per_second};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The shortest interval measured: shorter ones are all noise (the kernel counts in
/// ticks).
const MIN_INTERVAL: Duration = Duration::from_secs(1);
/// The most bytes of `/proc/stat` read (its `cpu` line comes first).
const STAT_READ_LIMIT: usize = 4096;

/// The host's CPU time at one instant, seconds summed over its CPUs.
#[derive(Debug, Clone, Copy, PartialEq)]
struct HostCpu {
    busy: f64,
    total: f64,
}

/// One reading: the host's CPU time and the client's own.
#[derive(Debug, Clone, Copy)]
struct Reading {
    at: Instant,
    host: HostCpu,
    own: f64,
}

/// Measures other programs' CPU use, interval after interval.
#[derive(Debug)]
pub(crate) struct OtherCpuMeter {
    stat: PathBuf,
    own: TreeMeter,
    last: Option<Reading>,
    percent: Option<f64>,
}

impl OtherCpuMeter {
    /// A meter of the CPU used beside the process tree under `client` (this process, for
    /// the client), with the host's figures read from `stat` (`/proc/stat`).
    pub(crate) fn new(stat: impl Into<PathBuf>, client: i32) -> Self {
        OtherCpuMeter { stat: stat.into(), own: TreeMeter::new(client), last: None, percent: None }
    }

    /// For this process, on this host.
    pub(crate) fn here() -> Self {
        Self::new("/proc/stat", std::process::id() as i32)
    }

    /// Other programs' CPU use since the last interval measured, percent of the host;
    /// `None` until a first interval is over, or where the figures cannot be read.
    pub(crate) fn measure(&mut self, now: Instant) -> Option<f64> {
        if self.last.is_some_and(|last| now.saturating_duration_since(last.at) < MIN_INTERVAL) {
            return self.percent;
        }
        let reading = self.read(now);
        self.percent = match (self.last, reading) {
            (Some(before), Some(after)) => other_percent(before, after),
            _ => None,
        };
        self.last = reading;
        self.percent
    }

    fn read(&mut self, at: Instant) -> Option<Reading> {
        let text = read_start(&self.stat)?;
        let host = parse_host_cpu(&text, clock_ticks_per_second())?;
        let own = self.own.measure().ok()?.cpu_seconds;
        Some(Reading { at, host, own })
    }
}

/// What others used between two readings, percent of the host's CPU time.
fn other_percent(before: Reading, after: Reading) -> Option<f64> {
    let total = after.host.total - before.host.total;
    if total <= 0.0 {
        return None;
    }
    let others = (after.host.busy - before.host.busy) - (after.own - before.own);
    Some((others / total * 100.0).clamp(0.0, 100.0))
}

/// The first bytes of a file, as text.
fn read_start(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut bytes = Vec::with_capacity(STAT_READ_LIMIT);
    std::fs::File::open(path).ok()?.take(STAT_READ_LIMIT as u64).read_to_end(&mut bytes).ok()?;
    String::from_utf8(bytes).ok()
}

/// The aggregate `cpu` line of `/proc/stat`: busy (user, nice, system, irq, softirq,
/// steal) and total (with idle and iowait) seconds; guest time is inside user's.
fn parse_host_cpu(text: &str, ticks_per_second: f64) -> Option<HostCpu> {
    let line = text.lines().find(|line| line.starts_with("cpu "))?;
    let ticks: Vec<u64> =
        line.split_whitespace().skip(1).take(8).map(str::parse).collect::<Result<_, _>>().ok()?;
    let [user, nice, system, idle, iowait, irq, softirq, steal] = ticks[..] else {
        return None;
    };
    let busy =
        [user, nice, system, irq, softirq, steal].iter().fold(0u64, |a, t| a.saturating_add(*t));
    let total = busy.saturating_add(idle).saturating_add(iowait);
    Some(HostCpu { busy: busy as f64 / ticks_per_second, total: total as f64 / ticks_per_second })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(busy: f64, total: f64, own: f64) -> Reading {
        Reading { at: Instant::now(), host: HostCpu { busy, total }, own }
    }

    #[test]
    fn the_clients_own_use_is_not_counted() {
        // Two CPUs for 10 s: 20 CPU s, 15 busy, of which the client and its apps 10.
        let before = reading(100.0, 1000.0, 50.0);
        assert_eq!(other_percent(before, reading(115.0, 1020.0, 60.0)), Some(25.0));
        assert_eq!(other_percent(before, reading(110.0, 1020.0, 60.0)), Some(0.0));
        assert_eq!(other_percent(before, reading(100.0, 1000.0, 50.0)), None, "no time");
    }

    #[test]
    fn reads_the_hosts_cpu_line() {
        let text = "cpu  100 20 30 400 50 6 4 0 0 0\ncpu0 50 10 15 200 25 3 2 0 0 0\nintr 1\n";
        assert_eq!(parse_host_cpu(text, 100.0), Some(HostCpu { busy: 1.6, total: 6.1 }));
        assert_eq!(parse_host_cpu("cpu 1 2 x\n", 100.0), None);
        assert_eq!(parse_host_cpu("intr 5\n", 100.0), None);
    }

    #[test]
    fn a_busy_program_of_someone_elses_is_seen() {
        // A spinning shell the client did not start (its parent exits, so it is not
        // in the client's tree), for four seconds.
        let spinner = std::process::Command::new("sh")
            .args(["-c", "timeout 4 sh -c 'while :; do :; done' &"])
            .status()
            .expect("sh");
        assert!(spinner.success());
        let mut meter = OtherCpuMeter::here();
        let start = Instant::now();
        assert_eq!(meter.measure(start), None, "no interval yet");
        std::thread::sleep(Duration::from_millis(1500));
        let percent = meter.measure(Instant::now()).expect("a figure");
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        // One CPU of the host's, less what the shared machine's scheduler held back.
        assert!(percent > 50.0 / cpus, "{percent} % with a spinner on {cpus} CPUs");
        assert_eq!(meter.measure(Instant::now()), Some(percent), "within the interval");
    }
}
