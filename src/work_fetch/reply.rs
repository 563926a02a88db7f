//! What a scheduler reply does to the work-fetch state (seed 003 "Handling scheduler
//! reply", "Long-term debt": the accumulate-debt flags D(P, R); seed 000
//! "latency-limited").

use super::backoff::{back_off, clear_backoff};
use super::request::WorkRequest;
use crate::Time;
use crate::model::{ClientState, Project, ResourceMap, ResourceType};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// How long a project that said "no work because of deadlines" without a delay stays
/// latency-limited, seconds; also the least we wait when it gave a shorter delay, since
/// asking again before our queue has drained would get the same answer.
pub const MIN_LATENCY_LIMIT: f64 = 3600.0;

/// The parts of a scheduler reply that work fetch reacts to.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct WorkReply {
    /// Jobs received per main resource of their app version.
    pub jobs_received: ResourceMap<u32>,
    /// The project has work but sent none because its deadlines couldn't be met.
    pub no_work_because_of_deadlines: bool,
    /// The reply's `<request_delay>`, seconds.
    pub request_delay: Option<f64>,
    /// Per resource, the project said it has no app for it (`<no_rsc_apps>`).
    pub no_apps: ResourceMap<bool>,
}

impl WorkReply {
    /// Whether the reply brought any job.
    pub fn any_jobs(&self) -> bool {
        self.jobs_received.0.iter().any(|&n| n > 0)
    }
}

/// Applies a reply to `request` to the project's work-fetch state:
///
/// - no job: each requested resource is backed off (interval doubled) and D(P, R) is
///   cleared for each resource with `req_seconds > 0` (seed 003). When the project said
///   "no work because of deadlines" it does have work: it becomes latency-limited
///   instead (until now + max(request_delay, [`MIN_LATENCY_LIMIT`])), keeps its D flags
///   so it goes on accumulating debt (seed 000), and is not backed off;
/// - jobs: for each resource a job came for, the backoff is cleared, D(P, R) is set and
///   the project is known to have an app version for it; the others are left as they
///   are (seed 003 clears only "the PRSC of each returned job"); the project is no
///   longer latency-limited;
/// - `no_apps[R]`: the project never supplies R; D(P, R) is cleared.
///
/// The reply's `request_delay` for the next RPC is `rpc_policy::on_rpc_success`'s job.
pub fn handle_work_reply(
    state: &mut ClientState,
    request: &WorkRequest,
    reply: &WorkReply,
    now: Time,
    rng: &mut impl Rng,
) {
    let Some(project) = state.projects.get_mut(request.project.index()) else { return };
    apply_work_reply(project, request, reply, now, rng);
}

