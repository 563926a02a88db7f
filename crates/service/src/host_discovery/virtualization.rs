//! Container and virtual-machine tools on the host, as BOINC's client reports them in
//! `<host_info>` (projects choose apps by them): VirtualBox (`<virtualbox_version>`,
//! BOINC 7.x) and Podman or Docker (`<docker_version>` with `<docker_type>`, BOINC 8).
//! Each is asked its version (`VBoxManage --version`, `podman --version`,
//! `docker --version`); a tool that is missing costs one failed exec, and one that does
//! not answer within [`VERSION_TIMEOUT`] is killed and counted as absent.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a tool may take to print its version.
const VERSION_TIMEOUT: Duration = Duration::from_secs(5);
/// The most of a tool's answer read, bytes.
const MAX_ANSWER: u64 = 4096;

/// BOINC's `<docker_type>` numbers.
pub(crate) const DOCKER_TYPE_DOCKER: u32 = 1;
/// Podman (`<docker_type>2</docker_type>`).
pub(crate) const DOCKER_TYPE_PODMAN: u32 = 2;

/// What was found.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Virtualization {
    /// VirtualBox's version (`7.0.10`), empty when absent.
    pub(crate) virtualbox_version: String,
    /// Podman's or Docker's version, empty when neither is installed.
    pub(crate) docker_version: String,
    /// Which one ([`DOCKER_TYPE_PODMAN`] or [`DOCKER_TYPE_DOCKER`]; 0: none).
    pub(crate) docker_type: u32,
}

/// Asks the tools on `PATH` for their versions.
pub(crate) fn detect_virtualization() -> Virtualization {
    let mut found = Virtualization::default();
    if let Some(answer) = first_line_of("VBoxManage", &["--version"]) {
        found.virtualbox_version = virtualbox_version(&answer).unwrap_or_default();
    }
    // Podman is looked for first, as BOINC 8 does: where both are there, its
    // rootless containers suit a volunteer's client.
    for (program, kind) in [("podman", DOCKER_TYPE_PODMAN), ("docker", DOCKER_TYPE_DOCKER)] {
        if let Some(version) = first_line_of(program, &["--version"]).and_then(|a| tool_version(&a))
        {
            found.docker_version = version;
            found.docker_type = kind;
            break;
        }
    }
    found
}

/// `7.0.10r158379` → `7.0.10`: the release without VirtualBox's build revision.
fn virtualbox_version(answer: &str) -> Option<String> {
    let version = answer.trim().split('r').next()?.trim();
    let numeric = !version.is_empty() && version.chars().all(|c| c.is_ascii_digit() || c == '.');
    numeric.then(|| version.to_string())
}

/// `Docker version 24.0.5, build ced0996` or `podman version 4.3.1` → the version.
fn tool_version(answer: &str) -> Option<String> {
    let mut words = answer.split_whitespace();
    words.find(|w| w.eq_ignore_ascii_case("version"))?;
    let version = words.next()?.trim_end_matches(',');
    let numeric = version.starts_with(|c: char| c.is_ascii_digit());
    numeric.then(|| version.to_string())
}

/// The first line `program args` prints within [`VERSION_TIMEOUT`]; `None` when it
/// is missing, fails, or does not answer in time (it is then killed).
fn first_line_of(program: &str, args: &[&str]) -> Option<String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + VERSION_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => break None,
        }
    };
    let Some(status) = status.filter(|s| s.success()) else {
        let _ = child.kill();
        let _ = child.wait();
        return None;
    };
    let mut text = String::new();
    child.stdout.take()?.take(MAX_ANSWER).read_to_string(&mut text).ok()?;
    let _ = status;
    text.lines().next().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_as_boinc_reports_them() {
        assert_eq!(virtualbox_version("7.0.10r158379\n").as_deref(), Some("7.0.10"));
        assert_eq!(virtualbox_version("WARNING: no kernel module"), None);
        assert_eq!(tool_version("Docker version 24.0.5, build ced0996").as_deref(), Some("24.0.5"));
        assert_eq!(tool_version("podman version 4.3.1").as_deref(), Some("4.3.1"));
        assert_eq!(tool_version("podman: command not found"), None);
        assert_eq!(tool_version("version"), None);
    }

    #[test]
    fn a_tool_is_asked_and_a_missing_one_is_absent() {
        // `sh` stands in for a tool: it answers on its first line.
        assert_eq!(
            first_line_of("sh", &["-c", "echo podman version 4.3.1; echo more"]).as_deref(),
            Some("podman version 4.3.1")
        );
        assert_eq!(first_line_of("sh", &["-c", "exit 3"]), None, "a failing tool");
        assert_eq!(first_line_of("/nonexistent/VBoxManage", &["--version"]), None);
        let found = detect_virtualization();
        // Whatever this machine has, the two docker fields agree.
        assert_eq!(found.docker_version.is_empty(), found.docker_type == 0);
    }
}
