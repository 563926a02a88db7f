//! `boinc-rs replay` of a live run's journal (docs/actors.md "Live journal and
//! replay"): the actors are built from the setup line as the live client built them,
//! over effects that touch nothing (no network, no processes, no disk, no clock), and
//! every recorded input is fed back where the run took it in: the driver's ticks and
//! polls, the user's actions and host changes are delivered to the scheduler, and a
//! reply, a master page or a transfer's end is let in to the operation waiting for
//! it. Every message the actors deliver is compared with the recorded one; the first
//! difference is the divergence.

use super::live::{JournaledFileSystem, LatchedClock, LiveSetup};
use super::replay::{Recorded, ReplayReport, deliver};
use crate::client::ClientError;
use crate::effects::{
    DiskSpace, EffectFuture, FileSystem, FileSystemError, FileTransfer, ProgressSink, RpcError,
    SchedulerTransport, TransferError, Transferred,
};
use crate::journal::{EntryKind, Journal, JournalEntry};
use crate::runtime::context::ActorContext;
use crate::runtime::disk::DiskActor;
use crate::runtime::events::EventBus;
use crate::runtime::live_disk::LiveDisk;
use crate::runtime::scheduler::{SchedulerActor, SchedulerSetup};
use crate::runtime::supervision::PanicInjector;
use crate::sim::paused_system;
use boinc_core::control::ClientControl;
use boinc_core::protocol::{MasterPage, SchedulerReply, SchedulerRequest};
use boinc_core::transfer::TransferOrder;
use std::sync::Arc;

/// The effects of a live run's replay other than the processes (whose reports are read
/// back as a simulated run's are): whatever the world said is in the journal, whose
/// answer replaces each of these where the run recorded one.
struct Replayed;

/// Why a replayed effect has no answer of its own.
const REPLAYED: &str = "replayed from the journal";

/// A transfer's end as a replayed effect has it (the journal has the run's).
fn not_moved(order: &TransferOrder) -> EffectFuture<Result<Transferred, TransferError>> {
    let error = TransferError::Connect { url: order.url.clone(), reason: REPLAYED.into() };
    Box::pin(std::future::ready(Err(error)))
}

impl SchedulerTransport for Replayed {
    fn scheduler_rpc(
        &self,
        url: &str,
        _: &SchedulerRequest<'static>,
    ) -> EffectFuture<Result<SchedulerReply, RpcError>> {
        let error = RpcError::Connect { url: url.to_string(), reason: REPLAYED.into() };
        Box::pin(std::future::ready(Err(error)))
    }

    fn master_page(&self, url: &str) -> EffectFuture<Result<MasterPage, RpcError>> {
        let error = RpcError::Connect { url: url.to_string(), reason: REPLAYED.into() };
        Box::pin(std::future::ready(Err(error)))
    }
}

impl FileTransfer for Replayed {
    fn download(
        &self,
        order: &TransferOrder,
        _: ProgressSink,
    ) -> EffectFuture<Result<Transferred, TransferError>> {
        not_moved(order)
    }

    fn upload(
        &self,
        order: &TransferOrder,
        _: ProgressSink,
    ) -> EffectFuture<Result<Transferred, TransferError>> {
        not_moved(order)
    }

    fn install(&self, _: &TransferOrder) -> Result<(), TransferError> {
        Ok(())
    }

    fn discard(&self, _: &TransferOrder) -> Result<(), TransferError> {
        Ok(())
    }
}

impl FileSystem for Replayed {
    fn size(&self, _: &str, _: &str) -> Result<Option<f64>, FileSystemError> {
        Ok(None)
    }

    fn delete(&self, _: &str, _: &str) -> Result<bool, FileSystemError> {
        Ok(false)
    }

    fn disk_space(&self) -> Result<DiskSpace, FileSystemError> {
        Ok(DiskSpace { total: 0.0, free: 0.0 })
    }
}

/// Replays a live run's journal (its first entry is a [`LiveSetup`]).
pub(crate) fn replay_live(recorded: Vec<JournalEntry>) -> Result<ReplayReport, ClientError> {
    let Some(setup_entry) = recorded.first() else {
        return Err(ClientError::Journal("the journal is empty".into()));
    };
    let start = setup_entry.time;
    let setup: LiveSetup = serde_json::from_value(setup_entry.body.clone()).map_err(|e| {
        ClientError::Journal(format!("its setup line is not a live run's setup: {e}"))
    })?;
    let journal = Journal::verify_live(recorded);
    let system = paused_system()?;
    let replaying = journal.clone();
    system.block_on(async move {
        let clock = Arc::new(LatchedClock::fixed(start));
        let context = ActorContext {
            clock: clock.clone(),
            journal: replaying.clone(),
            events: EventBus::default(),
            faults: PanicInjector::new(&[]),
        };
        replaying.append(start, "driver", EntryKind::Setup, "LiveSetup", &setup);
        let effects = Arc::new(Replayed);
        let disk = setup.disk_manager.then(|| {
            let file_system =
                JournaledFileSystem::new(effects.clone(), replaying.clone(), clock.clone());
            let manager = LiveDisk::new(&setup.state, Arc::new(file_system));
            DiskActor::new(context.clone(), Box::new(manager))
        });
        let file_transfer: Option<Arc<dyn FileTransfer>> =
            setup.file_transfers.then(|| effects.clone() as Arc<dyn FileTransfer>);
        let mut client =
            ClientControl::new(setup.state, setup.policy, false, setup.existing_jobs_only, start);
        if let Some(seconds) = setup.report_poll {
            client.poll_reports_every(seconds);
        }
        let (mut scheduler, link) = SchedulerActor::launch(SchedulerSetup {
            client,
            context,
            process_host: Arc::new(Recorded(replaying.clone())),
            transport: effects,
            seed: setup.seed,
            boinc_compat: false,
            app_restart_policy: setup.app_restart_policy,
            actor_restart_policy: setup.actor_restart_policy,
            disk,
            file_transfer,
            persistence: None,
        });
        loop {
            replaying.settle().await;
            if replaying.divergence(false).is_some() {
                break;
            }
            let Some(entry) = replaying.next_recorded() else { break };
            if entry.kind != EntryKind::Input {
                // The run delivered a message here that the replay never made.
                replaying.nothing_replayed();
                break;
            }
            clock.set(entry.time);
            if entry.actor != "scheduler" {
                // A reply, a page or a transfer's end: the operation waiting for it goes on.
                if !replaying.gate().admit(&entry.actor) {
                    replaying.nothing_replayed();
                    break;
                }
                continue;
            }
            if !deliver(&mut scheduler, &link, &entry).await? {
                replaying.nothing_replayed();
            }
        }
        Ok::<(), ClientError>(())
    })?;
    Ok(ReplayReport { entries: journal.len(), divergence: journal.divergence(true) })
}
