//! How long a supervisor waits before a restart, and when it gives up: a doubling delay
//! with jitter and a cap, a limit on failures within a time window, and a reset once the
//! supervised thing has run healthily for a while.

use rand::Rng;
use serde::{Deserialize, Serialize};

/// A restart policy. All durations are seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RestartPolicy {
    /// Wait before the first restart after a healthy run.
    pub initial_delay: f64,
    /// The wait doubles with each failure in a row, up to this.
    pub max_delay: f64,
    /// Each wait is multiplied by a factor drawn uniformly from `[1 - jitter, 1 + jitter)`,
    /// so that many things that failed together do not restart together.
    pub jitter: f64,
    /// More failures than this within [`RestartPolicy::window`]: give up.
    pub max_failures: u32,
    /// The window failures are counted in.
    pub window: f64,
    /// A run this long without a failure counts as healthy: the next failure starts the
    /// backoff from [`RestartPolicy::initial_delay`] again.
    pub healthy_after: f64,
}

impl RestartPolicy {
    /// Apps: restart after 10 s doubling to 5 minutes (±25 %); more than 8 crashes
    /// within a day make the job a computation error; 10 minutes of running without a
    /// crash resets the backoff. Nine starts at most per day, never a tight loop.
    pub const APP: RestartPolicy = RestartPolicy {
        initial_delay: 10.0,
        max_delay: 300.0,
        jitter: 0.25,
        max_failures: 8,
        window: 86_400.0,
        healthy_after: 600.0,
    };

    /// Actors: rebuilt after a second doubling to a minute (±25 %); more than 5 failures
    /// within 10 minutes mean the actor cannot work with what it is given, and the thing
    /// it stands for (a project, a task) is set aside; a minute without failing resets.
    pub const ACTOR: RestartPolicy = RestartPolicy {
        initial_delay: 1.0,
        max_delay: 60.0,
        jitter: 0.25,
        max_failures: 5,
        window: 600.0,
        healthy_after: 60.0,
    };

    /// The delay before the restart after the `streak`-th failure in a row (1 for the
    /// first), without jitter.
    pub fn base_delay(&self, streak: u32) -> f64 {
        let exponent = streak.saturating_sub(1).min(60);
        let delay = self.initial_delay.max(0.0) * 2f64.powi(exponent as i32);
        delay.min(self.max_delay.max(0.0))
    }

    /// The bounds the jittered delay after the `streak`-th failure lies within.
    pub fn delay_bounds(&self, streak: u32) -> (f64, f64) {
        let base = self.base_delay(streak);
        let jitter = self.jitter.clamp(0.0, 1.0);
        (base * (1.0 - jitter), base * (1.0 + jitter))
    }

    /// The jittered delay after the `streak`-th failure in a row.
    pub fn delay(&self, streak: u32, rng: &mut impl Rng) -> f64 {
        let (low, high) = self.delay_bounds(streak);
        if high > low { rng.random_range(low..high) } else { low }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn base_delays_double_up_to_the_cap() {
        let p = RestartPolicy::APP;
        let delays: Vec<f64> = (1..=7).map(|n| p.base_delay(n)).collect();
        assert_eq!(delays, [10.0, 20.0, 40.0, 80.0, 160.0, 300.0, 300.0]);
        assert_eq!(p.base_delay(u32::MAX), 300.0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        #[test]
        fn jittered_delays_stay_within_their_bounds(streak in 1u32..100, seed in 0u64..1000) {
            let p = RestartPolicy::ACTOR;
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let (low, high) = p.delay_bounds(streak);
            let delay = p.delay(streak, &mut rng);
            prop_assert!(low <= delay && delay < high.max(low + f64::EPSILON));
            prop_assert!(delay <= p.max_delay * (1.0 + p.jitter));
        }
    }
}
