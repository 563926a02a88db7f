//! The messages the actors exchange (docs/design.md "Actors"): plain serde structs, so the
//! journal can record each one as it is delivered.

use crate::effects::RpcError;
use boinc_core::Time;
use boinc_core::control::{HostView, ProcessStatus, ProjectRpcState, RpcCall, TaskCommand};
use boinc_core::model::{ClientState, JobId, Project, ProjectId, ResourceType};
use boinc_core::protocol::{SchedulerReply, SchedulerRequest};
use boinc_core::supervise::RestartTracker;
use boinc_core::work_fetch::{FetchChoice, FetchOutlook, WorkReply};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Waker;

pub use boinc_core::control::UserAction;

/// Time moved to `now`: the scheduler polls its tasks and runs one step of the control
/// loop. Operations it starts (RPCs, master-page fetches) end later, in their own time;
/// when it wants the next step is published on its wake-up channel.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "()")]
pub struct Tick {
    /// The instant of the step.
    pub now: Time,
}

/// Time moved to `now` between steps: the scheduler polls its tasks (as BOINC polls its
/// apps once a second) and takes their reports in; only when a task ended does it go on
/// to a full step. The wall-clock driver sends it every second, [`Tick`] when the
/// scheduler's wake-up time comes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "()")]
pub struct PollTasks {
    /// The instant of the poll.
    pub now: Time,
}

/// Start the tasks that were already running when the client started.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "()")]
pub struct Startup {
    /// When.
    pub now: Time,
}

/// The host's availability changed (from host discovery): to the scheduler, which tells
/// each resource actor.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "()")]
pub struct HostChanged {
    /// The availability now.
    pub view: HostView,
}

/// The host's availability, from the scheduler to a resource actor.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "ResourceAvailable")]
pub struct Availability {
    /// The availability now.
    pub view: HostView,
}

/// A processing resource's availability, a ResourceActor's answer to [`Availability`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ResourceAvailable {
    /// The resource.
    pub resource: ResourceType,
    /// Whether it may compute now.
    pub may_compute: bool,
    /// The host's availability behind it.
    pub host: HostView,
}

/// How a decision changed which tasks occupy a resource's instances: the changes for
/// that resource alone, in the order they happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "()")]
pub struct InstanceChanges {
    /// The changes, in order.
    pub changes: Vec<InstanceChange>,
}

/// One change of a resource's occupancy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum InstanceChange {
    /// The task in `slot` runs on the resource: `used` instances of it, on these GPU
    /// instances (none for the CPU).
    Occupied {
        /// The task's slot.
        slot: u32,
        /// Instances used (a fraction for a GPU job's CPU).
        used: f64,
        /// The GPU instances it runs on.
        gpus: Vec<u32>,
    },
    /// The task in `slot` no longer runs on the resource (preempted, aborted, ended).
    Vacated {
        /// The task's slot.
        slot: u32,
    },
}

/// The scheduler asks a task for its process's state. The report goes on the step's
/// board through `answer`: a step polls every running task at once and takes their
/// answers from one board rather than one reply each (a reply would cost each poll a
/// oneshot channel, and its report a copy into it).
#[derive(Debug, Clone, Serialize, Deserialize, actix::Message)]
#[rtype(result = "()")]
pub struct Poll {
    /// When.
    pub now: Time,
    /// Where the report also goes (not journaled: it is the way back, not the question).
    #[serde(skip)]
    pub answer: Option<PollAnswer>,
}

/// Where a polled task puts its report: its place on the step's [`PollBoard`]. Dropped
/// answered or not (a task actor that went down drops its poll with its mailbox), it
/// counts as done: the step hears when the last one is.
#[derive(Debug)]
pub struct PollAnswer {
    /// The poll's position among the round's polls.
    position: usize,
    /// The round it answers (a board is used round after round).
    round: u64,
    /// The step's board (`None` once the answer was sent).
    board: Option<Arc<PollBoard>>,
}

