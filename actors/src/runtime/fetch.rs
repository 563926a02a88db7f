//! FetchActor: chooses which project to ask for work and runs the client's get-work and
//! report-result sessions (seed 002, seed 003 "Work fetch"). The choice is its own: the
//! scheduler hands it the projects' part of the decision's outlook (each project's
//! long-term debt, shortfall, backoffs and what it may supply), the resource actors tell
//! it their buffers (idle instances, shortfall, saturated time), and the core's
//! `select_work_fetch` ranks the projects by debt plus shortfall over what it was told.
//! Each choice is journaled with the debt and shortfall it used. A session is carried
//! to the project's actor; the actor counts sessions and failures.

use super::project::ProjectActor;
use super::resource::ResourceActor;
use super::supervision::{ActorId, ActorKind};
use crate::effects::RpcError;
use crate::runtime::context::ActorContext;
use crate::runtime::messages::{
    AskForecast, ChooseWork, FetchChoiceRecord, RunSession, WorkChosen,
};
use actix::{Actor, ActorFutureExt, Addr, Context, Handler, ResponseActFuture, WrapFuture};
use boinc_core::model::{ResourceMap, ResourceType};
use boinc_core::protocol::SchedulerReply;
use boinc_core::work_fetch::{FetchChoice, FetchOutlook, ResourceOutlook, select_work_fetch};

/// The client's fetch actor.
pub struct FetchActor {
    context: ActorContext,
    projects: Vec<Addr<ProjectActor>>,
    resources: Vec<(ResourceType, Addr<ResourceActor>)>,
    sessions: u64,
    failures: u64,
}

impl FetchActor {
    /// The fetch actor over the projects' actors (indexed by project) and the resources'
    /// actors.
    pub fn new(
        context: ActorContext,
        projects: Vec<Addr<ProjectActor>>,
        resources: Vec<(ResourceType, Addr<ResourceActor>)>,
    ) -> Self {
        FetchActor { context, projects, resources, sessions: 0, failures: 0 }
    }

    /// Sessions run and sessions that failed.
    pub fn counts(&self) -> (u64, u64) {
        (self.sessions, self.failures)
    }
}

impl Actor for FetchActor {
    type Context = Context<Self>;
}

/// The project actors changed (one was restarted, or a project was attached).
#[derive(actix::Message)]
#[rtype(result = "()")]
pub struct ProjectActors(pub Vec<Addr<ProjectActor>>);

impl Handler<ProjectActors> for FetchActor {
    type Result = ();

    fn handle(&mut self, message: ProjectActors, _: &mut Context<Self>) {
        self.projects = message.0;
    }
}

/// The resource actors changed (one was rebuilt, or given up on).
#[derive(actix::Message)]
#[rtype(result = "()")]
pub struct ResourceActors(pub Vec<(ResourceType, Addr<ResourceActor>)>);

impl Handler<ResourceActors> for FetchActor {
    type Result = ();

    fn handle(&mut self, message: ResourceActors, _: &mut Context<Self>) {
        self.resources = message.0;
    }
}

impl Handler<ChooseWork> for FetchActor {
    type Result = ResponseActFuture<Self, WorkChosen>;

    fn handle(&mut self, message: ChooseWork, _: &mut Context<Self>) -> Self::Result {
        self.context.delivered("fetch", "ChooseWork", &message);
        self.context.maybe_panic(ActorId::single(ActorKind::Fetch), message.now);
        let ChooseWork { now, mut outlook } = message;
        let resources = self.resources.clone();
        let asked = async move {
            let mut told = ResourceMap::<Option<ResourceOutlook>>::default();
            for (resource, actor) in resources {
                // An actor that failed, or one rebuilt since the last decision, has
                // nothing to tell: its resource is not asked for work this time.
                told[resource] = actor.send(AskForecast).await.ok().flatten();
            }
            told
        };
        Box::pin(asked.into_actor(self).map(move |told, fetch, _| {
            outlook.resources = told.map(|_, t| t.unwrap_or_default());
            let choice = select_work_fetch(&mut outlook);
            fetch.journal_choice(&choice, &outlook, now);
            WorkChosen { choice, outlook }
        }))
    }
}

impl FetchActor {
    /// Records the choice with the debt and shortfall that ranked the chosen project.
    fn journal_choice(&self, choice: &FetchChoice, outlook: &FetchOutlook, now: f64) {
        if !self.context.journal.is_on() && !tracing::enabled!(tracing::Level::DEBUG) {
            return;
        }
        let request = choice.request.as_ref();
        let chosen = request.and_then(|r| outlook.candidates.get(r.project.index()));
        let resource = choice.reason.resource();
        let record = FetchChoiceRecord {
            reason: choice.reason.to_string(),
            project: request.map(|r| r.project.0),
            long_term_debt: chosen.map(|c| c.overall_long_term_debt),
            shortfall: chosen.zip(resource).map(|(c, r)| c.shortfall[r]),
            score: chosen.zip(resource).and_then(|(c, r)| c.score[r]),
            req_seconds: request
                .map(|w| {
                    ResourceType::ALL
                        .into_iter()
                        .filter(|&r| w.requests(r))
                        .map(|r| (r.key().to_string(), w.resources[r].req_seconds))
                        .collect()
                })
                .unwrap_or_default(),
        };
        if let (Some(project), Some(debt)) = (record.project, record.long_term_debt) {
            tracing::debug!(
                project,
                long_term_debt = debt,
                shortfall = record.shortfall,
                reason = %record.reason,
                now,
                "work fetch chose a project"
            );
        }
        self.context.delivered("scheduler", "FetchChoice", &record);
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
