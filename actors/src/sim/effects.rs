//! Every effect trait implemented over the emulated world of a scenario (DESIGN.md
//! "Time, effects, determinism": simulated effects take a seeded RNG), so a scenario
//! runs through the real actors in virtual time. Faults can be injected: scheduler RPCs
//! that fail and apps that crash, each drawn from its own seeded stream.

use crate::effects::{
    Clock, EffectFuture, FileSystem, FileTransfer, HostDiscovery, ProcessError, ProcessHost,
    ProcessReport, SchedulerTransport, Transfer,
};
use crate::runtime::supervision::InjectedPanic;
use boinc_core::Time;
use boinc_core::control::{HostView, RpcCall, TaskCommand};
use boinc_core::emulator::project_server::ServerReply;
use boinc_core::emulator::world::World;
use boinc_core::model::{ClientState, ProjectId};
use boinc_core::supervise::AppExit;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Faults to inject into a simulated run.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Faults {
    /// Probability that a scheduler RPC fails although the server is up.
    pub rpc_failure_rate: f64,
    /// Probability, at each poll of a computing task, that its app has crashed (killed
    /// by a signal) since the previous poll.
    pub app_crash_rate: f64,
    /// Panics to inject into actors' handlers (tests of supervision).
    #[serde(default)]
    pub panics: Vec<InjectedPanic>,
}

impl Faults {
    /// Whether any fault is injected.
    pub fn any(&self) -> bool {
        self.rpc_failure_rate > 0.0 || self.app_crash_rate > 0.0 || !self.panics.is_empty()
    }
}

/// Virtual time, set by the simulation's driver (the bits of an `f64`, so every
/// thread reads the same instant without a lock).
#[derive(Debug, Clone, Default)]
pub struct VirtualClock(Arc<AtomicU64>);

impl VirtualClock {
    /// A clock showing `now`.
    pub fn new(now: Time) -> Self {
        VirtualClock(Arc::new(AtomicU64::new(now.to_bits())))
    }

    /// Moves the clock to `now`.
    pub fn set(&self, now: Time) {
        self.0.store(now.to_bits(), Ordering::SeqCst);
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Time {
        f64::from_bits(self.0.load(Ordering::SeqCst))
    }
}

/// The emulated world, shared by the simulated effects, the disk actor and the driver.
pub type SharedWorld = Arc<Mutex<World>>;

/// Locks the shared world. A panic while it was held leaves it as the panicking code
/// left it; the simulation goes on with that (the panic itself is what gets reported).
pub fn lock(world: &SharedWorld) -> MutexGuard<'_, World> {
    world.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The emulated world shared by every simulated effect of one run.
#[derive(Clone)]
pub struct SimWorld {
    world: SharedWorld,
    faults: Faults,
    fault_rng: Arc<Mutex<ChaCha8Rng>>,
    files: Arc<Mutex<HashMap<(ProjectId, String), f64>>>,
    disk: (f64, f64),
}

impl SimWorld {
    /// Effects over `world`, with `faults` drawn from the run's `seed` (its own stream,
    /// so a run without faults draws nothing from it).
    pub fn new(world: World, state: &ClientState, faults: Faults, seed: u64) -> Self {
        let mut fault_rng = ChaCha8Rng::seed_from_u64(seed);
        fault_rng.set_stream(u64::from(u32::MAX) + 1);
        SimWorld {
            world: Arc::new(Mutex::new(world)),
            faults,
            fault_rng: Arc::new(Mutex::new(fault_rng)),
            files: Arc::new(Mutex::new(HashMap::new())),
            disk: (state.host.d_total, state.host.d_free),
        }
    }

    /// The world itself, for the driver (time, availability changes, the end of the run).
    pub fn world(&self) -> &SharedWorld {
        &self.world
    }

    fn draw(&self, probability: f64) -> bool {
        probability > 0.0
            && self
                .fault_rng
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .random::<f64>()
                < probability
    }

    fn files(&self) -> MutexGuard<'_, HashMap<(ProjectId, String), f64>> {
        self.files.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl ProcessHost for SimWorld {
    fn command(&self, command: &TaskCommand) -> Result<(), ProcessError> {
        lock(&self.world).apply(command);
        Ok(())
    }

    fn poll(&self, slot: u32) -> Result<ProcessReport, ProcessError> {
        let mut world = lock(&self.world);
        let running = world.is_running(slot);
        let Some(status) = world.status(slot) else { return Ok(ProcessReport::Gone) };
        if status.finished {
            return Ok(ProcessReport::Exited { exit: AppExit::Finished, status });
        }
        if running && self.draw(self.faults.app_crash_rate) {
            let checkpoint = world.kill(slot).unwrap_or_default();
            // SIGSEGV: the app crashed.
            return Ok(ProcessReport::Exited { exit: AppExit::Signal(11), status: checkpoint });
        }
        Ok(ProcessReport::Running(status))
    }

    fn reap(&self, slot: u32) -> Result<(), ProcessError> {
        lock(&self.world).reap(slot);
        Ok(())
    }

    fn kill(&self, slot: u32) -> Result<(), ProcessError> {
        lock(&self.world).kill(slot);
        Ok(())
    }
}

impl SchedulerTransport for SimWorld {
    fn scheduler_rpc(
        &self,
        state: &ClientState,
        call: &RpcCall,
        now: Time,
    ) -> EffectFuture<Option<ServerReply>> {
        let reply = if self.draw(self.faults.rpc_failure_rate) {
            None
        } else {
            lock(&self.world).scheduler_rpc(state, call, now)
        };
        Box::pin(std::future::ready(reply))
    }

    fn master_page(&self, project: ProjectId) -> EffectFuture<bool> {
        let read = lock(&self.world).master_page(project);
        Box::pin(std::future::ready(read))
    }
}

impl FileTransfer for SimWorld {
    fn download(&self, transfer: &Transfer) -> EffectFuture<bool> {
        self.files().insert((transfer.project, transfer.name.clone()), transfer.nbytes);
        Box::pin(std::future::ready(true))
    }

    fn upload(&self, _transfer: &Transfer) -> EffectFuture<bool> {
        Box::pin(std::future::ready(true))
    }
}

impl FileSystem for SimWorld {
    fn size(&self, project: ProjectId, name: &str) -> Option<f64> {
        self.files().get(&(project, name.to_string())).copied()
    }

    fn delete(&self, project: ProjectId, name: &str) -> bool {
        self.files().remove(&(project, name.to_string())).is_some()
    }

    fn disk_space(&self) -> (f64, f64) {
        let used: f64 = self.files().values().sum();
        (self.disk.0, (self.disk.1 - used).max(0.0))
    }
}

impl HostDiscovery for SimWorld {
    fn availability(&self) -> HostView {
        lock(&self.world).host_view()
    }
}
