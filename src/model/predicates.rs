//! The result and project predicates of seed 000 ("Result states", "Project states"):
//! runnable, nearly runnable, downloading, fetchable, latency-limited, potentially
//! runnable, and overworked (seed 000 "Work-fetch policy").
//!
//! Project predicates need facts about all of a project's jobs; [`ProjectFacts`] gathers
//! them in one pass over the jobs so a decision never rescans the job list per project.

use super::client_state::ClientState;
use super::ids::{JobId, ProjectId};
use super::job::{Job, JobState};
use super::resource::{ResourceMap, ResourceType};
use crate::Time;
use serde::Serialize;

impl ClientState {
    /// Whether any input file of the job waits for a deferred (retrying) download.
    pub(crate) fn job_has_deferred_input(&self, job: &Job) -> bool {
        self.workunit(job.workunit).input_files.iter().any(|f| self.file(f.file).transfer_deferred)
    }

    fn job_not_suspended(&self, job: &Job) -> bool {
        !job.suspended && !self.project(job.project).suspended
    }

    /// Seed 000: R is runnable if neither R nor its project is suspended, its input files
    /// are downloaded and it hasn't finished computing. A job without a known app version
    /// can never run.
    pub fn job_runnable(&self, id: JobId) -> bool {
        self.job_is_runnable(self.job(id))
    }

    /// [`ClientState::job_runnable`] of a job record at hand.
    pub(crate) fn job_is_runnable(&self, job: &Job) -> bool {
        job.app_version.is_some()
            && self.job_not_suspended(job)
            && job.state == JobState::FilesDownloaded
    }

    /// Seed 000: R is nearly runnable if neither R nor its project is suspended, none of
    /// its input files is in a "download deferred" state, and it hasn't finished computing.
    pub fn job_nearly_runnable(&self, id: JobId) -> bool {
        let job = self.job(id);
        // The job's own record first: the jobs asked about are mostly done computing.
        !job.state.computing_done()
            && job.app_version.is_some()
            && self.job_not_suspended(job)
            && !self.job_has_deferred_input(job)
    }

    /// Whether the job's input is still downloading with no deferred transfer.
    pub fn job_downloading(&self, id: JobId) -> bool {
        let job = self.job(id);
        self.job_not_suspended(job)
            && matches!(job.state, JobState::New | JobState::FilesDownloading)
            && !self.job_has_deferred_input(job)
    }

    /// The project's overall long-term debt: the per-resource debts weighted by the speed
    /// of each resource (seed 003 "overall LTD"), in CPU-seconds.
    pub fn overall_long_term_debt(&self, id: ProjectId) -> f64 {
        self.overall_long_term_debt_weighted(id, &self.debt_weights())
    }

    /// Per resource, the weight of its debts in the overall debt: its speed relative to
    /// a CPU, where the client has instances of it (`None`: it does not count).
    pub(crate) fn debt_weights(&self) -> ResourceMap<Option<f64>> {
        ResourceMap::from_fn(|r| (self.instances(r) > 0).then(|| self.host.relative_speed(r)))
    }

    /// [`ClientState::overall_long_term_debt`] with the resources' `weights`
    /// ([`ClientState::debt_weights`]) looked up once for many projects.
    pub(crate) fn overall_long_term_debt_weighted(
        &self,
        id: ProjectId,
        weights: &ResourceMap<Option<f64>>,
    ) -> f64 {
        let project = self.project(id);
        ResourceType::ALL
            .into_iter()
            .filter_map(|r| weights[r].map(|weight| project.resources[r].long_term_debt * weight))
            .sum()
    }

    /// Seed 000: P is overworked if its long-term debt is below minus the scheduling
    /// period (it ran in EDF mode beyond its share).
    pub fn project_overworked(&self, id: ProjectId) -> bool {
        self.overall_long_term_debt(id) < -self.prefs.scheduling_period()
    }

    /// Seed 000: P is latency-limited if its last reply said "no work because of
    /// deadlines" and the reply's requested delay has not elapsed.
    pub fn project_latency_limited(&self, id: ProjectId, now: Time) -> bool {
        self.project(id).latency_limited_until.is_some_and(|until| now < until)
    }