/// [`handle_work_reply`] for the project alone: what a project's own RPC session (an
/// actor that holds only its project) applies.
pub fn apply_work_reply(
    project: &mut Project,
    request: &WorkRequest,
    reply: &WorkReply,
    now: Time,
    rng: &mut impl Rng,
) {
    if reply.any_jobs() {
        project.latency_limited_until = None;
        for r in ResourceType::ALL {
            if reply.jobs_received[r] > 0 {
                let resource = &mut project.resources[r];
                clear_backoff(resource);
                resource.accumulate_debt = true;
                resource.has_app_version = true;
            }
        }
    } else if reply.no_work_because_of_deadlines {
        let delay = reply.request_delay.filter(|d| d.is_finite()).unwrap_or(0.0);
        project.latency_limited_until = Some(now + delay.max(MIN_LATENCY_LIMIT));
    } else {
        for r in ResourceType::ALL {
            if request.requests(r) {
                back_off(&mut project.resources[r], now, rng);
            }
            if request.resources[r].req_seconds > 0.0 {
                project.resources[r].accumulate_debt = false;
            }
        }
    }
    for r in ResourceType::ALL {
        if reply.no_apps[r] {
            project.resources[r].no_apps = true;
            project.resources[r].accumulate_debt = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Project, ProjectId};
    use crate::work_fetch::backoff::backed_off;
    use crate::work_fetch::request::ResourceRequest;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn setup() -> (ClientState, WorkRequest) {
        let mut state = ClientState::default();
        state.projects.push(Project::new("a", "http://a/", 1.0));
        for r in [ResourceType::Cpu, ResourceType::Nvidia] {
            state.projects[0].resources[r].accumulate_debt = true;
        }
        let mut resources = ResourceMap::<ResourceRequest>::default();
        resources[ResourceType::Cpu] = ResourceRequest { req_seconds: 100.0, req_ninstances: 0.0 };
        resources[ResourceType::Nvidia] =
            ResourceRequest { req_seconds: 50.0, req_ninstances: 1.0 };
        let request = WorkRequest { project: ProjectId(0), resources, work_req_seconds: 100.0 };
        (state, request)
    }

    #[test]
    fn empty_reply_backs_off_and_clears_debt_flags() {
        let (mut state, request) = setup();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        handle_work_reply(&mut state, &request, &WorkReply::default(), 1000.0, &mut rng);
        let p = &state.projects[0];
        for r in [ResourceType::Cpu, ResourceType::Nvidia] {
            assert!(backed_off(p, r, 1000.0 + 299.0));
            assert_eq!(p.resources[r].backoff_interval, 600.0);
            assert!(!p.resources[r].accumulate_debt);
        }
        assert!(!backed_off(p, ResourceType::Amd, 1000.0));

        handle_work_reply(&mut state, &request, &WorkReply::default(), 2000.0, &mut rng);
        assert_eq!(state.projects[0].resources[ResourceType::Cpu].backoff_interval, 1200.0);
    }

    #[test]
    fn jobs_clear_backoff_of_their_resource_only() {
        let (mut state, request) = setup();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        handle_work_reply(&mut state, &request, &WorkReply::default(), 1000.0, &mut rng);
        let mut reply = WorkReply::default();
        reply.jobs_received[ResourceType::Nvidia] = 3;
        handle_work_reply(&mut state, &request, &reply, 1100.0, &mut rng);
        let p = &state.projects[0];
        assert!(!backed_off(p, ResourceType::Nvidia, 1100.0));
        assert_eq!(p.resources[ResourceType::Nvidia].backoff_interval, 0.0);
        assert!(p.resources[ResourceType::Nvidia].accumulate_debt);
        assert!(p.resources[ResourceType::Nvidia].has_app_version);
        assert!(backed_off(p, ResourceType::Cpu, 1100.0));
        assert!(!p.resources[ResourceType::Cpu].accumulate_debt);
    }

    #[test]
    fn no_work_because_of_deadlines_makes_the_project_latency_limited() {
        let (mut state, request) = setup();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let reply = WorkReply {
            no_work_because_of_deadlines: true,
            request_delay: Some(7200.0),
            ..WorkReply::default()
        };
        handle_work_reply(&mut state, &request, &reply, 1000.0, &mut rng);
        assert_eq!(state.projects[0].latency_limited_until, Some(8200.0));
        assert!(state.project_latency_limited(ProjectId(0), 8199.0));
        assert!(!state.project_latency_limited(ProjectId(0), 8200.0));
        assert!(state.projects[0].resources[ResourceType::Cpu].accumulate_debt);
        assert!(!backed_off(&state.projects[0], ResourceType::Cpu, 1000.0));

        let short = WorkReply { request_delay: None, ..reply };
        handle_work_reply(&mut state, &request, &short, 9000.0, &mut rng);
        assert_eq!(state.projects[0].latency_limited_until, Some(9000.0 + MIN_LATENCY_LIMIT));
    }

    #[test]
    fn no_apps_marks_resource_unsupplied() {
        let (mut state, request) = setup();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut reply = WorkReply::default();
        reply.jobs_received[ResourceType::Cpu] = 1;
        reply.no_apps[ResourceType::Nvidia] = true;
        handle_work_reply(&mut state, &request, &reply, 1000.0, &mut rng);
        let p = &state.projects[0];
        assert!(p.resources[ResourceType::Nvidia].no_apps);
        assert!(!p.resources[ResourceType::Nvidia].accumulate_debt);
        assert!(p.resources[ResourceType::Cpu].accumulate_debt);
    }
}
