//! The CPU usage limit (BOINC's `cpu_usage_limit` preference, "use at most N % of CPU
//! time"): the running apps are stopped and continued in turns, a period of about a
//! second split into a run of `limit` percent and a stop of the rest, as BOINC's
//! throttle does. This is the policy only, a small state machine handed the time; the
//! host service sends the signals.

use crate::Time;

/// One turn of running and stopping, seconds.
pub const THROTTLE_PERIOD: f64 = 1.0;
/// The smallest limit honoured, percent: below it the apps would hardly run between
/// the signals, and the stop alone would be noise.
pub const MIN_CPU_USAGE_LIMIT: f64 = 1.0;
/// How soon an unthrottled host looks at the limit again, seconds.
const IDLE_RECHECK: f64 = 0.5;

/// What to do to the running apps now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThrottleAction {
    /// Stop them (their run of the period is over).
    Stop,
    /// Let them run again.
    Continue,
}

/// The outcome of one [`CpuThrottle::step`]: an action, if one is due, and when to step
/// again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThrottleStep {
    /// The action due now, if any.
    pub action: Option<ThrottleAction>,
    /// When the next step is due (the caller may step sooner: a changed limit counts at
    /// once).
    pub next: Time,
}

/// Where the throttle stands: running or stopped, and until when.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CpuThrottle {
    stopped: bool,
    /// When the current run or stop began.
    since: Time,
}

/// The share of the period the apps run under `limit_percent`, or `None` when they are
/// not throttled: 100 % and above, and 0 or no number at all (BOINC ignores a limit of
/// 0, which the web form never sends, rather than never computing).
pub fn run_fraction(limit_percent: f64) -> Option<f64> {
    if !limit_percent.is_finite() || limit_percent <= 0.0 || limit_percent >= 100.0 {
        return None;
    }
    Some(limit_percent.max(MIN_CPU_USAGE_LIMIT) / 100.0)
}

impl CpuThrottle {
    /// Whether the apps are stopped by the throttle now.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The throttle at `now` under `limit_percent`: a stop when the run of the period
    /// is over, a continue when the stop is over, and a continue at once when the
    /// limit no longer throttles while the apps are stopped.
    pub fn step(&mut self, now: Time, limit_percent: f64) -> ThrottleStep {
        let Some(fraction) = run_fraction(limit_percent) else {
            let action = self.stopped.then_some(ThrottleAction::Continue);
            *self = CpuThrottle { stopped: false, since: now };
            return ThrottleStep { action, next: now + IDLE_RECHECK };
        };
        let run = THROTTLE_PERIOD * fraction;
        let stop = THROTTLE_PERIOD - run;
        // Measured from the turn's start, so a changed limit changes the turn under way.
        let until = self.since + if self.stopped { stop } else { run };
        if now < until {
            return ThrottleStep { action: None, next: until };
        }
        let (stopped, length, action) = if self.stopped {
            (false, run, ThrottleAction::Continue)
        } else {
            (true, stop, ThrottleAction::Stop)
        };
        *self = CpuThrottle { stopped, since: now };
        ThrottleStep { action: Some(action), next: now + length }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The share of `seconds` the apps run under `limit`, stepping as the service does
    /// (at each step's `next`, late by `lag`).
    fn run_share(limit: f64, seconds: f64, lag: f64) -> f64 {
        let mut throttle = CpuThrottle::default();
        let (mut now, mut running, mut ran) = (0.0, true, 0.0);
        while now < seconds {
            let step = throttle.step(now, limit);
            match step.action {
                Some(ThrottleAction::Stop) => running = false,
                Some(ThrottleAction::Continue) => running = true,
                None => {}
            }
            let next = (step.next + lag).min(seconds).max(now + 1e-3);
            if running {
                ran += next - now;
            }
            now = next;
        }
        ran / seconds
    }

    #[test]
    fn the_apps_run_the_limits_share_of_each_period() {
        for limit in [10.0, 30.0, 50.0, 75.0, 99.0] {
            let share = run_share(limit, 120.0, 0.0);
            assert!((share - limit / 100.0).abs() < 0.01, "{limit} %: {share}");
        }
        // A late timer (a busy host) stretches both halves alike.
        let share = run_share(30.0, 120.0, 0.02);
        assert!((0.27..0.36).contains(&share), "{share}");
        assert_eq!(run_share(100.0, 60.0, 0.0), 1.0);
    }

    #[test]
    fn no_limit_never_stops_and_a_lifted_one_continues_at_once() {
        let mut throttle = CpuThrottle::default();
        for limit in [100.0, 0.0, f64::NAN, 250.0] {
            assert_eq!(throttle.step(5.0, limit).action, None, "{limit}");
        }
        assert_eq!(throttle.step(10.0, 30.0).action, Some(ThrottleAction::Stop), "run over");
        assert!(throttle.stopped());
        let lifted = throttle.step(10.1, 100.0);
        assert_eq!(lifted.action, Some(ThrottleAction::Continue));
        assert!(!throttle.stopped() && lifted.next > 10.1);
    }

    #[test]
    fn a_period_is_a_run_then_a_stop() {
        let mut throttle = CpuThrottle { stopped: false, since: -0.25 };
        let stop = throttle.step(0.0, 25.0);
        assert_eq!(stop.action, Some(ThrottleAction::Stop));
        assert!((stop.next - 0.75).abs() < 1e-9, "stopped for 75 % of the period");
        assert_eq!(throttle.step(0.5, 25.0).action, None);
        let cont = throttle.step(0.75, 25.0);
        assert_eq!(cont.action, Some(ThrottleAction::Continue));
        assert!((cont.next - 1.0).abs() < 1e-9, "runs for 25 %");
        // A lower limit shortens the run under way.
        assert_eq!(throttle.step(0.8, 25.0).action, None);
        let lowered = throttle.step(0.8, 1.0);
        assert_eq!(lowered.action, Some(ThrottleAction::Stop));
        assert_eq!(run_fraction(0.2), Some(0.01), "the floor");
    }
}
