//! The X server's idle time (the MIT-SCREEN-SAVER extension's, as `xprintidle` reads
//! it): how long since a person last used a keyboard or mouse on a desktop, which the
//! input devices' access times do not show (the input drivers do not update them).
//! libX11 and libXss are opened at run time, so a host without X still runs; the
//! displays are asked from a thread of their own, over connections kept open, so an X
//! server that hangs cannot hold the client up (its answer is simply missing) and one
//! that goes away only closes its connection.

use libloading::{Library, Symbol};
use std::ffi::{CString, c_char, c_int, c_ulong, c_void};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// How often the displays are asked.
const ASK_EVERY: Duration = Duration::from_secs(1);
/// An answer older than this is stale (the thread is stuck on a server): not used.
const STALE_AFTER: Duration = Duration::from_secs(5);
/// The most displays asked.
const MAX_DISPLAYS: usize = 8;

/// Xlib's `XScreenSaverInfo` (every field is there for the layout; only `idle` is read).
#[repr(C)]
#[allow(dead_code)]
struct ScreenSaverInfo {
    window: c_ulong,
    state: c_int,
    kind: c_int,
    til_or_since: c_ulong,
    /// Milliseconds since the last input.
    idle: c_ulong,
    event_mask: c_ulong,
}

type Display = c_void;
type ErrorHandler = Option<unsafe extern "C" fn(*mut Display, *mut c_void) -> c_int>;

/// The Xlib and Xss functions used.
struct Xlib {
    open_display: unsafe extern "C" fn(*const c_char) -> *mut Display,
    close_display: unsafe extern "C" fn(*mut Display) -> c_int,
    default_root_window: unsafe extern "C" fn(*mut Display) -> c_ulong,
    free: unsafe extern "C" fn(*mut c_void) -> c_int,
    query_extension: unsafe extern "C" fn(*mut Display, *mut c_int, *mut c_int) -> c_int,
    alloc_info: unsafe extern "C" fn() -> *mut ScreenSaverInfo,
    query_info: unsafe extern "C" fn(*mut Display, c_ulong, *mut ScreenSaverInfo) -> c_int,
    /// `XSetIOErrorExitHandler` (libX11 1.8 and later), without which a broken
    /// connection ends the process: no connection is kept without it.
    set_io_error_exit_handler: Option<SetExitHandler>,
}

type ExitHandler = Option<unsafe extern "C" fn(*mut Display, *mut c_void)>;
type SetExitHandler = unsafe extern "C" fn(*mut Display, ExitHandler, *mut c_void);

type IoErrorHandler = Option<unsafe extern "C" fn(*mut Display) -> c_int>;

/// A connection's server went away: nothing to print, nothing to end; the exit handler
/// that Xlib calls next marks the connection broken.
unsafe extern "C" fn ignore_io_error(_display: *mut Display) -> c_int {
    0
}

/// Xlib's default error handler ends the process on any protocol error: this one
/// only lets the failed request fail.
unsafe extern "C" fn ignore_error(_display: *mut Display, _event: *mut c_void) -> c_int {
    0
}

fn xlib() -> Option<&'static Xlib> {
    static XLIB: OnceLock<Option<Xlib>> = OnceLock::new();
    XLIB.get_or_init(|| match load() {
        Ok(xlib) => Some(xlib),
        Err(reason) => {
            tracing::debug!(%reason, "no X screensaver library: X idle time not read");
            None
        }
    })
    .as_ref()
}

fn load() -> Result<Xlib, String> {
    // SAFETY: loading libX11 and libXss runs their initialisers, which set up only their
    // own state; both are leaked so that the functions stay valid.
    let x11 = unsafe { Library::new("libX11.so.6") }.map_err(|e| e.to_string())?;
    let xss = unsafe { Library::new("libXss.so.1") }.map_err(|e| e.to_string())?;
    let x11: &'static Library = Box::leak(Box::new(x11));
    let xss: &'static Library = Box::leak(Box::new(xss));
    fn symbol<T: Copy>(library: &'static Library, name: &[u8]) -> Result<T, String> {
        // SAFETY: each `T` is the function's type in Xlib.h and scrnsaver.h, and the
        // library outlives the program (leaked above).
        let found: Symbol<T> = unsafe { library.get(name) }.map_err(|e| e.to_string())?;
        Ok(*found)
    }
    let set_error_handler: unsafe extern "C" fn(ErrorHandler) -> ErrorHandler =
        symbol(x11, b"XSetErrorHandler\0")?;
    let set_io_error_handler: unsafe extern "C" fn(IoErrorHandler) -> IoErrorHandler =
        symbol(x11, b"XSetIOErrorHandler\0")?;
    // SAFETY: the handlers are plain functions that touch nothing. Xlib's default I/O
    // error handler prints and may end the process when a server goes away; this one
    // returns, and the connection's exit handler (below) marks it broken instead.
    unsafe {
        set_error_handler(Some(ignore_error));
        set_io_error_handler(Some(ignore_io_error));
    }
    Ok(Xlib {
        open_display: symbol(x11, b"XOpenDisplay\0")?,
        close_display: symbol(x11, b"XCloseDisplay\0")?,
        default_root_window: symbol(x11, b"XDefaultRootWindow\0")?,
        free: symbol(x11, b"XFree\0")?,
        query_extension: symbol(xss, b"XScreenSaverQueryExtension\0")?,
        alloc_info: symbol(xss, b"XScreenSaverAllocInfo\0")?,
        query_info: symbol(xss, b"XScreenSaverQueryInfo\0")?,
        set_io_error_exit_handler: symbol(x11, b"XSetIOErrorExitHandler\0").ok(),
    })
}

