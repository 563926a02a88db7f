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

use super::error::ClientError;
use super::handle::ClientHandle;
use crate::journal::{EntryKind, Journal};
use crate::runtime::DiskActor;
use crate::runtime::context::ActorContext;
use crate::runtime::events::EventBus;
use crate::runtime::scheduler::{SchedulerActor, SchedulerSetup};
use crate::sim::driver::Driver;
use crate::sim::effects::{Faults, SimWorld, VirtualClock};
use boinc_core::Policy;
use boinc_core::control::ClientControl;
use boinc_core::emulator::disk_world::DiskWorld;
use boinc_core::emulator::engine::{SimConfig, prepare_state};
use boinc_core::emulator::world::World;
use boinc_core::model::ClientState;
use serde::{Deserialize, Serialize};
use std::rc::Rc;
use std::sync::Arc;

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
