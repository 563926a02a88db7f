//! Temporary run modes (GUI RPC `set_run_mode`, `set_gpu_mode`, `set_network_mode` with
//! a `<duration>`): "never for an hour" sets the mode now and returns to the permanent
//! one when the hour is up, unless the user changes the mode again in between;
//! `<restore/>` returns to it at once. `get_cc_status` reports the permanent mode and
//! the seconds left.

use boinc_core::model::RunMode;
use boinc_core::protocol::gui_rpc::{ModeChange, ModeStatus};
use std::time::{Duration, Instant};

/// Which mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ModeKind {
    /// Computation.
    Task,
    /// GPU computation.
    Gpu,
    /// Network.
    Network,
}

impl ModeKind {
    fn index(self) -> usize {
        match self {
            ModeKind::Task => 0,
            ModeKind::Gpu => 1,
            ModeKind::Network => 2,
        }
    }
}

/// A temporary mode in force: the permanent mode it returns to, and when.
#[derive(Debug, Clone, Copy)]
struct Temporary {
    permanent: RunMode,
    until: Instant,
}

/// What to do about a mode request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ModePlan {
    /// Set this mode now.
    pub(crate) set: Option<RunMode>,
    /// Return to the permanent mode after this long, unless this generation of the
    /// mode has been replaced by then.
    pub(crate) restore_after: Option<(u64, Duration)>,
}

/// The temporary modes in force.
#[derive(Debug, Default)]
pub(crate) struct TemporaryModes {
    temporary: [Option<Temporary>; 3],
    generation: [u64; 3],
}

impl TemporaryModes {
    /// A request for `kind` while the client's mode is `current`.
    pub(crate) fn request(
        &mut self,
        kind: ModeKind,
        change: ModeChange,
        current: RunMode,
        now: Instant,
    ) -> ModePlan {
        let i = kind.index();
        let previous = self.temporary[i].take();
        self.generation[i] += 1;
        match change.mode {
            None => ModePlan { set: previous.map(|t| t.permanent), restore_after: None },
            Some(mode) if change.duration > 0.0 => {
                let duration =
                    Duration::try_from_secs_f64(change.duration).unwrap_or(Duration::MAX / 4);
                let permanent = previous.map_or(current, |t| t.permanent);
                let until = now.checked_add(duration).unwrap_or(now);
                self.temporary[i] = Some(Temporary { permanent, until });
                ModePlan { set: Some(mode), restore_after: Some((self.generation[i], duration)) }
            }
            Some(mode) => ModePlan { set: Some(mode), restore_after: None },
        }
    }

    /// The time of a temporary mode is up: the permanent mode to return to, if that
    /// temporary mode is still the one in force.
    pub(crate) fn expire(&mut self, kind: ModeKind, generation: u64) -> Option<RunMode> {
        let i = kind.index();
        if self.generation[i] != generation {
            return None;
        }
        self.temporary[i].take().map(|t| t.permanent)
    }

    /// The mode as `get_cc_status` reports it.
    pub(crate) fn status(&self, kind: ModeKind, current: RunMode, now: Instant) -> ModeStatus {
        match self.temporary[kind.index()] {
            Some(t) => ModeStatus {
                current,
                permanent: t.permanent,
                delay: t.until.saturating_duration_since(now).as_secs_f64(),
            },
            None => ModeStatus::permanent(current),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(mode: Option<RunMode>, duration: f64) -> ModeChange {
        ModeChange { mode, duration }
    }

    #[test]
    fn a_temporary_mode_returns_to_the_permanent_one() {
        let mut modes = TemporaryModes::default();
        let now = Instant::now();
        let plan =
            modes.request(ModeKind::Task, change(Some(RunMode::Never), 60.0), RunMode::Auto, now);
        assert_eq!(plan.set, Some(RunMode::Never));
        let (generation, after) = plan.restore_after.expect("a return");
        assert_eq!(after, Duration::from_secs(60));
        let status = modes.status(ModeKind::Task, RunMode::Never, now + Duration::from_secs(15));
        assert_eq!((status.current, status.permanent), (RunMode::Never, RunMode::Auto));
        assert!((status.delay - 45.0).abs() < 1e-6);
        assert_eq!(modes.expire(ModeKind::Task, generation), Some(RunMode::Auto));
        assert_eq!(
            modes.status(ModeKind::Task, RunMode::Auto, now),
            ModeStatus::permanent(RunMode::Auto)
        );
    }

    #[test]
    fn a_later_request_cancels_the_return() {
        let mut modes = TemporaryModes::default();
        let now = Instant::now();
        let first =
            modes.request(ModeKind::Gpu, change(Some(RunMode::Never), 60.0), RunMode::Always, now);
        let (old, _) = first.restore_after.expect("a return");
        // Another temporary mode keeps the same permanent one.
        let second =
            modes.request(ModeKind::Gpu, change(Some(RunMode::Auto), 30.0), RunMode::Never, now);
        assert_eq!(modes.expire(ModeKind::Gpu, old), None);
        let (new, _) = second.restore_after.expect("a return");
        assert_eq!(modes.expire(ModeKind::Gpu, new), Some(RunMode::Always));
        // A permanent change ends any temporary one.
        let third = modes.request(
            ModeKind::Network,
            change(Some(RunMode::Never), 10.0),
            RunMode::Auto,
            now,
        );
        modes.request(ModeKind::Network, change(Some(RunMode::Always), 0.0), RunMode::Never, now);
        assert_eq!(modes.expire(ModeKind::Network, third.restore_after.expect("a return").0), None);
    }

    #[test]
    fn restore_returns_at_once_or_does_nothing() {
        let mut modes = TemporaryModes::default();
        let now = Instant::now();
        assert_eq!(modes.request(ModeKind::Task, change(None, 0.0), RunMode::Auto, now).set, None);
        modes.request(ModeKind::Task, change(Some(RunMode::Never), 600.0), RunMode::Always, now);
        let plan = modes.request(ModeKind::Task, change(None, 0.0), RunMode::Never, now);
        assert_eq!(plan, ModePlan { set: Some(RunMode::Always), restore_after: None });
    }
}
