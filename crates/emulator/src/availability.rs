//! Host and project-server availability as alternating random up/down periods, the way
//! BOINC's client emulator models `<time_stats>` (`on_frac`, `connected_frac`,
//! `active_frac`, `gpu_active_frac` with their `*_lambda`) and a project's
//! `<available><frac><lambda>` (docs/design.md "Emulator"; REFERENCE.md "How BOINC's emulator
//! models the world").
//!
//! A process is up a long-run fraction `frac` of the time. Up periods have mean length
//! `lambda`; down periods have mean `lambda × (1 − frac) / frac`, so that
//! up / (up + down) = frac. Both are exponentially distributed. A process starts up.
//!
//! The event loop drives a process by asking for [`OnOffProcess::next_change`] and, when
//! virtual time reaches it, calling [`OnOffProcess::pop_change`], which applies that one
//! change and draws the length of the new period: one trace event per change, and the
//! RNG consumed in the order the changes happen.
//!
//! Each process draws from a random stream of its own ([`host_availability_rng`],
//! [`server_availability_rng`]), apart from the stream the servers make jobs from.
//! The world's ups and downs for a seed are then the same whatever the client does:
//! two policies compared on one seed meet the same outages (common random numbers),
//! and a change of policy cannot move an outage.

use super::random::exponential;
use boinc_core::Time;
use boinc_core::model::ProjectId;
use boinc_core::model::TimeStats;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The first random stream of the availability processes; far above the client's
/// per-project streams (`1 + project`) and the world's job stream (0).
pub const AVAILABILITY_STREAM_BASE: u64 = 1 << 40;

/// The random stream of the host's availability processes for the run's `seed`.
pub fn host_availability_rng(seed: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(AVAILABILITY_STREAM_BASE);
    rng
}

/// The random stream of `project`'s server availability for the run's `seed`.
pub fn server_availability_rng(seed: u64, project: ProjectId) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(AVAILABILITY_STREAM_BASE + 1 + u64::from(project.0));
    rng
}

/// Mean length of an up period, seconds, when a scenario gives no usable lambda: one day,
/// long next to a scheduling period and a work buffer, so a scenario that gives only
/// fractions sees few, long outages rather than constant flicker.
pub const DEFAULT_LAMBDA: f64 = boinc_core::model::DEFAULT_SPELL;

/// One alternating up/down process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OnOffProcess {
    up: bool,
    next_change: Time,
    mean_up: f64,
    mean_down: f64,
}

impl OnOffProcess {
    /// A process up a long-run fraction `frac` of the time with up periods of mean
    /// `lambda` seconds, starting up at `start` (draws the first up period from `rng`).
    ///
    /// `frac ≥ 1` (or not a number) is always up and `frac ≤ 0` always down: neither
    /// ever changes nor touches the RNG. A `lambda` that is not a positive finite number
    /// means [`DEFAULT_LAMBDA`].
    pub fn new(frac: f64, lambda: f64, start: Time, rng: &mut impl Rng) -> Self {
        let lambda = if lambda.is_finite() && lambda > 0.0 { lambda } else { DEFAULT_LAMBDA };
        if frac.is_nan() || frac >= 1.0 {
            return OnOffProcess::constant(true);
        }
        if frac <= 0.0 {
            return OnOffProcess::constant(false);
        }
        let mean_down = lambda * (1.0 - frac) / frac;
        let mut process =
            OnOffProcess { up: true, next_change: f64::INFINITY, mean_up: lambda, mean_down };
        process.next_change = start + process.period(true, rng);
        process
    }

    /// A process that is always up (`true`) or always down.
    pub fn constant(up: bool) -> Self {
        OnOffProcess {
            up,
            next_change: f64::INFINITY,
            mean_up: f64::INFINITY,
            mean_down: f64::INFINITY,
        }
    }

    /// Length of a new period in state `up`; strictly positive so change times strictly
    /// increase.
    fn period(&self, up: bool, rng: &mut impl Rng) -> f64 {
        let mean = if up { self.mean_up } else { self.mean_down };
        // A change must move time forward: a zero draw would give two changes at once.
        exponential(rng, mean).max(mean * 1e-9).max(1e-6)
    }

    /// Whether the process is up now.
    pub fn is_up(&self) -> bool {
        self.up
    }

    /// When the process next changes state (`f64::INFINITY`: never).
    pub fn next_change(&self) -> Time {
        self.next_change
    }

    /// Applies the next change and draws the length of the period it starts. Returns the
    /// time of the change and the new state; for a process that never changes, returns
    /// `(f64::INFINITY, current state)` and changes nothing.
    pub fn pop_change(&mut self, rng: &mut impl Rng) -> (Time, bool) {
        let at = self.next_change;
        if at.is_infinite() {
            return (at, self.up);
        }
        self.up = !self.up;
        self.next_change = at + self.period(self.up, rng);
        (at, self.up)
    }

