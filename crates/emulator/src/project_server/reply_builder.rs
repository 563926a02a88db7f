//! The emulated server's answer, written as a real server writes its scheduler reply
//! (docs/design.md "Protocol facts"): every reported result acknowledged; for each job sent a
//! `<workunit>` (named as the job, with the estimate, and a flops bound ten times the
//! larger of the estimate and the true size, so an emulated job is never aborted for
//! running long) and a `<result>` naming its app version, with the `<app>` and
//! `<app_version>` it needs; the reasons for sending nothing in BOINC's words; and the
//! resources the project has no app for.
//!
//! Replies carry no `request_delay` (BOINC's emulator sends none). The jobs' true sizes
//! go beside the reply ([`SentJob`]), to the emulated world only.

use super::job_generation::{Candidate, Catalogue};
use boinc_core::Time;
use boinc_core::model::ResourceType;
use boinc_core::protocol::{
    AppDescription, AppVersionDescription, CoprocessorUsage, ResultDescription, SchedulerReply,
    SchedulerRequest, ServerMessage, WorkunitDescription,
};
use std::borrow::Cow;

/// A job the server sent, with what only the emulated world may know of it; its name
/// (`{project}_{n}`, unique within the project) is that of the reply's result in the
/// same place.
#[derive(Debug, Clone, PartialEq)]
pub struct SentJob {
    /// Its app, by position in the server's [`Catalogue::apps`].
    pub app: usize,
    /// Its app version, by position in [`Catalogue::versions`].
    pub version: usize,
    /// The flops estimate sent with it (`<rsc_fpops_est>`).
    pub fpops_est: f64,
    /// The flops it really takes (known to the emulator only).
    pub true_flops: f64,
    /// Report deadline.
    pub deadline: Time,
    /// Which of the server's jobs it is, counted from the first it made (0 for the
    /// first): the number in its name less the server's first number.
    pub made_index: usize,
}

/// The server's answer to a request: the reply the client reads, and the truth about
/// the jobs in it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerAnswer {
    /// The scheduler reply.
    pub reply: SchedulerReply,
    /// The jobs sent, in the reply's order: `sent[i]` is `reply.results[i]`.
    pub sent: Vec<SentJob>,
}

/// A reply being put together.
pub(super) struct ReplyBuilder<'c> {
    catalogue: &'c Catalogue,
    answer: ServerAnswer,
    /// By version position: already described in the reply.
    described: Vec<bool>,
}

impl<'c> ReplyBuilder<'c> {
    /// A reply of the project named `project_name` to `request`, acknowledging every
    /// result it reports; `described` is a buffer to keep the described versions in.
    pub(super) fn new(
        catalogue: &'c Catalogue,
        project_name: &str,
        request: &SchedulerRequest,
        mut described: Vec<bool>,
    ) -> Self {
        described.clear();
        described.resize(catalogue.versions.len(), false);
        let reply = SchedulerReply {
            project_name: Some(project_name.to_owned()),
            result_acks: request.results.iter().map(|r| r.name.as_ref().to_owned()).collect(),
            ..SchedulerReply::default()
        };
        ReplyBuilder { catalogue, answer: ServerAnswer { reply, sent: Vec::new() }, described }
    }

    /// Jobs sent so far.
    pub(super) fn jobs_sent(&self) -> usize {
        self.answer.sent.len()
    }

    /// The project has no app version for `resource`.
    pub(super) fn no_apps(&mut self, resource: ResourceType) {
        self.answer.reply.no_rsc_apps[resource] = true;
    }

    /// Adds a message, once.
    pub(super) fn message(&mut self, message: ServerMessage) {
        if !self.answer.reply.messages.contains(&message) {
            self.answer.reply.messages.push(message);
        }
    }

    /// Sends a job of `candidate`, the server's `made_index`th.
    pub(super) fn send(
        &mut self,
        candidate: &Candidate,
        name: String,
        made_index: usize,
        fpops_est: f64,
        true_flops: f64,
        deadline: Time,
    ) {
        let version = &self.catalogue.versions[candidate.version];
        let app = &self.catalogue.apps[candidate.app];
        if !self.described[candidate.version] {
            self.described[candidate.version] = true;
            let reply = &mut self.answer.reply;
            if !reply.apps.iter().any(|a| a.name == app.name) {
                reply.apps.push(AppDescription {
                    name: app.name.clone(),
                    user_friendly_name: app.user_friendly_name.clone(),
                    non_cpu_intensive: app.non_cpu_intensive,
                });
            }
            reply.app_versions.push(AppVersionDescription {
                app_name: Cow::Owned(app.name.clone()),
                version_num: version.version_num,
                platform: Cow::Owned(version.platform.clone()),
                plan_class: Cow::Owned(version.plan_class.clone()),
                avg_ncpus: Some(version.usage.avg_ncpus),
                flops: Some(version.flops),
                coprocessor: version.usage.coprocessor.map(|(resource, count)| CoprocessorUsage {
                    kind: Cow::Borrowed(resource.boinc_name()),
                    count,
                }),
                ..AppVersionDescription::default()
            });
        }
        let reply = &mut self.answer.reply;
        reply.workunits.push(WorkunitDescription {
            name: name.clone(),
            app_name: app.name.clone(),
            version_num: Some(version.version_num),
            rsc_fpops_est: fpops_est,
            rsc_fpops_bound: 10.0 * fpops_est.max(true_flops),
            ..WorkunitDescription::default()
        });
        reply.results.push(ResultDescription {
            wu_name: name.clone(),
            name,
            report_deadline: deadline,
            platform: version.platform.clone(),
            version_num: Some(version.version_num),
            plan_class: version.plan_class.clone(),
            ..ResultDescription::default()
        });
        self.answer.sent.push(SentJob {
            app: candidate.app,
            version: candidate.version,
            fpops_est,
            true_flops,
            deadline,
            made_index,
        });
    }

    /// The answer; the buffer given to [`ReplyBuilder::new`] goes back to `described`.
    pub(super) fn finish(self, described: &mut Vec<bool>) -> ServerAnswer {
        *described = self.described;
        self.answer
    }
}