impl PollAnswer {
    /// Hands `report` back to the step that asked.
    pub fn send(mut self, report: TaskReport) {
        let Some(board) = self.board.take() else { return };
        let mut state = board.lock();
        if state.round != self.round {
            return;
        }
        if let Some(place) = state.reports.get_mut(self.position) {
            *place = Some(report);
        }
        // Stored and counted under one lock.
        if let Some(waiting) = state.count_down() {
            drop(state);
            waiting.wake();
        }
    }
}

impl Clone for PollAnswer {
    /// Another answer for the same poll: the step waits for it too.
    fn clone(&self) -> Self {
        if let Some(board) = &self.board {
            let mut state = board.lock();
            if state.round == self.round {
                state.outstanding += 1;
            }
        }
        PollAnswer { position: self.position, round: self.round, board: self.board.clone() }
    }
}

impl Drop for PollAnswer {
    fn drop(&mut self) {
        if let Some(board) = self.board.take() {
            board.release(self.round);
        }
    }
}

/// The polls' answers, a place per polled task filled in as the tasks answer, and a
/// signal once every answer is in or dropped. One board serves every step of a
/// scheduler, round after round: a poll costs a store and a count, and a step neither
/// allocates a board nor a channel.
#[derive(Debug, Default)]
pub struct PollBoard {
    state: Mutex<BoardState>,
}

#[derive(Debug, Default)]
struct BoardState {
    reports: Vec<Option<TaskReport>>,
    /// Answers still out, plus the step's own hold while it sends the polls.
    outstanding: usize,
    round: u64,
    /// The step waiting for the last answer.
    waiting: Option<Waker>,
}

impl PollBoard {
    /// A board; each round of polls starts with [`PollBoard::begin`].
    pub fn new() -> Arc<PollBoard> {
        Arc::new(PollBoard::default())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BoardState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new round of polls, its answers kept in `reports` (emptied; a buffer from an
    /// earlier round, so that a step on a big host does not allocate room for dozens of
    /// reports each time). The step holds the round until [`PollBoard::sent`].
    pub fn begin(&self, mut reports: Vec<Option<TaskReport>>) {
        reports.clear();
        let mut board = self.lock();
        board.round += 1;
        board.reports = reports;
        board.outstanding = 1;
        board.waiting = None;
    }

    /// The answer for the round's next poll, in sending order.
    pub fn answer(self: &Arc<Self>) -> PollAnswer {
        let mut board = self.lock();
        board.reports.push(None);
        board.outstanding += 1;
        PollAnswer {
            position: board.reports.len() - 1,
            round: board.round,
            board: Some(Arc::clone(self)),
        }
    }

    /// The answers for the round's next `count` polls, in sending order, made under
    /// one look at the board.
    pub fn answers(self: &Arc<Self>, count: usize) -> impl Iterator<Item = PollAnswer> + use<> {
        let (first, round) = {
            let mut board = self.lock();
            let first = board.reports.len();
            board.reports.resize_with(first + count, || None);
            board.outstanding += count;
            (first, board.round)
        };
        let board = Arc::clone(self);
        (first..first + count).map(move |position| PollAnswer {
            position,
            round,
            board: Some(Arc::clone(&board)),
        })
    }

    /// Every poll of the round is sent: the step lets go of it.
    pub fn sent(&self) {
        let round = self.lock().round;
        self.release(round);
    }

    /// Resolves once every answer of the round is in or dropped (and the step let go).
    pub fn all_in(self: &Arc<Self>) -> AllIn {
        AllIn { board: Arc::clone(self), round: self.lock().round }
    }

    /// The round's reports, by position (`None` where a poll went unanswered).
    pub fn take(&self) -> Vec<Option<TaskReport>> {
        std::mem::take(&mut self.lock().reports)
    }

    fn release(&self, round: u64) {
        let mut board = self.lock();
        if board.round != round {
            return;
        }
        if let Some(waiting) = board.count_down() {
            drop(board);
            waiting.wake();
        }
    }
}

impl BoardState {
    /// One answer less out; the waiting step, to wake once the last is in.
    fn count_down(&mut self) -> Option<Waker> {
        if self.outstanding == 0 {
            return None;
        }
        self.outstanding -= 1;
        match self.outstanding {
            0 => self.waiting.take(),
            _ => None,
        }
    }
}

/// The future of [`PollBoard::all_in`].
#[derive(Debug)]
pub struct AllIn {
    board: Arc<PollBoard>,
    round: u64,
}

impl Future for AllIn {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        let mut board = self.board.lock();
        if board.round != self.round || board.outstanding == 0 {
            return std::task::Poll::Ready(());
        }
        match &board.waiting {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => board.waiting = Some(cx.waker().clone()),
        }
        std::task::Poll::Pending
    }
}

/// A task's answer to [`Poll`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TaskReport {
    /// Running (or suspended): its state.
    Running(ProcessStatus),
    /// Finished its work; the process is gone.
    Finished(ProcessStatus),
    /// Its app ended and restarts from this checkpoint at the given time.
    Restarting {
        /// Its state as of the last checkpoint.
        checkpoint: ProcessStatus,
        /// When the restart happens.
        restart_at: Time,
        /// The app's crashes so far (what the restart limit counts).
        crashes: RestartTracker,
    },
    /// Its app failed (or kept crashing): the job ends in a computation error.
    Failed {
        /// BOINC's exit status for the result.
        exit_status: i32,
        /// What happened.
        message: String,
    },
    /// It has no process (suspended out of memory).
    Idle,
}

