//! The stall rule of an HTTP exchange (cc_config's `http_transfer_timeout` and
//! `http_transfer_timeout_bps`, as BOINC hands them to its HTTP library): an exchange
//! fails when, over a whole timeout period, fewer bytes moved than the minimum rate
//! asks for, whether it waits for an answer, receives or sends. The same watch reports
//! a transfer's progress a few times a second.

use super::settings::HttpSettings;
use boinc_runtime::effects::{ProgressSink, TransferProgress};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::time::{Duration, Instant};

/// How often progress is reported while bytes move.
const REPORT_EVERY: Duration = Duration::from_millis(500);

/// An exchange moved too little for too long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stalled {
    /// What happened, for the user.
    pub(crate) reason: String,
}

/// The progress sink of an exchange nobody follows byte by byte (an account manager
/// RPC): a plain function, so the watch can move between threads.
pub(crate) type NoProgress = fn(TransferProgress);

/// Watches one exchange; `S` takes its progress reports.
pub(crate) struct ExchangeWatch<S = ProgressSink> {
    /// Bytes this exchange moved (shared with a request body that counts what it sent).
    moved: Arc<AtomicU64>,
    window: Duration,
    min_bytes: u64,
    window_start: Instant,
    window_count: u64,
    started: Instant,
    /// Bytes of the file already held before this exchange, and its size if known.
    base: u64,
    total: Option<u64>,
    progress: Option<S>,
    last_report: Instant,
}

impl ExchangeWatch {
    /// A watch under `settings`' stall rule, starting now.
    pub(crate) fn new(settings: &HttpSettings) -> ExchangeWatch {
        ExchangeWatch::under(settings)
    }
}

impl ExchangeWatch<NoProgress> {
    /// A watch that reports no progress (its future is `Send`).
    pub(crate) fn silent(settings: &HttpSettings) -> ExchangeWatch<NoProgress> {
        ExchangeWatch::under(settings)
    }
}

impl<S: FnMut(TransferProgress)> ExchangeWatch<S> {
    fn under(settings: &HttpSettings) -> ExchangeWatch<S> {
        let window = settings.stall_timeout.max(Duration::from_millis(100));
        let min_bytes = (settings.min_rate * window.as_secs_f64()).ceil().max(1.0) as u64;
        let now = Instant::now();
        ExchangeWatch {
            moved: Arc::new(AtomicU64::new(0)),
            window,
            min_bytes,
            window_start: now,
            window_count: 0,
            started: now,
            base: 0,
            total: None,
            progress: None,
            last_report: now,
        }
    }

    /// Reports progress of a file of which `base` bytes were held before and whose size
    /// is `total`.
    pub(crate) fn reporting(mut self, progress: S, base: u64, total: Option<u64>) -> Self {
        self.progress = Some(progress);
        self.base = base;
        self.total = total;
        self
    }

    /// The file's bytes held before this exchange are `base` after all (a server that
    /// sends the whole file again).
    pub(crate) fn held_before(&mut self, base: u64) {
        self.base = base;
    }

    /// The counter a request body adds the bytes it sent to.
    pub(crate) fn counter(&self) -> Arc<AtomicU64> {
        self.moved.clone()
    }

    /// Bytes moved so far in this exchange.
    pub(crate) fn moved(&self) -> u64 {
        self.moved.load(Ordering::Relaxed)
    }

    /// `bytes` more moved.
    pub(crate) fn add(&mut self, bytes: u64) {
        self.moved.fetch_add(bytes, Ordering::Relaxed);
        let now = Instant::now();
        if now - self.last_report >= REPORT_EVERY {
            self.report(now);
        }
    }

