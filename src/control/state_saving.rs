//! When the client writes its state file (docs/design.md "State"; issue "The host service"):
//! at once when something it must not forget has changed (a job received, finished,
//! reported or acknowledged, a file downloaded or uploaded, a checkpoint, an RPC's
//! outcome, a user's action), and otherwise, when only progress figures moved, at most
//! once every [`SavePolicy::progress_interval`]. A write that failed (a full disk) is
//! retried after a doubling delay, whatever changes meanwhile.
//!
//! What must not be forgotten is told by a digest of those fields ([`durable_digest`]):
//! the caller need not say what changed, only that progress was accounted
//! ([`SaveSchedule::note_progress`]). Computing the digest walks every job and file
//! once (about a millisecond for 10,000 jobs), so it suits a once-a-second check.

use crate::Time;
use crate::model::{ClientState, FileStatus, RunMode, SchedulerState};
use std::hash::{DefaultHasher, Hash, Hasher};

/// How often the state file may be written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SavePolicy {
    /// Progress alone (elapsed and CPU times, fractions done, debts) is written at most
    /// this often, seconds.
    pub progress_interval: f64,
    /// The first retry after a failed write, seconds; it doubles on each failure.
    pub retry_min: f64,
    /// The longest delay between retries, seconds.
    pub retry_max: f64,
}

impl Default for SavePolicy {
    fn default() -> Self {
        // Progress alone is worth little after a crash (a task restarts from its
        // checkpoint, which is durable), so it is written once a minute, as often as
        // BOINC's default `disk_interval` lets apps checkpoint.
        SavePolicy { progress_interval: 60.0, retry_min: 1.0, retry_max: 60.0 }
    }
}

/// Why the state is to be written now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveReason {
    /// Something the client must not forget changed.
    Durable,
    /// Only progress changed, and the interval since the last write is over.
    Progress,
    /// A write failed and its retry is due.
    Retry,
}

/// Whether the state is to be written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SaveDue {
    /// Write it now; pass `digest` to [`SaveSchedule::saved`] once it is on disk.
    Now {
        /// Why.
        reason: SaveReason,
        /// The digest of the state being written.
        digest: u64,
    },
    /// Nothing to write before this time (ask again then, or sooner if the state changes).
    At(Time),
    /// Nothing to write until the state changes.
    Nothing,
}

/// The client's record of what is on disk and when it may write next.
#[derive(Debug, Clone, PartialEq)]
pub struct SaveSchedule {
    policy: SavePolicy,
    /// Digest of the state last written (or loaded); `None`: nothing on disk yet.
    saved_digest: Option<u64>,
    /// When the state was last written.
    last_save: Option<Time>,
    /// Progress has been accounted since the last write.
    progress_pending: bool,
    /// Failed writes in a row.
    failures: u32,
    /// No write before this time (after a failure).
    retry_at: Option<Time>,
}

impl SaveSchedule {
    /// A schedule for a client whose state is not on disk yet.
    pub fn new(policy: SavePolicy) -> SaveSchedule {
        SaveSchedule {
            policy,
            saved_digest: None,
            last_save: None,
            progress_pending: false,
            failures: 0,
            retry_at: None,
        }
    }

    /// The state was just read from disk at `now`: it need not be written back.
    pub fn loaded(&mut self, state: &ClientState, now: Time) {
        self.saved_digest = Some(durable_digest(state));
        self.last_save = Some(now);
    }

    /// Progress was accounted at some time: it is written within the interval.
    pub fn note_progress(&mut self) {
        self.progress_pending = true;
    }

    /// Whether to write `state` at `now`.
    pub fn due(&self, state: &ClientState, now: Time) -> SaveDue {
        let digest = durable_digest(state);
        let durable = self.saved_digest != Some(digest);
        if let Some(retry_at) = self.retry_at {
            // A retry further away than the longest delay was planned before the wall
            // clock went back: it is due.
            return if now >= retry_at || retry_at > now + self.policy.retry_max {
                SaveDue::Now { reason: SaveReason::Retry, digest }
            } else {
                SaveDue::At(retry_at)
            };
        }
        if durable {
            return SaveDue::Now { reason: SaveReason::Durable, digest };
        }
        if !self.progress_pending {
            return SaveDue::Nothing;
        }
        // A last write dated after `now` means the wall clock went back since: waiting
        // for the interval to pass in the new clock could take hours.
        let next = match self.last_save {
            Some(last) if last <= now => last + self.policy.progress_interval,
            _ => now,
        };
        if now >= next {
            SaveDue::Now { reason: SaveReason::Progress, digest }
        } else {
            SaveDue::At(next)
        }
    }

