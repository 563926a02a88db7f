//! The CPU usage limit, live (docs/service.md, "CPU usage limit"): a thread that stops
//! and continues the computing apps in the turns the core's
//! [`boinc_core::control::CpuThrottle`] decides, about a second each, so that the apps
//! use the preference's share of the CPU time.

use super::host::LiveProcessHost;
use boinc_core::control::{CpuThrottle, ThrottleAction};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

/// The longest the thread sleeps between looks at the limit: a changed preference
/// counts within this.
const LONGEST_WAIT: Duration = Duration::from_millis(500);

/// What the owner and the thread share.
#[derive(Debug, Default)]
struct Shared {
    /// The limit, percent, as f64 bits.
    limit_bits: AtomicU64,
    ended: AtomicBool,
    /// Wakes the thread for a new limit or the end.
    wake: Condvar,
    lock: Mutex<()>,
}

impl Shared {
    fn limit(&self) -> f64 {
        f64::from_bits(self.limit_bits.load(Ordering::Relaxed))
    }

    fn nudge(&self) {
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.wake.notify_all();
    }
}

/// Throttles a [`LiveProcessHost`]'s apps to a CPU usage limit until dropped (the apps
/// it stopped are then continued).
#[derive(Debug)]
pub struct CpuThrottler {
    shared: Arc<Shared>,
}

impl CpuThrottler {
    /// Starts throttling `host`'s apps to `limit_percent` (100 or 0: not at all). The
    /// thread ends when the throttler is dropped or the host is gone.
    pub fn start(host: &Arc<LiveProcessHost>, limit_percent: f64) -> std::io::Result<Self> {
        let shared = Arc::new(Shared::default());
        shared.limit_bits.store(limit_percent.to_bits(), Ordering::Relaxed);
        let host = Arc::downgrade(host);
        let theirs = shared.clone();
        std::thread::Builder::new()
            .name("cpu-throttle".into())
            .spawn(move || throttle_loop(&host, &theirs))?;
        Ok(CpuThrottler { shared })
    }

    /// Throttles to `limit_percent` from now on.
    pub fn set_limit(&self, limit_percent: f64) {
        let old = self.shared.limit_bits.swap(limit_percent.to_bits(), Ordering::Relaxed);
        if old != limit_percent.to_bits() {
            tracing::info!(limit_percent, "CPU usage limit");
            self.shared.nudge();
        }
    }
}

impl Drop for CpuThrottler {
    fn drop(&mut self) {
        self.shared.ended.store(true, Ordering::Relaxed);
        self.shared.nudge();
    }
}

fn throttle_loop(host: &Weak<LiveProcessHost>, shared: &Shared) {
    let epoch = Instant::now();
    let mut throttle = CpuThrottle::default();
    while !shared.ended.load(Ordering::Relaxed) {
        let now = epoch.elapsed().as_secs_f64();
        let step = throttle.step(now, shared.limit());
        if let Some(action) = step.action {
            let Some(host) = host.upgrade() else { return };
            host.throttle(action == ThrottleAction::Stop);
        }
        let wait = Duration::from_secs_f64((step.next - now).clamp(0.0, 1.0)).min(LONGEST_WAIT);
        let guard = shared.lock.lock().unwrap_or_else(PoisonError::into_inner);
        if shared.ended.load(Ordering::Relaxed) {
            break;
        }
        drop(shared.wake.wait_timeout(guard, wait).unwrap_or_else(PoisonError::into_inner));
    }
    if throttle.stopped()
        && let Some(host) = host.upgrade()
    {
        host.throttle(false);
    }
}