    /// Seed 003's per-resource form of "overworked": P's long-term debt for R is below
    /// minus one scheduling period of one of R's instances: it ran more than a period
    /// ahead of its share there. A project that ran beyond its share on one resource must
    /// not be refused work for another it is owed. The debt is compared in R's own
    /// instance-seconds: weighted by R's speed, a GPU a hundred times a CPU would count a
    /// project a few seconds ahead on it as overworked, and it would not be asked for GPU
    /// work again until the others had caught up.
    pub fn project_overworked_for(&self, id: ProjectId, resource: ResourceType) -> bool {
        let debt = self.project(id).resources[resource].long_term_debt;
        debt < -self.prefs.scheduling_period()
    }

    /// Seed 000: P is fetchable if it is not suspended, not deferred (min_rpc_time
    /// passed), has no no-new-work flag and no master fetch is pending (nor, as the
    /// client never waits on the network, an RPC under way). Seed 000 also
    /// asks that P not be overworked; with per-resource debts (seed 003) that is a
    /// question per resource, answered by [`ClientState::project_overworked_for`] where
    /// work fetch picks a project for a resource.
    pub fn project_fetchable(&self, id: ProjectId, now: Time) -> bool {
        let p = self.project(id);
        !p.suspended
            && p.min_rpc_time <= now
            && !p.dont_request_more_work
            && !p.master_fetch_pending
            && !p.rpc_in_flight
    }
}

/// Per-project facts gathered in one pass over the jobs, from which the project states of
/// seed 000 follow.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProjectFacts {
    /// Runnable jobs per main resource.
    pub runnable: ResourceMap<u32>,
    /// Nearly runnable jobs per main resource.
    pub nearly_runnable: ResourceMap<u32>,
    /// Jobs whose input is downloading (no deferred transfer).
    pub downloading: u32,
    /// Jobs computed and waiting to be reported.
    pub ready_to_report: u32,
    /// The shortest time from receipt to deadline among the project's unreported jobs
    /// per main resource: how soon the project wants its work back (`None`: no job).
    pub min_latency: ResourceMap<Option<f64>>,
}

impl ProjectFacts {
    /// The facts of every project, indexed by project id.
    pub fn gather(state: &ClientState) -> Vec<ProjectFacts> {
        let mut facts = Vec::new();
        ProjectFacts::gather_into(state, &mut facts);
        facts
    }

    /// [`ProjectFacts::gather`] into `facts` (whatever it held is replaced), so that a
    /// caller gathering at every decision reuses one list.
    pub fn gather_into(state: &ClientState, facts: &mut Vec<ProjectFacts>) {
        ProjectFacts::gather_with(state, facts, &mut Vec::new());
    }

    /// [`ProjectFacts::gather_into`] with `main_resources` as working space: a buffer
    /// kept from one decision to the next.
    pub(crate) fn gather_with(
        state: &ClientState,
        facts: &mut Vec<ProjectFacts>,
        main_resources: &mut Vec<ResourceType>,
    ) {
        facts.clear();
        facts.resize(state.projects.len(), ProjectFacts::default());
        // Transfers are seldom deferred: one look down the file list spares nearly every
        // decision a visit to each job's input files.
        let some_transfer_deferred = state.files.iter().any(|f| f.transfer_deferred);
        // Projects are seldom suspended: one look down the project list spares nearly
        // every job a look up of its project.
        let some_project_suspended = state.projects.iter().any(|p| p.suspended);
        // Each app version's main resource, looked up once rather than once per job.
        main_resources.clear();
        main_resources.extend(state.app_versions.iter().map(|v| v.usage.main_resource()));
        for job in &state.jobs {
            // Done and acknowledged: none of the facts counts it. Such jobs wait in the
            // list until the control loop forgets them (see `ClientControl::compact`).
            if job.got_server_ack && job.state.computing_done() {
                continue;
            }
            let f = &mut facts[job.project.index()];
            if job.ready_to_report && !job.got_server_ack {
                f.ready_to_report += 1;
            }
            let Some(av) = job.app_version else { continue };
            let resource = main_resources[av.index()];
            if !job.got_server_ack {
                let latency = job.report_deadline - job.received_time;
                if is_positive_finite(latency) {
                    let known = &mut f.min_latency[resource];
                    if known.is_none_or(|l| latency < l) {
                        *known = Some(latency);
                    }
                }
            }
            // `job_runnable`, `job_nearly_runnable` and `job_downloading` in one, sharing
            // their suspension test and the deferred-input test (which visits the
            // workunit's input files). A downloading job is never done computing, so it is
            // also nearly runnable unless an input is deferred.
            if job.suspended
                || (some_project_suspended && state.projects[job.project.index()].suspended)
            {
                continue;
            }
            let deferred_input = || some_transfer_deferred && state.job_has_deferred_input(job);
            // One look at the state: the jobs not done computing are the runnable and the
            // downloading ones.
            match job.state {
                JobState::FilesDownloaded => {
                    f.runnable[resource] += 1;
                    if !deferred_input() {
                        f.nearly_runnable[resource] += 1;
                    }
                }
                JobState::New | JobState::FilesDownloading => {
                    if !deferred_input() {
                        f.nearly_runnable[resource] += 1;
                        f.downloading += 1;
                    }
                }
                _ => debug_assert!(job.state.computing_done()),
            }
        }
    }

