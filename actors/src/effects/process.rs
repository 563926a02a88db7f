//! Running tasks' processes (docs/design.md "Protocol facts", App API; issue "Running real
//! apps"): the process host starts a task's app from its [`TaskSpec`], suspends, resumes,
//! quits, aborts and kills it, and reports how it is doing. What an exit means for the
//! task (restart after a backoff, error, done) is the core's decision
//! ([`boinc_core::supervise::app_fate`]); the host only observes.
//!
//! Commands return at once: a quit that must escalate to a kill after a grace period,
//! or an app that takes a while to stop, is followed up by later polls, never waited on.
//!
//! [`TaskSpec`]: boinc_core::control::TaskSpec

use boinc_core::control::{ProcessStatus, TaskCommand};
use boinc_core::supervise::AppExit;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Why the process host could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The task's spec names no program (an emulator scenario's state, or a state whose
    /// app version lists no main program).
    #[error(
        "slot {slot}: the task's app version names no program to run; reset the project so the client downloads the app again"
    )]
    NoProgram {
        /// The task's slot.
        slot: u32,
    },
    /// A file the task needs is missing or cannot be used.
    #[error("slot {slot}: cannot use {path}: {source}")]
    File {
        /// The task's slot.
        slot: u32,
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The slot directory could not be prepared or cleaned.
    #[error("slot {slot}: cannot prepare the slot directory {path}: {source}")]
    Slot {
        /// The task's slot.
        slot: u32,
        /// The directory or file in it.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The app's process could not be started.
    #[error("slot {slot}: cannot start {program}: {source}")]
    Spawn {
        /// The task's slot.
        slot: u32,
        /// The program.
        program: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A signal could not be delivered to the app's process group.
    #[error("slot {slot}: cannot signal process {pid}: {source}")]
    Signal {
        /// The task's slot.
        slot: u32,
        /// The process.
        pid: i32,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The app's shared-memory channel could not be set up or used.
    #[error("slot {slot}: shared memory with the app: {reason}")]
    SharedMemory {
        /// The task's slot.
        slot: u32,
        /// What went wrong.
        reason: String,
    },
    /// A command for a slot that has no process.
    #[error("slot {slot}: no process")]
    NoProcess {
        /// The slot.
        slot: u32,
    },
    /// The task's previous run was asked to quit and has not exited yet: it starts again
    /// once that run is gone (within the quit's grace period, after which it is killed).
    #[error("slot {slot}: the task's previous run is still quitting")]
    StillEnding {
        /// The slot.
        slot: u32,
    },
    /// A process host's failure that fits no other kind (a replayed one, or a bug).
    #[error("the process host failed: {0}")]
    Host(String),
}

/// What the process host reports about a task's process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ProcessReport {
    /// The process is alive (computing, or suspended): its latest status.
    Running(ProcessStatus),
    /// The process ended. `status` is what it last reported: its final state when it
    /// finished, where a restart begins (its checkpoint) otherwise.
    Exited {
        /// How it ended.
        exit: AppExit,
        /// Its last status.
        status: ProcessStatus,
    },
    /// There is no process in that slot (never started, or quit out of memory).
    Gone,
}

/// Runs tasks' processes (fork/exec in a slot directory, signals to the process group,
/// the app API's shared-memory channels; or an emulated world's processes).
pub trait ProcessHost: Send + Sync {
    /// Carries out a command: start (or restart from the checkpoint), resume, suspend or
    /// quit (preempt), abort, watch the next checkpoint. Returns without waiting for the
    /// app: its effect shows in later polls.
    fn command(&self, command: &TaskCommand) -> Result<(), ProcessError>;
    /// Reads the process of the task in `slot`: its status, or how it ended. A process
    /// that ended is reported once; after that the slot is [`ProcessReport::Gone`].
    fn poll(&self, slot: u32) -> Result<ProcessReport, ProcessError>;
    /// The task in `slot` is over (finished, or ended in an error): its outputs are
    /// moved to the project directory and its slot is cleaned.
    fn reap(&self, slot: u32) -> Result<(), ProcessError>;
    /// Kills the process in `slot` at once (it is restarted from its checkpoint later,
    /// or abandoned).
    fn kill(&self, slot: u32) -> Result<(), ProcessError>;
    /// Looks after the process in `slot` that the client asked to quit, which nothing
    /// polls any more: an exit is waited for (no zombie is left) and its last status
    /// kept for the next start; a process past its grace period is killed. Returns
    /// whether it is still on its way out. A host whose processes end at once (an
    /// emulated world) has nothing to look after.
    fn tend(&self, slot: u32) -> Result<bool, ProcessError> {
        let _ = slot;
        Ok(false)
    }
    /// The task of `job` in `slot` was aborted (by the user, or with its project's
    /// detach or reset) and its run is over: its slot is emptied and its outputs
    /// dropped, unless another task holds the slot by now. A host whose slots hold no
    /// files (an emulated world) has nothing to do.
    fn discard(&self, slot: u32, job: &str) -> Result<(), ProcessError> {
        let _ = (slot, job);
        Ok(())
    }
    /// The tail of the standard error of `job`, whose task was reaped (what its
    /// report tells the project), taken once; `None` where the host keeps none (an
    /// emulated world's processes write nothing).
    fn take_stderr(&self, job: &str) -> Option<String> {
        let _ = job;
        None
    }
}
