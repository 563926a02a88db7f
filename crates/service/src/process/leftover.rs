//! Apps left running by a previous life of the client (issue "The host service": a
//! client killed with `kill -9`, or one that crashed, restarts its tasks from their
//! checkpoints and never runs two instances of one task).
//!
//! An app outlives its client: one using the app API quits only after missing its
//! heartbeats for 30 s, and one without the API never notices. While it runs it holds
//! its slot's lock and writes into the slot, so a new instance there would either fail
//! to start or share the slot's files with the old one. A process host starting on a
//! data directory (which only one client holds, by its lock) therefore stops every
//! process whose working directory is one of its slots before it starts anything: such
//! a process can only be a leftover. Its task starts again from the checkpoint the slot
//! keeps.
//!
//! An app is first asked to quit through its shared memory (the app API's `<quit/>`, the
//! message a client sends to stop an app at a safe point: it is never caught writing
//! its checkpoint), and given a bounded grace period to go; what is still there then
//! (an app without the API, one that ignores the request) is killed.
//!
//! Linux: the processes are found through `/proc/<pid>/cwd`. Elsewhere nothing is found
//! and an API app waits for the old instance to go (it does, on the missed heartbeats).

use super::shared_memory::ChannelFile;
use boinc_core::protocol::app_api::{Channel, ProcessControl};
use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::{Pid, getpgid};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a killed leftover may take to be gone (SIGKILL is not refused; the wait is
/// for the kernel to tear the process down and release its locks).
const GONE_WAIT: Duration = Duration::from_secs(5);

/// Processes of this user other than ourselves whose working directory lies under
/// `slots_dir` (an absolute, canonical path), with the directory.
pub(crate) fn processes_in(slots_dir: &Path) -> Vec<(Pid, std::path::PathBuf)> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let own = std::process::id();
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            if pid == own {
                return None;
            }
            // Unreadable for other users' processes, which are not ours to stop.
            let cwd = std::fs::read_link(entry.path().join("cwd")).ok()?;
            let in_a_slot = cwd.starts_with(slots_dir) && cwd != slots_dir;
            let pid = Pid::from_raw(i32::try_from(pid).ok()?);
            in_a_slot.then_some((pid, cwd))
        })
        .collect()
}

/// Stops every process left running in a slot under `slots_dir` (with its process
/// group, which holds the app's own children): each is asked to quit through its slot's
/// shared memory, those still there after `grace` are killed, and the wait for them to
/// be gone is bounded. Returns how many were found.
pub(crate) fn stop_leftover_apps(slots_dir: &Path, grace: Duration) -> usize {
    let leftovers = processes_in(slots_dir);
    let mut asked = 0;
    for (pid, cwd) in &leftovers {
        let Some(channels) = ChannelFile::open_existing(cwd) else { continue };
        match channels.replace(Channel::ProcessControlRequest, ProcessControl::Quit.to_message()) {
            Ok(()) => {
                asked += 1;
                tracing::warn!(
                    pid = pid.as_raw(),
                    slot = %cwd.display(),
                    "an app left running by a previous run of the client is asked to quit; \
                     its task restarts from its checkpoint"
                );
            }
            Err(error) => {
                tracing::warn!(pid = pid.as_raw(), %error, "cannot ask a leftover app to quit")
            }
        }
    }
    if asked > 0 {
        let deadline = Instant::now() + grace;
        while leftovers.iter().any(|(pid, _)| alive(*pid)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    for (pid, cwd) in leftovers.iter().filter(|(pid, _)| alive(*pid)) {
        tracing::warn!(
            pid = pid.as_raw(),
            slot = %cwd.display(),
            "an app left running by a previous run of the client is killed; its task \
             restarts from its checkpoint"
        );
        // Apps are started as leaders of their own process groups.
        let group_leader = getpgid(Some(*pid)).is_ok_and(|group| group == *pid);
        if group_leader {
            let _ = killpg(*pid, Signal::SIGKILL);
        }
        let _ = kill(*pid, Signal::SIGKILL);
    }
    let deadline = Instant::now() + GONE_WAIT;
    for (pid, _) in &leftovers {
        while alive(*pid) {
            if Instant::now() >= deadline {
                tracing::warn!(pid = pid.as_raw(), "a stopped leftover app is still there");
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    leftovers.len()
}

/// Whether `pid` is still there: a zombie (reaped later by its new parent) holds no
/// locks or files; a live process answers signal 0 until it is torn down.
fn alive(pid: Pid) -> bool {
    kill(pid, None) != Err(Errno::ESRCH) && !is_zombie(pid)
}

fn is_zombie(pid: Pid) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn a_process_working_in_a_slot_is_found_and_stopped() {
        let data = tempfile::tempdir().expect("a directory");
        let slots = std::fs::canonicalize(data.path()).expect("canonical").join("slots");
        let slot = slots.join("0");
        std::fs::create_dir_all(&slot).expect("the slot");
        let mut outside = Command::new("sleep").arg("30").spawn().expect("sleep runs");
        let mut left = Command::new("sleep").arg("30").current_dir(&slot).spawn().expect("sleep");
        let found = processes_in(&slots);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0.as_raw(), i32::try_from(left.id()).expect("pid"));
        assert_eq!(stop_leftover_apps(&slots, Duration::from_secs(5)), 1);
        let status = left.wait().expect("the leftover ends");
        assert!(!status.success(), "it was killed: {status}");
        assert!(processes_in(&slots).is_empty());
        // What works elsewhere is left alone.
        assert!(outside.try_wait().expect("status").is_none(), "a process outside was stopped");
        let _ = outside.kill();
        let _ = outside.wait();
    }
}
