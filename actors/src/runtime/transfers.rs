//! The scheduler's file transfers (docs/design.md "Nothing waits"; the policy is the core's
//! [`boinc_core::transfer`], stepped by [`ClientControl::start_transfers`] and
//! [`ClientControl::finish_transfer`]): each attempt the core orders is an operation in
//! flight, recorded in the core's state, whose end comes back to the scheduler as the
//! continuation of its future; the scheduler goes on meanwhile. This runner turns
//! orders into the file-transfer effect's futures and their ends into the core's
//! results, puts checked downloads in place (or deletes rejected ones), and tells the
//! user and the host program what happened.

use super::context::ActorContext;
use super::events::ClientEvent;
use crate::effects::{FileTransfer, ProgressSink, TransferError, Transferred};
use boinc_core::Time;
use boinc_core::control::ClientControl;
use boinc_core::model::ProjectId;
use boinc_core::transfer::{
    Direction, Settlement, StagedDownload, TransferFailure, TransferNotice, TransferOrder,
    TransferResult,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;

/// The random stream of the transfer backoffs of a run seeded with `seed`: one no
/// project's RPC stream uses (those are 1 + project).
const TRANSFER_STREAM: u64 = 1 << 40;

/// What the scheduler needs to know after an attempt's end was taken in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Taken {
    /// Jobs may run now, or ended: a new decision is wanted.
    pub(crate) reschedule: bool,
}

/// Runs the scheduler's file transfers.
pub(crate) struct TransferRunner {
    transfer: Arc<dyn FileTransfer>,
    context: ActorContext,
    rng: ChaCha8Rng,
}