    /// Applies every change at or before `t`; returns how many there were. The event loop
    /// uses [`OnOffProcess::pop_change`] instead when it traces each change.
    pub fn advance_to(&mut self, t: Time, rng: &mut impl Rng) -> u32 {
        let mut changes = 0;
        while self.next_change <= t {
            self.pop_change(rng);
            changes += 1;
        }
        changes
    }
}

/// Which of the host's availability processes changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostProcess {
    /// The client is running (`on_frac`).
    On,
    /// The host is connected to the network (`connected_frac`).
    Connected,
    /// Computing is allowed (`active_frac`).
    Active,
    /// GPU computing is allowed (`gpu_active_frac`).
    GpuActive,
}

impl HostProcess {
    /// All processes in the fixed order ties are broken in.
    pub const ALL: [HostProcess; 4] =
        [HostProcess::On, HostProcess::Connected, HostProcess::Active, HostProcess::GpuActive];
}

/// The host's four availability processes, independent of each other as in BOINC's
/// emulator. Whether the host may compute is `on && active` (GPU: `on && gpu_active`);
/// combining them is the event loop's business.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostAvailability {
    /// The client is running.
    pub on: OnOffProcess,
    /// The host is connected to the network.
    pub connected: OnOffProcess,
    /// Computing is allowed.
    pub active: OnOffProcess,
    /// GPU computing is allowed.
    pub gpu_active: OnOffProcess,
}

impl HostAvailability {
    /// The processes for `time_stats`, all starting up at `start`. The RNG is read for
    /// on, connected, active, gpu_active in that order. A negative `connected_frac`
    /// (BOINC: unknown) means always connected.
    pub fn new(time_stats: &TimeStats, start: Time, rng: &mut impl Rng) -> Self {
        let lambda = |l: Option<f64>| l.unwrap_or(DEFAULT_LAMBDA);
        let connected_frac =
            if time_stats.connected_frac < 0.0 { 1.0 } else { time_stats.connected_frac };
        let on = OnOffProcess::new(time_stats.on_frac, lambda(time_stats.on_lambda), start, rng);
        let connected =
            OnOffProcess::new(connected_frac, lambda(time_stats.connected_lambda), start, rng);
        let active =
            OnOffProcess::new(time_stats.active_frac, lambda(time_stats.active_lambda), start, rng);
        let gpu_active = OnOffProcess::new(
            time_stats.gpu_active_frac,
            lambda(time_stats.gpu_active_lambda),
            start,
            rng,
        );
        HostAvailability { on, connected, active, gpu_active }
    }

    /// The process of a kind.
    pub fn process(&self, which: HostProcess) -> &OnOffProcess {
        match which {
            HostProcess::On => &self.on,
            HostProcess::Connected => &self.connected,
            HostProcess::Active => &self.active,
            HostProcess::GpuActive => &self.gpu_active,
        }
    }

    fn process_mut(&mut self, which: HostProcess) -> &mut OnOffProcess {
        match which {
            HostProcess::On => &mut self.on,
            HostProcess::Connected => &mut self.connected,
            HostProcess::Active => &mut self.active,
            HostProcess::GpuActive => &mut self.gpu_active,
        }
    }

    /// Whether a process is up now.
    pub fn is_up(&self, which: HostProcess) -> bool {
        self.process(which).is_up()
    }

    /// CPU computing possible now: the client is on and computing allowed.
    pub fn cpu_available(&self) -> bool {
        self.on.is_up() && self.active.is_up()
    }

    /// GPU computing possible now: the client is on and GPU computing allowed.
    pub fn gpu_available(&self) -> bool {
        self.on.is_up() && self.gpu_active.is_up()
    }

    /// The process that changes next and when (ties: the order of [`HostProcess::ALL`]).
    fn next(&self) -> (Time, HostProcess) {
        let mut best = (f64::INFINITY, HostProcess::On);
        for which in HostProcess::ALL {
            let t = self.process(which).next_change();
            if t < best.0 {
                best = (t, which);
            }
        }
        best
    }

    /// When any process next changes (`f64::INFINITY`: never).
    pub fn next_change(&self) -> Time {
        self.next().0
    }

