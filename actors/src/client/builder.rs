//! Setting a client up: its state, its world (simulated, or the host's own effects), its
//! journal and faults; then starting it on the current actix arbiter or on a thread of
//! its own.
//!
//! ```no_run
//! # fn host(state: boinc_core::model::ClientState) -> Result<(), boinc_runtime::ClientError> {
//! use boinc_runtime::{Client, UserAction};
//! // A simulated client on its own thread, driven from this one.
//! let handle = Client::builder().state(state).days(2.0).start()?;
//! let events = handle.events_blocking();
//! handle.act_blocking(UserAction::SuspendProject("einstein".into()))?;
//! let snapshot = handle.snapshot_blocking()?;
//! handle.shutdown();
//! let report = handle.join()?;
//! # Ok(()) }
//! ```

use super::error::ClientError;
use super::handle::{ClientHandle, HandleShared, RunReport};
use super::wall_clock_driver::{LiveInputs, WallClockDriver};
use crate::effects::{
    Clock, FileSystem, FileTransfer, HostDiscovery, ProcessHost, SchedulerTransport,
    StatePersistence,
};
use crate::journal::{EntryKind, Journal, JournaledFileSystem, LatchedClock, LiveSetup};
use crate::runtime::context::ActorContext;
use crate::runtime::disk::DiskActor;
use crate::runtime::events::{ClientEvent, EventBus};
use crate::runtime::live_disk::LiveDisk;
use crate::runtime::scheduler::{SchedulerActor, SchedulerSetup};
use crate::runtime::supervision::{ActorSupervisor, PanicInjector};
use crate::sim::driver::VirtualDriver;
use crate::sim::effects::Faults;
use crate::sim::{SimConfig, SimulatedWorld};
use boinc_core::control::{ClientControl, REPORT_POLL_INTERVAL};
use boinc_core::model::ClientState;
use boinc_core::supervise::RestartPolicy;
use boinc_core::{Policy, Time};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// How a run was set up: the journal's first line, everything replay needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSetup {
    /// Scenario name.
    pub scenario: String,
    /// Policy family.
    pub policy: Policy,
    /// Seed.
    pub seed: u64,
    /// Simulated seconds.
    pub duration: f64,
    /// BOINC-compatible modelling.
    pub boinc_compat: bool,
    /// No server contact.
    pub existing_jobs_only: bool,
    /// Injected faults.
    pub faults: Faults,
    /// The client's state at the start.
    pub state: ClientState,
}

/// The effects of a client that runs in the real world (or in a host program's own),
/// and how often its driver polls the tasks.
#[derive(Clone)]
pub struct Effects {
    /// Where the time comes from.
    pub clock: Arc<dyn Clock>,
    /// Where task processes run.
    pub process_host: Arc<dyn ProcessHost>,
    /// Where scheduler RPCs go.
    pub transport: Arc<dyn SchedulerTransport>,
    /// What the host is and whether it may work.
    pub host_discovery: Arc<dyn HostDiscovery>,
    /// Where project files are downloaded and uploaded (the live one is
    /// `boinc_service::http::LiveFileTransfer`; `boinc_service::http::LiveNetwork` makes it
    /// with the transport). With one, jobs wait for their files to be downloaded and
    /// checked, and results are reported after their outputs are uploaded; `None`: the
    /// host's world moves no files, and they count as present.
    pub file_transfer: Option<Arc<dyn FileTransfer>>,
    /// The data directory the disk manager (seed 004) keeps within the user's limits;
    /// `None` for a host program that manages its own disk.
    pub file_system: Option<Arc<dyn FileSystem>>,
    /// Where the state is kept between lives; `None` for a host program that keeps it
    /// itself (it can take snapshots through the handle).
    pub persistence: Option<Arc<dyn StatePersistence>>,
    /// How often the driver polls the tasks (BOINC polls its apps once a second).
    pub tick_interval: Duration,
}

/// The entry point of the embedding API.
pub struct Client;

