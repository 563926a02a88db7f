//! Supervision (docs/design.md "Time, effects, determinism": restart policy is ours, driven by
//! the clock; "BOINC 8.x behaviour": which app exits are restarted and which are errors).
//!
//! Pure: a supervisor (a TaskActor for its app, the SchedulerActor for the actors it
//! started) keeps a [`RestartTracker`] per supervised thing, tells it when the thing
//! starts, runs healthily and fails, and gets back when to restart it or that it must
//! give up. Delays are computed from `now` and a random source the caller hands in.

mod app_exit;
mod restart_policy;
mod restart_tracker;

pub use app_exit::{
    AppExit, ERR_FILE_MISSING, EXIT_CHILD_FAILED, EXIT_DISK_LIMIT_EXCEEDED,
    EXIT_MEM_LIMIT_EXCEEDED, EXIT_SIGNAL, EXIT_TIME_LIMIT_EXCEEDED, MAX_TEMPORARY_EXIT_DELAY,
    TaskFate, TaskLimit, app_fate,
};
pub use restart_policy::RestartPolicy;
pub use restart_tracker::{MAX_KEPT_FAILURES, RestartDecision, RestartTracker};
