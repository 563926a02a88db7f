//! The machine as sysinfo, /proc/cpuinfo and statvfs describe it (issue "The host
//! service", host discovery): CPUs (count, vendor, model, features, cache), memory and
//! swap, the disk of the data directory, the operating system, the host's address and
//! as a scheduler request's `<host_info>` carries them (the container and
//! virtual-machine tools are `virtualization.rs`'s), in BOINC 7.20's forms on Linux (fixtures/boinc-7.20.5
//! sched_request_04): `os_version` is the distribution's name, then the kernel release
//! and the C library's version in brackets; `p_model` has the x86 family, model and
//! stepping; `p_ncpus` counts the CPUs this process may run on (its affinity, as
//! `taskset` sets it), not all the machine's.

use super::cpu_info::{boinc_model, parse_cpuinfo};
use boinc_core::model::Host;
use boinc_runtime::effects::HostDiscoveryError;
use std::path::Path;
use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};

/// The longest `/proc/cpuinfo` read, bytes (a 256-CPU host writes about 400 KB).
const MAX_CPUINFO: u64 = 1 << 20;
/// The longest `/etc/os-release` read, bytes.
const MAX_OS_RELEASE: u64 = 64 * 1024;
/// The memory bandwidth BOINC's client reports (`<p_membw>`): it no longer measures
/// it, and sends this figure (fixtures/boinc-7.20.5).
pub(crate) const REPORTED_MEMORY_BANDWIDTH: f64 = 1e9;
/// The integer speed BOINC reports before its benchmarks have run (`<p_iops>`).
const DEFAULT_IOPS: f64 = 1e9;

/// The machine's CPUs, memory, OS and the disk holding `data_dir`; the benchmark figures
/// are left at their defaults (no benchmark ran: `p_calculated` 0).
pub(crate) fn describe_system(data_dir: &Path) -> Result<Host, HostDiscoveryError> {
    let system = System::new_with_specifics(
        RefreshKind::nothing()
            .with_cpu(CpuRefreshKind::nothing())
            .with_memory(MemoryRefreshKind::everything()),
    );
    let mut host = Host {
        p_ncpus: usable_cpus(system.cpus().len()),
        m_nbytes: system.total_memory() as f64,
        m_swap: system.total_swap() as f64,
        ..Host::default()
    };
    let (total, free) = disk_space(data_dir)?;
    (host.d_total, host.d_free) = (total, free);
    let description = &mut host.description;
    let cpuinfo = read_bounded(Path::new("/proc/cpuinfo"), MAX_CPUINFO);
    let cpu_info = parse_cpuinfo(&cpuinfo);
    if let Some(cpu) = system.cpus().first() {
        description.p_vendor = cpu.vendor_id().trim().to_string();
        description.p_model = boinc_model(&cpu_info, cpu.brand());
    }
    description.p_features = cpu_info.features;
    description.m_cache = cpu_info.cache_bytes;
    description.p_membw = REPORTED_MEMORY_BANDWIDTH;
    // Until the benchmarks run, BOINC reports 10^9 integer operations a second, as it
    // does floating-point ones (`Host`'s default `p_fpops`).
    description.p_iops = DEFAULT_IOPS;
    description.domain_name = System::host_name().unwrap_or_default();
    description.ip_addr = address_of(&description.domain_name);
    (description.os_name, description.os_version) = operating_system();
    Ok(host)
}

/// The CPUs this process may run on (`sched_getaffinity`), as BOINC counts them on
/// Linux: a client started under `taskset -c 0` has one. `all` (the machine's count)
/// where the affinity cannot be read.
fn usable_cpus(all: usize) -> u32 {
    use nix::sched::{CpuSet, sched_getaffinity};
    let allowed = sched_getaffinity(nix::unistd::Pid::from_raw(0))
        .map(|set| (0..CpuSet::count()).filter(|&cpu| set.is_set(cpu).unwrap_or(false)).count())
        .ok()
        .filter(|&n| n > 0);
    u32::try_from(allowed.unwrap_or(all)).unwrap_or(u32::MAX).max(1)
}

/// The host's address as BOINC's client finds it: the first address its own name
/// resolves to (empty where it does not resolve).
fn address_of(host_name: &str) -> String {
    use std::net::ToSocketAddrs;
    if host_name.is_empty() {
        return String::new();
    }
    (host_name, 0)
        .to_socket_addrs()
        .ok()
        .and_then(|mut addresses| addresses.next())
        .map(|address| address.ip().to_string())
        .unwrap_or_default()
}

/// Total and free bytes of the filesystem holding `dir` (free: what an unprivileged
/// user may still write).
pub(crate) fn disk_space(dir: &Path) -> Result<(f64, f64), HostDiscoveryError> {
    let stats =
        nix::sys::statvfs::statvfs(dir).map_err(|errno| HostDiscoveryError::DataDirectory {
            dir: dir.to_path_buf(),
            reason: errno.desc().to_string(),
        })?;
    let unit = stats.fragment_size() as f64;
    Ok((stats.blocks() as f64 * unit, stats.blocks_available() as f64 * unit))
}

