//! What the end of an app's process means for its task ("BOINC 8.x behaviour" in
//! docs/design.md; issue "Running real apps"): finished, restarted from its checkpoint after a
//! backoff, or ended in a computation error with BOINC's exit code.
//!
//! - The app finished (it called `boinc_finish`, or in wrapper mode exited 0 with its
//!   outputs present): the task is done.
//! - Killed by a signal, exited 0 without finishing, or hung (no heartbeat
//!   acknowledgement, killed by the client): restarted from the last checkpoint after
//!   the app restart policy's backoff; too many within the window, an error.
//! - Asked to be restarted later (`boinc_temporary_exit`): restarted after the delay it
//!   asked for (at least the policy's first delay), not counted as a crash.
//! - Exited with a non-zero status, could not be started, went over a limit, or said it
//!   finished without leaving an output file: an error.

use super::restart_policy::RestartPolicy;
use super::restart_tracker::{RestartDecision, RestartTracker};
use crate::Time;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// BOINC's exit code for a task that went over its disk bound.
pub const EXIT_DISK_LIMIT_EXCEEDED: i32 = 196;
/// BOINC's exit code for a task that went over its elapsed-time bound.
pub const EXIT_TIME_LIMIT_EXCEEDED: i32 = 197;
/// BOINC's exit code for a task that went over its memory bound.
pub const EXIT_MEM_LIMIT_EXCEEDED: i32 = 198;
/// BOINC's exit code for an app killed by a signal (too often to restart again).
pub const EXIT_SIGNAL: i32 = 193;
/// BOINC's exit code for a task whose process could not be started.
pub const EXIT_CHILD_FAILED: i32 = 195;
/// BOINC's error for an output file that is absent when the app has finished.
pub const ERR_FILE_MISSING: i32 = -163;

/// The longest delay a temporary exit may ask for, seconds.
pub const MAX_TEMPORARY_EXIT_DELAY: f64 = 86_400.0;

/// A limit a task was aborted for exceeding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskLimit {
    /// Elapsed time over `rsc_fpops_bound` / flops.
    ElapsedTime,
    /// Resident memory over `rsc_memory_bound`.
    Memory,
    /// Slot disk usage over `rsc_disk_bound`.
    Disk,
}

impl TaskLimit {
    /// BOINC's exit code for the limit.
    pub fn exit_status(self) -> i32 {
        match self {
            TaskLimit::ElapsedTime => EXIT_TIME_LIMIT_EXCEEDED,
            TaskLimit::Memory => EXIT_MEM_LIMIT_EXCEEDED,
            TaskLimit::Disk => EXIT_DISK_LIMIT_EXCEEDED,
        }
    }
}

/// How a task's process ended, as the process host saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum AppExit {
    /// The app finished its work.
    Finished,
    /// Killed by this signal.
    Signal(i32),
    /// Exited with this non-zero status.
    ExitStatus(i32),
    /// Exited 0 without saying it finished.
    EarlyExit,
    /// Asked to be restarted after `delay` seconds.
    TemporaryExit {
        /// The delay the app asked for.
        delay: f64,
        /// Why, in the app's words.
        reason: String,
    },
    /// Stopped acknowledging heartbeats and was killed by the client.
    Hung,
    /// Aborted by the client for going over a limit.
    LimitExceeded(TaskLimit),
    /// The process could not be started.
    StartFailed(String),
    /// The app said it finished (or, without BOINC's API, exited 0) but left no output
    /// file under this open name.
    OutputMissing(String),
}

/// What becomes of a task after its process ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TaskFate {
    /// The work is done.
    Finished,
    /// Start it again from its checkpoint at `at`.
    RestartAt {
        /// When.
        at: Time,
        /// Why it ended, for the user.
        reason: String,
    },
    /// The job ends in a computation error and is reported.
    Error {
        /// BOINC's exit status for the result.
        exit_status: i32,
        /// What happened, for the user and the result's stderr.
        message: String,
    },
}

