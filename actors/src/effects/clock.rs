//! Where the time comes from: wall time in the service, virtual time in simulation.

use boinc_core::Time;

/// A source of the current time.
pub trait Clock: Send + Sync {
    /// Seconds since the Unix epoch (or the scenario's virtual epoch).
    fn now(&self) -> Time;
}

/// The real clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Time {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    }
}
