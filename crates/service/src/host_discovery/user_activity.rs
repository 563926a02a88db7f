//! When a person last used the host (BOINC's "computer in use"), from every source the
//! host has, the most recent winning: the access times of input devices and terminals
//! (`host_conditions`), the X server's screensaver idle time (`x11_idle`), the
//! interrupt counts of keyboards and mice in `/proc/interrupts`, which grow with input
//! whatever reads it (once they have grown while watched), and logind's idle hint
//! (`logind_idle`), which a Wayland desktop sets. A host with none of them (a server, a
//! container) has no user, which counts as always idle.
//!
//! logind's hint is coarse: a desktop calls its session idle only after its own idle
//! delay (minutes), so "in use" means input within that delay, not now. Where the X
//! server answers, its idle time (for the same desktop, to the millisecond) is taken
//! instead of logind's "in use"; logind's "idle since" counts beside every source.

use super::host_conditions::latest_input_idle;
use super::logind_idle::{LogindHint, LogindIdleWatch};
use super::x11_idle::X11IdleWatch;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

/// The most bytes of `/proc/interrupts` read (a line per interrupt, a column per CPU).
const INTERRUPTS_READ_LIMIT: u64 = 1 << 20;
/// Names of input devices' interrupt lines: the PS/2 controller, and drivers that name
/// the device.
const INPUT_IRQ_NAMES: [&str; 5] = ["i8042", "keyboard", "mouse", "touchpad", "i2c_hid"];

/// Which sources are read (all, on a live host; tests pick one).
#[derive(Debug, Clone, PartialEq)]
pub struct UserActivitySources {
    /// Input devices' and terminals' access times under `/dev`.
    pub devices: bool,
    /// The X displays asked: `None` for the host's own (`$DISPLAY`, or each local
    /// server), `Some(empty)` for none.
    pub x_displays: Option<Vec<String>>,
    /// The interrupts file (`/proc/interrupts`), `None` for none.
    pub interrupts: Option<PathBuf>,
    /// logind's idle hint, over the system D-Bus.
    pub logind: bool,
}

impl Default for UserActivitySources {
    fn default() -> Self {
        UserActivitySources {
            devices: true,
            x_displays: None,
            interrupts: Some(PathBuf::from("/proc/interrupts")),
            logind: true,
        }
    }
}

/// The input interrupts' count as last seen, and when it last grew.
#[derive(Debug)]
struct InputInterrupts {
    file: PathBuf,
    count: Option<u64>,
    grew_at: Option<Instant>,
}

impl InputInterrupts {
    fn new(file: PathBuf) -> Self {
        InputInterrupts { file, count: None, grew_at: None }
    }

    /// Seconds since the input interrupts' count last grew; `None` until it has grown
    /// once while watched (a virtual machine's emulated keyboard that nobody types on
    /// is no user), or where the host has no such interrupt.
    fn idle_seconds(&mut self, now: Instant) -> Option<f64> {
        let count = read_bounded(&self.file).as_deref().and_then(input_interrupts);
        if count.is_none() {
            self.grew_at = None;
        } else if self.count.is_some() && count != self.count {
            self.grew_at = Some(now);
        }
        self.count = count;
        self.grew_at.map(|at| now.saturating_duration_since(at).as_secs_f64())
    }
}

fn read_bounded(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path).ok()?.take(INTERRUPTS_READ_LIMIT).read_to_string(&mut text).ok()?;
    Some(text)
}

/// The summed count, over every CPU, of the input devices' interrupt lines; `None`
/// where there is none.
fn input_interrupts(text: &str) -> Option<u64> {
    let mut total = None;
    for line in text.lines().skip(1) {
        let lower = line.to_ascii_lowercase();
        if !INPUT_IRQ_NAMES.iter().any(|name| lower.contains(name)) {
            continue;
        }
        let Some((_, counts)) = line.split_once(':') else { continue };
        let sum = counts
            .split_whitespace()
            .map_while(|field| field.parse::<u64>().ok())
            .fold(0u64, u64::saturating_add);
        total = Some(total.unwrap_or(0u64).saturating_add(sum));
    }
    total
}

/// The user's activity, from the sources chosen.
#[derive(Debug)]
pub(crate) struct UserActivity {
    devices: bool,
    x11: Option<X11IdleWatch>,
    interrupts: Option<InputInterrupts>,
    logind: Option<LogindIdleWatch>,
}

impl UserActivity {
    /// Starts watching `sources` (the X displays are asked from a thread of their own).
    pub(crate) fn new(sources: UserActivitySources) -> Self {
        let x11 = match &sources.x_displays {
            Some(displays) if displays.is_empty() => None,
            displays => X11IdleWatch::start(displays.clone()),
        };
        UserActivity {
            devices: sources.devices,
            x11,
            interrupts: sources.interrupts.map(InputInterrupts::new),
            logind: if sources.logind { LogindIdleWatch::start(None) } else { None },
        }
    }

