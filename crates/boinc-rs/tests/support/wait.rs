//! Waiting for something to happen, bounded: a condition polled every [`POLL`] until it
//! holds or the deadline passes, and a panic that names what was waited for (with what
//! the caller adds: a log, the last state seen). Tests wait this way rather than
//! sleeping a guessed while and asserting afterwards, which is slow when the guess is
//! long and flaky when the machine is slower than the guess.

#![allow(dead_code)] // Each test binary uses a different part.

use std::time::{Duration, Instant};

/// How often a condition is looked at.
pub const POLL: Duration = Duration::from_millis(50);

/// Polls `found` until it gives a value, at most `limit`; `None` past it. For a caller
/// that does more than panic when the wait is over (a report of its own, a retry).
pub fn poll_for<T>(limit: Duration, mut found: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = found() {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(POLL);
    }
}

/// Polls `done` until it holds, at most `limit`: whether it held.
pub fn holds_within(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    poll_for(limit, || done().then_some(())).is_some()
}

/// Polls `done` until it holds, at most `limit`; panics naming `what` past it.
pub fn wait_until(what: &str, limit: Duration, done: impl FnMut() -> bool) {
    wait_until_or(what, limit, done, String::new);
}

/// [`wait_until`], with `report()` (a log, the state seen last) in the panic's message.
pub fn wait_until_or(
    what: &str,
    limit: Duration,
    done: impl FnMut() -> bool,
    report: impl FnOnce() -> String,
) {
    let mut done = done;
    wait_for_or(what, limit, || done().then_some(()), report);
}

/// Polls `found` until it gives a value, at most `limit`, and returns it; panics naming
/// `what` past it.
pub fn wait_for<T>(what: &str, limit: Duration, found: impl FnMut() -> Option<T>) -> T {
    wait_for_or(what, limit, found, String::new)
}

/// [`wait_for`], with `report()` in the panic's message.
pub fn wait_for_or<T>(
    what: &str,
    limit: Duration,
    found: impl FnMut() -> Option<T>,
    report: impl FnOnce() -> String,
) -> T {
    poll_for(limit, found)
        .unwrap_or_else(|| panic!("waited {limit:?} for {what}, in vain\n{}", report()))
}

/// [`wait_until`] inside an async test: the condition is polled between sleeps of the
/// test's runtime, so what the test serves on that runtime goes on meanwhile.
pub async fn wait_until_async(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "waited {limit:?} for {what}, in vain");
        tokio::time::sleep(POLL).await;
    }
}