/// A command from the scheduler to a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "()")]
pub struct Command {
    /// What to do.
    pub command: TaskCommand,
    /// When.
    pub now: Time,
}

/// Read the project's master page (seed 002).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "ProjectRpcState")]
pub struct MasterFetch {
    /// When.
    pub now: Time,
    /// The project as the scheduler holds it (authoritative).
    pub project: Project,
}

/// The scheduler lends the fetch actor its latest outlook (every project's long-term
/// debt, shortfall, backoffs and caps per resource, from the round-robin simulation it
/// just ran); the fetch actor makes seed 003's choice over it and answers with the
/// choice and the outlook, the candidates' scores written in. The outlook is moved,
/// not copied, and not journaled: the fetch actor journals the choice and the figures
/// it rested on.
#[derive(Debug, Clone, Serialize, Deserialize, actix::Message)]
#[rtype(result = "WorkChoice")]
pub struct ChooseWork {
    /// When.
    pub now: Time,
    /// What the choice reads.
    #[serde(skip)]
    pub outlook: FetchOutlook,
}

/// The fetch actor's answer to [`ChooseWork`].
#[derive(Debug, Clone)]
pub struct WorkChoice {
    /// The project to ask and how much, or why none.
    pub choice: FetchChoice,
    /// The outlook lent, with the scores the choice wrote.
    pub outlook: FetchOutlook,
}

/// Run a scheduler RPC session (from the scheduler to the FetchActor, and from it to
/// the ProjectActor). The answer is the server's reply, or why there is none; the
/// project's actor settles the session's effect on its protocol state when the
/// scheduler has taken the reply in ([`SettleSession`]). The reply travels boxed: it
/// passes through both actors' futures and channels, and a box moves as a pointer.
#[derive(Debug, Clone, Serialize, Deserialize, actix::Message)]
#[rtype(result = "Result<Result<Box<SchedulerReply>, RpcError>, String>")]
pub struct RunSession {
    /// When.
    pub now: Time,
    /// The request and the reported results.
    pub call: RpcCall,
    /// The scheduler's URL.
    pub url: String,
    /// The scheduler request made for the call; shared, not journaled.
    #[serde(skip)]
    pub request: Arc<SchedulerRequest<'static>>,
    /// The project's record as of `now` (its account, pinned key and protocol state),
    /// which the project's actor checks the reply against and settles the session on;
    /// not journaled.
    #[serde(skip)]
    pub project: Option<Box<Project>>,
}

/// The scheduler took a session's reply in: the project's actor settles its protocol
/// state (backoffs, next RPC time) from what the reply brought, and answers with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "ProjectRpcState")]
pub struct SettleSession {
    /// When.
    pub now: Time,
    /// What the reply brought per resource and its request delay; `None`: the RPC
    /// failed.
    pub work: Option<WorkReply>,
}

