//! logind's idle hint (the `IdleHint` and `IdleSinceHint` properties of
//! `org.freedesktop.login1.Manager`, over the system D-Bus): whether every session of
//! the host is idle, and since when, as the desktops tell logind. This is the user
//! activity a Wayland desktop reports, where no X screensaver can be asked. It is asked
//! from a thread of its own over one kept connection, each call bounded in time, so a
//! bus that hangs cannot hold the client up (its answer goes stale and is not used); a
//! host without a system bus or without logind (a server, a container) has no such
//! source, which the log says once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};
use zbus::connection::Builder;
use zbus::{Connection, OwnedVariant};

/// How often logind is asked.
const ASK_EVERY: Duration = Duration::from_secs(2);
/// The longest a connection or a call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(2);
/// An answer older than this is stale (the bus is stuck): not used.
const STALE_AFTER: Duration = Duration::from_secs(10);
/// How long after a failure the bus is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(60);
/// How often the thread looks whether it should end, while it waits.
const END_CHECK: Duration = Duration::from_millis(200);

const LOGIND: &str = "org.freedesktop.login1";
const MANAGER_PATH: &str = "/org/freedesktop/login1";
const MANAGER: &str = "org.freedesktop.login1.Manager";
const PROPERTIES: &str = "org.freedesktop.DBus.Properties";

/// What logind says of the host's sessions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum LogindHint {
    /// Some session is in use (its desktop has not called it idle).
    InUse,
    /// Every session has been idle since this time.
    IdleSince(SystemTime),
    /// Idle, since a time logind does not know.
    Idle,
}

impl LogindHint {
    /// The hint the two properties make: `IdleSinceHint` is microseconds since the
    /// Unix epoch, 0 where logind has no time.
    pub(crate) fn from_properties(idle: bool, idle_since_micros: u64) -> Self {
        match (idle, idle_since_micros) {
            (false, _) => LogindHint::InUse,
            (true, 0) => LogindHint::Idle,
            (true, micros) => SystemTime::UNIX_EPOCH
                .checked_add(Duration::from_micros(micros))
                .map_or(LogindHint::Idle, LogindHint::IdleSince),
        }
    }

    /// Seconds the user has been idle at `now`, as far as the hint tells: 0 while a
    /// session is in use, the time since the sessions went idle (0 for a time ahead of
    /// the clock), `None` for idle since an unknown time.
    pub(crate) fn idle_seconds(self, now: SystemTime) -> Option<f64> {
        match self {
            LogindHint::InUse => Some(0.0),
            LogindHint::IdleSince(since) => {
                Some(now.duration_since(since).map_or(0.0, |idle| idle.as_secs_f64()))
            }
            LogindHint::Idle => None,
        }
    }
}

/// The latest hint and when it came.
#[derive(Debug, Default)]
struct Shared {
    latest: Mutex<Option<(Instant, LogindHint)>>,
    ended: AtomicBool,
}

/// logind's idle hint, asked from a thread of its own until dropped.
#[derive(Debug)]
pub(crate) struct LogindIdleWatch {
    shared: Arc<Shared>,
}

impl LogindIdleWatch {
    /// Starts asking logind on the bus at `address` (a D-Bus address; `None` for the
    /// system bus); `None` where the thread cannot be started.
    pub(crate) fn start(address: Option<String>) -> Option<Self> {
        let shared = Arc::new(Shared::default());
        let theirs = shared.clone();
        let started = std::thread::Builder::new()
            .name("logind-idle".into())
            .spawn(move || watch(&theirs, address.as_deref()));
        match started {
            Ok(_) => Some(LogindIdleWatch { shared }),
            Err(error) => {
                tracing::info!(%error, "logind's idle hint is not read: no thread for it");
                None
            }
        }
    }

    /// logind's latest hint, unless it is older than [`STALE_AFTER`] at `now`.
    pub(crate) fn hint(&self, now: Instant) -> Option<LogindHint> {
        let latest = *self.shared.latest.lock().unwrap_or_else(PoisonError::into_inner);
        latest.filter(|(at, _)| now.saturating_duration_since(*at) <= STALE_AFTER).map(|(_, h)| h)
    }
}

impl Drop for LogindIdleWatch {
    fn drop(&mut self) {
        self.shared.ended.store(true, Ordering::Relaxed);
    }
}

