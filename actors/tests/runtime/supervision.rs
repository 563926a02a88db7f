//! Supervision in virtual time (issue "A runtime that can carry real effects",
//! acceptance): for an app and for each kind of actor, the restart delays lie within
//! their jitter bounds, a healthy period resets the backoff, and too many failures
//! within the window make the supervisor give up; a single panic in any actor leaves the
//! client running with its figures within 1% of a run without it.

use crate::scenarios;

use boinc_core::model::ClientState;
use boinc_core::supervise::RestartPolicy;
use boinc_emulator::notation::{NotationOptions, scenario_from_notation};
use boinc_runtime::runtime::supervision::{ActorKind, InjectedPanic};
use boinc_runtime::sim::effects::Faults;
use boinc_runtime::sim::{SimResult, paused_system};
use boinc_runtime::{Client, ClientError, ClientEvent, RunReport};

/// The actor restart policy of these tests: a window of three days, long enough for
/// failures at the pace of any kind's messages (a resource actor hears of availability
/// changes a few times a day) and shorter than the health between the two bursts.
const ACTORS: RestartPolicy = RestartPolicy {
    initial_delay: 1.0,
    max_delay: 16.0,
    jitter: 0.25,
    max_failures: 4,
    window: 3.0 * 86_400.0,
    healthy_after: 30.0,
};

const DAY: f64 = 86_400.0;

/// Runs `name` for `days` with `faults`; every event and how the run ended.
fn run(
    name: &str,
    days: f64,
    faults: Faults,
    actors: RestartPolicy,
) -> (Vec<ClientEvent>, Result<RunReport, ClientError>) {
    run_state(scenarios::load_scenario(name), name, days, faults, actors)
}

fn run_state(
    state: ClientState,
    name: &str,
    days: f64,
    faults: Faults,
    actors: RestartPolicy,
) -> (Vec<ClientEvent>, Result<RunReport, ClientError>) {
    let system = paused_system().expect("runtime");
    system.block_on(async move {
        let handle = Client::builder()
            .state(state)
            .config(scenarios::sim_config(name, days, false, false))
            .faults(faults)
            .actor_restart_policy(actors)
            .spawn()
            .expect("the client starts");
        let mut events = handle.events_with_capacity(1 << 20);
        let outcome = handle.finished().await;
        let mut seen = Vec::new();
        while let Ok(event) = events.try_recv() {
            seen.push(event);
        }
        assert_eq!(handle.dropped_events(), 0, "the test's channel lost events");
        (seen, outcome)
    })
}

fn start_of(name: &str) -> f64 {
    boinc_core::explain::state_time(&scenarios::load_scenario(name))
}

/// Where each kind of actor is exercised: a scenario in which it gets messages, and
/// which one of its kind the panics hit.
fn setting(kind: ActorKind) -> (&'static str, Option<u32>) {
    match kind {
        ActorKind::Disk => ("disk_pressure", None),
        ActorKind::Task | ActorKind::Project => ("s2", Some(0)),
        _ => ("s2", None),
    }
}

/// The restarts and the give-up of the actor `prefix` names, in order.
fn restarts_of<'a>(events: &'a [ClientEvent], prefix: &str) -> Vec<&'a ClientEvent> {
    events
        .iter()
        .filter(|e| match e {
            ClientEvent::ActorRestarted { actor, .. } | ClientEvent::ActorGaveUp { actor, .. } => {
                actor.starts_with(prefix)
            }
            _ => false,
        })
        .collect()
}

#[test]
fn every_kind_of_actor_restarts_with_backoff_resets_and_gives_up() {
    for kind in ActorKind::ALL {
        let (name, index) = setting(kind);
        let start = start_of(name);
        // Two failures, days of health (the window passes), then failures until the
        // supervisor gives up.
        let panics = vec![
            InjectedPanic { kind, index, from: start, count: 2 },
            InjectedPanic { kind, index, from: start + 4.0 * DAY, count: ACTORS.max_failures + 1 },
        ];
        let faults = Faults { panics, ..Faults::default() };
        let (events, outcome) = run(name, 10.0, faults, ACTORS);
        let prefix = format!("{}:", kind.name());
        let restarts = restarts_of(&events, &prefix);
        let streaks: Vec<Option<u32>> = restarts
            .iter()
            .map(|e| match e {
                ClientEvent::ActorRestarted { failures, .. } => Some(*failures),
                _ => None,
            })
            .collect();
        assert_eq!(
            streaks,
            [Some(1), Some(2), Some(1), Some(2), Some(3), Some(4), None],
            "{kind:?}: the failures in a row, reset by a healthy day, then the give-up"
        );
        for event in &restarts {
            if let ClientEvent::ActorRestarted { time, failures, restart_at, .. } = event {
                let (low, high) = ACTORS.delay_bounds(*failures);
                let delay = restart_at - time;
                assert!(
                    low <= delay && delay < high,
                    "{kind:?}: restart {failures} after {delay} s, not within [{low}, {high})"
                );
            }
        }
        match kind {
            // Without these the client cannot go on: it stops, and says why.
            ActorKind::Scheduler | ActorKind::Fetch => {
                assert!(matches!(outcome, Err(ClientError::GaveUp(_))), "{kind:?}: {outcome:?}")
            }
            _ => {
                assert!(outcome.is_ok(), "{kind:?}: the client goes on: {outcome:?}");
            }
        }
        if kind == ActorKind::Task {
            let gave_up = restarts.last().map(|e| match e {
                ClientEvent::ActorGaveUp { time, .. } => *time,
                _ => f64::NAN,
            });
            assert!(
                events.iter().any(|e| matches!(e,
                    ClientEvent::TaskFinished { time, error: true, .. } if Some(*time) == gave_up)),
                "the task whose actor kept failing ends in an error"
            );
        }
    }
}

