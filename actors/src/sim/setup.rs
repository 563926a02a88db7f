//! A simulated client's world: the scenario's state prepared as the emulator prepares
//! it, the emulated world and disk, and the simulated effects over them.

use super::disk::SimulatedDisk;
use super::effects::{Faults, SimWorld, VirtualClock};
use crate::runtime::context::ActorContext;
use crate::runtime::disk::DiskActor;
use crate::runtime::scheduler::SchedulerSetup;
use boinc_core::Time;
use boinc_core::control::ClientControl;
use boinc_core::model::ClientState;
use boinc_core::supervise::RestartPolicy;
use boinc_emulator::disk_world::DiskWorld;
use boinc_emulator::engine::{SimConfig, prepare_state};
use boinc_emulator::world::World;
use std::sync::Arc;

/// Everything a simulated client runs over.
pub(crate) struct SimulatedWorld {
    /// The scenario's state as given (the journal's setup records it).
    pub(crate) initial_state: ClientState,
    /// The control loop over the prepared state.
    client: ClientControl,
    /// The emulated disk, when the scenario has file sizes.
    disk: Option<DiskWorld>,
    /// The simulated effects.
    pub(crate) sim: SimWorld,
    /// Virtual time.
    pub(crate) clock: VirtualClock,
    /// The scheduling period (the longest the driver waits between steps).
    pub(crate) period: f64,
    /// When the run starts.
    pub(crate) start: Time,
    seed: u64,
    boinc_compat: bool,
}

impl SimulatedWorld {
    /// The world of `state` run with `config` and `faults`.
    pub(crate) fn new(state: ClientState, config: &SimConfig, faults: &Faults) -> Self {
        let initial_state = state.clone();
        let (state, start) = prepare_state(state, config);
        let mut client = ClientControl::new(
            state,
            config.policy,
            config.boinc_compat,
            config.existing_jobs_only,
            start,
        );
        let mut world = World::new(client.state(), config, start);
        world.adopt_jobs(client.state());
        let disk = DiskWorld::new(client.state_mut(), start, &mut world.disk_sink());
        let sim = SimWorld::new(world, client.state(), faults.clone(), config.seed);
        let period = client.state().prefs.scheduling_period();
        SimulatedWorld {
            initial_state,
            client,
            disk: disk.is_enabled().then_some(disk),
            sim,
            clock: VirtualClock::new(start),
            period,
            start,
            seed: config.seed,
            boinc_compat: config.boinc_compat,
        }
    }

    /// Paces the world's virtual time at `speed` virtual seconds per second of tokio's
    /// clock (which, on a runtime whose clock is not paused, is the wall clock).
    pub(crate) fn pace(&mut self, speed: f64) {
        self.clock = VirtualClock::paced(self.start, speed);
    }

    /// What the scheduler needs to run over this world.
    pub(crate) fn scheduler_setup(
        &self,
        context: ActorContext,
        app_restart_policy: RestartPolicy,
        actor_restart_policy: RestartPolicy,
    ) -> SchedulerSetup {
        let disk = self
            .disk
            .clone()
            .map(|disk| SimulatedDisk::new(disk, self.sim.world().clone()))
            .map(|disk| DiskActor::new(context.clone(), Box::new(disk)));
        SchedulerSetup {
            client: self.client.clone(),
            context,
            process_host: Arc::new(self.sim.clone()),
            transport: Arc::new(self.sim.clone()),
            seed: self.seed,
            boinc_compat: self.boinc_compat,
            app_restart_policy,
            actor_restart_policy,
            disk,
            // The emulated world moves no files: jobs' files count as present.
            file_transfer: None,
            persistence: None,
        }
    }
}
