//! The scheduler never waits on the network (issue "A runtime that can carry real
//! effects", acceptance): while one project's scheduler RPC takes ten minutes to be
//! answered, in virtual time, tasks start when they are due, a user action takes effect
//! at once, and another project's RPC goes ahead.

use crate::scenarios;

use boinc_core::model::ProjectId;
use boinc_runtime::sim::effects::Faults;
use boinc_runtime::sim::paused_system;
use boinc_runtime::{Client, ClientEvent, UserAction};
use std::time::Duration;

/// alpha's server answers every RPC ten minutes after it was sent.
const SLOW: f64 = 600.0;

#[test]
fn a_slow_server_holds_up_nothing_else() {
    let system = paused_system().expect("runtime");
    system.block_on(async {
        let faults = Faults { slow_servers: vec![(0, SLOW)], ..Faults::default() };
        let handle = Client::builder()
            .state(scenarios::load_scenario("s2"))
            .config(scenarios::sim_config("s2", 1.0, false, false))
            .faults(faults)
            .spawn()
            .expect("the client starts");
        let mut events = handle.events_with_capacity(1 << 16);

        // Wait (in virtual time) for alpha's first RPC to be under way: a bounded poll on
        // the paused clock, which a wall-clock wait could not move.
        let mut sent_at = None;
        for _ in 0..3600 {
            let snapshot = handle.snapshot().await.expect("snapshot");
            if snapshot.in_flight.contains(&ProjectId(0)) {
                sent_at = Some(snapshot.time);
                break;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        let sent_at = sent_at.expect("alpha was asked for work within the first hour");

        // Two minutes into the RPC the client works on: another project was asked and
        // its jobs started the moment they arrived. (Virtual time passes on purpose:
        // what happens meanwhile is the test.)
        tokio::time::sleep(Duration::from_secs(120)).await;
        let snapshot = handle.snapshot().await.expect("snapshot");
        assert!(snapshot.in_flight.contains(&ProjectId(0)), "alpha's RPC is still under way");
        let running_beta =
            snapshot.running.iter().filter(|&&j| snapshot.state.job(j).project == ProjectId(1));
        assert!(running_beta.count() > 0, "beta's jobs run while alpha's RPC is under way");

        // A user action takes effect at once, not when alpha answers.
        handle.act(UserAction::SuspendProject("beta".into())).await.expect("beta is known");
        let after = handle.snapshot().await.expect("snapshot");
        assert_eq!(after.time, snapshot.time, "the action was taken in the same instant");
        assert!(
            after.running.iter().all(|&j| after.state.job(j).project != ProjectId(1)),
            "beta's tasks stopped at once"
        );
        assert!(after.in_flight.contains(&ProjectId(0)), "alpha's RPC is still under way");

        // Virtual time passes on purpose, until alpha's slow server has answered.
        tokio::time::sleep(Duration::from_secs_f64(SLOW)).await;
        handle.shutdown();
        handle.finished().await.expect("the run ends");

        let mut seen = Vec::new();
        while let Ok(event) = events.try_recv() {
            seen.push(event);
        }
        let during = |t: f64| sent_at < t && t < sent_at + SLOW;
        let other_rpc = seen.iter().find_map(|e| match e {
            ClientEvent::RpcDone { time, project, success: true, jobs, .. }
                if project != "alpha" && during(*time) =>
            {
                Some((*time, *jobs))
            }
            _ => None,
        });
        let (beta_time, beta_jobs) = other_rpc.unwrap_or_else(|| {
            panic!(
                "another project's RPC went ahead; sent at {sent_at}: {:#?}",
                &seen[..seen.len().min(40)]
            )
        });
        assert!(beta_jobs > 0, "it brought jobs");
        assert!(
            seen.iter()
                .any(|e| matches!(e, ClientEvent::TaskStarted { time, .. } if *time == beta_time)),
            "a job that came while alpha's RPC was under way started the moment it came"
        );
        assert!(
            seen.iter().any(|e| matches!(e, ClientEvent::TaskPreempted { time, project, .. }
                if project == "beta" && *time == snapshot.time)),
            "the suspension preempted beta's tasks in the instant of the action"
        );
        let alpha_done = seen.iter().find_map(|e| match e {
            ClientEvent::RpcDone { time, project, .. } if project == "alpha" => Some(*time),
            _ => None,
        });
        let alpha_done = alpha_done.expect("alpha answered in the end");
        assert!(alpha_done >= sent_at + SLOW - 60.0, "alpha's answer came when it came");
    });
}
