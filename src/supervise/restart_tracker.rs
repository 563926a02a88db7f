//! A supervisor's memory of one supervised thing (an app's process, an actor): when it
//! last started, how many times in a row it failed, and when it failed within the
//! policy's window.

use super::restart_policy::RestartPolicy;
use crate::Time;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The most failure times a restored tracker keeps (a policy gives up after far fewer).
pub const MAX_KEPT_FAILURES: usize = 64;

/// What a supervisor does after a failure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum RestartDecision {
    /// Restart at this time.
    RestartAt(Time),
    /// Too many failures within the window: stop trying.
    GiveUp,
}

/// Failures, streak and health of one supervised thing.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RestartTracker {
    /// Failures in a row since the last healthy run (the backoff exponent).
    streak: u32,
    /// Times of the failures still inside the window, oldest first (at most
    /// `max_failures + 1` are kept).
    recent: VecDeque<Time>,
    /// When the current run started, if it is running.
    running_since: Option<Time>,
}

impl RestartTracker {
    /// A thing that has not failed.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether nothing is known of the thing: no failure, not running.
    pub fn is_clear(&self) -> bool {
        self.streak == 0 && self.recent.is_empty() && self.running_since.is_none()
    }

    /// Failures in a row since the last healthy run.
    pub fn streak(&self) -> u32 {
        self.streak
    }

    /// Failures within the window as of the last failure.
    pub fn recent_failures(&self) -> usize {
        self.recent.len()
    }

