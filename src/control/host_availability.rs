//! Whether the host may compute and use the network now, and why not (BOINC's
//! suspension for batteries, user activity, time of day, missing input, an exclusive
//! app, other programs' CPU use, and for the network its own time of day; seed 000's
//! "active" fraction is the time this allows): the conditions the host's discovery
//! observes, judged by the user's preferences and options, in BOINC's order so the
//! reason named is the one BOINC would name. The run modes are the caller's: "never"
//! is the user's request (`get_cc_status` names it first).

use super::commands::HostView;
use super::suspend_reason::{SuspendReason, SuspendReasons};
use crate::model::Prefs;
use serde::{Deserialize, Serialize};

/// The local time of day, as the time-of-day windows read it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LocalTime {
    /// The day of the week, 0 (Sunday) to 6.
    pub weekday: u8,
    /// Hours since local midnight, 0 to 24.
    pub hour: f64,
}

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
    /// The local time (`None`: unknown, and the time-of-day windows are not judged).
    #[serde(default)]
    pub local_time: Option<LocalTime>,
    /// A program named by cc_config's `<exclusive_app>` runs.
    #[serde(default)]
    pub exclusive_app_running: bool,
    /// A program named by `<exclusive_gpu_app>` runs.
    #[serde(default)]
    pub exclusive_gpu_app_running: bool,
    /// The CPU other programs than the client and its apps use, percent of the host
    /// (`None`: not measured).
    #[serde(default)]
    pub other_cpu_percent: Option<f64>,
}

impl HostConditions {
    /// A server: no user, mains power, connected.
    pub const SERVER: HostConditions = HostConditions {
        user_idle_seconds: None,
        on_batteries: false,
        connected: true,
        local_time: None,
        exclusive_app_running: false,
        exclusive_gpu_app_running: false,
        other_cpu_percent: None,
    };

    /// Whether the user counts as idle under `prefs`.
    pub fn user_idle(&self, prefs: &Prefs) -> bool {
        self.user_idle_seconds.is_none_or(|idle| idle >= prefs.idle_time_to_run * 60.0)
    }
}

/// What the client may do under `conditions` and `prefs`, and why not (see the module
/// documentation): computing stops on batteries unless allowed, while the user is
/// active unless allowed, outside the computing window, after
/// `suspend_if_no_recent_input` minutes without input, while an exclusive app runs,
/// and while other programs use more CPU than `suspend_cpu_usage`; GPU computing stops
/// too while the user is active unless that is allowed separately (BOINC's default is
/// not) and while an exclusive GPU app runs; the network stops outside its window,
/// while the user is active if computing stops then, and while an exclusive app runs.
pub fn host_view(conditions: &HostConditions, prefs: &Prefs) -> HostView {
    let reasons = SuspendReasons {
        cpu: cpu_reason(conditions, prefs),
        gpu: gpu_reason(conditions, prefs),
        network: network_reason(conditions, prefs),
    };
    HostView {
        on: true,
        connected: conditions.connected && reasons.network.is_none(),
        active: reasons.cpu.is_none(),
        gpu_active: reasons.cpu.is_none() && reasons.gpu.is_none(),
        suspend: reasons,
        user_active: !conditions.user_idle(prefs),
    }
}

fn cpu_reason(conditions: &HostConditions, prefs: &Prefs) -> Option<SuspendReason> {
    let other = &prefs.reported;
    if conditions.on_batteries && !prefs.run_on_batteries {
        return Some(SuspendReason::Batteries);
    }
    if !prefs.run_if_user_active && !conditions.user_idle(prefs) {
        return Some(SuspendReason::UserActive);
    }
    if let Some(time) = conditions.local_time
        && other.computing_window(time.weekday).excludes(time.hour)
    {
        return Some(SuspendReason::TimeOfDay);
    }
    if other.suspend_if_no_recent_input > 0.0
        && conditions
            .user_idle_seconds
            .is_some_and(|idle| idle > other.suspend_if_no_recent_input * 60.0)
    {
        return Some(SuspendReason::NoRecentInput);
    }
    if conditions.exclusive_app_running {
        return Some(SuspendReason::ExclusiveAppRunning);
    }
    if other.suspend_cpu_usage > 0.0
        && conditions.other_cpu_percent.is_some_and(|used| used > other.suspend_cpu_usage)
    {
        return Some(SuspendReason::CpuUsage);
    }
    None
}

fn gpu_reason(conditions: &HostConditions, prefs: &Prefs) -> Option<SuspendReason> {
    if !prefs.run_gpu_if_user_active && !conditions.user_idle(prefs) {
        return Some(SuspendReason::UserActive);
    }
    conditions.exclusive_gpu_app_running.then_some(SuspendReason::ExclusiveAppRunning)
}

