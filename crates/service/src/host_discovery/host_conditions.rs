//! What the live host observes about its user, power, clock and programs (BOINC's
//! suspension while the user is active, on batteries, outside the time-of-day windows,
//! while an exclusive app or exclusive GPU app runs): the last input is the latest access to an input device
//! or terminal (`/dev/input`, `/dev/tty*`, `/dev/pts`), power comes from
//! `/sys/class/power_supply`, the local time from the C library (the host's time zone),
//! programs from `/proc`. The core judges them (`control::host_view`).

use boinc_core::control::{HostConditions, LocalTime};
use std::path::Path;
use std::time::SystemTime;

/// The most entries read from one directory: the check runs every second.
const MAX_ENTRIES: usize = 256;
/// The most processes looked at for an exclusive app.
const MAX_PROCESSES: usize = 65_536;

/// The host's conditions now: user idle time, batteries, local time, whether one of
/// `exclusive_apps` (or of `exclusive_gpu_apps`) runs; the network counts as up (a
/// failed RPC backs off on its own).
pub fn observe_host_conditions(
    exclusive_apps: &[String],
    exclusive_gpu_apps: &[String],
) -> HostConditions {
    let now = SystemTime::now();
    let running =
        |names: &[String]| !names.is_empty() && running_program(Path::new("/proc"), names);
    HostConditions {
        user_idle_seconds: latest_input_idle(now),
        on_batteries: on_batteries(&power_supplies(Path::new("/sys/class/power_supply"))),
        connected: true,
        local_time: local_time(now),
        exclusive_app_running: running(exclusive_apps),
        exclusive_gpu_app_running: running(exclusive_gpu_apps),
        ..HostConditions::SERVER
    }
}

/// Seconds since the latest access to an input device or terminal at `now`; `None`
/// where there is none.
pub(crate) fn latest_input_idle(now: SystemTime) -> Option<f64> {
    latest_input(Path::new("/dev"))
        .map(|last| now.duration_since(last).map_or(0.0, |idle| idle.as_secs_f64()))
}

/// The local weekday and hour at `seconds` since the Unix epoch, in the host's time
/// zone (`None` for a time the C library cannot place).
pub fn local_time_at(seconds: f64) -> Option<LocalTime> {
    if !(seconds.is_finite() && (0.0..1e12).contains(&seconds)) {
        return None;
    }
    local_time(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs_f64(seconds))
}

/// The local weekday and hour of `now`, in the host's time zone.
fn local_time(now: SystemTime) -> Option<LocalTime> {
    let seconds = now.duration_since(SystemTime::UNIX_EPOCH).ok()?.as_secs();
    let time = libc::time_t::try_from(seconds).ok()?;
    // SAFETY: localtime_r only writes the `tm` it is handed; both pointers are valid
    // for the call, and a null return (an unrepresentable time) is checked.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let done = unsafe { libc::localtime_r(&time, &mut tm) };
    if done.is_null() {
        return None;
    }
    Some(LocalTime {
        weekday: u8::try_from(tm.tm_wday).ok()?,
        hour: f64::from(tm.tm_hour) + f64::from(tm.tm_min) / 60.0 + f64::from(tm.tm_sec) / 3600.0,
    })
}

/// Whether a process under `proc` runs one of `names` (an executable's file name, as
/// cc_config's `<exclusive_app>` gives it): its command name, or its first argument's
/// file name where the kernel cut the command name short.
fn running_program(proc: &Path, names: &[String]) -> bool {
    let Ok(entries) = std::fs::read_dir(proc) else { return false };
    entries.filter_map(Result::ok).take(MAX_PROCESSES).any(|entry| {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        let dir = entry.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        let comm = comm.trim_end();
        let argv0 = std::fs::read(dir.join("cmdline")).unwrap_or_default();
        let argv0 = argv0.split(|b| *b == 0).next().unwrap_or_default();
        let argv0 = Path::new(std::ffi::OsStr::new(&*String::from_utf8_lossy(argv0)))
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        names.iter().any(|wanted| {
            let wanted = wanted.trim();
            !wanted.is_empty() && (comm == wanted || argv0 == wanted)
        })
    })
}