/// The OS as the real client names it on Linux: `Linux Debian` and
/// `Debian GNU/Linux 12 [6.1.0-18-amd64]`.
fn operating_system() -> (String, String) {
    let family = System::name().unwrap_or_default();
    let distribution = family.split_whitespace().next().unwrap_or_default();
    let name = if distribution.is_empty() {
        std::env::consts::OS.to_string()
    } else {
        format!("Linux {distribution}")
    };
    let pretty = pretty_name(&read_bounded(Path::new("/etc/os-release"), MAX_OS_RELEASE));
    let release = match (pretty, System::os_version()) {
        (Some(pretty), _) => pretty,
        (None, Some(number)) => format!("{family} {number}"),
        (None, None) => family,
    };
    (name, os_version(&release, System::kernel_version().as_deref(), libc_version().as_deref()))
}

/// BOINC's `os_version` on Linux: `Debian GNU/Linux 12 (bookworm) [6.1.0-18-amd64|libc
/// 2.36]` (the bracket only with what is known).
fn os_version(release: &str, kernel: Option<&str>, libc: Option<&str>) -> String {
    let bracket = match (kernel, libc) {
        (Some(kernel), Some(libc)) => format!("{kernel}|libc {libc}"),
        (Some(kernel), None) => kernel.to_string(),
        (None, Some(libc)) => format!("libc {libc}"),
        (None, None) => return release.to_string(),
    };
    format!("{release} [{bracket}]")
}

/// `PRETTY_NAME` of an os-release text, unquoted.
fn pretty_name(text: &str) -> Option<String> {
    let value = text.lines().find_map(|line| line.trim().strip_prefix("PRETTY_NAME="))?;
    let value = value.trim().trim_matches('"').trim_matches('\'').trim();
    (!value.is_empty()).then(|| value.chars().take(256).collect())
}

/// The GNU C library's version (`2.36`); `None` on another C library.
fn libc_version() -> Option<String> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: gnu_get_libc_version returns a pointer to a static, NUL-terminated
        // string that lives as long as the process.
        let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
        return version.to_str().ok().map(str::to_string);
    }
    #[allow(unreachable_code)]
    None
}

/// A text file's first [`MAX_CPUINFO`] bytes; empty when it cannot be read.
fn read_bounded(path: &Path, limit: u64) -> String {
    use std::io::Read;
    let mut text = String::new();
    if let Ok(file) = std::fs::File::open(path) {
        let mut bytes = Vec::new();
        if file.take(limit).read_to_end(&mut bytes).is_ok() {
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_cpus_and_memory_sysinfo_reports() {
        let dir = tempfile::tempdir().expect("temp dir");
        let host = describe_system(dir.path()).expect("described");
        let mut system = System::new();
        system.refresh_memory();
        system.refresh_cpu_list(CpuRefreshKind::nothing());
        // The CPUs this test may run on: all of them unless run under taskset.
        assert!(host.p_ncpus >= 1 && host.p_ncpus as usize <= system.cpus().len());
        assert_eq!(host.p_ncpus, usable_cpus(system.cpus().len()));
        assert_eq!(host.description.p_membw, REPORTED_MEMORY_BANDWIDTH);
        assert_eq!((host.p_fpops, host.description.p_iops), (1e9, DEFAULT_IOPS), "no benchmark");
        let libc = libc_version().expect("a GNU C library");
        assert!(host.description.os_version.ends_with(&format!("|libc {libc}]")), "{host:?}");
        assert_eq!(host.m_nbytes, system.total_memory() as f64);
        assert_eq!(host.m_swap, system.total_swap() as f64);
        assert!(host.d_total >= host.d_free && host.d_free > 0.0, "{host:?}");
        assert!(!host.description.p_model.is_empty());
        assert!(host.description.os_name.starts_with("Linux"));
        assert_eq!(host.description.p_calculated, 0.0, "no benchmark ran");
    }

    #[test]
    fn the_os_version_is_written_as_boinc_writes_it() {
        let release = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n";
        let pretty = pretty_name(release).expect("a pretty name");
        assert_eq!(
            os_version(&pretty, Some("6.18.44-fc-v657"), Some("2.36")),
            "Debian GNU/Linux 12 (bookworm) [6.18.44-fc-v657|libc 2.36]"
        );
        assert_eq!(os_version("Alpine", Some("6.1"), None), "Alpine [6.1]");
        assert_eq!(os_version("X", None, None), "X");
        assert_eq!(pretty_name("NAME=x\nPRETTY_NAME=\"\"\n"), None);
    }

    #[test]
    fn the_cpu_count_follows_the_affinity() {
        use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
        use nix::unistd::Pid;
        // On a thread of its own: the affinity set here is the thread's.
        std::thread::spawn(|| {
            let before = sched_getaffinity(Pid::from_raw(0)).expect("affinity");
            let first = (0..CpuSet::count()).find(|&c| before.is_set(c).unwrap_or(false));
            let mut one = CpuSet::new();
            one.set(first.expect("some CPU")).expect("set");
            sched_setaffinity(Pid::from_raw(0), &one).expect("narrowed");
            assert_eq!(usable_cpus(64), 1, "as under taskset -c 0");
        })
        .join()
        .expect("the thread");
    }

    #[test]
    fn the_host_address_is_its_names_first() {
        assert_eq!(
            address_of("localhost").parse::<std::net::IpAddr>().map(|a| a.is_loopback()),
            Ok(true)
        );
        assert_eq!(address_of(""), "");
    }

    #[test]
    fn a_missing_data_directory_is_a_clear_error() {
        let error = describe_system(Path::new("/nonexistent/boinc-rs")).expect_err("missing");
        assert!(error.to_string().contains("/nonexistent/boinc-rs"), "{error}");
    }
}