    /// The state with `digest` is on disk as of `now`.
    pub fn saved(&mut self, digest: u64, now: Time) {
        self.saved_digest = Some(digest);
        self.last_save = Some(now);
        self.progress_pending = false;
        self.failures = 0;
        self.retry_at = None;
    }

    /// A write failed at `now`; returns when to try again.
    pub fn failed(&mut self, now: Time) -> Time {
        let exponent = self.failures.min(30) as i32;
        let delay = (self.policy.retry_min * 2f64.powi(exponent)).min(self.policy.retry_max);
        self.failures = self.failures.saturating_add(1);
        let at = now + delay;
        self.retry_at = Some(at);
        at
    }

    /// What kept the last write from the disk is gone (room came back): the retry need
    /// not wait out its delay. Nothing changes when no write has failed.
    pub fn retry_now(&mut self) {
        if self.retry_at.is_some() {
            self.retry_at = Some(f64::NEG_INFINITY);
        }
    }

    /// Failed writes in a row.
    pub fn failures(&self) -> u32 {
        self.failures
    }
}

/// A digest of what the client must not forget: the projects' identities, accounts,
/// RPC state and backoffs; which apps, versions, workunits, files and jobs it holds;
/// each file's transfer state; each job's state, report flags and exit status; each
/// task's slot, run state and checkpoint; the run modes. Progress figures are left out.
pub fn durable_digest(state: &ClientState) -> u64 {
    let mut hasher = DefaultHasher::new();
    let h = &mut hasher;
    for mode in [state.run_mode, state.gpu_mode, state.network_mode] {
        let code: u8 = match mode {
            RunMode::Always => 1,
            RunMode::Auto => 2,
            RunMode::Never => 3,
        };
        code.hash(h);
    }
    for project in &state.projects {
        project.master_url.hash(h);
        project.authenticator.hash(h);
        (project.hostid, project.rpc_seqno, project.nrpc_failures).hash(h);
        project.scheduler_urls.hash(h);
        project.code_sign_key.hash(h);
        (project.detached, project.suspended, project.dont_request_more_work).hash(h);
        project.detach_when_done.hash(h);
        (project.master_fetch_pending, project.sched_rpc_pending).hash(h);
        (project.min_rpc_time.to_bits(), project.last_rpc_time.to_bits()).hash(h);
        project.resource_share.to_bits().hash(h);
        // Credit is what the volunteer sees; a restart must not show less.
        let account = &project.account;
        for credit in [account.user_total_credit, account.host_total_credit] {
            credit.to_bits().hash(h);
        }
        account.statistics.last().map(|day| day.day.to_bits()).hash(h);
        for (_, resource) in project.resources.iter() {
            (resource.backoff_time.to_bits(), resource.backoff_interval.to_bits()).hash(h);
            resource.no_apps.hash(h);
        }
    }
    (state.apps.len(), state.app_versions.len(), state.workunits.len()).hash(h);
    for file in &state.files {
        file.name.hash(h);
        let status = match file.status {
            FileStatus::NotPresent => 0,
            FileStatus::Present => 1,
            FileStatus::Error(code) => i64::from(code) - 1,
        };
        (status, file.uploaded, file.transfer_deferred).hash(h);
    }
    for job in &state.jobs {
        job.name.hash(h);
        (job.state.code(), job.ready_to_report, job.got_server_ack, job.suspended).hash(h);
        job.exit_status.hash(h);
        if let Some(task) = &job.task {
            let run_state = match task.scheduler_state {
                SchedulerState::Uninitialized => 0u8,
                SchedulerState::Running => 1,
                SchedulerState::Preempted => 2,
            };
            (task.slot, run_state, task.checkpoint_elapsed_time.to_bits()).hash(h);
            task.checkpoint_cpu_time.to_bits().hash(h);
            // A crash counts towards the restart limit: a restart must not forget it.
            (task.crashes.streak(), task.restart_at.map(f64::to_bits)).hash(h);
            task.crashes.failure_times().for_each(|t| t.to_bits().hash(h));
        }
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ActiveTask, JobId, JobState};
    use crate::model::{SyntheticHost, synthetic_host};

    fn state() -> ClientState {
        synthetic_host(SyntheticHost {
            ncpus: 4,
            njobs: 50,
            running_prefix: 4,
            seed: 3,
            now: 1000.0,
        })
    }

    fn saved_at(state: &ClientState, now: Time) -> SaveSchedule {
        let mut schedule = SaveSchedule::new(SavePolicy::default());
        schedule.saved(durable_digest(state), now);
        schedule
    }

    #[test]
    fn nothing_on_disk_is_written_at_once() {
        let schedule = SaveSchedule::new(SavePolicy::default());
        assert!(matches!(
            schedule.due(&state(), 0.0),
            SaveDue::Now { reason: SaveReason::Durable, .. }
        ));
    }

    #[test]
    fn durable_changes_are_written_at_once() {
        let mut state = state();
        let schedule = saved_at(&state, 100.0);
        assert_eq!(schedule.due(&state, 100.5), SaveDue::Nothing);
        let changes: [fn(&mut ClientState); 5] = [
            |s| s.jobs[7].ready_to_report = true,
            |s| s.jobs[7].state = JobState::FilesUploaded,
            |s| s.projects[2].rpc_seqno += 1,
            |s| s.jobs[9].task = Some(ActiveTask::new(12)),
            |s| s.jobs.truncate(10),
        ];
        for change in changes {
            let mut changed = state.clone();
            change(&mut changed);
            assert!(matches!(
                schedule.due(&changed, 100.5),
                SaveDue::Now { reason: SaveReason::Durable, .. }
            ));
        }
        // Progress alone is not durable.
        let job = JobId(0);
        let task = state.jobs[job.index()].task.as_mut().expect("running");
        task.elapsed_time += 3.0;
        task.fraction_done = 0.5;
        state.projects[0].short_term_debt += 9.0;
        assert_eq!(schedule.due(&state, 100.5), SaveDue::Nothing);
    }

    #[test]
    fn progress_waits_for_the_interval() {
        let state = state();
        let mut schedule = saved_at(&state, 100.0);
        schedule.note_progress();
        assert_eq!(schedule.due(&state, 101.0), SaveDue::At(160.0));
        let SaveDue::Now { reason: SaveReason::Progress, digest } = schedule.due(&state, 160.0)
        else {
            panic!("progress due after the interval");
        };
        schedule.saved(digest, 160.0);
        assert_eq!(schedule.due(&state, 200.0), SaveDue::Nothing);
    }

    #[test]
    fn failed_writes_back_off_and_then_retry() {
        let mut state = state();
        let mut schedule = saved_at(&state, 0.0);
        state.jobs[0].got_server_ack = true;
        assert_eq!(schedule.failed(10.0), 11.0);
        assert_eq!(schedule.due(&state, 10.5), SaveDue::At(11.0));
        assert!(matches!(
            schedule.due(&state, 11.0),
            SaveDue::Now { reason: SaveReason::Retry, .. }
        ));
        assert_eq!(schedule.failed(11.0), 13.0);
        for _ in 0..20 {
            schedule.failed(20.0);
        }
        assert_eq!(schedule.failed(20.0), 80.0, "capped at a minute");
        assert_eq!(schedule.failures(), 23);
        schedule.saved(durable_digest(&state), 81.0);
        assert_eq!((schedule.failures(), schedule.due(&state, 82.0)), (0, SaveDue::Nothing));
    }

    #[test]
    fn a_retry_comes_at_once_when_told_room_came_back() {
        let mut state = state();
        let mut schedule = saved_at(&state, 0.0);
        schedule.retry_now();
        assert_eq!(schedule.due(&state, 1.0), SaveDue::Nothing, "no failed write to retry");
        state.jobs[0].got_server_ack = true;
        for _ in 0..6 {
            schedule.failed(10.0);
        }
        assert_eq!(schedule.due(&state, 11.0), SaveDue::At(42.0));
        schedule.retry_now();
        assert!(matches!(
            schedule.due(&state, 11.0),
            SaveDue::Now { reason: SaveReason::Retry, .. }
        ));
    }

    #[test]
    fn a_clock_set_back_does_not_hold_writes_back() {
        let mut state = state();
        let mut schedule = saved_at(&state, 20_000.0);
        schedule.note_progress();
        // Six hours back: progress is written now, not in six hours.
        assert!(matches!(
            schedule.due(&state, 20_000.0 - 6.0 * 3600.0),
            SaveDue::Now { reason: SaveReason::Progress, .. }
        ));
        state.jobs[0].got_server_ack = true;
        schedule.failed(20_000.0);
        assert!(matches!(
            schedule.due(&state, 20_000.0 - 6.0 * 3600.0),
            SaveDue::Now { reason: SaveReason::Retry, .. }
        ));
    }

    #[test]
    fn a_loaded_state_is_not_written_back() {
        let state = state();
        let mut schedule = SaveSchedule::new(SavePolicy::default());
        schedule.loaded(&state, 5.0);
        assert_eq!(schedule.due(&state, 6.0), SaveDue::Nothing);
    }
}
