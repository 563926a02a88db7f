//! The control loop's transfer step (the policy is [`crate::transfer`]'s): for a client
//! that moves its files itself, which transfers start now, what each one's end does to
//! the jobs and the project, and when the step next has something to do.

use super::ClientControl;
use crate::Time;
use crate::control::reply::ReplyOutcome;
use crate::model::{JobId, JobState, ProjectId, RunMode};
use crate::rpc_policy::on_app_failure;
use crate::transfer::{
    Settlement, TransferOrder, TransferPlan, TransferResult, has_outputs_to_upload,
    outputs_produced, plan_transfers, settle_transfer,
};
use rand::Rng;

impl ClientControl {
    /// The client moves its files itself from `now` on: jobs wait for their downloads
    /// and report only after their uploads (see the module documentation of
    /// [`ClientControl`]). Transfers a saved state left half done are looked at at once.
    pub fn enable_file_transfers(&mut self, now: Time) {
        self.file_transfers = true;
        self.next_transfer_check = now;
    }

    /// Whether the client moves its files itself.
    pub fn file_transfers_enabled(&self) -> bool {
        self.file_transfers
    }

    /// Whether job `id`'s outputs must be uploaded before it is reported; they are
    /// marked present (its app finished with all of them, the process host checked).
    pub(super) fn outputs_to_upload(&mut self, id: JobId, now: Time) -> bool {
        outputs_produced(&mut self.state, id);
        let uploads = has_outputs_to_upload(&self.state, id);
        if uploads {
            self.next_transfer_check = self.next_transfer_check.min(now);
        }
        uploads
    }

    /// A reply was taken in: jobs that wait for files (or files given up at once, an
    /// unsigned executable) are looked at by the next transfer step.
    pub(super) fn transfers_after_reply(&mut self, outcome: &ReplyOutcome, now: Time) {
        if !self.file_transfers {
            return;
        }
        let waiting = outcome
            .new_jobs
            .iter()
            .any(|&id| self.state.jobs.get(id.index()).is_some_and(|j| j.state == JobState::New));
        if waiting {
            self.next_transfer_check = self.next_transfer_check.min(now);
        }
    }

    /// The transfers to start at `now` (marked in flight; the caller carries them out and
    /// reports each end to [`ClientControl::finish_transfer`]), with the jobs whose files
    /// settled meanwhile. Nothing starts while the network may not be used. Jobs that
    /// ended because a file they need was given up hold their projects back (seed 002:
    /// a failed computation backs off the project's RPCs).
    pub fn start_transfers(&mut self, now: Time, rng: &mut impl Rng) -> TransferPlan {
        let network =
            self.host.on && self.host.connected && self.state.network_mode != RunMode::Never;
        if !self.file_transfers || !network || now < self.next_transfer_check {
            if !network {
                // The change of availability that brings the network back looks again.
                self.next_transfer_check = f64::INFINITY;
            }
            return TransferPlan {
                orders: Vec::new(),
                changes: Default::default(),
                notices: Vec::new(),
                next_check: self.next_transfer_check,
            };
        }
        let plan = plan_transfers(&mut self.state, now);
        self.next_transfer_check = plan.next_check;
        self.after_job_changes(&plan.changes.failed, !plan.changes.reportable.is_empty(), now, rng);
        plan
    }

    /// The end of `order`'s attempt, `result`, at `now`: taken into the state. A
    /// download that passed its checks comes back as [`crate::transfer::StagedDownload::Install`]:
    /// the caller puts it in place and reports [`TransferResult::Installed`] (or the
    /// failure to) through this again.
    pub fn finish_transfer(
        &mut self,
        order: &TransferOrder,
        result: TransferResult,
        now: Time,
        rng: &mut impl Rng,
    ) -> Settlement {
        let settlement = settle_transfer(&mut self.state, order, result, now, rng);
        // A place freed, a next URL to try, or jobs to move on: the next step looks.
        self.next_transfer_check = self.next_transfer_check.min(now);
        let reportable = !settlement.changes.reportable.is_empty();
        self.after_job_changes(&settlement.changes.failed, reportable, now, rng);
        settlement
    }

    /// Whether the network is usable and transfers have something to do before `until`.
    pub fn transfers_due(&self, until: Time) -> bool {
        self.file_transfers && self.next_transfer_check <= until
    }

    /// Jobs ended by a file given up hold their projects' RPCs back (once per project
    /// and step); results that became reportable may be due for a report.
    fn after_job_changes(
        &mut self,
        failed: &[JobId],
        reportable: bool,
        now: Time,
        rng: &mut impl Rng,
    ) {
        let mut projects: Vec<ProjectId> =
            failed.iter().map(|&id| self.state.job(id).project).collect();
        projects.sort_unstable_by_key(|p| p.0);
        projects.dedup();
        for project in projects {
            on_app_failure(&mut self.state.projects[project.index()], now, rng);
        }
        if reportable || !failed.is_empty() {
            self.next_fetch_check = self.next_fetch_check.min(now);
            // The report poll looks at once (and finds whether a report is due).
            self.next_report_due = self.next_report_due.min(now);
        }
    }
}
