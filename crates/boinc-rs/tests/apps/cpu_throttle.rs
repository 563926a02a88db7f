//! The CPU usage limit on a real app (issue "A volunteer's controls", CPU usage limit):
//! the live throttle stops and continues the example app so that its CPU time over wall
//! time follows the limit, a lifted limit lets it run whole, and a dropped throttle
//! leaves nothing stopped. The machine the tests run on is shared, so the app's share
//! at full speed is measured beside the throttled one and the bands allow for load:
//! the limit can only lower what the app gets, never raise it.

use crate::support;

use boinc_runtime::runtime::messages::TaskReport;
use boinc_service::TaskDriver;
use boinc_service::process::CpuThrottler;
use std::time::Duration;
use support::*;

const POLL: Duration = Duration::from_millis(250);
const BOUND: Duration = Duration::from_secs(400);

/// The app's CPU seconds per wall second over the next `window` seconds.
async fn cpu_fraction(driver: &TaskDriver, window: f64) -> f64 {
    let from = driver.now();
    let run = poll_until(driver, POLL, BOUND, |_| driver.now() - from >= window).await;
    assert!(matches!(run.last(), TaskReport::Running(_)), "the app stopped: {run:?}");
    let (first_at, last_at) = (run.reports[0].0, run.reports[run.reports.len() - 1].0);
    (run.cpu_at(last_at) - run.cpu_at(first_at)) / (last_at - first_at)
}

/// Runs the example app at full speed, under a 30 % limit, and at 100 %, each for
/// `window` seconds: the three CPU fractions.
fn throttled_fractions(window: f64) -> (f64, f64, f64) {
    let scratch = Scratch::new();
    let host = scratch.host(|_| {});
    let spec = example_spec(&scratch, 0, "throttled", true, &["--seconds", "100000"]);
    let mut fractions = (0.0, 0.0, 0.0);
    live(async {
        let driver = driver(&host, &spec, QUICK_RESTARTS);
        driver.start(&spec).await.expect("started");
        poll_until(
            &driver,
            POLL,
            BOUND,
            |r| matches!(r, TaskReport::Running(s) if s.current_cpu_time > 0.3),
        )
        .await;
        let full = cpu_fraction(&driver, window).await;
        let throttler = CpuThrottler::start(&host, 30.0).expect("the throttle thread");
        let limited = cpu_fraction(&driver, window).await;
        throttler.set_limit(100.0);
        let lifted = cpu_fraction(&driver, window).await;
        // Dropped while the app is stopped: it is continued.
        throttler.set_limit(5.0);
        tokio::time::sleep(Duration::from_millis(300)).await;
        drop(throttler);
        let after = cpu_fraction(&driver, 2.0).await;
        assert!(after > 0.2 * full, "still stopped after the throttle ended: {after}");
        driver.quit().await.expect("asked to quit");
        fractions = (full, limited, lifted);
    });
    eprintln!(
        "CPU fraction over {window} s: unthrottled {:.3}, limit 30 % {:.3}, limit 100 % {:.3}",
        fractions.0, fractions.1, fractions.2
    );
    fractions
}

#[test]
fn a_cpu_usage_limit_throttles_the_app() {
    let (full, limited, lifted) = throttled_fractions(10.0);
    assert!(full > 0.2, "the app hardly ran at all ({full}): the machine is overloaded");
    assert!(limited < 0.4, "30 % limit: {limited}");
    assert!(limited > 0.3 * full * 0.5, "30 % limit: {limited} against {full} unthrottled");
    assert!(lifted > 0.6 * full && lifted > limited + 0.1, "100 %: {lifted} against {full}");
}

/// The acceptance's figures: two minutes each (on an otherwise idle machine, 0.25 to
/// 0.35 at 30 %, above 0.9 at 100 %).
#[test]
#[ignore = "four minutes and more: the acceptance measurement, run by hand"]
fn a_cpu_usage_limit_over_two_minutes() {
    let (full, limited, lifted) = throttled_fractions(120.0);
    assert!((0.25..=0.35).contains(&limited), "30 %: {limited} ({full} unthrottled)");
    assert!(lifted > 0.9, "100 %: {lifted}");
}
