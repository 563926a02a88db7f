//! Every effect trait implemented over the emulated world of a scenario (docs/design.md
//! "Time, effects, determinism": simulated effects take a seeded RNG), so a scenario
//! runs through the real actors in virtual time. Faults can be injected: scheduler RPCs
//! that fail and apps that crash, each drawn from its own seeded stream.

use crate::effects::{
    Clock, DiskSpace, EffectFuture, FileSystem, FileSystemError, FileTransfer, HostDiscovery,
    HostDiscoveryError, ProcessError, ProcessHost, ProcessReport, ProgressSink, RpcError,
    SchedulerTransport, TransferError, Transferred,
};
use crate::runtime::supervision::InjectedPanic;
use boinc_core::Time;
use boinc_core::control::{HostView, TaskCommand};
use boinc_core::model::{ClientState, Host, ProjectId};
use boinc_core::protocol::{MasterPage, SchedulerReply, SchedulerRequest};
use boinc_core::supervise::AppExit;
use boinc_core::transfer::TransferOrder;
use boinc_emulator::world::World;
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
    /// App crashes to inject (tests of app supervision): `(from, count)` makes the
    /// next `count` polls of a computing task at or after virtual time `from` find its
    /// app crashed, each burst after the one before it.
    #[serde(default)]
    pub app_crashes: Vec<(Time, u32)>,
    /// Servers that take this long to answer: (project index, seconds of virtual time).
    #[serde(default)]
    pub slow_servers: Vec<(u32, f64)>,
}

impl Faults {
    /// Whether any fault is injected.
    pub fn any(&self) -> bool {
        self.rpc_failure_rate > 0.0
            || self.app_crash_rate > 0.0
            || !self.panics.is_empty()
            || !self.app_crashes.is_empty()
            || !self.slow_servers.is_empty()
    }

    fn answer_delay(&self, project: ProjectId) -> Option<f64> {
        self.slow_servers.iter().find(|(p, _)| *p == project.0).map(|(_, delay)| *delay)
    }
}

/// Virtual time. The driver sets it, exactly, at each step (the bits of an `f64`, so
/// every thread reads the same instant without a lock). Between steps the paused tokio
/// clock may move on without the driver (an operation waiting on a timer of its own,
/// such as a slow server's answer, or, in a paced run, wall-clock time passing): read
/// then, the clock follows tokio's, so what happens at that moment is dated when it
/// happens.
#[derive(Debug, Clone)]
pub struct VirtualClock {
    set: Arc<AtomicU64>,
    start: Time,
    base: tokio::time::Instant,
    /// Virtual seconds per second of tokio's clock (1 unless the run is paced).
    speed: f64,
}

/// How far tokio's clock must have moved past the driver's last step before the
/// virtual clock follows it: far more than tokio's millisecond timer rounding, far less
/// than any step of the client.
const FOLLOW_TOKIO_AFTER: f64 = 1.0;

impl VirtualClock {
    /// A clock showing `now`, measured from tokio's current instant.
    pub fn new(now: Time) -> Self {
        VirtualClock::paced(now, 1.0)
    }

    /// A clock showing `now` that runs `speed` times as fast as tokio's.
    pub fn paced(now: Time, speed: f64) -> Self {
        VirtualClock {
            set: Arc::new(AtomicU64::new(now.to_bits())),
            start: now,
            base: tokio::time::Instant::now(),
            speed,
        }
    }