fn network_reason(conditions: &HostConditions, prefs: &Prefs) -> Option<SuspendReason> {
    if let Some(time) = conditions.local_time
        && prefs.reported.network_window(time.weekday).excludes(time.hour)
    {
        return Some(SuspendReason::TimeOfDay);
    }
    // BOINC 7.20.5 keeps off the network while the user is active, when it may not
    // compute then either (measured beside it: "computer is in use" for both).
    if !prefs.run_if_user_active && !conditions.user_idle(prefs) {
        return Some(SuspendReason::UserActive);
    }
    // BOINC 7.20.5 keeps off the network too while an exclusive app runs.
    conditions.exclusive_app_running.then_some(SuspendReason::ExclusiveAppRunning)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(idle: Option<f64>, on_batteries: bool) -> HostConditions {
        HostConditions { user_idle_seconds: idle, on_batteries, ..HostConditions::SERVER }
    }

    #[test]
    fn defaults_compute_always_and_use_the_gpu_only_when_idle() {
        let prefs = Prefs::default();
        let no_user = HostView { user_active: false, ..HostView::UP };
        assert_eq!(host_view(&HostConditions::SERVER, &prefs), no_user, "a server has no user");
        let busy = host_view(&at(Some(10.0), false), &prefs);
        assert!(busy.active && !busy.gpu_active);
        let idle = host_view(&at(Some(180.0), false), &prefs);
        assert!(idle.active && idle.gpu_active, "three minutes without input is idle");
        assert!(busy.user_active && !idle.user_active, "the memory limit follows the user");
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

    fn at_hour(weekday: u8, hour: f64) -> HostConditions {
        HostConditions { local_time: Some(LocalTime { weekday, hour }), ..HostConditions::SERVER }
    }

    #[test]
    fn each_condition_names_boincs_reason() {
        let prefs = Prefs { run_if_user_active: false, ..Prefs::default() };
        let view = host_view(&at(Some(10.0), true), &prefs);
        assert_eq!(view.suspend.cpu, Some(SuspendReason::Batteries), "batteries come first");
        let view = host_view(&at(Some(10.0), false), &prefs);
        assert_eq!(view.suspend.cpu, Some(SuspendReason::UserActive));
        assert!(!view.active && !view.gpu_active);
        // As BOINC 7.20.5 (measured beside it): the network waits for the user too.
        assert_eq!(view.suspend.network, Some(SuspendReason::UserActive));
        assert!(!view.connected);
        let busy_gpu = host_view(&at(Some(10.0), false), &Prefs::default());
        assert_eq!(busy_gpu.suspend.network, None, "computing allowed: the network too");
        assert_eq!(
            (busy_gpu.suspend.cpu, busy_gpu.suspend.gpu),
            (None, Some(SuspendReason::UserActive))
        );
        let mut prefs = Prefs::default();
        prefs.reported.suspend_if_no_recent_input = 5.0;
        assert_eq!(
            host_view(&at(Some(301.0), false), &prefs).suspend.cpu,
            Some(SuspendReason::NoRecentInput)
        );
        assert_eq!(host_view(&at(Some(299.0), false), &prefs).suspend.cpu, None);
        assert_eq!(host_view(&at(None, false), &prefs).suspend.cpu, None, "no input device");
        let exclusive = HostConditions { exclusive_app_running: true, ..HostConditions::SERVER };
        let view = host_view(&exclusive, &Prefs::default());
        assert_eq!(view.suspend.cpu, Some(SuspendReason::ExclusiveAppRunning));
        // As BOINC 7.20.5 (measured beside it): the network waits for it too.
        assert_eq!(view.suspend.network, Some(SuspendReason::ExclusiveAppRunning));
        assert!(!view.connected);
        let gpu_app = HostConditions { exclusive_gpu_app_running: true, ..HostConditions::SERVER };
        let view = host_view(&gpu_app, &Prefs::default());
        assert!(view.active && !view.gpu_active);
        let mut prefs = Prefs::default();
        prefs.reported.suspend_cpu_usage = 25.0;
        let busy = HostConditions { other_cpu_percent: Some(40.0), ..HostConditions::SERVER };
        assert_eq!(host_view(&busy, &prefs).suspend.cpu, Some(SuspendReason::CpuUsage));
        prefs.reported.suspend_cpu_usage = 0.0;
        assert_eq!(host_view(&busy, &prefs).suspend.cpu, None, "0: never");
    }

    #[test]
    fn time_of_day_windows_with_a_days_own() {
        let mut prefs = Prefs::default();
        prefs.reported.start_hour = 0.0;
        prefs.reported.end_hour = 1.0;
        prefs.reported.net_start_hour = 22.0;
        prefs.reported.net_end_hour = 6.0;
        // Monday 22:13: outside computing's 00-01, inside the network's night window.
        let view = host_view(&at_hour(1, 22.2), &prefs);
        assert_eq!(view.suspend.cpu, Some(SuspendReason::TimeOfDay));
        assert!(!view.active && view.connected);
        let view = host_view(&at_hour(1, 0.5), &prefs);
        assert!(view.active && view.connected);
        let view = host_view(&at_hour(1, 12.0), &prefs);
        assert!(!view.active && !view.connected);
        assert_eq!(view.suspend.network, Some(SuspendReason::TimeOfDay));
        // Sunday has its own computing window, all day; its network window is the daily one.
        prefs.reported.day_prefs.push(crate::model::DayPrefs {
            day_of_week: 0,
            computing: Some(crate::model::TimeWindow { start_hour: 0.0, end_hour: 24.0 }),
            network: None,
        });
        let sunday = host_view(&at_hour(0, 22.2), &prefs);
        assert!(sunday.active && sunday.connected);
        assert!(!host_view(&at_hour(0, 12.0), &prefs).connected);
        // No clock: no window is judged.
        assert!(host_view(&HostConditions::SERVER, &prefs).active);
    }

    #[test]
    fn windows_as_boinc_reads_them() {
        let w = |start_hour, end_hour| crate::model::TimeWindow { start_hour, end_hour };
        assert!(!w(3.0, 3.0).excludes(12.0) && !w(0.0, 24.0).excludes(23.9));
        assert!(w(24.0, 0.0).excludes(12.0));
        assert!(w(9.0, 17.0).excludes(8.99) && !w(9.0, 17.0).excludes(9.0));
        assert!(w(9.0, 17.0).excludes(17.0));
        assert!(!w(22.0, 6.0).excludes(23.0) && !w(22.0, 6.0).excludes(5.0));
        assert!(w(22.0, 6.0).excludes(12.0));
    }
}