impl TransferRunner {
    /// A runner moving files through `transfer`, drawing backoffs from the run's `seed`.
    pub(crate) fn new(transfer: Arc<dyn FileTransfer>, seed: u64, context: ActorContext) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(TRANSFER_STREAM);
        TransferRunner { transfer, context, rng }
    }

    /// The attempts to start at `now`, marked in flight in `client`; what the step
    /// settled meanwhile (jobs whose files are all there or given up) is taken in.
    pub(crate) fn start(
        &mut self,
        client: &mut ClientControl,
        now: Time,
    ) -> (Vec<TransferOrder>, Taken) {
        let plan = client.start_transfers(now, &mut self.rng);
        self.tell(client, &plan.notices, now);
        let reschedule = !plan.changes.ready.is_empty() || !plan.changes.failed.is_empty();
        for order in &plan.orders {
            tracing::info!(
                project = %project_name(client, order.project),
                file = %order.name,
                url = %order.url,
                "{} starts",
                order.direction.name()
            );
            self.context.events.emit(ClientEvent::TransferStarted {
                time: now,
                project: project_name(client, order.project),
                file: order.name.clone(),
                upload: order.direction == Direction::Upload,
                url: order.url.clone(),
            });
        }
        (plan.orders, Taken { reschedule })
    }

    /// The future of `order`'s attempt: the effect's outcome as the core's result.
    pub(crate) fn attempt(
        &self,
        order: &TransferOrder,
        project: String,
    ) -> Pin<Box<dyn Future<Output = TransferResult>>> {
        let held = Rc::new(Cell::new(0u64));
        let progress = self.progress_sink(order, project, held.clone());
        let future = match order.direction {
            Direction::Download => self.transfer.download(order, progress),
            Direction::Upload => self.transfer.upload(order, progress),
        };
        let who = format!("transfer:{}", order.name);
        Box::pin(self.context.admit(who, "TransferEnded", async move {
            match future.await {
                Ok(Transferred::Downloaded { nbytes, md5 }) => {
                    TransferResult::Downloaded { nbytes: nbytes as f64, md5 }
                }
                Ok(Transferred::Uploaded { nbytes, md5 }) => {
                    TransferResult::Uploaded { nbytes: nbytes as f64, md5 }
                }
                Err(error) => {
                    let bytes_done = match &error {
                        TransferError::Interrupted { bytes, .. } => *bytes,
                        _ => held.get(),
                    };
                    TransferResult::Failed(TransferFailure {
                        kind: error.kind(),
                        message: error.to_string(),
                        bytes_done: bytes_done as f64,
                    })
                }
            }
        }))
    }

    /// Progress events for `order`; the bytes held so far are kept in `held`.
    fn progress_sink(
        &self,
        order: &TransferOrder,
        project: String,
        held: Rc<Cell<u64>>,
    ) -> ProgressSink {
        let events = self.context.events.clone();
        let clock = self.context.clock.clone();
        let file = order.name.clone();
        let upload = order.direction == Direction::Upload;
        Box::new(move |progress| {
            held.set(progress.bytes);
            events.emit(ClientEvent::TransferProgress {
                time: clock.now(),
                project: project.clone(),
                file: file.clone(),
                upload,
                bytes: progress.bytes,
                total: progress.total,
                rate: progress.rate,
            });
        })
    }

    /// Takes the end of `order`'s attempt into `client` at `now`: a checked download is
    /// put in place, a rejected one deleted; the user is told.
    pub(crate) fn finish(
        &mut self,
        client: &mut ClientControl,
        order: &TransferOrder,
        result: TransferResult,
        now: Time,
    ) -> Taken {
        let failure = match &result {
            TransferResult::Failed(failure) => Some(failure.message.clone()),
            _ => None,
        };
        let mut settlement = client.finish_transfer(order, result, now, &mut self.rng);
        let mut problem = failure;
        match settlement.staged {
            StagedDownload::Install => {
                let install = || self.transfer.install(order);
                let installed = match self.context.exchange("transfers", "Installed", install) {
                    Ok(()) => TransferResult::Installed,
                    Err(error) => {
                        problem = Some(error.to_string());
                        TransferResult::Failed(TransferFailure {
                            kind: error.kind(),
                            message: error.to_string(),
                            bytes_done: 0.0,
                        })
                    }
                };
                settlement =
                    merge(settlement, client.finish_transfer(order, installed, now, &mut self.rng));
            }
            StagedDownload::Discard => {
                if let Err(error) = self.transfer.discard(order) {
                    tracing::warn!(%error, file = %order.name, "cannot delete a rejected download");
                }
                if problem.is_none() {
                    problem = client
                        .state()
                        .files
                        .get(order.file.index())
                        .map(|f| f.transfer.last_error.clone());
                }
            }
            StagedDownload::Keep => {}
        }
        let project = project_name(client, order.project);
        let success = problem.is_none()
            && client.state().files.get(order.file.index()).is_some_and(|f| {
                match order.direction {
                    Direction::Download => f.status == boinc_core::model::FileStatus::Present,
                    Direction::Upload => f.uploaded,
                }
            });
        let message = problem.unwrap_or_default();
        if success {
            tracing::info!(%project, file = %order.name, "{} finished", order.direction.name());
        } else {
            tracing::warn!(%project, file = %order.name, %message, "{} failed", order.direction.name());
        }
        self.context.events.emit(ClientEvent::TransferEnded {
            time: now,
            project,
            file: order.name.clone(),
            upload: order.direction == Direction::Upload,
            success,
            message,
        });
        self.tell(client, &settlement.notices, now);
        let changes = &settlement.changes;
        Taken { reschedule: !changes.ready.is_empty() || !changes.failed.is_empty() }
    }

    /// Tells the user (log and events) what the policy had to say.
    fn tell(&self, client: &ClientControl, notices: &[TransferNotice], now: Time) {
        for notice in notices {
            let project = project_name(client, notice.project);
            if notice.error {
                tracing::error!(%project, "{}", notice.text);
            } else {
                tracing::info!(%project, "{}", notice.text);
            }
            self.context.events.emit(ClientEvent::TransferNotice {
                time: now,
                project,
                text: notice.text.clone(),
                error: notice.error,
            });
        }
    }
}

/// The name of `project` in `client`'s state.
pub(crate) fn project_name(client: &ClientControl, project: ProjectId) -> String {
    client.state().projects.get(project.index()).map_or_else(String::new, |p| p.name.clone())
}

/// Two settlements of one attempt, in order.
fn merge(mut first: Settlement, second: Settlement) -> Settlement {
    first.staged = second.staged;
    first.changes.extend(second.changes);
    first.notices.extend(second.notices);
    first.retry_at = second.retry_at.or(first.retry_at);
    first
}
