//! Embedding (the library's front door): start the client inside an existing actix
//! System or tokio runtime, watch its events, act on it as a user would.
//!
//! ```no_run
//! # async fn host(state: boinc_core::model::ClientState) -> Result<(), boinc_actors::ClientError> {
//! use boinc_actors::{Client, UserAction};
//! let handle = Client::builder().state(state).days(2.0).spawn()?;
//! let events = handle.events_blocking();
//! handle.act(UserAction::SuspendProject("einstein".into())).await?;
//! let result = handle.finished().await?;
//! # Ok(()) }
//! ```
//!
//! The effects are the simulated ones over the emulated world of the state's scenario
//! (virtual time: run it under a paused tokio clock, as [`run_actor_simulation`] does);
//! the real process, HTTP and file effects belong to the live service.

use crate::actors::scheduler::{SchedulerActor, SchedulerSetup};
use crate::actors::{DiskActor, ResourceActor};
use crate::context::ActorContext;
use crate::events::{ClientEvent, EventBus};
use crate::journal::{EntryKind, Journal, JournalError};
use crate::messages::{HostChanged, Startup, Stats, Tick, User, UserAction};
use crate::sim_effects::{Faults, SimWorld, VirtualClock, lock};
use actix::Addr;
use boinc_core::control::ClientControl;
use boinc_core::emulator::disk_world::DiskWorld;
use boinc_core::emulator::engine::{SimConfig, SimResult, next_step_time, prepare_state};
use boinc_core::emulator::world::World;
use boinc_core::model::ClientState;
use boinc_core::{Policy, Time};
use serde::{Deserialize, Serialize};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// What went wrong with an embedded client.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
pub enum ClientError {
    /// No client state was given to the builder.
    #[error(
        "no client state: give the builder one with .state(...) (e.g. a scenario's client_state.xml)"
    )]
    NoState,
    /// A user action named a project the client does not know.
    #[error("no project named or with master URL '{0}'; `boinc-rs explain` lists the projects")]
    UnknownProject(String),
    /// A user action named a task the client does not know.
    #[error("no task (job) named '{0}'")]
    UnknownTask(String),
    /// The client's actors stopped (the run ended or the System was stopped).
    #[error("the client has stopped: {0}")]
    Stopped(String),
    /// The journal could not be written.
    #[error("journal: {0}")]
    Journal(String),
}

impl From<JournalError> for ClientError {
    fn from(error: JournalError) -> Self {
        ClientError::Journal(error.to_string())
    }
}

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

/// The entry point of the embedding API.
pub struct Client;

impl Client {
    /// A builder with the emulator's defaults (seed policy, seed 1, 10 days).
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
        }
    }
}

/// Sets up a client.
pub struct ClientBuilder {
    state: Option<ClientState>,
    config: SimConfig,
    faults: Faults,
    journal: Journal,
    progress: Option<Box<dyn FnMut(f64)>>,
}

impl ClientBuilder {
    /// The client's state (a scenario's, or a migrated BOINC client's).
    pub fn state(mut self, state: ClientState) -> Self {
        self.state = Some(state);
        self
    }

    /// The whole run configuration at once.
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

    /// How many days to run.
    pub fn days(mut self, days: f64) -> Self {
        self.config.duration = days * 86400.0;
        self
    }

    /// Faults to inject.
    pub fn faults(mut self, faults: Faults) -> Self {
        self.faults = faults;
        self
    }

    /// Where to record the message journal.
    pub fn journal(mut self, journal: Journal) -> Self {
        self.journal = journal;
        self
    }

    /// Called with the fraction of the run done.
    pub fn progress(mut self, progress: impl FnMut(f64) + 'static) -> Self {
        self.progress = Some(Box::new(progress));
        self
    }

    /// Starts the client's actors on the current arbiter (call it inside an actix
    /// System, or a tokio `LocalSet`) and the task that drives them in virtual time.
    pub fn spawn(self) -> Result<ClientHandle, ClientError> {
        let state = self.state.ok_or(ClientError::NoState)?;
        let config = self.config;
        let setup = RunSetup {
            scenario: config.scenario.clone(),
            policy: config.policy,
            seed: config.seed,
            duration: config.duration,
            boinc_compat: config.boinc_compat,
            existing_jobs_only: config.existing_jobs_only,
            faults: self.faults,
            state: state.clone(),
        };
        let (state, start) = prepare_state(state, &config);
        let clock = VirtualClock::new(start);
        let events = EventBus::default();
        let context = ActorContext {
            clock: Arc::new(clock.clone()),
            journal: self.journal.clone(),
            events: events.clone(),
        };
        self.journal.append(start, "driver", EntryKind::Setup, "Setup", &setup);
        let mut client = ClientControl::new(
            state,
            config.policy,
            config.boinc_compat,
            config.existing_jobs_only,
            start,
        );
        let mut world = World::new(client.state(), &config, start);
        world.adopt_jobs(client.state());
        let disk = DiskWorld::new(client.state_mut(), start, &mut world.disk_sink());
        let sim = SimWorld::new(world, client.state(), self.faults, config.seed);
        let disk =
            disk.is_enabled().then(|| DiskActor::new(context.clone(), disk, sim.world().clone()));
        let period = client.state().prefs.scheduling_period();
        let (scheduler, resources) = SchedulerActor::launch(SchedulerSetup {
            client,
            context,
            process_host: Rc::new(sim.clone()),
            transport: Rc::new(sim.clone()),
            seed: config.seed,
            boinc_compat: config.boinc_compat,
            panic_project_actor: self.faults.panic_project_actor,
            disk,
        });
        let (done_sender, done) = tokio::sync::oneshot::channel();
        let driver = Driver {
            scheduler: scheduler.clone(),
            resources,
            sim,
            clock,
            journal: self.journal,
            period,
            start,
            progress: self.progress,
        };
        actix_rt::spawn(async move {
            let result = driver.run().await;
            let _ = done_sender.send(result);
        });
        Ok(ClientHandle { scheduler, events, done })
    }
}

