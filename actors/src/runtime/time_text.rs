//! Times in the log as people read them (docs/design.md "The drivers": the runtime's time
//! is seconds since the Unix epoch): `Fri, 27 Nov 2026 03:03:20 GMT`, not `1795748600.5`.

use boinc_core::Time;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A time, shown as an HTTP date in UTC (whole seconds); one that is not a date (before
/// the epoch, not finite, past the year 9999) is shown as the number it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeText(pub Time);

/// The last second httpdate can write (the end of the year 9999).
const LAST_DATE: f64 = 253_402_300_799.0;

impl std::fmt::Display for TimeText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let seconds = self.0;
        if !(0.0..=LAST_DATE).contains(&seconds) {
            return write!(f, "{seconds}");
        }
        let time: SystemTime = UNIX_EPOCH + Duration::from_secs_f64(seconds);
        f.write_str(&httpdate::fmt_http_date(time))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_is_a_date_and_a_non_date_its_number() {
        assert_eq!(TimeText(1_795_748_600.5).to_string(), "Fri, 27 Nov 2026 03:03:20 GMT");
        assert_eq!(TimeText(-1.0).to_string(), "-1");
        assert_eq!(TimeText(f64::INFINITY).to_string(), "inf");
        assert_eq!(TimeText(f64::NAN).to_string(), "NaN");
    }
}