/// The thread: connects, asks every [`ASK_EVERY`], and after a failure tries again
/// [`RETRY_AFTER`] later, saying the first failure once.
fn watch(shared: &Shared, address: Option<&str>) {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            tracing::info!(%error, "logind's idle hint is not read: no runtime for it");
            return;
        }
    };
    let mut connection: Option<Connection> = None;
    let mut said_absent = false;
    let mut next_try = Instant::now();
    while !shared.ended.load(Ordering::Relaxed) {
        if Instant::now() >= next_try {
            let asked = runtime.block_on(async {
                if connection.is_none() {
                    let builder = match address {
                        Some(address) => Builder::address(address),
                        None => Builder::system(),
                    };
                    connection = Some(bounded(builder.method_timeout(CALL_TIMEOUT).build()).await?);
                }
                match &connection {
                    Some(connection) => read_hint(connection).await,
                    None => Err("no connection".to_owned()),
                }
            });
            match asked {
                Ok(hint) => {
                    *shared.latest.lock().unwrap_or_else(PoisonError::into_inner) =
                        Some((Instant::now(), hint));
                    next_try = Instant::now() + ASK_EVERY;
                }
                Err(reason) => {
                    if !said_absent {
                        tracing::info!(
                            %reason,
                            "no logind on the system D-Bus: its idle hint is not read as user \
                             activity"
                        );
                        said_absent = true;
                    }
                    connection = None;
                    next_try = Instant::now() + RETRY_AFTER;
                }
            }
        }
        std::thread::sleep(END_CHECK);
    }
}

/// `call`, within [`CALL_TIMEOUT`]; its error in words.
async fn bounded<T>(call: impl Future<Output = zbus::Result<T>>) -> Result<T, String> {
    match tokio::time::timeout(CALL_TIMEOUT, call).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("no answer within {} s", CALL_TIMEOUT.as_secs())),
    }
}

/// One property of logind's manager.
async fn property(connection: &Connection, name: &str) -> Result<OwnedVariant, String> {
    let reply = bounded(connection.call_method(
        Some(LOGIND),
        MANAGER_PATH,
        Some(PROPERTIES),
        "Get",
        &(MANAGER, name),
    ))
    .await?;
    reply.body().deserialize::<OwnedVariant>().map_err(|error| error.to_string())
}

async fn read_hint(connection: &Connection) -> Result<LogindHint, String> {
    let idle = bool::try_from(property(connection, "IdleHint").await?)
        .map_err(|error| format!("IdleHint: {error}"))?;
    let since = u64::try_from(property(connection, "IdleSinceHint").await?)
        .map_err(|error| format!("IdleSinceHint: {error}"))?;
    Ok(LogindHint::from_properties(idle, since))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_properties_make_a_hint() {
        assert_eq!(LogindHint::from_properties(false, 1_700_000_000_000_000), LogindHint::InUse);
        assert_eq!(LogindHint::from_properties(true, 0), LogindHint::Idle);
        let since = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(
            LogindHint::from_properties(true, 1_700_000_000_000_000),
            LogindHint::IdleSince(since)
        );
        // A time far ahead (a hostile or broken bus) is a hint, not a panic: idle 0.
        let far = LogindHint::from_properties(true, u64::MAX);
        assert_eq!(far.idle_seconds(SystemTime::now()), Some(0.0));
    }

    #[test]
    fn idle_time_from_the_hint() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_600);
        let since = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(LogindHint::InUse.idle_seconds(now), Some(0.0));
        assert_eq!(LogindHint::IdleSince(since).idle_seconds(now), Some(600.0));
        let ahead = now + Duration::from_secs(30);
        assert_eq!(LogindHint::IdleSince(ahead).idle_seconds(now), Some(0.0), "clock behind");
        assert_eq!(LogindHint::Idle.idle_seconds(now), None);
    }

    /// Where the bus is not there the watch gives no hint, and never blocks its
    /// caller.
    #[test]
    fn without_a_bus_there_is_no_hint() {
        let dir = tempfile::tempdir().expect("temp dir");
        let address = format!("unix:path={}", dir.path().join("no_bus").display());
        let asked = Instant::now();
        let watch = LogindIdleWatch::start(Some(address)).expect("a thread");
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(watch.hint(Instant::now()), None);
        assert!(asked.elapsed() < Duration::from_secs(2));
    }

    /// On a host whose system bus has logind, a hint comes within a few seconds.
    #[test]
    #[ignore = "needs a system D-Bus with logind, which the build machines lack: run with \
                --ignored on a desktop"]
    fn a_host_with_logind_gives_a_hint() {
        let watch = LogindIdleWatch::start(None).expect("a thread");
        let deadline = Instant::now() + Duration::from_secs(10);
        let hint = loop {
            if let Some(hint) = watch.hint(Instant::now()) {
                break hint;
            }
            assert!(Instant::now() < deadline, "no hint from logind within 10 s");
            std::thread::sleep(Duration::from_millis(100));
        };
        eprintln!("logind says: {hint:?}");
    }
}