    /// The times of the failures within the window as of the last failure, oldest first.
    pub fn failure_times(&self) -> impl Iterator<Item = Time> + '_ {
        self.recent.iter().copied()
    }

    /// A tracker as a state file kept it: `streak` failures in a row, `times` the
    /// failures' times (oldest first; only the newest [`MAX_KEPT_FAILURES`] are kept, a
    /// file's list being outside input). It is not running.
    pub fn restored(streak: u32, times: impl IntoIterator<Item = Time>) -> Self {
        let mut recent: VecDeque<Time> = VecDeque::new();
        for time in times {
            recent.push_back(time);
            if recent.len() > MAX_KEPT_FAILURES {
                recent.pop_front();
            }
        }
        RestartTracker { streak, recent, running_since: None }
    }

    /// The thing (re)started at `now`.
    pub fn started(&mut self, now: Time) {
        self.running_since = Some(now);
    }

    /// The thing is running fine at `now`: once it has run for the policy's healthy
    /// period, its backoff starts from the beginning again.
    pub fn running(&mut self, policy: &RestartPolicy, now: Time) {
        match self.running_since {
            Some(since) if now - since >= policy.healthy_after => self.streak = 0,
            Some(_) => {}
            None => self.running_since = Some(now),
        }
    }

    /// The thing stopped running without failing (suspended, quit, finished): the time
    /// it ran so far still counts towards its health.
    pub fn stopped(&mut self, policy: &RestartPolicy, now: Time) {
        self.running(policy, now);
        self.running_since = None;
    }

    /// The thing failed at `now`: when to restart it, or give up. The delay doubles with
    /// each failure in a row (after a healthy period it starts over), is jittered from
    /// `rng`, and more than `max_failures` failures within the window mean giving up.
    pub fn failed(
        &mut self,
        policy: &RestartPolicy,
        now: Time,
        rng: &mut impl Rng,
    ) -> RestartDecision {
        // Only a run seen to be healthy (`running`, `stopped`) resets the backoff: a
        // thing that fails at its first message after a long silence was not healthy.
        self.running_since = None;
        self.streak = self.streak.saturating_add(1);
        while self.recent.front().is_some_and(|&t| now - t >= policy.window) {
            self.recent.pop_front();
        }
        self.recent.push_back(now);
        let cap = policy.max_failures as usize + 1;
        while self.recent.len() > cap {
            self.recent.pop_front();
        }
        if self.recent.len() > policy.max_failures as usize {
            return RestartDecision::GiveUp;
        }
        RestartDecision::RestartAt(now + policy.delay(self.streak, rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    const POLICY: RestartPolicy = RestartPolicy {
        initial_delay: 10.0,
        max_delay: 80.0,
        jitter: 0.1,
        max_failures: 4,
        window: 1000.0,
        healthy_after: 100.0,
    };

    fn restart_at(decision: RestartDecision) -> Time {
        match decision {
            RestartDecision::RestartAt(t) => t,
            RestartDecision::GiveUp => panic!("gave up"),
        }
    }

    #[test]
    fn delays_double_within_jitter_then_give_up_in_the_window() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut tracker = RestartTracker::new();
        let mut now = 0.0;
        for streak in 1..=4 {
            tracker.started(now);
            let at = restart_at(tracker.failed(&POLICY, now + 1.0, &mut rng));
            let (low, high) = POLICY.delay_bounds(streak);
            assert!(at - (now + 1.0) >= low && at - (now + 1.0) < high, "streak {streak}");
            now = at;
        }
        tracker.started(now);
        assert_eq!(tracker.failed(&POLICY, now + 1.0, &mut rng), RestartDecision::GiveUp);
    }

    #[test]
    fn a_healthy_run_resets_the_backoff_but_not_the_window() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut tracker = RestartTracker::new();
        tracker.started(0.0);
        tracker.failed(&POLICY, 1.0, &mut rng);
        tracker.started(20.0);
        tracker.failed(&POLICY, 21.0, &mut rng);
        assert_eq!(tracker.streak(), 2);
        tracker.started(50.0);
        tracker.running(&POLICY, 200.0);
        let at = restart_at(tracker.failed(&POLICY, 201.0, &mut rng));
        assert_eq!(tracker.streak(), 1);
        assert!(at - 201.0 < POLICY.delay_bounds(1).1);
        assert_eq!(tracker.recent_failures(), 3);
    }

    #[test]
    fn failures_a_window_apart_never_give_up() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut tracker = RestartTracker::new();
        for i in 0..50 {
            let now = f64::from(i) * 300.0;
            tracker.started(now);
            assert!(matches!(
                tracker.failed(&POLICY, now + 1.0, &mut rng),
                RestartDecision::RestartAt(_)
            ));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Whatever the failure times, a restart is never sooner than the jittered
        /// initial delay, so a supervisor can never restart in a tight loop.
        #[test]
        fn restarts_are_never_immediate(gaps in proptest::collection::vec(0.0f64..500.0, 1..40), seed in 0u64..100) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut tracker = RestartTracker::new();
            let mut now = 0.0;
            for gap in gaps {
                tracker.started(now);
                now += gap;
                match tracker.failed(&POLICY, now, &mut rng) {
                    RestartDecision::RestartAt(at) => {
                        prop_assert!(at - now >= POLICY.initial_delay * (1.0 - POLICY.jitter));
                        now = at;
                    }
                    RestartDecision::GiveUp => {
                        prop_assert!(tracker.recent_failures() > POLICY.max_failures as usize);
                        break;
                    }
                }
            }
        }
    }

    #[test]
    fn a_restored_tracker_keeps_its_newest_failures_and_counts_on() {
        let times: Vec<Time> = (0..100).map(f64::from).collect();
        let mut tracker = RestartTracker::restored(2, times);
        assert_eq!(tracker.recent_failures(), MAX_KEPT_FAILURES);
        assert_eq!(tracker.failure_times().next(), Some(36.0));
        assert!(!tracker.is_clear() && RestartTracker::new().is_clear());
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        // Four of POLICY's window are kept as the failures go on: the fifth gives up.
        let mut tracker2 = RestartTracker::restored(3, [100.0, 101.0, 102.0]);
        assert!(matches!(tracker2.failed(&POLICY, 103.0, &mut rng), RestartDecision::RestartAt(_)));
        assert_eq!(tracker2.streak(), 4);
        assert_eq!(tracker2.failed(&POLICY, 104.0, &mut rng), RestartDecision::GiveUp);
        tracker.started(0.0);
        assert!(!tracker.is_clear());
    }
}
