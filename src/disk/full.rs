//! Whether the disk is full (issue "Failure paths a fleet hits"): the room boinc-rs may
//! still use, by the disk itself and by the user's disk limits (seed 004's Total_Limit),
//! is below [`MIN_ROOM`]. A full disk holds back what would only fail on it: downloads
//! and work requests wait until a disk poll finds room again. An unknown disk (a total
//! of 0, as a state before its first measurement has) is never full.

use super::limits::DiskUsage;
use crate::model::ClientState;

/// The least room, bytes, below which the disk counts as full.
pub const MIN_ROOM: f64 = 1_048_576.0;

/// Whether the disk is full for boinc-rs: less than [`MIN_ROOM`] free on the disk, or
/// left within the user's limits.
pub fn disk_full(state: &ClientState) -> bool {
    room(state) < MIN_ROOM
}

/// The bytes boinc-rs may still write: what the disk has free, and what the user's
/// limits leave; infinite for an unknown disk.
pub fn room(state: &ClientState) -> f64 {
    let host = &state.host;
    if !(host.d_total.is_finite() && host.d_total > 0.0) {
        return f64::INFINITY;
    }
    let free = if host.d_free.is_finite() { host.d_free.max(0.0) } else { 0.0 };
    free.min(DiskUsage::measure(state, 0.0).free_space())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_disk_is_full_by_its_free_space_or_by_the_users_limit() {
        let mut state = ClientState::default();
        assert!(!disk_full(&state), "an unknown disk is not full");
        state.host.d_total = 100e9;
        state.host.d_free = 50e9;
        assert!(!disk_full(&state));
        state.host.d_free = 1000.0;
        assert!(disk_full(&state), "a disk with a kilobyte free");
        state.host.d_free = 50e9;
        state.prefs.disk_max_used_gb = 1e-6;
        assert!(disk_full(&state), "a limit of a kilobyte");
    }
}