/// Decides what the process ending in `exit` at `now` means for its task, with the
/// task's restart history in `tracker` and the app restart `policy`.
pub fn app_fate(
    exit: &AppExit,
    tracker: &mut RestartTracker,
    policy: &RestartPolicy,
    now: Time,
    rng: &mut impl Rng,
) -> TaskFate {
    let restart =
        |tracker: &mut RestartTracker, rng: &mut _, reason: String, status: i32| match tracker
            .failed(policy, now, rng)
        {
            RestartDecision::RestartAt(at) => TaskFate::RestartAt { at, reason },
            RestartDecision::GiveUp => TaskFate::Error {
                exit_status: status,
                message: format!(
                    "{reason}, {} times within {:.0} s: giving up",
                    tracker.recent_failures(),
                    policy.window
                ),
            },
        };
    match exit {
        AppExit::Finished => {
            tracker.stopped(policy, now);
            TaskFate::Finished
        }
        AppExit::Signal(signal) => {
            restart(tracker, rng, format!("app killed by signal {signal}"), EXIT_SIGNAL)
        }
        AppExit::EarlyExit => {
            restart(tracker, rng, "app exited without finishing".to_string(), EXIT_SIGNAL)
        }
        AppExit::Hung => restart(
            tracker,
            rng,
            "app stopped answering heartbeats and was killed".to_string(),
            EXIT_SIGNAL,
        ),
        AppExit::TemporaryExit { delay, reason } => {
            tracker.stopped(policy, now);
            let delay = if delay.is_finite() { *delay } else { MAX_TEMPORARY_EXIT_DELAY };
            let delay = delay.clamp(policy.initial_delay.max(0.0), MAX_TEMPORARY_EXIT_DELAY);
            TaskFate::RestartAt { at: now + delay, reason: format!("app postponed: {reason}") }
        }
        AppExit::ExitStatus(status) => {
            tracker.stopped(policy, now);
            TaskFate::Error {
                exit_status: *status,
                message: format!("app exited with status {status}"),
            }
        }
        AppExit::LimitExceeded(limit) => {
            tracker.stopped(policy, now);
            let what = match limit {
                TaskLimit::ElapsedTime => "elapsed time limit",
                TaskLimit::Memory => "memory limit",
                TaskLimit::Disk => "disk limit",
            };
            TaskFate::Error {
                exit_status: limit.exit_status(),
                message: format!("aborted by the client: exceeded its {what}"),
            }
        }
        AppExit::StartFailed(why) => {
            tracker.stopped(policy, now);
            TaskFate::Error {
                exit_status: EXIT_CHILD_FAILED,
                message: format!("app could not be started: {why}"),
            }
        }
        AppExit::OutputMissing(open_name) => {
            tracker.stopped(policy, now);
            TaskFate::Error {
                exit_status: ERR_FILE_MISSING,
                message: format!("app finished without writing its output file {open_name}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn each_exit_gets_its_fate() {
        let policy = RestartPolicy::APP;
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut fate = |exit: AppExit| {
            let mut tracker = RestartTracker::new();
            tracker.started(0.0);
            app_fate(&exit, &mut tracker, &policy, 100.0, &mut rng)
        };
        assert_eq!(fate(AppExit::Finished), TaskFate::Finished);
        for exit in [AppExit::Signal(9), AppExit::EarlyExit, AppExit::Hung] {
            let TaskFate::RestartAt { at, .. } = fate(exit) else { panic!("restart") };
            assert!((107.5..112.5).contains(&at));
        }
        let TaskFate::RestartAt { at, .. } =
            fate(AppExit::TemporaryExit { delay: 0.0, reason: "no GPU".into() })
        else {
            panic!("restart")
        };
        assert_eq!(at, 110.0, "a temporary exit waits at least the first delay");
        assert!(matches!(fate(AppExit::ExitStatus(3)), TaskFate::Error { exit_status: 3, .. }));
        assert!(matches!(
            fate(AppExit::LimitExceeded(TaskLimit::Memory)),
            TaskFate::Error { exit_status: EXIT_MEM_LIMIT_EXCEEDED, .. }
        ));
        assert!(matches!(
            fate(AppExit::StartFailed("missing".into())),
            TaskFate::Error { exit_status: EXIT_CHILD_FAILED, .. }
        ));
        assert!(matches!(
            fate(AppExit::OutputMissing("out".into())),
            TaskFate::Error { exit_status: ERR_FILE_MISSING, .. }
        ));
    }

    #[test]
    fn a_crash_loop_ends_in_an_error_after_the_limit() {
        let policy = RestartPolicy::APP;
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut tracker = RestartTracker::new();
        let mut now = 0.0;
        let mut starts = 0;
        loop {
            tracker.started(now);
            starts += 1;
            match app_fate(&AppExit::Signal(11), &mut tracker, &policy, now + 0.01, &mut rng) {
                TaskFate::RestartAt { at, .. } => now = at,
                TaskFate::Error { exit_status, .. } => {
                    assert_eq!(exit_status, EXIT_SIGNAL);
                    break;
                }
                TaskFate::Finished => panic!("a crash is not a finish"),
            }
        }
        assert_eq!(starts, policy.max_failures + 1);
    }
}
