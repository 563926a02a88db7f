//! The effects the actors have on the world, behind traits (DESIGN.md "Time, effects,
//! determinism"): a clock, a process host, a scheduler-RPC transport, file transfer, a
//! file system, and GPU and host discovery.
//!
//! This module has the traits and the real clock; [`crate::sim_effects`] implements
//! every trait over the emulated world of a scenario, and [`crate::replay`] over a
//! journal. The real process, HTTP and file implementations belong to the live service.

use boinc_core::Time;
use boinc_core::control::{HostView, ProcessStatus, TaskCommand};
use boinc_core::model::ProjectId;
use boinc_core::protocol::{SchedulerReply, SchedulerRequest};
use std::future::Future;
use std::pin::Pin;

/// A future an effect returns; actors on one arbiter need not be `Send`.
pub type EffectFuture<T> = Pin<Box<dyn Future<Output = T>>>;

/// Where the time comes from: wall time in the service, virtual time in simulation.
pub trait Clock {
    /// Seconds since the Unix epoch (or the scenario's virtual epoch).
    fn now(&self) -> Time;
}

/// The real clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Time {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    }
}

/// How a task's process ended when it did not finish its work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ProcessFailure {
    /// Killed by a signal (HUP, INT, QUIT, KILL, TERM, STOP): restarted from its
    /// checkpoint.
    Signal(i32),
    /// Exited with a non-zero status: a computation error.
    ExitStatus(i32),
}

/// What the process host reports about a task's process.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ProcessReport {
    /// The process is alive (or finished its work: see `finished`).
    Status(ProcessStatus),
    /// The process died; the status is what its last checkpoint saved.
    Failed {
        /// How it died.
        failure: ProcessFailure,
        /// Its state as of the last checkpoint, where a restart begins.
        checkpoint: ProcessStatus,
    },
    /// There is no process in that slot.
    Gone,
}

/// Runs tasks' processes (fork/exec, SIGSTOP/SIGCONT, the shared-memory channels).
pub trait ProcessHost {
    /// Carries out a command: start, resume, suspend, quit, watch the next checkpoint.
    fn command(&self, command: &TaskCommand);
    /// Reads the process of the task in `slot`.
    fn poll(&self, slot: u32) -> ProcessReport;
    /// The process in `slot` exited after finishing its work: clean up after it.
    fn reap(&self, slot: u32);
    /// Kills the process in `slot` (it is restarted from its checkpoint, or abandoned).
    fn kill(&self, slot: u32);
}

/// Scheduler RPCs and master-page fetches.
pub trait SchedulerTransport {
    /// Sends `request` to `project`'s scheduler at `now`. `None`: the RPC failed.
    fn scheduler_rpc(
        &self,
        project: ProjectId,
        request: &SchedulerRequest,
        now: Time,
    ) -> EffectFuture<Option<SchedulerReply>>;
    /// Fetches `project`'s master page; whether it came.
    fn master_page(&self, project: ProjectId) -> EffectFuture<bool>;
}

/// One file to move.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Transfer {
    /// The project the file belongs to.
    pub project: ProjectId,
    /// File name.
    pub name: String,
    /// Size, bytes.
    pub nbytes: f64,
}

/// Downloads and uploads.
pub trait FileTransfer {
    /// Downloads a file; whether it arrived intact.
    fn download(&self, transfer: &Transfer) -> EffectFuture<bool>;
    /// Uploads a file; whether the server took it.
    fn upload(&self, transfer: &Transfer) -> EffectFuture<bool>;
}

/// The client's data directory.
pub trait FileSystem {
    /// Bytes the file takes, if it exists.
    fn size(&self, project: ProjectId, name: &str) -> Option<f64>;
    /// Deletes the file; whether it existed.
    fn delete(&self, project: ProjectId, name: &str) -> bool;
    /// Total size and free space of the disk holding the data directory, bytes.
    fn disk_space(&self) -> (f64, f64);
}

/// What the host is and whether it may work.
pub trait HostDiscovery {
    /// The host's availability now.
    fn availability(&self) -> HostView;
}
