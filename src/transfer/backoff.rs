//! Retries of file transfers, as BOINC's client has them: each file tries its URLs in
//! turn and, once a round of them has failed, waits a randomised exponential backoff
//! (PERS_RETRY_DELAY_MIN 60 s to PERS_RETRY_DELAY_MAX 4 h) before the next round; a file
//! that makes no progress for PERS_GIVEUP (90 days) is given up. Beside that, a
//! project whose transfers in one direction keep failing (FILE_XFER_FAILURE_LIMIT, 3
//! rounds in a row) backs off all of them for a while, so that a hundred outputs of a
//! project whose upload server is down are not each tried in turn.

use crate::Time;
use crate::model::{SECONDS_PER_DAY, TransferBackoff};
use crate::rpc_policy::exponential_backoff;
use rand::Rng;

/// The shortest wait before a file's next round of attempts, seconds.
pub const TRANSFER_RETRY_MIN: f64 = 60.0;

/// The longest wait before a file's next round of attempts, seconds (4 hours).
pub const TRANSFER_RETRY_MAX: f64 = 14_400.0;

/// A transfer that moved no byte for this long is given up (90 days).
pub const TRANSFER_GIVE_UP_AFTER: f64 = 90.0 * SECONDS_PER_DAY;

/// Failed rounds in a row after which a project's transfers in that direction back
/// off together.
pub const PROJECT_BACKOFF_AFTER: u32 = 3;

/// The wait before the next round of a file whose rounds failed `retries` times (at
/// least once): min(60 · 2ⁿ, 14400) × U[0.5, 1).
pub fn file_retry_delay(retries: u32, rng: &mut impl Rng) -> f64 {
    exponential_backoff(retries, TRANSFER_RETRY_MIN, TRANSFER_RETRY_MAX, rng)
}

/// Whether the project may start a transfer in this direction at `now`. A backoff
/// reaching further than the longest one can only come from a clock set back: it is
/// ignored.
pub fn project_may_transfer(backoff: &TransferBackoff, now: Time) -> bool {
    let wait = backoff.next_time - now;
    wait <= 0.0 || wait > TRANSFER_RETRY_MAX
}

/// A round of one of the project's files failed at `now`. A failure while the project
/// is already backed off changes nothing (the outputs of one job that fail together
/// count once); from the [`PROJECT_BACKOFF_AFTER`]th in a row the project backs off.
pub fn project_transfer_failed(backoff: &mut TransferBackoff, now: Time, rng: &mut impl Rng) {
    if now < backoff.next_time {
        return;
    }
    backoff.failures = backoff.failures.saturating_add(1);
    backoff.next_time = if backoff.failures < PROJECT_BACKOFF_AFTER {
        0.0
    } else {
        now + exponential_backoff(backoff.failures, TRANSFER_RETRY_MIN, TRANSFER_RETRY_MAX, rng)
    };
}

/// One of the project's transfers in this direction succeeded: the backoff is over.
pub fn project_transfer_succeeded(backoff: &mut TransferBackoff) {
    *backoff = TransferBackoff::default();
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn file_retries_double_within_their_bounds() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for retries in 1..20 {
            let delay = file_retry_delay(retries, &mut rng);
            let base = (60.0 * 2f64.powi(retries as i32)).min(TRANSFER_RETRY_MAX);
            assert!(delay >= base * 0.5 && delay < base, "{retries}: {delay}");
        }
        assert!(file_retry_delay(u32::MAX, &mut rng) < TRANSFER_RETRY_MAX);
    }

    #[test]
    fn a_project_backs_off_from_the_third_failure_in_a_row() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut backoff = TransferBackoff::default();
        project_transfer_failed(&mut backoff, 100.0, &mut rng);
        project_transfer_failed(&mut backoff, 110.0, &mut rng);
        assert_eq!((backoff.failures, backoff.next_time), (2, 0.0));
        assert!(project_may_transfer(&backoff, 110.0));
        project_transfer_failed(&mut backoff, 120.0, &mut rng);
        assert_eq!(backoff.failures, 3);
        let until = backoff.next_time;
        assert!((120.0 + 240.0..120.0 + 480.0).contains(&until), "{until}");
        assert!(!project_may_transfer(&backoff, 130.0));
        // Failures while backed off do not push it further.
        project_transfer_failed(&mut backoff, 130.0, &mut rng);
        assert_eq!((backoff.failures, backoff.next_time), (3, until));
        assert!(project_may_transfer(&backoff, until));
        // A clock set back by a day does not leave the project stuck.
        assert!(project_may_transfer(&backoff, until - 86_400.0));
        project_transfer_succeeded(&mut backoff);
        assert_eq!(backoff, TransferBackoff::default());
    }
}