/// Jobs done and CPU used per project, the figures a panic must not move by more than
/// 1%.
fn figures(result: &SimResult) -> Vec<(String, f64, f64)> {
    result
        .figures
        .projects
        .iter()
        .map(|(name, p)| {
            (name.clone(), f64::from(p.jobs_done), p.usage.get("cpu").copied().unwrap_or(0.0))
        })
        .collect()
}

/// When in the run the panic strikes: a panic delays what its actor was doing by the
/// restart backoff, and that can move one later choice and the run's course from there
/// (a job arriving a minute later changes a preemption), so the figures are compared
/// averaged over these moments rather than at one of them.
const PANIC_MOMENTS: [f64; 3] = [0.5, 1.0, 1.5];

#[test]
fn one_panic_in_any_actor_leaves_the_figures_within_one_percent() {
    for kind in ActorKind::ALL {
        let (name, index) = setting(kind);
        let days = 4.0;
        let start = start_of(name);
        let (_, calm) = run(name, days, Faults::default(), RestartPolicy::ACTOR);
        let calm = figures(&calm.expect("calm run").simulation.expect("figures"));
        let mut rough_mean = vec![(0.0, 0.0); calm.len()];
        for moment in PANIC_MOMENTS {
            let panic = InjectedPanic { kind, index, from: start + moment * DAY, count: 1 };
            let faults = Faults { panics: vec![panic], ..Faults::default() };
            let (events, rough) = run(name, days, faults, RestartPolicy::ACTOR);
            assert!(
                events.iter().any(|e| matches!(e, ClientEvent::ActorRestarted { .. })),
                "{kind:?}: the panic at day {moment} happened and was supervised"
            );
            let rough =
                figures(&rough.expect("the client keeps running").simulation.expect("figures"));
            for (mean, (_, jobs, cpu)) in rough_mean.iter_mut().zip(&rough) {
                mean.0 += jobs / PANIC_MOMENTS.len() as f64;
                mean.1 += cpu / PANIC_MOMENTS.len() as f64;
            }
        }
        for ((project, calm_jobs, calm_cpu), (rough_jobs, rough_cpu)) in
            calm.iter().zip(&rough_mean)
        {
            assert!(
                (calm_jobs - rough_jobs).abs() <= 0.01 * calm_jobs.max(100.0),
                "{kind:?} {project}: {calm_jobs} jobs done without the panic, {rough_jobs} with it"
            );
            assert!(
                (calm_cpu - rough_cpu).abs() <= 0.01,
                "{kind:?} {project}: CPU share {calm_cpu} without the panic, {rough_cpu} with it"
            );
        }
    }
}

#[test]
fn a_crashing_app_restarts_with_backoff_resets_after_a_healthy_run_and_gives_up() {
    // One CPU, one project of 10-hour jobs: one task runs at a time, in slot 0.
    let state =
        scenario_from_notation("P1(10, 48, 1)", &NotationOptions::default()).expect("notation");
    let start = boinc_core::explain::state_time(&state);
    let policy = RestartPolicy::APP;
    // Two crashes, hours of health, then crashes until the job is given up on (a day
    // later, when the first two are out of the window).
    let crashes =
        vec![(start + 3.0 * 3600.0, 2), (start + DAY + 4.0 * 3600.0, policy.max_failures + 1)];
    let faults = Faults { app_crashes: crashes, ..Faults::default() };
    let (events, outcome) = run_state(state, "one_cpu", 3.0, faults, RestartPolicy::ACTOR);
    outcome.expect("the client keeps running");

    let restarts: Vec<(&str, f64, f64)> = events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::TaskRestarting { job, time, restart_at } => {
                Some((job.as_str(), *time, *restart_at))
            }
            _ => None,
        })
        .collect();
    assert_eq!(restarts.len() as u32, 2 + policy.max_failures, "{restarts:?}");
    // The streaks: 1, 2; then, after the healthy run, 1 to the limit.
    let streaks = [1, 2].into_iter().chain(1..=policy.max_failures);
    for ((job, time, restart_at), streak) in restarts.iter().zip(streaks) {
        let (low, high) = policy.delay_bounds(streak);
        let delay = restart_at - time;
        assert!(
            low <= delay && delay < high,
            "{job}: restart {streak} after {delay} s, not within [{low}, {high})"
        );
        assert!(delay >= policy.initial_delay * (1.0 - policy.jitter), "never a tight loop");
    }
    // One more crash in the window: the job ends in a computation error.
    let (job, _, last_restart) = restarts[restarts.len() - 1];
    assert!(
        events.iter().any(|e| matches!(e,
            ClientEvent::TaskFinished { job: j, error: true, time, .. } if j == job && *time >= last_restart)),
        "{job} was given up on, its job in error"
    );
}
