//! User activity a desktop really reports (issue "A volunteer's controls", user
//! activity): under a virtual X server (Xvfb), synthetic input (xdotool) makes the
//! live host discovery see the user through the X screensaver's idle time: with "use
//! the GPU while the computer is in use" off, GPU work is suspended within the poll
//! period, with BOINC's "user active" reason, and resumes once the user has been idle
//! for `idle_time_to_run`. Only the X source is watched here, so a terminal in use on
//! the test machine cannot make the user look busy.

use crate::support;

use boinc_core::control::SuspendReason;
use boinc_core::model::Prefs;
use boinc_runtime::effects::{HostDiscovery, SystemClock};
use boinc_service::host_discovery::{DiscoverySettings, LiveHostDiscovery, UserActivitySources};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::wait::{poll_for, wait_for, wait_until};
use support::xvfb::Xvfb;

/// The client looks at the host's conditions once a second: activity counts within
/// this (with room for a loaded machine).
const POLL_PERIOD: Duration = Duration::from_secs(3);
/// `idle_time_to_run`, minutes: six seconds.
const IDLE_MINUTES: f64 = 0.1;

#[test]
#[cfg_attr(
    not(peer_xvfb),
    ignore = "Xvfb, xdotool or libXss is missing: apt-get install xvfb xdotool libxss1"
)]
fn synthetic_input_suspends_gpu_work_until_the_user_is_idle() {
    let xvfb = Xvfb::start();
    let dir = tempfile::tempdir().expect("a data directory");
    let prefs = Prefs {
        run_gpu_if_user_active: false,
        idle_time_to_run: IDLE_MINUTES,
        ..support::host_prefs::prefs_without_cpu_busy_check()
    };
    let settings = DiscoverySettings { prefs, ..Default::default() };
    let sources = UserActivitySources {
        devices: false,
        x_displays: Some(vec![xvfb.display.clone()]),
        interrupts: None,
        logind: false,
    };
    let discovery = LiveHostDiscovery::new(dir.path(), Arc::new(SystemClock), settings)
        .with_user_activity_sources(sources);
    // A new server has had no input: idle since it started.
    let idle_wait = Duration::from_secs_f64(IDLE_MINUTES * 60.0) + POLL_PERIOD * 2;
    wait_until("the GPU allowed while nobody uses the display", idle_wait, || {
        discovery.availability().gpu_active
    });

    xvfb.move_pointer(100, 100);
    xvfb.move_pointer(200, 150);
    let moved = Instant::now();
    let view = wait_for("GPU work suspended for the user", POLL_PERIOD, || {
        Some(discovery.availability()).filter(|v| !v.gpu_active)
    });
    let noticed = moved.elapsed();
    assert_eq!(view.suspend.gpu, Some(SuspendReason::UserActive));
    assert!(view.active, "CPU work goes on: run_if_user_active is on");

    let resumed = poll_for(idle_wait + POLL_PERIOD, || {
        discovery.availability().gpu_active.then(|| moved.elapsed())
    })
    .expect("GPU work resumes after idle_time_to_run");
    assert!(resumed.as_secs_f64() >= IDLE_MINUTES * 60.0 - 0.5, "resumed after {resumed:?}");
    eprintln!(
        "X11 activity: GPU suspended {:.2} s after the input, resumed {:.2} s after it \
         (idle_time_to_run {} s)",
        noticed.as_secs_f64(),
        resumed.as_secs_f64(),
        IDLE_MINUTES * 60.0
    );
}
