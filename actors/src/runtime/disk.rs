//! DiskActor: the client's disk manager (seed 004). It runs the manager's hooks at the
//! control loop's points: after completions and before each decision
//! (`data_manager_poll`) and after a reply (the new jobs' files are associated,
//! deleting from the greatest offender first); the three free-space figures a request
//! carries are computed from the state when the request is built. The scheduler lends
//! it the client state for each hook; the [`DiskManager`] effect carries the decisions
//! out (on the data directory, or in the emulated disk).

use super::supervision::{ActorId, ActorKind};
use crate::effects::DiskManager;
use crate::runtime::context::ActorContext;
use crate::runtime::events::ClientEvent;
use crate::runtime::messages::{DiskMeasure, DiskReply, DiskStep};
use actix::{Actor, Context, Handler};
use boinc_core::Time;
use boinc_core::model::{ClientState, FileStatus, RunMode};
use std::sync::{Arc, Mutex, MutexGuard};

/// The disk manager's actor. Its manager is shared with the actors built from the same
/// one ([`Clone`]), so an actor rebuilt after a failure takes it back.
#[derive(Clone)]
pub struct DiskActor {
    context: ActorContext,
    disk: Arc<Mutex<Box<dyn DiskManager>>>,
}

impl DiskActor {
    /// The actor carrying the disk manager's decisions out through `disk`.
    pub fn new(context: ActorContext, disk: Box<dyn DiskManager>) -> Self {
        DiskActor { context, disk: Arc::new(Mutex::new(disk)) }
    }

    fn manager(&self) -> MutexGuard<'_, Box<dyn DiskManager>> {
        self.disk.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// What an embedding host hears about: files present and whether computing runs.
#[derive(Debug, Clone, Copy, PartialEq)]
struct DiskView {
    files_present: usize,
    bytes_present: f64,
    computing: bool,
}

impl DiskView {
    fn of(state: &ClientState) -> Self {
        // One pass: the view is taken twice at every disk step, over every file.
        let mut view = DiskView {
            files_present: 0,
            bytes_present: 0.0,
            computing: state.run_mode != RunMode::Never,
        };
        for file in &state.files {
            if file.status == FileStatus::Present {
                view.files_present += 1;
                view.bytes_present += file.nbytes;
            }
        }
        view
    }
}

impl DiskActor {
    /// What the event stream is told the manager did is measured against this view of
    /// the state before it: none when nobody listens.
    fn view_before(&self, state: &ClientState) -> Option<DiskView> {
        self.context.events.has_subscribers().then(|| DiskView::of(state))
    }

    /// Tells the event stream what the manager did.
    fn report(&self, before: Option<DiskView>, state: &ClientState, now: Time) {
        let Some(before) = before else { return };
        let after = DiskView::of(state);
        if after.files_present < before.files_present {
            let action = format!(
                "deleted {} files ({:.0} MB) to stay within the disk limits",
                before.files_present - after.files_present,
                (before.bytes_present - after.bytes_present).max(0.0) / 1e6
            );
            self.context.events.emit(ClientEvent::DiskAction { time: now, action, alert: false });
        }
        if before.computing != after.computing {
            let action = if after.computing {
                "disk usage is back under the limit: computing resumed"
            } else {
                "disk full and nothing more can be deleted: computing suspended; free some \
                 space or allow BOINC more in the disk preferences"
            };
            // A suspension asks the user to act: it is shown as a notice, as BOINC's.
            let alert = !after.computing;
            self.context.events.emit(ClientEvent::DiskAction {
                time: now,
                action: action.into(),
                alert,
            });
        }
    }
}

impl Actor for DiskActor {
    type Context = Context<Self>;
}

impl Handler<DiskStep> for DiskActor {
    type Result = ();

    fn handle(&mut self, message: DiskStep, _: &mut Context<Self>) -> Self::Result {
        self.context.delivered("disk", "DiskStep", &message);
        let _span = tracing::debug_span!("disk").entered();
        self.context.maybe_panic(ActorId::single(ActorKind::Disk), message.now);
        let DiskStep { now, finished, state: mut loan } = message;
        let state = loan.state();
        let before = self.view_before(state);
        let mut disk = self.manager();
        guarded("DiskStep", || {
            for &id in &finished {
                disk.job_finished(state, id, now);
            }
            disk.poll(state, now);
        });
        drop(disk);
        self.report(before, state, now);
    }
}

impl Handler<DiskReply> for DiskActor {
    type Result = ();

    fn handle(&mut self, message: DiskReply, _: &mut Context<Self>) -> Self::Result {
        self.context.delivered("disk", "DiskReply", &message);
        let DiskReply { now, new_jobs, state: mut loan } = message;
        let state = loan.state();
        let before = self.view_before(state);
        let mut disk = self.manager();
        guarded("DiskReply", || {
            disk.after_reply(state, &new_jobs, now);
        });
        drop(disk);
        self.report(before, state, now);
    }
}

impl Handler<DiskMeasure> for DiskActor {
    type Result = ();

    fn handle(&mut self, message: DiskMeasure, _: &mut Context<Self>) -> Self::Result {
        self.context.delivered("disk", "DiskMeasure", &message);
        let DiskMeasure { state: mut loan, .. } = message;
        let state = loan.state();
        let mut disk = self.manager();
        guarded("DiskMeasure", || disk.measure(state));
    }
}

/// Runs a hook so that a bug in it cannot take the lent client state down with the
/// actor: the state always goes back to the scheduler, and the failure is logged.
fn guarded(hook: &str, run: impl FnOnce()) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).is_err() {
        tracing::error!(hook, "the disk manager failed; the client state is kept as it was left");
    }
}
