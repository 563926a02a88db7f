//! Whether the host may compute now (BOINC's suspension for user activity and for
//! batteries; seed 000's "active" fraction is the time this allows): the conditions the
//! host's discovery observes, judged by the user's preferences (`run_if_user_active`,
//! `run_gpu_if_user_active`, `idle_time_to_run`, `run_on_batteries`).

use super::commands::HostView;
use crate::model::Prefs;
use serde::{Deserialize, Serialize};

/// What the host observes about its user, power and network.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HostConditions {
    /// Seconds since the user last used a keyboard, mouse or terminal; `None` where the
    /// client sees no input device (a server), which counts as a user always idle.
    pub user_idle_seconds: Option<f64>,
    /// The host runs on batteries.
    pub on_batteries: bool,
    /// The host has a route to the network.
    pub connected: bool,
}

impl HostConditions {
    /// A server: no user, mains power, connected.
    pub const SERVER: HostConditions =
        HostConditions { user_idle_seconds: None, on_batteries: false, connected: true };

    /// Whether the user counts as idle under `prefs`.
    pub fn user_idle(&self, prefs: &Prefs) -> bool {
        self.user_idle_seconds.is_none_or(|idle| idle >= prefs.idle_time_to_run * 60.0)
    }
}

/// What the client may do under `conditions` and `prefs`: computing stops on batteries
/// unless allowed, and while the user is active unless allowed; GPU computing stops too
/// while the user is active unless that is allowed separately (BOINC's default is not).
pub fn host_view(conditions: &HostConditions, prefs: &Prefs) -> HostView {
    let idle = conditions.user_idle(prefs);
    let power = prefs.run_on_batteries || !conditions.on_batteries;
    let active = power && (idle || prefs.run_if_user_active);
    let gpu_active = active && (idle || prefs.run_gpu_if_user_active);
    HostView { on: true, connected: conditions.connected, active, gpu_active }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(idle: Option<f64>, on_batteries: bool) -> HostConditions {
        HostConditions { user_idle_seconds: idle, on_batteries, connected: true }
    }

    #[test]
    fn defaults_compute_always_and_use_the_gpu_only_when_idle() {
        let prefs = Prefs::default();
        assert_eq!(host_view(&HostConditions::SERVER, &prefs), HostView::UP);
        let busy = host_view(&at(Some(10.0), false), &prefs);
        assert!(busy.active && !busy.gpu_active);
        let idle = host_view(&at(Some(180.0), false), &prefs);
        assert!(idle.active && idle.gpu_active, "three minutes without input is idle");
    }

    #[test]
    fn only_when_idle_and_on_mains_if_the_user_says_so() {
        let prefs = Prefs { run_if_user_active: false, ..Prefs::default() };
        assert!(!host_view(&at(Some(60.0), false), &prefs).active);
        assert!(host_view(&at(Some(600.0), false), &prefs).active);
        let on_batteries = host_view(&at(None, true), &Prefs::default());
        assert!(!on_batteries.active && !on_batteries.gpu_active);
        let allowed = Prefs { run_on_batteries: true, ..Prefs::default() };
        assert!(host_view(&at(None, true), &allowed).active);
        let offline = HostConditions { connected: false, ..HostConditions::SERVER };
        assert!(!host_view(&offline, &Prefs::default()).connected);
    }
}