impl Client {
    /// A builder with the emulator's defaults (seed policy, seed 1, 10 days, simulated).
    pub fn builder() -> ClientBuilder {
        ClientBuilder {
            state: None,
            config: SimConfig {
                scenario: "embedded".to_string(),
                policy: Policy::Seed,
                seed: 1,
                duration: 10.0 * 86400.0,
                boinc_compat: false,
                existing_jobs_only: false,
                trace: false,
            },
            faults: Faults::default(),
            journal: Journal::off(),
            progress: None,
            effects: None,
            app_restart_policy: RestartPolicy::APP,
            actor_restart_policy: RestartPolicy::ACTOR,
            realtime_factor: None,
            paused_clock: false,
            events: EventBus::default(),
        }
    }
}

/// Sets up a client.
pub struct ClientBuilder {
    state: Option<ClientState>,
    config: SimConfig,
    faults: Faults,
    journal: Journal,
    progress: Option<Box<dyn FnMut(f64) + Send>>,
    effects: Option<Effects>,
    app_restart_policy: RestartPolicy,
    actor_restart_policy: RestartPolicy,
    realtime_factor: Option<f64>,
    /// The runtime the client is spawned on has a paused clock (one this crate made):
    /// a simulated client then moves it straight to its next step.
    paused_clock: bool,
    /// The client's event bus, made here so that a host can subscribe before the client
    /// starts and miss nothing.
    events: EventBus,
}

impl ClientBuilder {
    /// A subscriber for a thread that is not async, made before the client starts so it
    /// sees every event from the first (a subscription on the handle misses what the
    /// client did before it was made). Its channel holds `capacity` events; events a
    /// full channel cannot take are counted by [`ClientHandle::dropped_events`].
    pub fn subscribe_blocking(&self, capacity: usize) -> crossbeam_channel::Receiver<ClientEvent> {
        self.events.subscribe_blocking(capacity)
    }

    /// The client's state (a scenario's, or a migrated BOINC client's).
    pub fn state(mut self, state: ClientState) -> Self {
        self.state = Some(state);
        self
    }

    /// The whole simulation configuration at once (policy, seed, span, models).
    pub fn config(mut self, config: SimConfig) -> Self {
        self.config = config;
        self
    }

    /// The policy family.
    pub fn policy(mut self, policy: Policy) -> Self {
        self.config.policy = policy;
        self
    }

    /// The seed of every random choice.
    pub fn seed(mut self, seed: u64) -> Self {
        self.config.seed = seed;
        self
    }

    /// How many days a simulated run lasts.
    pub fn days(mut self, days: f64) -> Self {
        self.config.duration = days * 86400.0;
        self
    }

    /// Faults to inject into a simulated run.
    pub fn faults(mut self, faults: Faults) -> Self {
        self.faults = faults;
        self
    }

    /// Where to record the message journal.
    pub fn journal(mut self, journal: Journal) -> Self {
        self.journal = journal;
        self
    }

    /// Called with the fraction of a simulated run done.
    pub fn progress(mut self, progress: impl FnMut(f64) + Send + 'static) -> Self {
        self.progress = Some(Box::new(progress));
        self
    }

    /// Runs the client over the host's own effects and clock, in wall-clock time,
    /// instead of a simulated world.
    pub fn effects(mut self, effects: Effects) -> Self {
        self.effects = Some(effects);
        self
    }

    /// The client will be spawned on a runtime whose clock this crate paused.
    pub(crate) fn on_paused_clock(mut self) -> Self {
        self.paused_clock = true;
        self
    }

    /// Paces a simulated client in wall-clock time: its virtual time runs `factor` times
    /// as fast as the wall clock (1: in real time) instead of as fast as it can, so
    /// that people and programs can talk to it while it runs (a GUI RPC server over
    /// it, say). [`ClientBuilder::start`] then runs it on a clock that is not paused;
    /// with [`ClientBuilder::spawn`], the caller's runtime must not be paused either.
    pub fn realtime_factor(mut self, factor: f64) -> Self {
        self.realtime_factor = Some(factor);
        self
    }

