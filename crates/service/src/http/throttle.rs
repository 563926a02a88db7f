//! The preferences' transfer rate limits (docs/design.md "Protocol facts"; BOINC's
//! `max_bytes_sec_down` and `max_bytes_sec_up`): all the transfers of one direction
//! together move at most the limit, as in BOINC, so each chunk read or sent waits for
//! its share of time on one clock per direction.

use std::sync::{Arc, Mutex, PoisonError};
use tokio::time::{Duration, Instant};

/// The longest one chunk is made to wait, whatever the rate: a rate of a byte a day
/// would otherwise hold a transfer past any stall rule for ever.
const MAX_WAIT: Duration = Duration::from_secs(3600);

/// One direction's clock: when its next byte may move.
#[derive(Debug, Default)]
pub(crate) struct Throttle {
    next_free: Mutex<Option<Instant>>,
}

/// A transfer's pace: its direction's clock and the limit its order carries.
#[derive(Debug, Clone)]
pub(crate) struct Pace {
    throttle: Arc<Throttle>,
    rate: f64,
}

impl Pace {
    /// `rate` bytes per second on `throttle`'s clock; 0 (or anything not a positive
    /// number): no limit.
    pub(crate) fn new(throttle: Arc<Throttle>, rate: f64) -> Pace {
        Pace { throttle, rate }
    }

    /// Waits until `bytes` just moved are within the limit.
    pub(crate) async fn after(&self, bytes: usize) {
        if !(self.rate > 0.0 && self.rate.is_finite()) || bytes == 0 {
            return;
        }
        let share =
            Duration::try_from_secs_f64(bytes as f64 / self.rate).unwrap_or(MAX_WAIT).min(MAX_WAIT);
        let until = {
            let mut next = self.throttle.next_free.lock().unwrap_or_else(PoisonError::into_inner);
            let now = Instant::now();
            // Time left unused is not saved up: no burst after a pause.
            let start = next.filter(|free| *free > now).unwrap_or(now);
            let until = start + share;
            *next = Some(until);
            until
        };
        tokio::time::sleep_until(until).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn transfers_of_one_direction_share_the_rate() {
        let throttle = Arc::new(Throttle::default());
        let start = Instant::now();
        let a = Pace::new(throttle.clone(), 1000.0);
        let b = Pace::new(throttle.clone(), 1000.0);
        tokio::join!(
            async {
                a.after(500).await;
                a.after(500).await
            },
            async { b.after(1000).await }
        );
        assert_eq!(start.elapsed(), Duration::from_secs(2), "2000 bytes at 1000 B/s together");
        let free = Pace::new(Arc::new(Throttle::default()), 0.0);
        let before = Instant::now();
        free.after(1 << 30).await;
        assert_eq!(before.elapsed(), Duration::ZERO, "no limit");
        let crawl = Pace::new(Arc::new(Throttle::default()), 1e-9);
        crawl.after(1).await;
        assert_eq!(before.elapsed(), MAX_WAIT, "bounded");
    }
}