/// A connection to one display, kept open between questions: an X server counts a new
/// client connection as activity (Xvfb does), so asking over a fresh one each time would
/// always find the user just active.
struct Connection {
    display: *mut Display,
    info: *mut ScreenSaverInfo,
}

/// Set by the I/O error exit handler: the connection it names is broken.
static BROKEN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Called by Xlib instead of exit() when a connection breaks (the server went away):
/// the connection is marked broken and given up.
unsafe extern "C" fn connection_broken(display: *mut Display, _data: *mut c_void) {
    BROKEN.store(display as usize, Ordering::SeqCst);
}

impl Connection {
    /// Opens `display`, with its screensaver extension checked; `None` where it cannot
    /// be asked (no server, no permission, no extension, or an Xlib too old to let a
    /// broken connection be survived, which would end the process).
    fn open(xlib: &Xlib, display: &str) -> Option<Connection> {
        let set_exit_handler = xlib.set_io_error_exit_handler?;
        let name = CString::new(display).ok()?;
        // SAFETY: `name` is a valid C string; a null display is checked; the exit
        // handler is a plain function that only records which display broke; the info
        // block is Xss's, freed with XFree when the connection is closed.
        unsafe {
            let connection = (xlib.open_display)(name.as_ptr());
            if connection.is_null() {
                return None;
            }
            set_exit_handler(connection, Some(connection_broken), std::ptr::null_mut());
            let (mut event_base, mut error_base) = (0, 0);
            let info = if (xlib.query_extension)(connection, &mut event_base, &mut error_base) != 0
            {
                (xlib.alloc_info)()
            } else {
                std::ptr::null_mut()
            };
            if info.is_null() {
                (xlib.close_display)(connection);
                return None;
            }
            Some(Connection { display: connection, info })
        }
    }

    /// The display's idle time, seconds; `None` when the question failed or the
    /// connection broke (it is then not to be used again).
    fn idle_seconds(&mut self, xlib: &Xlib) -> Option<f64> {
        // SAFETY: the display and info block are this connection's own, valid while it
        // is open; a broken connection is never used again (see `close`).
        unsafe {
            let root = (xlib.default_root_window)(self.display);
            let asked = (xlib.query_info)(self.display, root, self.info) != 0;
            (asked && !self.broken()).then(|| (*self.info).idle as f64 / 1000.0)
        }
    }

    fn broken(&self) -> bool {
        BROKEN.load(Ordering::SeqCst) == self.display as usize
    }

    fn close(self, xlib: &Xlib) {
        // SAFETY: the info block came from XScreenSaverAllocInfo; the display is closed
        // only while sound (a broken one is left as it is: closing it would write to
        // the dead socket again).
        unsafe {
            (xlib.free)(self.info.cast());
            if !self.broken() {
                (xlib.close_display)(self.display);
            }
        }
    }
}

/// The idle time `display` (`:0`) reports, seconds, over a connection of its own;
/// `None` where it cannot be asked (no library, no server, no permission, no
/// screensaver extension). A one-off question, for the tests: the watch keeps its
/// connections.
#[cfg(test)]
fn display_idle_seconds(display: &str) -> Option<f64> {
    let xlib = xlib()?;
    let mut connection = Connection::open(xlib, display)?;
    let idle = connection.idle_seconds(xlib);
    connection.close(xlib);
    idle
}

