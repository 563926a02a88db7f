//! Per-(project, resource) work-fetch backoff (seed 003 "Per-resource-type backoff",
//! "PRSC_PROJECT_DATA: backoff timer"): when a project answers a request for a
//! resource's work with nothing, we wait before asking it for that resource again,
//! doubling the wait up to 24 hours, without holding back its other resources.

use crate::Time;
use crate::model::{Project, ProjectResource, ResourceType};
use rand::Rng;

/// The first backoff interval after an empty reply, seconds (BOINC 8.x: 10 minutes).
pub const MIN_BACKOFF_INTERVAL: f64 = 600.0;

/// The longest backoff interval, seconds (seed 003 "maximum 24 hours").
pub const MAX_BACKOFF_INTERVAL: f64 = 86_400.0;

/// Whether `project` must not be asked for `resource`'s work at `now`.
pub fn backed_off(project: &Project, resource: ResourceType, now: Time) -> bool {
    project.resources[resource].backoff_time > now
}

/// Backs the project off for one resource after a request for it brought no job: the
/// interval doubles (starting from [`MIN_BACKOFF_INTERVAL`], at most
/// [`MAX_BACKOFF_INTERVAL`]) and the actual wait is the interval × U[0.5, 1.5), so that
/// many clients backed off together do not come back together.
pub fn back_off(resource: &mut ProjectResource, now: Time, rng: &mut impl Rng) {
    let interval = if resource.backoff_interval.is_finite() && resource.backoff_interval > 0.0 {
        resource.backoff_interval * 2.0
    } else {
        MIN_BACKOFF_INTERVAL
    };
    resource.backoff_interval = interval.clamp(MIN_BACKOFF_INTERVAL, MAX_BACKOFF_INTERVAL);
    resource.backoff_time = now + resource.backoff_interval * rng.random_range(0.5..1.5);
}

/// Clears the backoff: a job of this resource arrived, so the project supplies it again.
pub fn clear_backoff(resource: &mut ProjectResource) {
    resource.backoff_interval = 0.0;
    resource.backoff_time = 0.0;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn backoff_doubles_to_a_day_then_clears() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut r = ProjectResource::default();
        let mut intervals = Vec::new();
        for _ in 0..10 {
            back_off(&mut r, 1000.0, &mut rng);
            intervals.push(r.backoff_interval);
        }
        assert_eq!(
            intervals,
            [600.0, 1200.0, 2400.0, 4800.0, 9600.0, 19200.0, 38400.0, 76800.0, 86400.0, 86400.0]
        );
        assert!(r.backoff_time >= 1000.0 + 0.5 * 86_400.0);
        assert!(r.backoff_time < 1000.0 + 1.5 * 86_400.0);

        let mut project = Project::new("p", "http://p/", 1.0);
        project.resources[ResourceType::Nvidia] = r;
        assert!(backed_off(&project, ResourceType::Nvidia, 2000.0));
        assert!(!backed_off(&project, ResourceType::Cpu, 2000.0));

        clear_backoff(&mut project.resources[ResourceType::Nvidia]);
        assert!(!backed_off(&project, ResourceType::Nvidia, 2000.0));
        back_off(&mut project.resources[ResourceType::Nvidia], 2000.0, &mut rng);
        assert_eq!(project.resources[ResourceType::Nvidia].backoff_interval, 600.0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn backoff_wait_stays_within_bounds(seed in any::<u64>(), steps in 1usize..30,
                                            now in 0.0f64..1e9) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut r = ProjectResource::default();
            for _ in 0..steps {
                back_off(&mut r, now, &mut rng);
                let wait = r.backoff_time - now;
                prop_assert!(wait >= 0.5 * MIN_BACKOFF_INTERVAL - 1e-6);
                prop_assert!(wait < 1.5 * MAX_BACKOFF_INTERVAL);
                prop_assert!(r.backoff_interval >= MIN_BACKOFF_INTERVAL);
                prop_assert!(r.backoff_interval <= MAX_BACKOFF_INTERVAL);
            }
        }
    }
}