    /// Waits for `future` while checking the stall rule and reporting progress.
    pub(crate) async fn watch<F: Future>(&mut self, future: F) -> Result<F::Output, Stalled> {
        let mut future = std::pin::pin!(future);
        loop {
            let window_end = self.window_start + self.window;
            let wake = match self.progress {
                Some(_) => window_end.min(self.last_report + REPORT_EVERY),
                None => window_end,
            };
            // The exchange first: bytes that arrive as a window ends count in it.
            tokio::select! {
                biased;
                output = &mut future => return Ok(output),
                () = tokio::time::sleep_until(wake) => {
                    let now = Instant::now();
                    if now >= window_end {
                        self.check_window(now)?;
                    }
                    if self.progress.is_some() && now - self.last_report >= REPORT_EVERY {
                        self.report(now);
                    }
                }
            }
        }
    }

    /// At the end of a window: enough bytes moved, or the exchange stalled.
    fn check_window(&mut self, now: Instant) -> Result<(), Stalled> {
        let count = self.moved();
        let moved = count - self.window_count;
        if moved < self.min_bytes {
            return Err(Stalled {
                reason: format!(
                    "{moved} bytes in {:.0} s, fewer than the {} the stall rule asks for \
                     (cc_config http_transfer_timeout, http_transfer_timeout_bps)",
                    self.window.as_secs_f64(),
                    self.min_bytes
                ),
            });
        }
        self.window_start = now;
        self.window_count = count;
        Ok(())
    }

    /// Reports the progress so far.
    pub(crate) fn report(&mut self, now: Instant) {
        self.last_report = now;
        let moved = self.moved();
        let seconds = (now - self.started).as_secs_f64();
        let rate = if seconds > 0.0 { moved as f64 / seconds } else { 0.0 };
        if let Some(progress) = self.progress.as_mut() {
            progress(TransferProgress { bytes: self.base + moved, total: self.total, rate });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use boinc_core::control::ClientIdentity;
    use boinc_core::model::CcConfig;

    fn settings(timeout: f64, bps: f64) -> HttpSettings {
        let config = CcConfig {
            http_transfer_timeout: timeout,
            http_transfer_timeout_bps: bps,
            ..CcConfig::default()
        };
        HttpSettings::new(&config, &ClientIdentity::default())
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_exchange_stalls_after_the_timeout() {
        let mut watch = ExchangeWatch::new(&settings(30.0, 10.0));
        let started = Instant::now();
        let outcome = watch.watch(std::future::pending::<()>()).await;
        assert!(outcome.is_err());
        assert_eq!(Instant::now() - started, Duration::from_secs(30));
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_but_steady_exchange_goes_on_and_a_trickle_stalls() {
        // 10 bytes a second is exactly the rate asked for: it goes on.
        let mut watch = ExchangeWatch::new(&settings(5.0, 10.0));
        let counter = watch.counter();
        let feeder = async {
            for _ in 0..20 {
                tokio::time::sleep(Duration::from_secs(1)).await;
                counter.fetch_add(10, Ordering::Relaxed);
            }
        };
        assert!(watch.watch(feeder).await.is_ok());
        // 9 bytes a second is not.
        let mut watch = ExchangeWatch::new(&settings(5.0, 10.0));
        let counter = watch.counter();
        let trickle = async {
            for _ in 0..20 {
                tokio::time::sleep(Duration::from_secs(1)).await;
                counter.fetch_add(9, Ordering::Relaxed);
            }
        };
        let stalled = watch.watch(trickle).await.expect_err("too slow");
        assert!(stalled.reason.contains("45 bytes in 5 s"), "{}", stalled.reason);
    }

    #[tokio::test(start_paused = true)]
    async fn progress_is_reported_while_waiting() {
        let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let sink = seen.clone();
        let mut watch = ExchangeWatch::new(&settings(60.0, 0.0)).reporting(
            Box::new(move |p| sink.borrow_mut().push(p.bytes)),
            100,
            Some(1000),
        );
        let counter = watch.counter();
        let work = async {
            for _ in 0..4 {
                tokio::time::sleep(Duration::from_millis(500)).await;
                counter.fetch_add(50, Ordering::Relaxed);
            }
        };
        watch.watch(work).await.expect("no stall");
        let seen = seen.borrow();
        assert!(seen.len() >= 3, "{seen:?}");
        assert!(seen.windows(2).all(|w| w[0] <= w[1]) && seen[0] >= 100, "{seen:?}");
    }
}