/// Asks each of `displays` for its idle time over the connections kept in `open`
/// (opened as needed, closed when broken or no longer listed): the least, seconds.
fn least_idle(displays: &[String], open: &mut Vec<(String, Connection)>) -> Option<f64> {
    let xlib = xlib()?;
    let mut kept = Vec::new();
    for (name, connection) in open.drain(..) {
        if displays.contains(&name) {
            kept.push((name, connection));
        } else {
            connection.close(xlib);
        }
    }
    let mut least: Option<f64> = None;
    for display in displays.iter().take(MAX_DISPLAYS) {
        let at = match kept.iter().position(|(name, _)| name == display) {
            Some(at) => at,
            None => match Connection::open(xlib, display) {
                Some(connection) => {
                    kept.push((display.clone(), connection));
                    kept.len() - 1
                }
                None => continue,
            },
        };
        match kept[at].1.idle_seconds(xlib) {
            Some(idle) => least = Some(least.map_or(idle, |l| l.min(idle))),
            None => kept.swap_remove(at).1.close(xlib),
        }
    }
    *open = kept;
    least
}

/// The displays of this host: `$DISPLAY`, else each local server's socket in
/// `x11_sockets` (`/tmp/.X11-unix/X0` is `:0`).
pub(crate) fn local_displays(display_env: Option<&str>, x11_sockets: &Path) -> Vec<String> {
    if let Some(display) = display_env.filter(|d| !d.is_empty()) {
        return vec![display.to_owned()];
    }
    let Ok(entries) = std::fs::read_dir(x11_sockets) else { return Vec::new() };
    let mut found: Vec<String> = entries
        .filter_map(Result::ok)
        .take(64)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let number = name.strip_prefix('X')?;
            number.parse::<u32>().ok().map(|n| format!(":{n}"))
        })
        .collect();
    found.sort();
    found.truncate(MAX_DISPLAYS);
    found
}

/// The shared latest answer: when it was had, and the least idle time of the displays
/// (`None`: none answered).
type Latest = Arc<Mutex<Option<(Instant, Option<f64>)>>>;

/// Asks the X displays for their idle time every second, on a thread of its own,
/// until dropped.
#[derive(Debug)]
pub(crate) struct X11IdleWatch {
    latest: Latest,
    ended: Arc<AtomicBool>,
}

impl X11IdleWatch {
    /// Watches `displays` (`None`: the host's own, looked for each time).
    pub(crate) fn start(displays: Option<Vec<String>>) -> Option<Self> {
        let latest: Latest = Arc::default();
        let ended = Arc::new(AtomicBool::new(false));
        let (theirs, their_end) = (latest.clone(), ended.clone());
        let spawned = std::thread::Builder::new().name("x11-idle".into()).spawn(move || {
            let mut open = Vec::new();
            while !their_end.load(Ordering::Relaxed) {
                let displays = displays.clone().unwrap_or_else(|| {
                    let env = std::env::var("DISPLAY").ok();
                    local_displays(env.as_deref(), Path::new("/tmp/.X11-unix"))
                });
                let idle = least_idle(&displays, &mut open);
                *theirs.lock().unwrap_or_else(PoisonError::into_inner) =
                    Some((Instant::now(), idle));
                std::thread::sleep(ASK_EVERY);
            }
            if let Some(xlib) = xlib() {
                for (_, connection) in open {
                    connection.close(xlib);
                }
            }
        });
        if let Err(error) = spawned {
            tracing::warn!(%error, "the X idle time is not watched");
            return None;
        }
        Some(X11IdleWatch { latest, ended })
    }

    /// The least idle time the displays reported, seconds, as of the latest answer
    /// (aged by the time since); `None` when none answered or the answer is stale.
    pub(crate) fn idle_seconds(&self, now: Instant) -> Option<f64> {
        let latest = *self.latest.lock().unwrap_or_else(PoisonError::into_inner);
        let (at, idle) = latest?;
        let age = now.saturating_duration_since(at);
        (age < STALE_AFTER).then_some(idle? + age.as_secs_f64())
    }
}

impl Drop for X11IdleWatch {
    fn drop(&mut self) {
        self.ended.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_from_the_environment_or_the_sockets() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(local_displays(Some(":7"), dir.path()), vec![":7"]);
        assert!(local_displays(None, dir.path()).is_empty(), "no X server");
        for name in ["X0", "X12", "Xjunk", "other"] {
            std::fs::write(dir.path().join(name), "").expect("socket stand-in");
        }
        assert_eq!(local_displays(Some(""), dir.path()), vec![":0", ":12"]);
    }

    #[test]
    fn no_server_no_idle_time() {
        assert_eq!(display_idle_seconds(":4711"), None);
        assert_eq!(display_idle_seconds("bad\0name"), None);
    }
}
