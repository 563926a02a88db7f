//! `boinc-rs replay` (docs/design.md "Time, effects, determinism"): re-runs the actors from a
//! journal's recorded inputs (time, availability, process reports, server replies, user
//! actions) and checks that every message they deliver is the recorded one. The first
//! difference is the divergence.

use crate::client::{ClientError, RunSetup};
use crate::effects::{
    EffectFuture, ProcessError, ProcessHost, ProcessReport, RpcError, SchedulerTransport,
};
use crate::journal::{Divergence, EntryKind, Journal, JournalEntry};
use crate::runtime::context::ActorContext;
use crate::runtime::events::EventBus;
use crate::runtime::messages::{HostChanged, PollTasks, Shutdown, Startup, Tick, User};
use crate::runtime::scheduler::{SchedulerActor, SchedulerLink};
use crate::runtime::supervision::PanicInjector;
use crate::sim::{SimConfig, SimulatedWorld, paused_system};
use actix::Addr;
use boinc_core::control::TaskCommand;
use boinc_core::protocol::{MasterPage, SchedulerReply, SchedulerRequest};
use boinc_core::supervise::RestartPolicy;
use std::sync::Arc;

/// The effects of a replay: whatever the world said is read back from the journal.
pub(super) struct Recorded(pub(super) Journal);

/// What a replayed effect answers where the journal has nothing (the divergence is
/// reported by the journal itself).
fn not_recorded(url: &str) -> RpcError {
    RpcError::Connect { url: url.to_string(), reason: "not in the journal".into() }
}

impl ProcessHost for Recorded {
    fn command(&self, _: &TaskCommand) -> Result<(), ProcessError> {
        Ok(())
    }

    fn poll(&self, _: u32) -> Result<ProcessReport, ProcessError> {
        self.0
            .recorded_input::<Result<ProcessReport, String>>("ProcessReport")
            .unwrap_or(Ok(ProcessReport::Gone))
            .map_err(ProcessError::Host)
    }

    fn reap(&self, _: u32) -> Result<(), ProcessError> {
        Ok(())
    }

    fn kill(&self, _: u32) -> Result<(), ProcessError> {
        Ok(())
    }
}

impl SchedulerTransport for Recorded {
    fn scheduler_rpc(
        &self,
        url: &str,
        _: &SchedulerRequest<'static>,
    ) -> EffectFuture<Result<SchedulerReply, RpcError>> {
        let reply = self
            .0
            .recorded_input::<Result<SchedulerReply, RpcError>>("RpcReply")
            .unwrap_or_else(|| Err(not_recorded(url)));
        Box::pin(std::future::ready(reply))
    }

    fn master_page(&self, url: &str) -> EffectFuture<Result<MasterPage, RpcError>> {
        let page = self
            .0
            .recorded_input::<Result<MasterPage, RpcError>>("MasterPage")
            .unwrap_or_else(|| Err(not_recorded(url)));
        Box::pin(std::future::ready(page))
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
    if setup_entry.name == "LiveSetup" {
        return super::live_replay::replay_live(recorded);
    }
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
        // The disk manager decides from the client state alone; what it did is measured
        // on a world that replay otherwise leaves alone.
        let world = SimulatedWorld::new(setup.state.clone(), &config, &setup.faults);
        let clock = world.clock.clone();
        let context = ActorContext {
            clock: Arc::new(clock.clone()),
            journal: replaying.clone(),
            events: EventBus::default(),
            faults: PanicInjector::new(&setup.faults.panics),
        };
        replaying.append(world.start, "driver", EntryKind::Setup, "Setup", &setup);
        let effects = Arc::new(Recorded(replaying.clone()));
        let mut scheduler_setup =
            world.scheduler_setup(context, RestartPolicy::APP, RestartPolicy::ACTOR);
        scheduler_setup.process_host = effects.clone();
        scheduler_setup.transport = effects;
        let (mut scheduler, link) = SchedulerActor::launch(scheduler_setup);
        while let Some(entry) = next_driver_input(&replaying).await {
            clock.set(entry.time);
            let delivered = deliver(&mut scheduler, &link, &entry).await?;
            if !delivered || replaying.divergence(false).is_some() {
                break;
            }
        }
        Ok::<(), ClientError>(())
    })?;
    Ok(ReplayReport { entries: journal.len(), divergence: journal.divergence(true) })
}

/// How many times one recorded input is delivered to a scheduler rebuilt after failing
/// on it, before replay gives up.
const REDELIVERIES: usize = 100;

/// Delivers a recorded input of the scheduler's; whether it is one the scheduler takes.
/// A scheduler that fails on it is rebuilt and handed it again, as the recorded run's
/// driver did.
pub(super) async fn deliver(
    scheduler: &mut Addr<SchedulerActor>,
    link: &SchedulerLink,
    entry: &JournalEntry,
) -> Result<bool, ClientError> {
    for _ in 0..REDELIVERIES {
        let sent = match entry.name.as_str() {
            "Startup" => scheduler.send(Startup { now: entry.time }).await.map(|_| true),
            "Tick" => scheduler.send(parse::<Tick>(entry)?).await.map(|_| true),
            "PollTasks" => scheduler.send(parse::<PollTasks>(entry)?).await.map(|_| true),
            // A refused action is refused again: the journal checks the rest.
            "User" => scheduler.send(parse::<User>(entry)?).await.map(|_| true),
            "HostChanged" => scheduler.send(parse::<HostChanged>(entry)?).await.map(|_| true),
            "Shutdown" => scheduler.send(parse::<Shutdown>(entry)?).await.map(|_| true),
            _ => Ok(false),
        };
        match sent {
            Ok(delivered) => return Ok(delivered),
            Err(_) => *scheduler = SchedulerActor::rebuild(link.inner.clone()),
        }
    }
    Err(ClientError::Journal(format!(
        "the scheduler kept failing on entry {} ({})",
        entry.seq, entry.name
    )))
}

/// The next input for the driver to deliver, once the actors have done all they do
/// without one (operations the scheduler started finish between driver inputs).
async fn next_driver_input(journal: &Journal) -> Option<JournalEntry> {
    loop {
        let before = journal.len();
        for _ in 0..SETTLE_ROUNDS {
            tokio::task::yield_now().await;
        }
        match journal.next_recorded() {
            Some(entry) if entry.kind == EntryKind::Input && entry.actor == "scheduler" => {
                return Some(entry);
            }
            Some(_) if journal.len() != before => continue,
            Some(entry) => return Some(entry),
            None => return None,
        }
    }
}

/// How many times replay lets the actors run before it looks at the journal again.
const SETTLE_ROUNDS: usize = 16;

fn parse<T: serde::de::DeserializeOwned>(entry: &JournalEntry) -> Result<T, ClientError> {
    serde_json::from_value(entry.body.clone()).map_err(|e| {
        ClientError::Journal(format!("entry {} ({}) is malformed: {e}", entry.seq, entry.name))
    })
}
