//! Seed 003's shortfall accounting over the work-buffer horizon, per resource and per
//! project, and the first moment a resource is not saturated.

use super::simulation::{EPSILON, Simulation, at_most};

impl Simulation {
    /// Seed 003 `accumulate_shortfall` for a resource: closes the interval since its usage
    /// last changed, then records the new usage (and the first moment it is not saturated).
    pub(super) fn set_resource_used(&mut self, r: usize, used: f64, t: f64) {
        let horizon = self.horizon;
        let resource = &mut self.resources[r];
        // The horizon and the instances are never NaN, and the spans and idle counts are
        // used only when positive (see `at_most`).
        let span = at_most(t, horizon) - at_most(resource.used_since, horizon);
        if span > 0.0 {
            // Allocations are sums of shares: an "idle" residue at rounding level is not
            // an idle instance (it would ask a server for work every poll).
            let idle = resource.instances - at_most(resource.used, resource.instances);
            if idle > EPSILON {
                resource.shortfall += span * idle;
            }
        }
        resource.used = used;
        resource.used_since = t;
        if resource.saturated.is_none() && used < resource.instances - EPSILON {
            resource.saturated = Some(t);
        }
    }

    /// Seed 003 `PRSC_PROJECT_DATA::accumulate_shortfall` for one project and resource.
    pub(super) fn set_project_used(&mut self, q: usize, used: f64, t: f64) {
        let horizon = self.horizon;
        let queue = &mut self.queues[q];
        let span = at_most(t, horizon) - at_most(queue.used_since, horizon);
        if span > 0.0 && queue.share - queue.used > EPSILON {
            queue.shortfall += span * (queue.share - queue.used);
        }
        queue.used = used;
        queue.used_since = t;
    }
}