    /// Moves the clock to `now`.
    pub fn set(&self, now: Time) {
        self.set.store(now.to_bits(), Ordering::SeqCst);
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Time {
        let set = f64::from_bits(self.set.load(Ordering::SeqCst));
        let tokio =
            self.start + (tokio::time::Instant::now() - self.base).as_secs_f64() * self.speed;
        if tokio > set + FOLLOW_TOKIO_AFTER { tokio } else { set }
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
    /// The app crashes still to inject, by burst.
    crashes: Arc<Mutex<Vec<(Time, u32)>>>,
    /// Each project's master and scheduler URLs.
    urls: Arc<HashMap<String, ProjectId>>,
    fault_rng: Arc<Mutex<ChaCha8Rng>>,
    files: Arc<Mutex<HashMap<(ProjectId, String), f64>>>,
    disk: (f64, f64),
    /// The scenario's host, as host discovery describes it.
    host: Arc<Host>,
}

impl SimWorld {
    /// Effects over `world`, with `faults` drawn from the run's `seed` (its own stream,
    /// so a run without faults draws nothing from it).
    pub fn new(world: World, state: &ClientState, faults: Faults, seed: u64) -> Self {
        let mut fault_rng = ChaCha8Rng::seed_from_u64(seed);
        fault_rng.set_stream(u64::from(u32::MAX) + 1);
        SimWorld {
            world: Arc::new(Mutex::new(world)),
            crashes: Arc::new(Mutex::new(faults.app_crashes.clone())),
            urls: Arc::new(
                state
                    .project_ids()
                    .flat_map(|p| {
                        let project = state.project(p);
                        std::iter::once(project.master_url.clone())
                            .chain(project.scheduler_urls.iter().cloned())
                            .map(move |url| (url, p))
                    })
                    .collect(),
            ),
            faults,
            fault_rng: Arc::new(Mutex::new(fault_rng)),
            files: Arc::new(Mutex::new(HashMap::new())),
            disk: (state.host.d_total, state.host.d_free),
            host: Arc::new(state.host.clone()),
        }
    }

    /// The world itself, for the driver (time, availability changes, the end of the run).
    pub fn world(&self) -> &SharedWorld {
        &self.world
    }

    #[inline]
    fn draw(&self, probability: f64) -> bool {
        probability > 0.0
            && self
                .fault_rng
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .random::<f64>()
                < probability
    }

    /// Whether an injected crash is due at `now` (and takes it).
    fn crash_due(&self, now: Time) -> bool {
        // A run without injected crashes (the usual one) looks at no list at each poll.
        if self.faults.app_crashes.is_empty() {
            return false;
        }
        let mut crashes = self.crashes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match crashes.iter_mut().find(|(_, count)| *count > 0) {
            Some((from, count)) if *from <= now => {
                *count -= 1;
                true
            }
            _ => false,
        }
    }

    /// The emulated project whose master or scheduler URL `url` is.
    fn project_at(&self, url: &str) -> Option<ProjectId> {
        self.urls.get(url).copied()
    }

    fn files(&self) -> MutexGuard<'_, HashMap<(ProjectId, String), f64>> {
        self.files.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl ProcessHost for SimWorld {
    fn command(&self, command: &TaskCommand) -> Result<(), ProcessError> {
        lock(&self.world).apply(command.clone());
        Ok(())
    }

    fn poll(&self, slot: u32) -> Result<ProcessReport, ProcessError> {
        let mut world = lock(&self.world);
        let running = world.is_running(slot);
        let Some(status) = world.status(slot) else { return Ok(ProcessReport::Gone) };
        if status.finished {
            return Ok(ProcessReport::Exited { exit: AppExit::Finished, status });
        }
        if running && (self.crash_due(world.now()) || self.draw(self.faults.app_crash_rate)) {
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
        url: &str,
        request: &SchedulerRequest<'static>,
    ) -> EffectFuture<Result<SchedulerReply, RpcError>> {
        let Some(project) = self.project_at(url) else {
            return Box::pin(std::future::ready(Err(unknown_server(url))));
        };
        let reply = if self.draw(self.faults.rpc_failure_rate) {
            Err(RpcError::Connect { url: url.to_string(), reason: "injected failure".into() })
        } else {
            let mut world = lock(&self.world);
            let now = world.now();
            world
                .scheduler_rpc(project, request, now)
                .ok_or_else(|| RpcError::ServerDown { url: url.to_string() })
        };
        match self.faults.answer_delay(project) {
            // The server decided at once; its answer takes this long to come back.
            Some(delay) => Box::pin(async move {
                tokio::time::sleep(std::time::Duration::from_secs_f64(delay.max(0.0))).await;
                reply
            }),
            None => Box::pin(std::future::ready(reply)),
        }
    }

    fn master_page(&self, url: &str) -> EffectFuture<Result<MasterPage, RpcError>> {
        let page = match self.project_at(url) {
            // An emulated project's scheduler answers at its master URL.
            Some(project) if lock(&self.world).master_page(project) => {
                Ok(MasterPage { scheduler_urls: vec![url.to_string()] })
            }
            Some(_) => Err(RpcError::ServerDown { url: url.to_string() }),
            None => Err(unknown_server(url)),
        };
        Box::pin(std::future::ready(page))
    }
}

fn unknown_server(url: &str) -> RpcError {
    RpcError::Connect { url: url.to_string(), reason: "no emulated project there".into() }
}

/// The emulated world's files are what the project says they are: a download brings
/// the announced size and checksum at once, and an upload is always taken.
impl FileTransfer for SimWorld {
    fn download(
        &self,
        order: &TransferOrder,
        _progress: ProgressSink,
    ) -> EffectFuture<Result<Transferred, TransferError>> {
        self.files().insert((order.project, order.name.clone()), order.nbytes);
        let nbytes = order.nbytes.max(0.0) as u64;
        let md5 = order.md5_cksum.clone();
        Box::pin(std::future::ready(Ok(Transferred::Downloaded { nbytes, md5 })))
    }

    fn upload(
        &self,
        order: &TransferOrder,
        _progress: ProgressSink,
    ) -> EffectFuture<Result<Transferred, TransferError>> {
        let stored = self.files().get(&(order.project, order.name.clone())).copied();
        let nbytes = stored.unwrap_or(0.0).max(0.0) as u64;
        let md5 = order.md5_cksum.clone();
        Box::pin(std::future::ready(Ok(Transferred::Uploaded { nbytes, md5 })))
    }

    fn install(&self, _order: &TransferOrder) -> Result<(), TransferError> {
        Ok(())
    }

    fn discard(&self, order: &TransferOrder) -> Result<(), TransferError> {
        self.files().remove(&(order.project, order.name.clone()));
        Ok(())
    }
}

impl FileSystem for SimWorld {
    fn size(&self, project_url: &str, name: &str) -> Result<Option<f64>, FileSystemError> {
        let Some(project) = self.project_at(project_url) else { return Ok(None) };
        Ok(self.files().get(&(project, name.to_string())).copied())
    }

    fn delete(&self, project_url: &str, name: &str) -> Result<bool, FileSystemError> {
        let Some(project) = self.project_at(project_url) else { return Ok(false) };
        Ok(self.files().remove(&(project, name.to_string())).is_some())
    }

    fn disk_space(&self) -> Result<DiskSpace, FileSystemError> {
        let used: f64 = self.files().values().sum();
        Ok(DiskSpace { total: self.disk.0, free: (self.disk.1 - used).max(0.0) })
    }
}

impl HostDiscovery for SimWorld {
    fn availability(&self) -> HostView {
        lock(&self.world).host_view()
    }

    /// The scenario's host: the emulated machine does not change.
    fn describe(&self, _run_benchmarks: bool) -> Result<Host, HostDiscoveryError> {
        Ok(Host::clone(&self.host))
    }
}
