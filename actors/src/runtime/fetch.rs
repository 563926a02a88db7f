//! FetchActor: runs the client's get-work and report-result sessions (seed 002). The
//! choice of project and the request per resource come from the scheduler's decision
//! (seed 003: LTD plus shortfall, over the rr_sim the scheduler just ran); this actor
//! carries the session to the project's actor and counts sessions and failures.

use super::project::ProjectActor;
use super::supervision::{ActorId, ActorKind};
use crate::effects::RpcError;
use crate::runtime::context::ActorContext;
use crate::runtime::messages::RunSession;
use actix::{Actor, ActorFutureExt, Addr, Context, Handler, ResponseActFuture, WrapFuture};
use boinc_core::protocol::SchedulerReply;

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

impl Handler<RunSession> for FetchActor {
    // Sessions of different projects run side by side: one slow server holds up no
    // other project's session.
    type Result = ResponseActFuture<Self, Result<Result<SchedulerReply, RpcError>, String>>;

    fn handle(&mut self, message: RunSession, _: &mut Context<Self>) -> Self::Result {
        self.context.delivered("fetch", "RunSession", &message);
        let _span = tracing::debug_span!("fetch").entered();
        self.context.maybe_panic(ActorId::single(ActorKind::Fetch), message.now);
        self.sessions += 1;
        let project = message.call.request.project;
        let Some(actor) = self.projects.get(project.index()).cloned() else {
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