    /// Seed 000: P is runnable if it has at least one runnable result.
    pub fn runnable(&self) -> bool {
        self.runnable.0.iter().any(|&n| n > 0)
    }

    /// Seed 000: P is downloading if it has a result whose files are being downloaded
    /// with none deferred (the project's suspension is folded into the job facts).
    pub fn is_downloading(&self) -> bool {
        self.downloading > 0
    }
}

/// Whether `x` is finite and above zero, in one comparison of its bits: the positive
/// finite doubles are exactly the bit patterns from 1 to `f64::MAX`'s (zero is 0, the
/// negative ones have the sign bit set, infinity and NaN lie above). Tested for every
/// job at every decision, where the two float tests compile to a dozen instructions.
pub(crate) fn is_positive_finite(x: f64) -> bool {
    x.to_bits().wrapping_sub(1) < f64::MAX.to_bits()
}

impl ClientState {
    /// Seed 000: P is potentially runnable if it is runnable, downloading, fetchable,
    /// overworked or latency-limited: as far as the client knows, it could do work for P.
    pub fn project_potentially_runnable(
        &self,
        id: ProjectId,
        facts: &ProjectFacts,
        now: Time,
    ) -> bool {
        if self.project(id).suspended {
            return false;
        }
        facts.runnable()
            || facts.is_downloading()
            || self.project_fetchable(id, now)
            || self.project_overworked(id)
            || self.project_latency_limited(id, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Coprocessor, Project};

    #[test]
    fn positive_finite_is_the_two_float_tests() {
        let values = [
            0.0,
            -0.0,
            f64::MIN_POSITIVE,
            f64::MIN_POSITIVE / 2.0,
            1.0,
            -1.0,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
        ];
        for x in values {
            assert_eq!(is_positive_finite(x), x.is_finite() && x > 0.0, "{x}");
        }
    }

    #[test]
    fn overworked_is_judged_in_the_resources_own_instance_seconds() {
        let mut state = ClientState::default();
        state.host.p_fpops = 1e9;
        state.host.coprocessors[ResourceType::Nvidia] = Some(Coprocessor {
            resource: ResourceType::Nvidia,
            name: "gpu".into(),
            count: 1,
            peak_flops: 5e11,
            available_ram: 0.0,
        });
        // A GPU a hundred times a CPU.
        assert_eq!(state.host.relative_speed(ResourceType::Nvidia), 100.0);
        state.projects.push(Project::new("g", "http://g/", 1.0));
        let period = state.prefs.scheduling_period();
        let id = ProjectId(0);
        // A minute ahead on the GPU is not overworked (weighted by speed it would be a
        // hundred CPU-minutes, beyond the period).
        state.projects[0].resources[ResourceType::Nvidia].long_term_debt = -60.0;
        assert!(!state.project_overworked_for(id, ResourceType::Nvidia));
        state.projects[0].resources[ResourceType::Nvidia].long_term_debt = -period - 1.0;
        assert!(state.project_overworked_for(id, ResourceType::Nvidia));
        state.projects[0].resources[ResourceType::Cpu].long_term_debt = -period + 1.0;
        assert!(!state.project_overworked_for(id, ResourceType::Cpu));
    }
}