/// A user action, delivered to the scheduler: applied at once, with a new schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "Result<(), crate::client::ClientError>")]
pub struct User {
    /// The action.
    pub action: UserAction,
}

/// Counters the scheduler keeps (for the end of a run): decisions and RPCs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "(u64, u64)")]
pub struct Stats;

/// A copy of the client's state, for a host program or a GUI RPC client.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "StateSnapshot")]
pub struct Snapshot;

/// The client's state at one instant, as [`Snapshot`] returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateSnapshot {
    /// When it was taken.
    pub time: Time,
    /// The state.
    pub state: ClientState,
    /// Jobs whose tasks are running, in start order.
    pub running: Vec<JobId>,
    /// Projects with a scheduler RPC or master-page fetch under way.
    pub in_flight: Vec<ProjectId>,
    /// Scheduling decisions made so far.
    pub decisions: u64,
    /// Scheduler RPCs started so far.
    pub rpcs: u64,
    /// The host's availability as the client last heard it, with the reasons for
    /// what is suspended.
    pub host: HostView,
}

/// The client is shutting down: tasks are asked to quit (they restart from their
/// checkpoints next time) and nothing new starts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, actix::Message)]
#[rtype(result = "()")]
pub struct Shutdown {
    /// When.
    pub now: Time,
}

/// The disk manager's step: the jobs that just finished, then `data_manager_poll`.
#[derive(Debug, Serialize, Deserialize, actix::Message)]
#[rtype(result = "()")]
pub struct DiskStep {
    /// When.
    pub now: Time,
    /// Jobs that finished in this step.
    pub finished: Vec<JobId>,
    /// The client state, lent for the step (not journaled).
    #[serde(skip)]
    pub state: StateLoan,
}

/// The disk's free space measured alone (a client whose disk is full looks at every
/// poll whether room came back).
#[derive(Debug, Serialize, Deserialize, actix::Message)]
#[rtype(result = "()")]
pub struct DiskMeasure {
    /// When.
    pub now: Time,
    /// The client state, lent for the measurement (not journaled).
    #[serde(skip)]
    pub state: StateLoan,
}

/// A reply brought jobs: their files are associated.
#[derive(Debug, Serialize, Deserialize, actix::Message)]
#[rtype(result = "()")]
pub struct DiskReply {
    /// When.
    pub now: Time,
    /// The new jobs.
    pub new_jobs: Vec<JobId>,
    /// The client state, lent for the step (not journaled).
    #[serde(skip)]
    pub state: StateLoan,
}

/// The client state lent to another actor for one step, without a copy: it goes back
/// to the lender when the loan is dropped, whether the borrower finished its step or
/// failed holding it (the loan is dropped as the failure unwinds, or with a message
/// that was never delivered), so an actor that fails loses nothing of the state.
#[derive(Debug, Default)]
pub struct StateLoan {
    state: Option<Box<ClientState>>,
    home: Arc<Mutex<Option<Box<ClientState>>>>,
}

/// Where a lent state comes back to.
#[derive(Debug, Default, Clone)]
pub struct LoanReturn(Arc<Mutex<Option<Box<ClientState>>>>);

impl StateLoan {
    /// The lent state. An empty loan (one made by deserialising a journal line) lends
    /// an empty state.
    pub fn state(&mut self) -> &mut ClientState {
        self.state.get_or_insert_with(Box::default)
    }
}

impl Drop for StateLoan {
    fn drop(&mut self) {
        if let Some(state) = self.state.take() {
            *self.home.lock().unwrap_or_else(PoisonError::into_inner) = Some(state);
        }
    }
}

impl LoanReturn {
    /// Lends `state` again, to come back here: a lender with one loan out at a time
    /// keeps one home for all of them.
    pub fn lend(&self, state: Box<ClientState>) -> StateLoan {
        StateLoan { state: Some(state), home: Arc::clone(&self.0) }
    }

    /// The state, once the loan has ended (`None` while it is still out).
    pub fn take(&self) -> Option<Box<ClientState>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}
