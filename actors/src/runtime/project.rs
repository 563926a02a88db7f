//! ProjectActor: one per attached project. It owns the project's protocol state (RPC
//! failures and backoff, master-page refetch, per-resource fetch backoff, seed 002/003)
//! and its random source, runs the project's scheduler RPCs and master-page fetches
//! through the transport, and hands the resulting state back to the scheduler, whose
//! copy of the project is the authoritative one.

use super::supervision::{ActorId, ActorKind};
use crate::effects::{RpcError, SchedulerTransport};
use crate::runtime::context::ActorContext;
use crate::runtime::messages::{MasterFetch, RunSession, SettleSession};
use actix::{Actor, ActorFutureExt, AtomicResponse, Context, Handler, MessageResult, WrapFuture};
use boinc_core::control::{
    ProjectRpcState, apply_master_fetch, apply_rpc_outcome, check_reply, client_rng,
};
use boinc_core::model::{Project, ProjectId};
use boinc_core::protocol::SchedulerReply;
use boinc_core::work_fetch::WorkRequest;
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
    /// The session whose reply the scheduler is taking in: the project's record as the
    /// session began, and the work it asked for.
    session: Option<(Box<Project>, WorkRequest)>,
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
            session: None,
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
        let fetch = self.context.admit(self.id.clone(), "MasterPage", fetch);
        AtomicResponse::new(Box::pin(fetch.into_actor(self).map(move |page, actor, _| {
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
    type Result = AtomicResponse<Self, Result<Result<Box<SchedulerReply>, RpcError>, String>>;

    fn handle(&mut self, message: RunSession, _: &mut Context<Self>) -> Self::Result {
        self.context.delivered(&self.id, "RunSession", &message);
        let _span = tracing::debug_span!("project", project = self.project.0).entered();
        tracing::debug!(reported = message.call.reported.len(), "scheduler RPC");
        self.context
            .maybe_panic(ActorId { kind: ActorKind::Project, index: self.project.0 }, message.now);
        let RunSession { now: _, call, url, request, project } = message;
        let Some(project) = project else {
            return AtomicResponse::new(Box::pin(actix::fut::ready(Err(format!(
                "the session for project {} came without the project",
                self.project.0
            )))));
        };
        let rpc = self.transport.scheduler_rpc(&url, &request);
        let rpc = self.context.admit(self.id.clone(), "RpcReply", rpc);
        AtomicResponse::new(Box::pin(rpc.into_actor(self).map(move |reply, actor, _| {
            // A reply the client may not take (a key change the pinned key did not
            // sign, a file name that is not a plain name) counts as a failed RPC.
            let reply = reply.and_then(|reply| match check_reply(&project, &reply) {
                Err(refusal) => {
                    Err(RpcError::Refused { url: url.clone(), reason: refusal.to_string() })
                }
                Ok(()) => Ok(reply),
            });
            // The scheduler logs the outcome once, with the project's name and its backoff.
            actor.session = Some((project, call.request));
            Ok(reply.map(Box::new))
        })))
    }
}

impl Handler<SettleSession> for ProjectActor {
    type Result = MessageResult<SettleSession>;

    fn handle(&mut self, message: SettleSession, _: &mut Context<Self>) -> Self::Result {
        self.context.delivered(&self.id, "SettleSession", &message);
        let SettleSession { now, work } = message;
        let state = match self.session.take() {
            Some((mut project, request)) => {
                let work = work.as_ref().map(|w| (w, w.request_delay));
                apply_rpc_outcome(&mut project, &request, work, now, &mut self.rng);
                ProjectRpcState::of(&project)
            }
            // No session to settle (a rebuilt actor): what it last knew stands.
            None => self.rpc_state.clone().unwrap_or_else(|| {
                ProjectRpcState::of(&boinc_core::model::Project::new("", "", 0.0))
            }),
        };
        self.rpc_state = Some(state.clone());
        MessageResult(state)
    }
}