    /// Seconds since the user's last input, the least any source says; `None` where no
    /// source sees a user.
    pub(crate) fn idle_seconds(&mut self, now: Instant) -> Option<f64> {
        let devices = self.devices.then(|| latest_input_idle(SystemTime::now())).flatten();
        let x11 = self.x11.as_ref().and_then(|watch| watch.idle_seconds(now));
        let interrupts = self.interrupts.as_mut().and_then(|i| i.idle_seconds(now));
        let logind = self.logind.as_ref().and_then(|watch| watch.hint(now));
        let observed = Observed { devices, x11, interrupts, logind };
        observed.idle_seconds(SystemTime::now())
    }
}

/// What each source says: seconds idle, or logind's hint; `None` where it sees nothing.
#[derive(Debug, Clone, Copy, Default)]
struct Observed {
    devices: Option<f64>,
    x11: Option<f64>,
    interrupts: Option<f64>,
    logind: Option<LogindHint>,
}

impl Observed {
    /// Seconds since the user's last input at `now` (see the module documentation): the
    /// least any source says, logind's "in use" left out where the X server answers.
    fn idle_seconds(&self, now: SystemTime) -> Option<f64> {
        let logind = match self.logind {
            Some(LogindHint::InUse) if self.x11.is_some() => None,
            hint => hint.and_then(|hint| hint.idle_seconds(now)),
        };
        [self.devices, self.x11, self.interrupts, logind].into_iter().flatten().reduce(f64::min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INTERRUPTS: &str = "           CPU0       CPU1\n\
          0:         44          0   IO-APIC   2-edge      timer\n\
          1:        120         37   IO-APIC   1-edge      i8042\n\
         12:       1000          5   IO-APIC  12-edge      i8042\n\
         16:       5000       7000   IO-APIC  16-fasteoi   ehci_hcd:usb1\n\
        NMI:          0          0   Non-maskable interrupts\n";

    #[test]
    fn keyboard_and_mouse_interrupts_are_summed() {
        assert_eq!(input_interrupts(INTERRUPTS), Some(120 + 37 + 1000 + 5));
        assert_eq!(input_interrupts("  CPU0\n  0:  44  IO-APIC timer\n"), None, "no input IRQ");
        assert_eq!(input_interrupts(""), None);
    }

    #[test]
    fn growing_interrupt_counts_are_input() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("interrupts");
        std::fs::write(&file, INTERRUPTS).expect("interrupts");
        let mut interrupts = InputInterrupts::new(file.clone());
        let start = Instant::now();
        let later = |seconds| start + std::time::Duration::from_secs(seconds);
        assert_eq!(interrupts.idle_seconds(start), None, "no input seen yet");
        assert_eq!(interrupts.idle_seconds(later(30)), None, "still none");
        std::fs::write(&file, INTERRUPTS.replace("1000", "1003")).expect("a key pressed");
        assert_eq!(interrupts.idle_seconds(later(40)), Some(0.0));
        assert_eq!(interrupts.idle_seconds(later(70)), Some(30.0), "no input for 30 s");
        std::fs::write(&file, "  CPU0\n  0:  44  IO-APIC timer\n").expect("no input IRQ");
        assert_eq!(interrupts.idle_seconds(later(80)), None);
    }

    #[test]
    fn no_source_no_user() {
        let sources = UserActivitySources {
            devices: false,
            x_displays: Some(Vec::new()),
            interrupts: None,
            logind: false,
        };
        assert_eq!(UserActivity::new(sources).idle_seconds(Instant::now()), None);
    }

    #[test]
    fn the_sources_combine_the_most_recent_input_winning() {
        let now = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        let ago = |seconds| now - std::time::Duration::from_secs(seconds);
        let idle = |observed: Observed| observed.idle_seconds(now);
        assert_eq!(idle(Observed::default()), None, "no source: no user");
        // logind alone (a Wayland desktop): in use is input now, idle counts from the hint.
        let wayland = Observed { logind: Some(LogindHint::InUse), ..Observed::default() };
        assert_eq!(idle(wayland), Some(0.0));
        let away = Observed { logind: Some(LogindHint::IdleSince(ago(600))), ..wayland };
        assert_eq!(idle(away), Some(600.0));
        let unknown = Observed { logind: Some(LogindHint::Idle), ..wayland };
        assert_eq!(idle(unknown), None, "idle since an unknown time: no input seen");
        // In use beside a terminal untouched for an hour: the user is there.
        let terminal = Observed { devices: Some(3600.0), ..wayland };
        assert_eq!(idle(terminal), Some(0.0));
        // The X server answers for the same desktop, to the second: it is taken over
        // logind's coarse "in use"...
        let x11 = Observed { x11: Some(200.0), ..wayland };
        assert_eq!(idle(x11), Some(200.0));
        // ...but a more recent input anywhere still wins.
        let typing = Observed { x11: Some(200.0), interrupts: Some(5.0), ..wayland };
        assert_eq!(idle(typing), Some(5.0));
        let idle_x = Observed {
            x11: Some(900.0),
            logind: Some(LogindHint::IdleSince(ago(300))),
            ..Observed::default()
        };
        assert_eq!(idle(idle_x), Some(300.0), "logind's idle time counts beside X's");
        let recent_x = Observed { x11: Some(10.0), ..idle_x };
        assert_eq!(idle(recent_x), Some(10.0));
    }
}