/// Moves virtual time: at each instant, the world's availability changes go to the
/// resource actors and a [`Tick`] to the scheduler; then the paused tokio clock sleeps
/// to the next instant the world or the scheduler asked for.
struct Driver {
    scheduler: Addr<SchedulerActor>,
    resources: Vec<Addr<ResourceActor>>,
    sim: SimWorld,
    clock: VirtualClock,
    journal: Journal,
    period: f64,
    start: Time,
    progress: Option<Box<dyn FnMut(f64)>>,
}

fn stopped(error: actix::MailboxError) -> ClientError {
    ClientError::Stopped(error.to_string())
}

impl Driver {
    async fn run(mut self) -> Result<SimResult, ClientError> {
        let world = self.sim.world().clone();
        let end = lock(&world).end();
        let span = (end - self.start).max(1.0);
        let mut next_progress = 0.0;
        let mut now = self.start;
        self.scheduler.send(Startup { now }).await.map_err(stopped)?;
        loop {
            self.clock.set(now);
            let changed = lock(&world).pop_availability_changes();
            if changed {
                let view = lock(&world).host_view();
                for resource in &self.resources {
                    resource.send(HostChanged { view }).await.map_err(stopped)?;
                }
            }
            let wake = self.scheduler.send(Tick { now }).await.map_err(stopped)?;
            let next = next_step_time(lock(&world).next_change(), wake, now, self.period);
            if next >= end {
                lock(&world).advance_to(end);
                break;
            }
            tokio::time::sleep(Duration::from_secs_f64(next - now)).await;
            lock(&world).advance_to(next);
            now = next;
            let done = (now - self.start) / span;
            if let Some(progress) = self.progress.as_mut()
                && done >= next_progress
            {
                progress(done.min(1.0));
                next_progress = done + 0.01;
            }
        }
        self.clock.set(end);
        let (decisions, rpcs) = self.scheduler.send(Stats).await.map_err(stopped)?;
        self.journal.finish().map_err(|e| ClientError::Journal(e.to_string()))?;
        if let Some(progress) = self.progress.as_mut() {
            progress(1.0);
        }
        let (figures, trace) = lock(&world).finish();
        Ok(SimResult { figures, trace, decisions, rpcs })
    }
}

/// A running client.
pub struct ClientHandle {
    scheduler: Addr<SchedulerActor>,
    events: EventBus,
    done: tokio::sync::oneshot::Receiver<Result<SimResult, ClientError>>,
}

impl ClientHandle {
    /// A stream of the client's events for an async host.
    pub fn events(&self) -> tokio::sync::mpsc::UnboundedReceiver<ClientEvent> {
        self.events.subscribe()
    }

    /// The client's events for a host thread that is not async.
    pub fn events_blocking(&self) -> crossbeam_channel::Receiver<ClientEvent> {
        self.events.subscribe_blocking()
    }

    /// Does what a user asks (suspend or resume a project or task, set the run mode,
    /// detach, attach); it takes effect at the client's next scheduling step.
    pub async fn act(&self, action: UserAction) -> Result<(), ClientError> {
        self.scheduler.send(User { action }).await.map_err(stopped)?
    }

    /// Waits for the run to end; its figures of merit and trace.
    pub async fn finished(self) -> Result<SimResult, ClientError> {
        self.done.await.map_err(|_| ClientError::Stopped("the driver was dropped".into()))?
    }
}

/// Runs a scenario through the actor system in virtual time: a current-thread tokio
/// runtime with a paused clock under an actix System, simulated effects, the same
/// control loop as the emulator's engine.
pub fn run_actor_simulation(
    state: ClientState,
    config: &SimConfig,
    faults: Faults,
    journal: Journal,
    progress: impl FnMut(f64) + 'static,
) -> Result<SimResult, ClientError> {
    let system = paused_system()?;
    let builder = Client::builder()
        .state(state)
        .config(config.clone())
        .faults(faults)
        .journal(journal)
        .progress(progress);
    system.block_on(async move { builder.spawn()?.finished().await })
}

/// An actix System on a current-thread tokio runtime whose clock is paused, so timers
/// follow virtual time.
pub fn paused_system() -> Result<actix_rt::SystemRunner, ClientError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .map_err(|e| ClientError::Stopped(format!("cannot start a runtime: {e}")))?;
    Ok(actix_rt::System::with_tokio_rt(move || runtime))
}