/// When a person last used an input device or a terminal under `dev`; `None` where there
/// is none (a server or a container), which counts as a user always idle.
fn latest_input(dev: &Path) -> Option<SystemTime> {
    let mut latest: Option<SystemTime> = None;
    let mut note = |path: &Path| {
        if let Ok(accessed) = std::fs::metadata(path).and_then(|m| m.accessed()) {
            latest = Some(latest.map_or(accessed, |l| l.max(accessed)));
        }
    };
    for (dir, keep) in [
        ("input", (|name: &str| name.starts_with("event") || name == "mice") as fn(&str) -> bool),
        ("pts", |name: &str| name.bytes().all(|b| b.is_ascii_digit())),
    ] {
        for entry in read_names(&dev.join(dir)) {
            if keep(&entry) {
                note(&dev.join(dir).join(entry));
            }
        }
    }
    // The virtual consoles a person logs in on (not every /dev/ttyN a kernel creates is
    // used: their times only count if someone touched them).
    for console in 1..=6 {
        note(&dev.join(format!("tty{console}")));
    }
    latest
}

/// One power supply's `type`, `online` and `status`.
#[derive(Debug, Clone, PartialEq, Default)]
struct PowerSupply {
    kind: String,
    online: bool,
    status: String,
}

fn power_supplies(dir: &Path) -> Vec<PowerSupply> {
    let read = |supply: &str, file: &str| {
        std::fs::read_to_string(dir.join(supply).join(file))
            .map(|text| text.chars().take(64).collect::<String>().trim().to_string())
            .unwrap_or_default()
    };
    read_names(dir)
        .iter()
        .map(|supply| PowerSupply {
            kind: read(supply, "type"),
            online: read(supply, "online") == "1",
            status: read(supply, "status"),
        })
        .collect()
}

/// On batteries: a battery is discharging and no mains supply is online.
fn on_batteries(supplies: &[PowerSupply]) -> bool {
    let mains = supplies.iter().any(|s| s.kind == "Mains" && s.online);
    let discharging = supplies.iter().any(|s| s.kind == "Battery" && s.status == "Discharging");
    discharging && !mains
}

/// Up to [`MAX_ENTRIES`] names in `dir`; none when it cannot be read.
fn read_names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .take(MAX_ENTRIES)
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn supply(kind: &str, online: bool, status: &str) -> PowerSupply {
        PowerSupply { kind: kind.into(), online, status: status.into() }
    }

    #[test]
    fn batteries_only_when_discharging_without_mains() {
        assert!(!on_batteries(&[]), "a desktop or server");
        assert!(on_batteries(&[
            supply("Mains", false, ""),
            supply("Battery", false, "Discharging")
        ]));
        assert!(!on_batteries(&[supply("Mains", true, ""), supply("Battery", false, "Charging")]));
        assert!(!on_batteries(&[supply("USB", false, ""), supply("Battery", false, "Full")]));
    }

    #[test]
    fn input_times_from_a_device_tree() {
        let dev = tempfile::tempdir().expect("temp dir");
        assert_eq!(latest_input(dev.path()), None, "no input device: always idle");
        std::fs::create_dir_all(dev.path().join("input")).expect("input");
        std::fs::create_dir_all(dev.path().join("pts")).expect("pts");
        std::fs::write(dev.path().join("input/event0"), "").expect("event0");
        std::fs::write(dev.path().join("pts/ptmx"), "").expect("ptmx is not a terminal");
        let found = latest_input(dev.path()).expect("an input device");
        let event0 = std::fs::metadata(dev.path().join("input/event0"))
            .and_then(|m| m.accessed())
            .expect("atime");
        assert_eq!(found, event0);
    }

    #[test]
    fn an_exclusive_app_is_found_by_name() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().expect("sleep");
        let found = running_program(Path::new("/proc"), &["sleep".to_string()]);
        let absent = running_program(Path::new("/proc"), &["no-such-program-here".to_string()]);
        let _ = child.kill();
        let _ = child.wait();
        assert!(found && !absent);
    }

    #[test]
    fn the_local_time_is_a_weekday_and_an_hour() {
        let time = local_time(SystemTime::now()).expect("the C library knows the time");
        assert!(time.weekday <= 6 && (0.0..24.0).contains(&time.hour), "{time:?}");
    }

    #[test]
    fn power_supplies_read_from_sysfs_layout() {
        let dir = tempfile::tempdir().expect("temp dir");
        for (name, kind, online, status) in
            [("AC", "Mains", "0\n", ""), ("BAT0", "Battery", "", "Discharging\n")]
        {
            let supply = dir.path().join(name);
            std::fs::create_dir_all(&supply).expect("supply");
            std::fs::write(supply.join("type"), format!("{kind}\n")).expect("type");
            std::fs::write(supply.join("online"), online).expect("online");
            std::fs::write(supply.join("status"), status).expect("status");
        }
        assert!(on_batteries(&power_supplies(dir.path())));
    }
}
