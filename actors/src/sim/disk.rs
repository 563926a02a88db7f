//! The disk manager of a simulated client: the emulated disk of the scenario
//! ([`DiskWorld`]: files arrive with jobs and leave with acknowledgements), the same
//! [`boinc_core::disk::DiskControl`] a live client runs, and what it did recorded in
//! the run's figures and trace.

use super::effects::{SharedWorld, lock};
use crate::effects::DiskManager;
use boinc_core::Time;
use boinc_core::model::{ClientState, JobId};
use boinc_emulator::disk_world::DiskWorld;

/// The emulated disk and the world whose figures it reports to.
pub(crate) struct SimulatedDisk {
    disk: DiskWorld,
    world: SharedWorld,
}

impl SimulatedDisk {
    /// The disk `disk` of the run over `world`.
    pub(crate) fn new(disk: DiskWorld, world: SharedWorld) -> Self {
        SimulatedDisk { disk, world }
    }
}

impl DiskManager for SimulatedDisk {
    fn job_finished(&mut self, state: &mut ClientState, job: JobId, now: Time) {
        self.disk.job_finished(state, job, now, &mut lock(&self.world).disk_sink());
    }

    fn poll(&mut self, state: &mut ClientState, now: Time) {
        self.disk.poll(state, now, &mut lock(&self.world).disk_sink());
    }

    fn after_reply(&mut self, state: &mut ClientState, new_jobs: &[JobId], now: Time) {
        self.disk.after_reply(state, new_jobs, now, &mut lock(&self.world).disk_sink());
    }
}
