//! The bytes the client moved each day (BOINC's daily transfer history, GUI RPC
//! `get_daily_xfer_history`, the Manager's Statistics of transfers): what the daily
//! transfer limit of the preferences is measured against (`daily_xfer_limit_mb` over
//! `daily_xfer_period_days`, megabytes of 2^20 bytes as BOINC counts them). One entry per
//! day with traffic, the newest year kept.

use crate::Time;
use serde::{Deserialize, Serialize};

/// Seconds in a day.
const DAY: f64 = 86_400.0;
/// Days of history kept.
pub const DAILY_TRANSFER_DAYS: i64 = 365;

/// The bytes moved on one day.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct DailyTransfer {
    /// The day, counted from 1 January 1970 (`<when>`).
    pub day: i64,
    /// Bytes uploaded (`<up>`).
    pub up: f64,
    /// Bytes downloaded (`<down>`).
    pub down: f64,
}

/// The day `now` falls on.
pub fn day_of(now: Time) -> i64 {
    if now.is_finite() { (now / DAY).floor() as i64 } else { 0 }
}

/// The bytes one megabyte of `daily_xfer_limit_mb` is (BOINC's `MEGA`).
const MEGABYTE: f64 = 1_048_576.0;

/// Whether the transfers of the last `period_days` days (today included) in `history`
/// reached `limit_mb` at `now`; never when either is 0 (no limit). Then no new transfer
/// starts until [`transfer_limit_moves`], when the oldest day leaves the window.
pub fn over_transfer_limit(
    history: &[DailyTransfer],
    limit_mb: f64,
    period_days: u32,
    now: Time,
) -> bool {
    if limit_mb.is_nan() || limit_mb <= 0.0 || period_days == 0 {
        return false;
    }
    let first_day = day_of(now) - i64::from(period_days) + 1;
    let moved: f64 = history.iter().filter(|d| d.day >= first_day).map(|d| d.up + d.down).sum();
    moved >= limit_mb * MEGABYTE
}

/// When the window of [`over_transfer_limit`] next moves: the start of the next day.
pub fn transfer_limit_moves(now: Time) -> Time {
    (day_of(now) + 1) as f64 * DAY
}

/// Adds `bytes` moved at `now` (up or down) to `history`, oldest day first; days older
/// than a year go. A clock set back adds to the newest day rather than reorder the list.
pub fn record_transfer(history: &mut Vec<DailyTransfer>, now: Time, bytes: f64, upload: bool) {
    if !(bytes.is_finite() && bytes > 0.0) {
        return;
    }
    let today = day_of(now);
    let entry = match history.last_mut() {
        Some(last) if last.day >= today => last,
        _ => {
            history.push(DailyTransfer { day: today, up: 0.0, down: 0.0 });
            let oldest_kept = today - DAILY_TRANSFER_DAYS;
            history.retain(|d| d.day > oldest_kept);
            let Some(last) = history.last_mut() else { return };
            last
        }
    };
    if upload {
        entry.up += bytes;
    } else {
        entry.down += bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_counts_the_periods_days_both_ways_and_lifts_as_the_window_moves() {
        let mb = MEGABYTE;
        let history = [
            DailyTransfer { day: 8, up: 50.0 * mb, down: 0.0 },
            DailyTransfer { day: 9, up: 2.0 * mb, down: 3.0 * mb },
            DailyTransfer { day: 10, up: 0.0, down: 5.0 * mb },
        ];
        let now = 10.0 * DAY + 100.0;
        assert!(over_transfer_limit(&history, 10.0, 2, now), "days 9 and 10: 10 MB");
        assert!(!over_transfer_limit(&history, 10.5, 2, now));
        assert!(over_transfer_limit(&history, 60.0, 3, now), "day 8 too");
        assert!(!over_transfer_limit(&history, 10.0, 1, now), "today alone: 5 MB");
        assert!(!over_transfer_limit(&history, 0.0, 2, now), "no limit");
        assert!(!over_transfer_limit(&history, 10.0, 0, now), "no period");
        assert!(!over_transfer_limit(&history, f64::NAN, 2, now));
        assert_eq!(transfer_limit_moves(now), 11.0 * DAY);
        // The next day, day 9 has left the two-day window.
        assert!(!over_transfer_limit(&history, 10.0, 2, transfer_limit_moves(now)));
    }

    #[test]
    fn bytes_add_up_by_day_and_a_year_is_kept() {
        let mut history = Vec::new();
        record_transfer(&mut history, 10.0 * DAY + 5.0, 100.0, false);
        record_transfer(&mut history, 10.0 * DAY + 50.0, 30.0, true);
        record_transfer(&mut history, 11.0 * DAY, 7.0, false);
        record_transfer(&mut history, 11.0 * DAY, f64::NAN, false);
        record_transfer(&mut history, 11.0 * DAY, -3.0, true);
        assert_eq!(
            history,
            [
                DailyTransfer { day: 10, up: 30.0, down: 100.0 },
                DailyTransfer { day: 11, up: 0.0, down: 7.0 }
            ]
        );
        // A clock set back counts on the newest day.
        record_transfer(&mut history, 3.0 * DAY, 1.0, true);
        assert_eq!(history[1].up, 1.0);
        record_transfer(&mut history, 400.0 * DAY, 1.0, true);
        assert_eq!(history.iter().map(|d| d.day).collect::<Vec<_>>(), [400]);
    }
}
