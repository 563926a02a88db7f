//! `boinc-rs replay` (DESIGN.md "Time, effects, determinism"): re-runs the actors from a
//! journal's recorded inputs (time, availability, process reports, server replies, user
//! actions) and checks that every message they deliver is the recorded one. The first
//! difference is the divergence.

use crate::actors::DiskActor;
use crate::actors::scheduler::{SchedulerActor, SchedulerSetup};
use crate::client::{ClientError, RunSetup, paused_system};
use crate::context::ActorContext;
use crate::effects::{EffectFuture, ProcessHost, ProcessReport, SchedulerTransport};
use crate::events::EventBus;
use crate::journal::{Divergence, EntryKind, Journal, JournalEntry};
use crate::messages::{HostChanged, Startup, Tick, User};
use crate::sim_effects::VirtualClock;
use boinc_core::Time;
use boinc_core::control::{ClientControl, TaskCommand};
use boinc_core::emulator::disk_world::DiskWorld;
use boinc_core::emulator::engine::{SimConfig, prepare_state};
use boinc_core::emulator::world::World;
use boinc_core::model::ProjectId;
use boinc_core::protocol::{SchedulerReply, SchedulerRequest};
use std::rc::Rc;

/// The effects of a replay: whatever the world said is read back from the journal.
struct Recorded(Journal);

impl ProcessHost for Recorded {
    fn command(&self, _: &TaskCommand) {}

    fn poll(&self, _: u32) -> ProcessReport {
        self.0.recorded_input("ProcessReport").unwrap_or(ProcessReport::Gone)
    }

    fn reap(&self, _: u32) {}

    fn kill(&self, _: u32) {}
}

impl SchedulerTransport for Recorded {
    fn scheduler_rpc(
        &self,
        _: ProjectId,
        _: &SchedulerRequest,
        _: Time,
    ) -> EffectFuture<Option<SchedulerReply>> {
        let reply = self.0.recorded_input::<Option<SchedulerReply>>("RpcReply").flatten();
        Box::pin(std::future::ready(reply))
    }

    fn master_page(&self, _: ProjectId) -> EffectFuture<bool> {
        let read = self.0.recorded_input("MasterPage").unwrap_or(false);
        Box::pin(std::future::ready(read))
    }
}

/// What a replay found.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayReport {
    /// Journal entries replayed and matched.
    pub entries: u64,
    /// The first difference, if any.
    pub divergence: Option<Divergence>,
}

/// Replays a recorded journal (its first entry is the run's setup).
pub fn replay(recorded: Vec<JournalEntry>) -> Result<ReplayReport, ClientError> {
    let Some(setup_entry) = recorded.first() else {
        return Err(ClientError::Journal("the journal is empty".into()));
    };
    let setup: RunSetup = serde_json::from_value(setup_entry.body.clone())
        .map_err(|e| ClientError::Journal(format!("its setup line is not a run setup: {e}")))?;
    let journal = Journal::verify(recorded);
    let system = paused_system()?;
    let config = SimConfig {
        scenario: setup.scenario.clone(),
        policy: setup.policy,
        seed: setup.seed,
        duration: setup.duration,
        boinc_compat: setup.boinc_compat,
        existing_jobs_only: setup.existing_jobs_only,
        trace: false,
    };
    let replaying = journal.clone();
    system.block_on(async move {
        let (state, start) = prepare_state(setup.state.clone(), &config);
        let clock = VirtualClock::new(start);
        let context = ActorContext {
            clock: Rc::new(clock.clone()),
            journal: replaying.clone(),
            events: EventBus::default(),
        };
        replaying.append(start, "driver", EntryKind::Setup, "Setup", &setup);
        let mut client = ClientControl::new(
            state,
            config.policy,
            config.boinc_compat,
            config.existing_jobs_only,
            start,
        );
        // The disk manager decides from the client state alone; what it did is measured
        // on a world that replay otherwise leaves alone.
        let mut scratch = World::new(client.state(), &config, start);
        let disk = DiskWorld::new(client.state_mut(), start, &mut scratch.disk_sink());
        let disk = disk.is_enabled().then(|| {
            DiskActor::new(context.clone(), disk, Rc::new(std::cell::RefCell::new(scratch)))
        });
        let effects = Rc::new(Recorded(replaying.clone()));
        let (scheduler, resources) = SchedulerActor::launch(SchedulerSetup {
            client,
            context,
            process_host: effects.clone(),
            transport: effects,
            seed: config.seed,
            boinc_compat: config.boinc_compat,
            panic_project_actor: setup.faults.panic_project_actor,
            disk,
        });
        let stopped = |e: actix::MailboxError| ClientError::Stopped(e.to_string());
        while let Some(entry) = replaying.next_recorded() {
            clock.set(entry.time);
            let delivered = match (entry.kind, entry.name.as_str()) {
                (EntryKind::Input, "Startup") => {
                    scheduler.send(Startup { now: entry.time }).await.map_err(stopped)?;
                    true
                }
                (EntryKind::Input, "Tick") => {
                    let tick: Tick = parse(&entry)?;
                    scheduler.send(tick).await.map_err(stopped)?;
                    true
                }
                (EntryKind::Input, "User") => {
                    let user: User = parse(&entry)?;
                    // A refused action is refused again: the journal checks the rest.
                    let _ = scheduler.send(user).await.map_err(stopped)?;
                    true
                }
                (EntryKind::Input, "HostChanged") => {
                    let changed: HostChanged = parse(&entry)?;
                    let key = entry.actor.trim_start_matches("resource:");
                    let index = boinc_core::model::ResourceType::ALL
                        .into_iter()
                        .filter(|r| setup.state.instances(*r) > 0)
                        .position(|r| r.key() == key);
                    match index.and_then(|i| resources.get(i)) {
                        Some(actor) => {
                            actor.send(changed).await.map_err(stopped)?;
                            true
                        }
                        None => false,
                    }
                }
                _ => false,
            };
            if !delivered || replaying.divergence(false).is_some() {
                break;
            }
        }
        Ok::<(), ClientError>(())
    })?;
    Ok(ReplayReport { entries: journal.len(), divergence: journal.divergence(true) })
}

fn parse<T: serde::de::DeserializeOwned>(entry: &JournalEntry) -> Result<T, ClientError> {
    serde_json::from_value(entry.body.clone()).map_err(|e| {
        ClientError::Journal(format!("entry {} ({}) is malformed: {e}", entry.seq, entry.name))
    })
}
