//! A wall clock set back (seed 002: the RPC backoff and the work-fetch and transfer
//! backoffs are kept as wall-clock times). A time set before the clock went back would
//! lie that much further ahead of the new now and leave the client idle meanwhile. A
//! project's last RPC time tells when its RPC wait was set: found in the future, the
//! clock went back since, and the wait is moved back with it (it keeps its length from
//! now). Every other backoff, whose setting time is not kept, is brought to at most its
//! policy's longest wait after now, as BOINC does when it sees the clock go back. With
//! the clock going forward nothing moves, so this may run at every step.

use crate::Time;
use crate::model::ClientState;
use crate::rpc_policy::RPC_BACKOFF_MAX;
use crate::transfer::TRANSFER_RETRY_MAX;
use crate::work_fetch::MAX_BACKOFF_INTERVAL;

/// The work-fetch backoff is drawn up to this multiple of its interval.
const WORK_FETCH_BACKOFF_SPREAD: f64 = 1.5;

/// Brings `time` to at most `longest` seconds after `now`; whether it moved.
fn clamp(time: &mut Time, longest: f64, now: Time) -> bool {
    let latest = now + longest;
    if *time > latest {
        *time = latest;
        return true;
    }
    false
}

/// Moves each project's RPC wait back with a clock set back since its last RPC (and
/// that RPC's time with it), then brings every backoff of `state` to at most its
/// policy's longest wait after `now`: the projects' scheduler RPC backoff (at most [`RPC_BACKOFF_MAX`]; a project's
/// `request_delay` longer than that is cut to it), their per-resource work-fetch
/// backoffs (at most 1.5 times their interval), their transfer backoffs and each file's
/// transfer retry (at most [`TRANSFER_RETRY_MAX`]). Returns whether any moved, i.e.
/// whether the clock went back since they were set.
pub fn clamp_backoffs_to_now(state: &mut ClientState, now: Time) -> bool {
    let mut moved = false;
    for project in &mut state.projects {
        let set_at = project
            .last_rpc_failure
            .map_or(project.last_rpc_time, |failure| failure.max(project.last_rpc_time));
        if set_at > now {
            let back = set_at - now;
            project.min_rpc_time -= back;
            project.last_rpc_time -= back;
            if let Some(failure) = project.last_rpc_failure.as_mut() {
                *failure -= back;
            }
            moved = true;
        }
        moved |= clamp(&mut project.min_rpc_time, RPC_BACKOFF_MAX, now);
        for (_, resource) in project.resources.iter_mut() {
            let longest = WORK_FETCH_BACKOFF_SPREAD
                * resource.backoff_interval.clamp(0.0, MAX_BACKOFF_INTERVAL);
            moved |= clamp(&mut resource.backoff_time, longest, now);
        }
        let transfers = &mut project.transfer_backoff;
        for backoff in [&mut transfers.download, &mut transfers.upload] {
            moved |= clamp(&mut backoff.next_time, TRANSFER_RETRY_MAX, now);
        }
    }
    for file in &mut state.files {
        moved |= clamp(&mut file.transfer.next_request_time, TRANSFER_RETRY_MAX, now);
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FileInfo, Project, ProjectId, ResourceType};
    use crate::rpc_policy::{self, on_rpc_failure};
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn state_with_backoffs(set_at: Time, failures: u32) -> ClientState {
        let mut state = ClientState::default();
        let mut project = Project::new("p", "http://p/", 100.0);
        let mut rng = ChaCha8Rng::seed_from_u64(u64::from(failures));
        for _ in 0..failures {
            on_rpc_failure(&mut project, set_at, &mut rng);
        }
        let cpu = &mut project.resources[ResourceType::Cpu];
        cpu.backoff_interval = 600.0;
        cpu.backoff_time = set_at + 800.0;
        project.transfer_backoff.upload.next_time = set_at + 3000.0;
        state.projects.push(project);
        let mut file = FileInfo::new(ProjectId(0), "f", 1.0);
        file.transfer.next_request_time = set_at + 7000.0;
        state.files.push(file);
        state
    }

    #[test]
    fn a_clock_set_back_six_hours_leaves_no_backoff_beyond_its_longest_wait() {
        let set_at = 1_000_000.0;
        let mut state = state_with_backoffs(set_at, 3);
        // A wait whose setting time is not known (a state from elsewhere): clamped.
        state.projects[0].last_rpc_failure = None;
        state.projects[0].min_rpc_time = set_at + 3600.0;
        let now = set_at - 6.0 * 3600.0;
        assert!(clamp_backoffs_to_now(&mut state, now));
        let project = &state.projects[0];
        assert_eq!(project.min_rpc_time, now + RPC_BACKOFF_MAX);
        assert_eq!(project.resources[ResourceType::Cpu].backoff_time, now + 900.0);
        assert_eq!(project.transfer_backoff.upload.next_time, now + TRANSFER_RETRY_MAX);
        assert_eq!(state.files[0].transfer.next_request_time, now + TRANSFER_RETRY_MAX);
    }

    #[test]
    fn a_clock_set_back_half_an_hour_keeps_the_request_delay_not_the_half_hour() {
        let set_at = 1_000_000.0;
        let mut state = state_with_backoffs(set_at, 0);
        rpc_policy::on_rpc_success(&mut state.projects[0], Some(1.0), set_at);
        let now = set_at - 1800.0;
        assert!(clamp_backoffs_to_now(&mut state, now));
        let project = &state.projects[0];
        assert_eq!(project.min_rpc_time, now + 1.0);
        assert_eq!(project.last_rpc_time, now);
        // Done once: the next step, a second later, moves nothing.
        assert!(!clamp_backoffs_to_now(&mut state, now + 1.0));
    }

    #[test]
    fn a_backoff_after_failures_keeps_its_length_from_the_new_now() {
        let set_at = 1_000_000.0;
        let mut state = state_with_backoffs(set_at, 3);
        let wait = state.projects[0].min_rpc_time - set_at;
        let now = set_at - 3600.0;
        clamp_backoffs_to_now(&mut state, now);
        assert!((state.projects[0].min_rpc_time - (now + wait)).abs() < 1e-6);
    }

    #[test]
    fn without_a_clock_change_nothing_moves() {
        let set_at = 1_000_000.0;
        let mut state = state_with_backoffs(set_at, 12);
        let before = state.clone();
        assert!(!clamp_backoffs_to_now(&mut state, set_at + 1.0));
        assert_eq!(state, before);
    }

    proptest! {
        #[test]
        fn backoffs_set_by_the_policy_never_move_while_the_clock_goes_forward(
            failures in 0u32..20,
            later in 0.0f64..1e6,
        ) {
            let set_at = 1_000_000.0;
            let mut state = state_with_backoffs(set_at, failures);
            let before = state.clone();
            prop_assert!(!clamp_backoffs_to_now(&mut state, set_at + later));
            prop_assert_eq!(state, before);
        }

        #[test]
        fn after_any_clock_change_every_backoff_is_within_its_longest_wait(
            failures in 0u32..20,
            back in 0.0f64..1e7,
        ) {
            let set_at = 1e8;
            let mut state = state_with_backoffs(set_at, failures);
            let now = set_at - back;
            clamp_backoffs_to_now(&mut state, now);
            let project = &state.projects[0];
            prop_assert!(project.min_rpc_time <= now + RPC_BACKOFF_MAX);
            prop_assert!(project.resources[ResourceType::Cpu].backoff_time <= now + 900.0);
            prop_assert!(state.files[0].transfer.next_request_time <= now + TRANSFER_RETRY_MAX);
        }
    }
}