    /// How crashed apps are restarted (default [`RestartPolicy::APP`]).
    pub fn app_restart_policy(mut self, policy: RestartPolicy) -> Self {
        self.app_restart_policy = policy;
        self
    }

    /// How failed actors are rebuilt (default [`RestartPolicy::ACTOR`]).
    pub fn actor_restart_policy(mut self, policy: RestartPolicy) -> Self {
        self.actor_restart_policy = policy;
        self
    }

    /// Starts the client's actors on the current arbiter (inside an actix System, or a
    /// tokio `LocalSet` under one) and the task that drives them. A simulated client
    /// runs in virtual time: call this on a runtime whose clock is paused, as
    /// [`crate::sim::paused_system`] makes, or use [`ClientBuilder::start`].
    pub fn spawn(self) -> Result<ClientHandle, ClientError> {
        let arbiter = actix_rt::Arbiter::try_current().ok_or(ClientError::NoRuntime)?;
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(ClientError::NoRuntime);
        }
        let state = self.state.ok_or(ClientError::NoState)?;
        let events = self.events;
        let base = tokio::time::Instant::now();
        let faults = PanicInjector::new(&self.faults.panics);
        match self.effects {
            Some(effects) => {
                // A live journal's actors read the time its latest input came in, and
                // the data directory's answers are recorded.
                let latched = self
                    .journal
                    .is_gated()
                    .then(|| Arc::new(LatchedClock::over(effects.clock.clone())));
                let clock: Arc<dyn Clock> = match &latched {
                    Some(latched) => latched.clone(),
                    None => effects.clock.clone(),
                };
                let start = clock.now();
                if latched.is_some() {
                    let setup = LiveSetup {
                        policy: self.config.policy,
                        seed: self.config.seed,
                        existing_jobs_only: self.config.existing_jobs_only,
                        app_restart_policy: self.app_restart_policy,
                        actor_restart_policy: self.actor_restart_policy,
                        file_transfers: effects.file_transfer.is_some(),
                        disk_manager: effects.file_system.is_some(),
                        report_poll: Some(REPORT_POLL_INTERVAL),
                        state: state.clone(),
                    };
                    self.journal.append(start, "driver", EntryKind::Setup, "LiveSetup", &setup);
                }
                let context = ActorContext {
                    clock: clock.clone(),
                    journal: self.journal.clone(),
                    events: events.clone(),
                    faults,
                };
                let disk = effects.file_system.clone().map(|file_system| {
                    let file_system: Arc<dyn FileSystem> = match &latched {
                        Some(_) => Arc::new(JournaledFileSystem::new(
                            file_system,
                            self.journal.clone(),
                            clock.clone(),
                        )),
                        None => file_system,
                    };
                    DiskActor::new(context.clone(), Box::new(LiveDisk::new(&state, file_system)))
                });
                let mut client = ClientControl::new(
                    state,
                    self.config.policy,
                    false,
                    self.config.existing_jobs_only,
                    start,
                );
                // A live client reports between work fetches, as BOINC does.
                client.poll_reports_every(REPORT_POLL_INTERVAL);
                let (scheduler, link) = SchedulerActor::launch(SchedulerSetup {
                    client,
                    context,
                    process_host: effects.process_host.clone(),
                    transport: effects.transport.clone(),
                    seed: self.config.seed,
                    boinc_compat: false,
                    app_restart_policy: self.app_restart_policy,
                    actor_restart_policy: self.actor_restart_policy,
                    disk,
                    file_transfer: effects.file_transfer.clone(),
                    persistence: effects.persistence.clone(),
                });
                let shared = HandleShared::new(scheduler, events, arbiter, base);
                let live = latched
                    .map(|clock| LiveInputs { clock, actions: shared.actions_through_driver() });
                let driver = WallClockDriver {
                    link,
                    handle: shared.clone(),
                    supervisor: ActorSupervisor::new(self.actor_restart_policy, self.config.seed),
                    effects,
                    journal: self.journal,
                    live,
                };
                spawn_driver(shared.clone(), driver.run());
                Ok(ClientHandle { shared })
            }
            None => {
                let mut world = SimulatedWorld::new(state, &self.config, &self.faults);
                let speed = match self.realtime_factor {
                    Some(factor) if factor.is_finite() && factor > 0.0 => factor,
                    Some(factor) => return Err(ClientError::BadPace(factor)),
                    None => 1.0,
                };
                world.pace(speed);
                let setup = RunSetup {
                    scenario: self.config.scenario.clone(),
                    policy: self.config.policy,
                    seed: self.config.seed,
                    duration: self.config.duration,
                    boinc_compat: self.config.boinc_compat,
                    existing_jobs_only: self.config.existing_jobs_only,
                    faults: self.faults.clone(),
                    state: world.initial_state.clone(),
                };
                let start: Time = world.start;
                self.journal.append(start, "driver", EntryKind::Setup, "Setup", &setup);
                let context = ActorContext {
                    clock: Arc::new(world.clock.clone()),
                    journal: self.journal.clone(),
                    events: events.clone(),
                    faults,
                };
                let (scheduler, link) = SchedulerActor::launch(world.scheduler_setup(
                    context,
                    self.app_restart_policy,
                    self.actor_restart_policy,
                ));
                let shared = HandleShared::new(scheduler, events, arbiter, base);
                let driver = VirtualDriver {
                    link,
                    handle: shared.clone(),
                    supervisor: ActorSupervisor::new(self.actor_restart_policy, self.config.seed),
                    world: world.sim.world().clone(),
                    clock: world.clock,
                    journal: self.journal,
                    period: world.period,
                    start,
                    speed,
                    paused_clock: self.paused_clock && self.realtime_factor.is_none(),
                    progress: self.progress,
                };
                spawn_driver(shared.clone(), driver.run());
                Ok(ClientHandle { shared })
            }
        }
    }

    /// Starts the client on a thread of its own (with its own actix System; a paused
    /// clock for a simulated client), so it can be driven from anywhere: any tokio
    /// runtime, multi-threaded too, or plain threads.
    pub fn start(self) -> Result<ClientHandle, ClientError> {
        let paused = self.effects.is_none() && self.realtime_factor.is_none();
        let builder = if paused { self.on_paused_clock() } else { self };
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("boinc-rs client".into())
            .spawn(move || {
                let system = match client_system(paused) {
                    Ok(system) => system,
                    Err(error) => {
                        let _ = sender.send(Err(error));
                        return;
                    }
                };
                system.block_on(async move {
                    let handle = match builder.spawn() {
                        Ok(handle) => handle,
                        Err(error) => {
                            let _ = sender.send(Err(error));
                            return;
                        }
                    };
                    let _ = sender.send(Ok(handle.clone()));
                    let _ = handle.finished().await;
                });
            })
            .map_err(|e| ClientError::Stopped(format!("cannot start the client's thread: {e}")))?;
        let handle = receiver
            .recv()
            .map_err(|_| ClientError::Stopped("the client's thread ended at once".into()))??;
        handle.shared.set_thread(thread);
        Ok(handle)
    }
}

/// Runs a driver on the current arbiter; its outcome goes to the handle.
fn spawn_driver(
    shared: Arc<HandleShared>,
    driver: impl std::future::Future<Output = Result<RunReport, ClientError>> + 'static,
) {
    actix_rt::spawn(async move {
        let outcome = driver.await;
        if let Err(error) = &outcome {
            tracing::error!(%error, "the client stopped");
        }
        shared.finish(outcome);
    });
}

/// An actix System for a client's own thread: a current-thread tokio runtime, its clock
/// paused for a simulated client so that timers follow virtual time.
fn client_system(paused: bool) -> Result<actix_rt::SystemRunner, ClientError> {
    let mut builder = tokio::runtime::Builder::new_current_thread();
    builder.enable_all();
    if paused {
        builder.start_paused(true);
    }
    let runtime = builder
        .build()
        .map_err(|e| ClientError::Stopped(format!("cannot start a runtime: {e}")))?;
    Ok(actix_rt::System::with_tokio_rt(move || runtime))
}
