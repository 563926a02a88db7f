//! The bytes the client moved each day (BOINC's daily transfer history, GUI RPC
//! `get_daily_xfer_history`, the Manager's Statistics of transfers): what the daily
//! transfer limit of the preferences is measured against. One entry per day with
//! traffic, the newest year kept.

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
