//! FetchActor: chooses which project to ask for work and runs the client's get-work and
//! report-result sessions (seed 002). The choice is seed 003's, long-term debt plus
//! shortfall, made here over the outlook the scheduler lends it (what its round-robin
//! simulation found per resource and project); the journal records each choice with the
//! debt and shortfall it rested on. The session goes to the project's actor; this actor
//! counts sessions and failures.

use super::project::ProjectActor;
use super::supervision::{ActorId, ActorKind};
use crate::effects::RpcError;
use crate::runtime::context::ActorContext;
use crate::runtime::messages::{ChooseWork, RunSession, WorkChoice};
use actix::{
    Actor, ActorFutureExt, Addr, Context, Handler, MessageResult, ResponseActFuture, WrapFuture,
};
use boinc_core::model::ResourceMap;
use boinc_core::protocol::SchedulerReply;
use boinc_core::work_fetch::{FetchReason, select_work_fetch};
use serde::Serialize;

/// The client's fetch actor.
pub struct FetchActor {
    context: ActorContext,
    projects: Vec<Addr<ProjectActor>>,
    sessions: u64,
    failures: u64,
}

impl FetchActor {
    /// The fetch actor over the projects' actors (indexed by project).
    pub fn new(context: ActorContext, projects: Vec<Addr<ProjectActor>>) -> Self {
        FetchActor { context, projects, sessions: 0, failures: 0 }
    }

    /// Sessions run and sessions that failed.
    pub fn counts(&self) -> (u64, u64) {
        (self.sessions, self.failures)
    }
}

impl Actor for FetchActor {
    type Context = Context<Self>;
}

/// The project actors changed (one was restarted).
#[derive(actix::Message)]
#[rtype(result = "()")]
pub struct ProjectActors(pub Vec<Addr<ProjectActor>>);

impl Handler<ProjectActors> for FetchActor {
    type Result = ();

    fn handle(&mut self, message: ProjectActors, _: &mut Context<Self>) {
        self.projects = message.0;
    }
}

/// A work-fetch choice as the journal keeps it: the project asked and for how much, and
/// the figures seed 003 ranked it by.
#[derive(Serialize)]
struct ChoiceRecord {
    now: f64,
    reason: FetchReason,
    /// The project chosen (its index), if any.
    project: Option<u32>,
    /// Seconds of work asked for, per resource.
    req_seconds: ResourceMap<f64>,
    /// The chosen project's overall long-term debt, CPU-seconds.
    long_term_debt: Option<f64>,
    /// The chosen project's shortfall per resource, instance-seconds.
    shortfall: Option<ResourceMap<f64>>,
    /// Its ranking score per resource where it was a candidate (debt plus shortfall).
    score: Option<ResourceMap<Option<f64>>>,
}

impl Handler<ChooseWork> for FetchActor {
    type Result = MessageResult<ChooseWork>;

    fn handle(&mut self, message: ChooseWork, _: &mut Context<Self>) -> Self::Result {
        let ChooseWork { now, mut outlook } = message;
        self.context.maybe_panic(ActorId::single(ActorKind::Fetch), now);
        let choice = select_work_fetch(&mut outlook);
        if self.context.journal.is_on() {
            let project = choice.request.map(|request| request.project);
            let chosen = project.and_then(|p| outlook.candidates.get(p.index()));
            let record = ChoiceRecord {
                now,
                reason: choice.reason,
                project: project.map(|p| p.0),
                req_seconds: outlook.resources.map(|r, _| {
                    choice.request.map_or(0.0, |request| request.resources[r].req_seconds)
                }),
                long_term_debt: chosen.map(|info| info.overall_long_term_debt),
                shortfall: chosen.map(|info| info.shortfall),
                score: chosen.map(|info| info.score),
            };
            self.context.delivered("fetch", "ChooseWork", &record);
        }
        MessageResult(WorkChoice { choice, outlook })
    }
}

impl Handler<RunSession> for FetchActor {
    // Sessions of different projects run side by side: one slow server holds up no
    // other project's session.
    type Result = ResponseActFuture<Self, Result<Result<Box<SchedulerReply>, RpcError>, String>>;

    fn handle(&mut self, message: RunSession, _: &mut Context<Self>) -> Self::Result {
        self.context.delivered("fetch", "RunSession", &message);
        let _span = tracing::debug_span!("fetch").entered();
        self.context.maybe_panic(ActorId::single(ActorKind::Fetch), message.now);
        self.sessions += 1;
        let project = message.call.request.project;
        let Some(actor) = self.projects.get(project.index()) else {
            self.failures += 1;
            return Box::pin(actix::fut::ready(Err(format!("no actor for project {}", project.0))));
        };
        let sent = actor.send(message);
        Box::pin(sent.into_actor(self).map(|outcome, fetch, _| match outcome {
            Ok(Ok(reply)) => {
                if reply.is_err() {
                    fetch.failures += 1;
                }
                Ok(reply)
            }
            Ok(Err(error)) => {
                fetch.failures += 1;
                Err(error)
            }
            Err(error) => {
                fetch.failures += 1;
                Err(format!("the project's actor failed: {error}"))
            }
        }))
    }
}
