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
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::wait::{poll_for, wait_for, wait_until};

/// The client looks at the host's conditions once a second: activity counts within
/// this (with room for a loaded machine).
const POLL_PERIOD: Duration = Duration::from_secs(3);
/// `idle_time_to_run`, minutes: six seconds.
const IDLE_MINUTES: f64 = 0.1;

/// A virtual X server on a display of its own, stopped when dropped.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    fn start() -> Xvfb {
        // A display number no other server holds (its lock file and socket are free).
        let number = (90..190)
            .find(|n| {
                !Path::new(&format!("/tmp/.X{n}-lock")).exists()
                    && !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
            })
            .expect("a free X display number");
        let display = format!(":{number}");
        let child = Command::new("Xvfb")
            .args([display.as_str(), "-ac", "-nolisten", "tcp", "-screen", "0", "640x480x24"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb starts");
        let xvfb = Xvfb { child, display };
        let socket = format!("/tmp/.X11-unix/X{number}");
        wait_until("Xvfb's socket", Duration::from_secs(20), || Path::new(&socket).exists());
        xvfb
    }

    /// Moves the pointer: input as the X server sees it.
    fn move_pointer(&self, x: u32, y: u32) {
        let status = Command::new("xdotool")
            .args(["mousemove", &x.to_string(), &y.to_string()])
            .env("DISPLAY", &self.display)
            .status()
            .expect("xdotool runs");
        assert!(status.success(), "xdotool mousemove failed");
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

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
