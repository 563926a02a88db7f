//! Restart policy for crashed apps and failed actors (DESIGN.md "Time, effects,
//! determinism": restart policy is ours, driven by the clock; "BOINC 8.x behaviour":
//! a task killed by a signal is restarted, one that exits with an error is not).
//!
//! Pure: the supervisor (a TaskActor for its app, the SchedulerActor for the actors it
//! started) counts consecutive failures and asks here how long to wait, or whether to
//! give up; success resets the count.

use serde::{Deserialize, Serialize};

/// How a supervisor restarts what it supervises.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RestartPolicy {
    /// Wait before the first restart, seconds.
    pub initial_delay: f64,
    /// The wait doubles with each consecutive failure up to this, seconds.
    pub max_delay: f64,
    /// Consecutive failures after which the supervisor gives up.
    pub max_failures: u32,
}

impl RestartPolicy {
    /// Apps: restart after 10 s doubling to an hour; a job that crashed 10 times in a
    /// row is a computation error (BOINC gives up on a task that keeps crashing too).
    pub const APP: RestartPolicy =
        RestartPolicy { initial_delay: 10.0, max_delay: 3600.0, max_failures: 10 };

    /// Actors: restart after a second doubling to a minute; an actor rebuilt from the
    /// authoritative state 5 times in a row without handling a message is broken, and
    /// the thing it stands for (a project, a task) is set aside.
    pub const ACTOR: RestartPolicy =
        RestartPolicy { initial_delay: 1.0, max_delay: 60.0, max_failures: 5 };

    /// What to do after the `failures`-th consecutive failure (1 for the first).
    pub fn after_failure(&self, failures: u32) -> RestartDecision {
        if failures == 0 {
            return RestartDecision::RestartAfter(0.0);
        }
        if failures > self.max_failures {
            return RestartDecision::GiveUp;
        }
        let exponent = (failures - 1).min(30);
        let delay = (self.initial_delay * f64::from(1u32 << exponent)).min(self.max_delay);
        RestartDecision::RestartAfter(delay.max(0.0))
    }
}

/// A supervisor's answer to a failure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum RestartDecision {
    /// Restart after this many seconds.
    RestartAfter(f64),
    /// Stop trying.
    GiveUp,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn delays_double_then_give_up() {
        let p = RestartPolicy::APP;
        assert_eq!(p.after_failure(1), RestartDecision::RestartAfter(10.0));
        assert_eq!(p.after_failure(2), RestartDecision::RestartAfter(20.0));
        assert_eq!(p.after_failure(10), RestartDecision::RestartAfter(3600.0));
        assert_eq!(p.after_failure(11), RestartDecision::GiveUp);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn backoff_is_bounded_and_monotone(n in 1u32..10_000) {
            let p = RestartPolicy { initial_delay: 3.0, max_delay: 500.0, max_failures: u32::MAX };
            let (RestartDecision::RestartAfter(a), RestartDecision::RestartAfter(b)) =
                (p.after_failure(n), p.after_failure(n + 1)) else { panic!("gave up") };
            prop_assert!((0.0..=500.0).contains(&a));
            prop_assert!(a <= b);
        }
    }
}
