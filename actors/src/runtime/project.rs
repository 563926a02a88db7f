//! ProjectActor: one per attached project. It owns the project's protocol state (RPC
//! failures and backoff, master-page refetch, per-resource fetch backoff, seed 002/003)
//! and its random source, runs the project's scheduler RPCs and master-page fetches
//! through the transport, and hands the resulting state back to the scheduler, whose
//! copy of the project is the authoritative one.

use super::supervision::{ActorId, ActorKind};
use crate::effects::{RpcError, SchedulerTransport};
use crate::runtime::context::ActorContext;
use crate::runtime::messages::{MasterFetch, RunSession, SessionOutcome};
use actix::{Actor, ActorFutureExt, AtomicResponse, Context, Handler, WrapFuture};
use boinc_core::control::{
    ProjectRpcState, apply_master_fetch, apply_rpc_outcome, check_reply, client_rng, work_reply,
};
use boinc_core::model::ProjectId;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// The actor of one project.
pub struct ProjectActor {
    id: String,
    project: ProjectId,
    context: ActorContext,
    transport: Arc<dyn SchedulerTransport>,
    rng: ChaCha8Rng,
    rpc_state: Option<ProjectRpcState>,
}

impl ProjectActor {
    /// The actor of `project`, drawing its RPC policy's randomness from the run's
    /// `seed` (the project's own stream).
    pub fn new(
        project: ProjectId,
        seed: u64,
        context: ActorContext,
        transport: Arc<dyn SchedulerTransport>,
    ) -> Self {
        ProjectActor {
            id: format!("project:{}", project.0),
            project,
            context,
            transport,
            rng: client_rng(seed, project),
            rpc_state: None,
        }
    }

    /// The project's protocol state after its latest session, if it had one.
    pub fn rpc_state(&self) -> Option<&ProjectRpcState> {
        self.rpc_state.as_ref()
    }
}

impl Actor for ProjectActor {
    type Context = Context<Self>;
}

impl Handler<MasterFetch> for ProjectActor {
    type Result = AtomicResponse<Self, ProjectRpcState>;

    fn handle(&mut self, message: MasterFetch, _: &mut Context<Self>) -> Self::Result {
        self.context.delivered(&self.id, "MasterFetch", &message);
        let _span = tracing::debug_span!("project", project = self.project.0).entered();
        tracing::debug!("master page fetch");
        self.context
            .maybe_panic(ActorId { kind: ActorKind::Project, index: self.project.0 }, message.now);
        let MasterFetch { now, project } = message;
        let fetch = self.transport.master_page(&project.master_url);
        AtomicResponse::new(Box::pin(fetch.into_actor(self).map(move |page, actor, _| {
            actor.context.input(&actor.id, "MasterPage", &page);
            let mut project = project;
            let read = match page {
                Ok(page) if !page.scheduler_urls.is_empty() => {
                    project.scheduler_urls = page.scheduler_urls;
                    true
                }
                Ok(_) => {
                    let error = RpcError::NoScheduler { url: project.master_url.clone() };
                    tracing::warn!(%error, "master page fetch failed");
                    false
                }
                Err(error) => {
                    tracing::warn!(%error, "master page fetch failed");
                    false
                }
            };
            apply_master_fetch(&mut project, read, now, &mut actor.rng);
            let state = ProjectRpcState::of(&project);
            actor.rpc_state = Some(state.clone());
            state
        })))
    }
}

impl Handler<RunSession> for ProjectActor {
    type Result = AtomicResponse<Self, Result<SessionOutcome, String>>;

    fn handle(&mut self, message: RunSession, _: &mut Context<Self>) -> Self::Result {
        self.context.delivered(&self.id, "RunSession", &message);
        let _span = tracing::debug_span!("project", project = self.project.0).entered();
        tracing::debug!(reported = message.call.reported.len(), "scheduler RPC");
        self.context
            .maybe_panic(ActorId { kind: ActorKind::Project, index: self.project.0 }, message.now);
        let RunSession { now, call, url, request, state } = message;
        let rpc = self.transport.scheduler_rpc(&url, &request);
        AtomicResponse::new(Box::pin(rpc.into_actor(self).map(move |reply, actor, _| {
            actor.context.input(&actor.id, "RpcReply", &reply);
            // A reply the client may not take (a key change the pinned key did not
            // sign, a file name that is not a plain name) counts as a failed RPC.
            let reply = reply.and_then(|reply| {
                match state
                    .projects
                    .get(call.request.project.index())
                    .map(|p| check_reply(p, &reply))
                {
                    Some(Err(refusal)) => {
                        Err(RpcError::Refused { url: url.clone(), reason: refusal.to_string() })
                    }
                    _ => Ok(reply),
                }
            });
            if let Err(error) = &reply {
                tracing::warn!(%error, "scheduler RPC failed");
            }
            let Some(project) = state.projects.get(call.request.project.index()) else {
                let rpc_state = actor.rpc_state.clone().unwrap_or_else(|| {
                    ProjectRpcState::of(&boinc_core::model::Project::new("", "", 0.0))
                });
                return Ok(SessionOutcome { reply, rpc_state });
            };
            let mut project = project.clone();
            let project_id = call.request.project;
            let work_reply =
                reply.as_ref().ok().map(|r| (work_reply(&state, project_id, r), r.request_delay));
            apply_rpc_outcome(
                &mut project,
                &call.request,
                work_reply.as_ref().map(|(w, d)| (w, *d)),
                now,
                &mut actor.rng,
            );
            let rpc_state = ProjectRpcState::of(&project);
            actor.rpc_state = Some(rpc_state.clone());
            // The scheduler takes its state back once the session lets go of it.
            drop(state);
            Ok(SessionOutcome { reply, rpc_state })
        })))
    }
}
