//! One project's side of a scheduler RPC session (seed 002 "RPC sessions", "Backoff";
//! seed 003 "Handling scheduler replies"): what a reply, a failure or a master-page
//! fetch does to the project's protocol state.
//!
//! The state is the project's own: in the actor runtime a ProjectActor applies these
//! functions to its copy with its own random source and hands the result back as a
//! [`ProjectRpcState`]; the emulator applies them in place. Each project has its own
//! random stream ([`client_rng`]), so the jitter one project draws never depends on
//! what happened to another.

use crate::Time;
use crate::model::{Project, ProjectId, ResourceMap};
use crate::rpc_policy::{
    on_master_fetch_failure, on_master_fetch_success, on_rpc_failure, on_rpc_success,
};
use crate::work_fetch::{WorkReply, WorkRequest, apply_work_reply};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The random source of a project's RPC policy for a run seeded with `seed`: the seed's
/// stream `1 + project` (stream 0 belongs to the emulated world).
pub fn client_rng(seed: u64, project: ProjectId) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(1 + u64::from(project.0));
    rng
}

/// Per resource, the project's fetch state that replies change.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ResourceRpcState {
    /// D(P, R): the project accumulates long-term debt for the resource.
    pub accumulate_debt: bool,
    /// Backed off from asking for the resource until then.
    pub backoff_time: Time,
    /// The current backoff interval.
    pub backoff_interval: f64,
    /// The project said it has no app for the resource.
    pub no_apps: bool,
    /// The project has an app version for the resource.
    pub has_app_version: bool,
}

/// The part of a project's state that its RPC sessions own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectRpcState {
    /// No scheduler RPC before this time.
    pub min_rpc_time: Time,
    /// Consecutive failed RPCs.
    pub nrpc_failures: u32,
    /// The master page must be read before the next RPC.
    pub master_fetch_pending: bool,
    /// Consecutive failed master-page fetches.
    pub master_fetch_failures: u32,
    /// Last successful RPC.
    pub last_rpc_time: Time,
    /// Last failed RPC or master-page fetch.
    #[serde(default)]
    pub last_rpc_failure: Option<Time>,
    /// A user asked for an RPC.
    pub sched_rpc_pending: bool,
    /// The project said "no work because of deadlines" until then.
    pub latency_limited_until: Option<Time>,
    /// Per-resource fetch state.
    pub resources: ResourceMap<ResourceRpcState>,
    /// The scheduler URLs (a master-page fetch reads them).
    #[serde(default)]
    pub scheduler_urls: Vec<String>,
}

impl ProjectRpcState {
    /// The RPC state of `project`.
    pub fn of(project: &Project) -> Self {
        ProjectRpcState {
            min_rpc_time: project.min_rpc_time,
            nrpc_failures: project.nrpc_failures,
            master_fetch_pending: project.master_fetch_pending,
            master_fetch_failures: project.master_fetch_failures,
            last_rpc_time: project.last_rpc_time,
            last_rpc_failure: project.last_rpc_failure,
            sched_rpc_pending: project.sched_rpc_pending,
            latency_limited_until: project.latency_limited_until,
            resources: project.resources.map(|_, r| ResourceRpcState {
                accumulate_debt: r.accumulate_debt,
                backoff_time: r.backoff_time,
                backoff_interval: r.backoff_interval,
                no_apps: r.no_apps,
                has_app_version: r.has_app_version,
            }),
            scheduler_urls: project.scheduler_urls.clone(),
        }
    }

    /// Writes this state into `project`, leaving everything else (debts, DCF) alone.
    pub fn write_to(&self, project: &mut Project) {
        project.min_rpc_time = self.min_rpc_time;
        project.nrpc_failures = self.nrpc_failures;
        project.master_fetch_pending = self.master_fetch_pending;
        project.master_fetch_failures = self.master_fetch_failures;
        project.last_rpc_time = self.last_rpc_time;
        project.last_rpc_failure = self.last_rpc_failure;
        project.sched_rpc_pending = self.sched_rpc_pending;
        project.latency_limited_until = self.latency_limited_until;
        project.scheduler_urls.clone_from(&self.scheduler_urls);
        for (r, resource) in project.resources.iter_mut() {
            let s = &self.resources[r];
            resource.accumulate_debt = s.accumulate_debt;
            resource.backoff_time = s.backoff_time;
            resource.backoff_interval = s.backoff_interval;
            resource.no_apps = s.no_apps;
            resource.has_app_version = s.has_app_version;
        }
    }
}

/// Applies an RPC's outcome to the project: `None` when it failed (backoff, maybe a
/// master-page refetch), else the reply's effect on fetch state and the next RPC time.
pub fn apply_rpc_outcome(
    project: &mut Project,
    request: &WorkRequest,
    reply: Option<(&WorkReply, Option<f64>)>,
    now: Time,
    rng: &mut impl Rng,
) {
    match reply {
        None => on_rpc_failure(project, now, rng),
        Some((work_reply, request_delay)) => {
            apply_work_reply(project, request, work_reply, now, rng);
            on_rpc_success(project, request_delay, now);
        }
    }
}

/// Applies a master-page fetch: `read` says whether the page came. Returns `read`.
pub fn apply_master_fetch(
    project: &mut Project,
    read: bool,
    now: Time,
    rng: &mut impl Rng,
) -> bool {
    if read {
        on_master_fetch_success(project, false);
    } else {
        on_master_fetch_failure(project, now, rng);
    }
    read
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ResourceType;

    #[test]
    fn rpc_state_round_trips_and_leaves_debts_alone() {
        let mut project = Project::new("a", "http://a/", 1.0);
        let mut rng = client_rng(3, ProjectId(0));
        on_rpc_failure(&mut project, 100.0, &mut rng);
        project.resources[ResourceType::Cpu].backoff_time = 500.0;
        let state = ProjectRpcState::of(&project);
        let mut other = Project::new("a", "http://a/", 1.0);
        other.resources[ResourceType::Cpu].long_term_debt = -7.0;
        other.duration_correction_factor = 2.0;
        state.write_to(&mut other);
        assert_eq!(ProjectRpcState::of(&other), state);
        assert_eq!(other.resources[ResourceType::Cpu].long_term_debt, -7.0);
        assert_eq!(other.duration_correction_factor, 2.0);
    }

    #[test]
    fn projects_draw_from_independent_streams() {
        let a: f64 = client_rng(9, ProjectId(0)).random();
        let b: f64 = client_rng(9, ProjectId(1)).random();
        let a2: f64 = client_rng(9, ProjectId(0)).random();
        assert_ne!(a, b);
        assert_eq!(a, a2);
    }

    #[test]
    fn a_failed_master_fetch_backs_off_and_stays_pending() {
        let mut project = Project::new("a", "http://a/", 1.0);
        project.master_fetch_pending = true;
        let mut rng = client_rng(1, ProjectId(0));
        assert!(!apply_master_fetch(&mut project, false, 1000.0, &mut rng));
        assert!(project.master_fetch_pending && project.min_rpc_time > 1000.0);
        assert!(apply_master_fetch(&mut project, true, 2000.0, &mut rng));
        assert!(!project.master_fetch_pending);
    }
}
