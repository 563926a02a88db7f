//! Every effect trait implemented over the emulated world of a scenario (DESIGN.md
//! "Time, effects, determinism": simulated effects take a seeded RNG), so a scenario
//! runs through the real actors in virtual time. Faults can be injected: scheduler RPCs
//! that fail and apps that crash, each drawn from its own seeded stream.

use crate::effects::{
    Clock, EffectFuture, FileSystem, FileTransfer, HostDiscovery, ProcessFailure, ProcessHost,
    ProcessReport, SchedulerTransport, Transfer,
};
use boinc_core::Time;
use boinc_core::control::{HostView, TaskCommand};
use boinc_core::emulator::world::World;
use boinc_core::model::{ClientState, ProjectId};
use boinc_core::protocol::{SchedulerReply, SchedulerRequest};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

/// Faults to inject into a simulated run.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Faults {
    /// Probability that a scheduler RPC fails although the server is up.
    pub rpc_failure_rate: f64,
    /// Probability, at each poll of a computing task, that its app has crashed (killed
    /// by a signal) since the previous poll.
    pub app_crash_rate: f64,
    /// Panic the ProjectActor of this project at its first scheduler RPC (tests actor
    /// supervision).
    pub panic_project_actor: Option<u32>,
}

impl Faults {
    /// Whether any fault is injected.
    pub fn any(&self) -> bool {
        self.rpc_failure_rate > 0.0
            || self.app_crash_rate > 0.0
            || self.panic_project_actor.is_some()
    }
}

/// Virtual time, set by the simulation's driver.
#[derive(Debug, Clone, Default)]
pub struct VirtualClock(Rc<Cell<Time>>);

impl VirtualClock {
    /// A clock showing `now`.
    pub fn new(now: Time) -> Self {
        VirtualClock(Rc::new(Cell::new(now)))
    }

    /// Moves the clock to `now`.
    pub fn set(&self, now: Time) {
        self.0.set(now);
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Time {
        self.0.get()
    }
}

/// The emulated world shared by every simulated effect of one run.
#[derive(Clone)]
pub struct SimWorld {
    world: Rc<RefCell<World>>,
    faults: Faults,
    fault_rng: Rc<RefCell<ChaCha8Rng>>,
    files: Rc<RefCell<HashMap<(ProjectId, String), f64>>>,
    disk: (f64, f64),
}

impl SimWorld {
    /// Effects over `world`, with `faults` drawn from the run's `seed` (its own stream,
    /// so a run without faults draws nothing from it).
    pub fn new(world: World, state: &ClientState, faults: Faults, seed: u64) -> Self {
        let mut fault_rng = ChaCha8Rng::seed_from_u64(seed);
        fault_rng.set_stream(u64::from(u32::MAX) + 1);
        SimWorld {
            world: Rc::new(RefCell::new(world)),
            faults,
            fault_rng: Rc::new(RefCell::new(fault_rng)),
            files: Rc::new(RefCell::new(HashMap::new())),
            disk: (state.host.d_total, state.host.d_free),
        }
    }

    /// The world itself, for the driver (time, availability changes, the end of the run).
    pub fn world(&self) -> &Rc<RefCell<World>> {
        &self.world
    }

    fn draw(&self, probability: f64) -> bool {
        probability > 0.0 && self.fault_rng.borrow_mut().random::<f64>() < probability
    }
}

impl ProcessHost for SimWorld {
    fn command(&self, command: &TaskCommand) {
        self.world.borrow_mut().apply(command);
    }

    fn poll(&self, slot: u32) -> ProcessReport {
        let running = self.world.borrow().is_running(slot);
        let status = self.world.borrow().status(slot);
        let Some(status) = status else { return ProcessReport::Gone };
        if running && !status.finished && self.draw(self.faults.app_crash_rate) {
            let checkpoint = self.world.borrow_mut().kill(slot).unwrap_or_default();
            // SIGSEGV: the app crashed.
            return ProcessReport::Failed { failure: ProcessFailure::Signal(11), checkpoint };
        }
        ProcessReport::Status(status)
    }

    fn reap(&self, slot: u32) {
        self.world.borrow_mut().reap(slot);
    }

    fn kill(&self, slot: u32) {
        self.world.borrow_mut().kill(slot);
    }
}

impl SchedulerTransport for SimWorld {
    fn scheduler_rpc(
        &self,
        project: ProjectId,
        request: &SchedulerRequest,
        now: Time,
    ) -> EffectFuture<Option<SchedulerReply>> {
        let reply = if self.draw(self.faults.rpc_failure_rate) {
            None
        } else {
            self.world.borrow_mut().scheduler_rpc(project, request, now)
        };
        Box::pin(std::future::ready(reply))
    }

    fn master_page(&self, project: ProjectId) -> EffectFuture<bool> {
        let read = self.world.borrow_mut().master_page(project);
        Box::pin(std::future::ready(read))
    }
}

impl FileTransfer for SimWorld {
    fn download(&self, transfer: &Transfer) -> EffectFuture<bool> {
        self.files.borrow_mut().insert((transfer.project, transfer.name.clone()), transfer.nbytes);
        Box::pin(std::future::ready(true))
    }

    fn upload(&self, _transfer: &Transfer) -> EffectFuture<bool> {
        Box::pin(std::future::ready(true))
    }
}

impl FileSystem for SimWorld {
    fn size(&self, project: ProjectId, name: &str) -> Option<f64> {
        self.files.borrow().get(&(project, name.to_string())).copied()
    }

    fn delete(&self, project: ProjectId, name: &str) -> bool {
        self.files.borrow_mut().remove(&(project, name.to_string())).is_some()
    }

    fn disk_space(&self) -> (f64, f64) {
        let used: f64 = self.files.borrow().values().sum();
        (self.disk.0, (self.disk.1 - used).max(0.0))
    }
}

impl HostDiscovery for SimWorld {
    fn availability(&self) -> HostView {
        self.world.borrow().host_view()
    }
}
