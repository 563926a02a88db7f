//! Where the disk manager's decisions (seed 004, planned by [`boinc_core::disk`] and
//! applied to the state by [`boinc_core::disk::DiskControl`]) are carried out: on the
//! data directory in a live client, in the emulated disk (with its figures and trace)
//! in a simulated one. The DiskActor calls it at the control loop's points and lends
//! it the client state for each call.

use boinc_core::Time;
use boinc_core::model::{ClientState, JobId};

/// The disk manager's hooks in the control loop.
pub trait DiskManager: Send {
    /// A job finished: its outputs are written and its inputs were just used.
    fn job_finished(&mut self, state: &mut ClientState, job: JobId, now: Time);
    /// Seed 004's `data_manager_poll`, before each decision: deletes what the limits
    /// require, suspends computation when nothing more can go, resumes it after.
    fn poll(&mut self, state: &mut ClientState, now: Time);
    /// After a scheduler reply: acknowledged results are forgotten with their files and
    /// the new jobs' files are associated with their projects.
    fn after_reply(&mut self, state: &mut ClientState, new_jobs: &[JobId], now: Time);
    /// Measures the disk's free space alone, into the host's figures: cheap enough for
    /// every poll of a client whose disk is full. A disk nobody else fills (an emulated
    /// one) changes only at the other hooks.
    fn measure(&mut self, state: &mut ClientState) {
        let _ = state;
    }
}