    /// Applies the earliest change of any process: its time, which process, its new
    /// state. When nothing ever changes, returns `(f64::INFINITY, HostProcess::On, on)`
    /// and changes nothing.
    pub fn pop_change(&mut self, rng: &mut impl Rng) -> (Time, HostProcess, bool) {
        let (_, which) = self.next();
        let (at, up) = self.process_mut(which).pop_change(rng);
        (at, which, up)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// Fraction of [start, end) the process is up, walking its changes.
    fn up_fraction(process: &mut OnOffProcess, end: Time, rng: &mut ChaCha8Rng) -> f64 {
        let mut t = 0.0;
        let mut up_time = 0.0;
        while process.next_change() < end {
            let up = process.is_up();
            let (at, _) = process.pop_change(rng);
            if up {
                up_time += at - t;
            }
            t = at;
        }
        if process.is_up() {
            up_time += end - t;
        }
        up_time / end
    }

    #[test]
    fn constant_processes_never_change() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut always = OnOffProcess::new(1.0, 100.0, 0.0, &mut rng);
        let mut never = OnOffProcess::new(0.0, 100.0, 0.0, &mut rng);
        assert!(always.is_up() && !never.is_up());
        assert_eq!(always.next_change(), f64::INFINITY);
        assert_eq!(never.pop_change(&mut rng), (f64::INFINITY, false));
        assert_eq!(always.advance_to(1e12, &mut rng), 0);
        assert!(always.is_up());
    }

    #[test]
    fn starts_up_and_alternates() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut p = OnOffProcess::new(0.5, 100.0, 1000.0, &mut rng);
        assert!(p.is_up());
        assert!(p.next_change() > 1000.0);
        let (_, s1) = p.pop_change(&mut rng);
        let (_, s2) = p.pop_change(&mut rng);
        assert!(!s1 && s2);
    }

    #[test]
    fn missing_lambda_means_one_day() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let n = 4000;
        let mut total = 0.0;
        for _ in 0..n {
            let p = OnOffProcess::new(0.5, 0.0, 0.0, &mut rng);
            total += p.next_change();
        }
        let mean = total / n as f64;
        assert!((mean / DEFAULT_LAMBDA - 1.0).abs() < 0.06, "mean up period {mean}");
    }

    #[test]
    fn up_thirty_percent_of_a_long_run() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut p = OnOffProcess::new(0.3, 3600.0, 0.0, &mut rng);
        let frac = up_fraction(&mut p, 3600.0 * 20_000.0, &mut rng);
        assert!((frac - 0.3).abs() < 0.01, "up fraction {frac}");
    }

    #[test]
    fn advance_to_counts_the_changes() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut p = OnOffProcess::new(0.5, 10.0, 0.0, &mut rng);
        let mut q = p.clone();
        let mut rng_q = rng.clone();
        let n = p.advance_to(1000.0, &mut rng);
        let mut m = 0;
        while q.next_change() <= 1000.0 {
            q.pop_change(&mut rng_q);
            m += 1;
        }
        assert_eq!(n, m);
        assert!(n > 10);
        assert_eq!(p, q);
        assert!(p.next_change() > 1000.0);
    }

    #[test]
    fn host_availability_pops_changes_in_time_order() {
        let stats = TimeStats {
            cpu_and_network_available_frac: 1.0,
            on_frac: 0.8,
            connected_frac: -1.0,
            active_frac: 0.6,
            gpu_active_frac: 0.5,
            on_lambda: Some(1000.0),
            connected_lambda: None,
            active_lambda: Some(500.0),
            totals: Default::default(),
            gpu_active_lambda: Some(300.0),
        };
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let mut host = HostAvailability::new(&stats, 0.0, &mut rng);
        assert!(host.cpu_available() && host.gpu_available());
        assert_eq!(host.connected.next_change(), f64::INFINITY);
        let mut last = 0.0;
        let mut seen = [false; 4];
        for _ in 0..200 {
            let (t, which, up) = host.pop_change(&mut rng);
            assert!(t > last);
            assert_eq!(host.is_up(which), up);
            assert_ne!(which, HostProcess::Connected);
            seen[which as usize] = true;
            last = t;
        }
        assert!(seen[0] && seen[2] && seen[3]);
    }

    #[test]
    fn host_availability_is_deterministic() {
        let stats = TimeStats { on_frac: 0.7, active_frac: 0.9, ..TimeStats::default() };
        let run = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut host = HostAvailability::new(&stats, 0.0, &mut rng);
            (0..50).map(|_| host.pop_change(&mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(run(11), run(11));
        assert_ne!(run(11), run(12));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn change_times_strictly_increase_and_up_fraction_converges(
            seed in any::<u64>(),
            frac in 0.05f64..0.95,
            lambda in 10.0f64..10_000.0,
        ) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut p = OnOffProcess::new(frac, lambda, 0.0, &mut rng);
            let mut last = 0.0;
            let mut check = p.clone();
            let mut check_rng = rng.clone();
            for _ in 0..500 {
                let (t, _) = check.pop_change(&mut check_rng);
                prop_assert!(t > last);
                last = t;
            }
            // Enough periods that the sample fraction is within a few points of frac.
            let mean_cycle = lambda / frac;
            let measured = up_fraction(&mut p, mean_cycle * 4000.0, &mut rng);
            prop_assert!((measured - frac).abs() < 0.04, "frac {} measured {}", frac, measured);
        }
    }
}
