//! The machine as sysinfo, /proc/cpuinfo and statvfs describe it (issue "The host
//! service", host discovery): CPUs (count, vendor, model, features, cache), memory and
//! swap, the disk of the data directory, the operating system, as a scheduler request's
//! `<host_info>` carries them.

use super::cpu_info::parse_cpuinfo;
use boinc_core::model::Host;
use boinc_runtime::effects::HostDiscoveryError;
use std::path::Path;
use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};

/// The longest `/proc/cpuinfo` read, bytes (a 256-CPU host writes about 400 KB).
const MAX_CPUINFO: u64 = 1 << 20;

/// The machine's CPUs, memory, OS and the disk holding `data_dir`; the benchmark figures
/// are left at their defaults (no benchmark ran: `p_calculated` 0).
pub(crate) fn describe_system(data_dir: &Path) -> Result<Host, HostDiscoveryError> {
    let system = System::new_with_specifics(
        RefreshKind::nothing()
            .with_cpu(CpuRefreshKind::nothing())
            .with_memory(MemoryRefreshKind::everything()),
    );
    let mut host = Host {
        p_ncpus: u32::try_from(system.cpus().len()).unwrap_or(u32::MAX).max(1),
        m_nbytes: system.total_memory() as f64,
        m_swap: system.total_swap() as f64,
        ..Host::default()
    };
    let (total, free) = disk_space(data_dir)?;
    (host.d_total, host.d_free) = (total, free);
    let description = &mut host.description;
    if let Some(cpu) = system.cpus().first() {
        description.p_vendor = cpu.vendor_id().trim().to_string();
        description.p_model = cpu.brand().trim().to_string();
    }
    let cpuinfo = read_bounded(Path::new("/proc/cpuinfo"));
    let cpu_info = parse_cpuinfo(&cpuinfo);
    description.p_features = cpu_info.features;
    description.m_cache = cpu_info.cache_bytes;
    description.domain_name = System::host_name().unwrap_or_default();
    (description.os_name, description.os_version) = operating_system();
    Ok(host)
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
    let release = match System::os_version() {
        Some(number) => format!("{family} {number}"),
        None => family,
    };
    let version = match System::kernel_version() {
        Some(kernel) => format!("{release} [{kernel}]"),
        None => release,
    };
    (name, version)
}

/// A text file's first [`MAX_CPUINFO`] bytes; empty when it cannot be read.
fn read_bounded(path: &Path) -> String {
    use std::io::Read;
    let mut text = String::new();
    if let Ok(file) = std::fs::File::open(path) {
        let mut bytes = Vec::new();
        if file.take(MAX_CPUINFO).read_to_end(&mut bytes).is_ok() {
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
        assert_eq!(host.p_ncpus as usize, system.cpus().len());
        assert_eq!(host.m_nbytes, system.total_memory() as f64);
        assert_eq!(host.m_swap, system.total_swap() as f64);
        assert!(host.d_total >= host.d_free && host.d_free > 0.0, "{host:?}");
        assert!(!host.description.p_model.is_empty());
        assert!(host.description.os_name.starts_with("Linux"));
        assert_eq!(host.description.p_calculated, 0.0, "no benchmark ran");
    }

    #[test]
    fn a_missing_data_directory_is_a_clear_error() {
        let error = describe_system(Path::new("/nonexistent/boinc-rs")).expect_err("missing");
        assert!(error.to_string().contains("/nonexistent/boinc-rs"), "{error}");
    }
}
