//! Seed 004 "Project Deletion Policy" and "Using a Project Deletion Policy": the order in
//! which a project's expendable files go.
//!
//! - Priority (`<deletion_policy_priority/>`): lowest `<priority>` first (P_LOW 1,
//!   P_MEDIUM 3, P_HIGH 5; P_LOW when the template gives none), oldest download first
//!   within a priority.
//! - Expiration (`<deletion_policy_expire/>`): files past their expiration date
//!   (download + `<exp_days>`, 60 days by default) go before all others.
//! - Least recently used, the default and always the final order: the file whose last
//!   use lies furthest back goes first. (The seed's prose says "the last file to be
//!   downloaded/uploaded is deleted first", which contradicts the policy's name and its
//!   `time_last_used` field; boinc-rs follows the name.)
//!
//! With both flags, expired files go first, then by priority. Expiry counts only for a
//! project with the expiration policy: under the others a file's date is never reached
//! ("files will not be guaranteed to survive more than sixty days if
//! `<deletion_policy_expire>` is true"). A file whose download time is unknown (0) has
//! no known expiration date and never expires.

use super::limits::{occupies_disk, sane_bytes};
use super::references::FileReferences;
use crate::Time;
use crate::model::{ClientState, FileId, FileInfo, ProjectId, SECONDS_PER_DAY};
use std::cmp::Ordering;
use std::fmt;

/// The lowest deletion priority (deleted first); every file's default.
pub const P_LOW: i32 = 1;
/// The middle deletion priority.
pub const P_MEDIUM: i32 = 3;
/// The highest deletion priority (deleted last).
pub const P_HIGH: i32 = 5;
/// Days a file lives under the expiration policy unless its template says otherwise.
pub const DEFAULT_EXP_DAYS: f64 = 60.0;

/// A file's deletion priority: its template's `<priority>`, P_LOW without one, kept
/// within P_LOW..=P_HIGH.
pub fn file_priority(file: &FileInfo) -> i32 {
    file.priority.unwrap_or(P_LOW).clamp(P_LOW, P_HIGH)
}

/// When the file expires: its download time plus `<exp_days>` (default 60 days); `None`
/// when the download time is unknown.
pub fn expiration_date(file: &FileInfo) -> Option<Time> {
    let days = file.exp_days.filter(|d| d.is_finite() && *d >= 0.0).unwrap_or(DEFAULT_EXP_DAYS);
    (file.download_time > 0.0).then_some(file.download_time + days * SECONDS_PER_DAY)
}

/// Whether the file's expiration date has passed ("is less than the time now").
pub fn is_expired(file: &FileInfo, now: Time) -> bool {
    expiration_date(file).is_some_and(|date| date < now)
}

/// Why a file is where it is in its project's deletion order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeletionReason {
    /// Past its expiration date (expiration policy).
    Expired,
    /// Its deletion priority, lowest first (priority policy).
    Priority(i32),
    /// Least recently used (the default policy).
    LeastRecentlyUsed,
}

impl fmt::Display for DeletionReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeletionReason::Expired => f.write_str("expired"),
            DeletionReason::Priority(p) => write!(f, "priority {p}"),
            DeletionReason::LeastRecentlyUsed => f.write_str("least recently used"),
        }
    }
}

/// A file that may be deleted, with what its project's policy says about it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeletionCandidate {
    /// The file.
    pub file: FileId,
    /// Its project.
    pub project: ProjectId,
    /// Bytes deleting it frees.
    pub nbytes: f64,
    /// Its deletion priority.
    pub priority: i32,
    /// Past its expiration date under a project with the expiration policy.
    pub expired: bool,
    /// Why it stands where it stands.
    pub reason: DeletionReason,
    /// When it was last used (its download time when never used since).
    last_used: Time,
    /// When it was downloaded.
    download_time: Time,
}

impl DeletionCandidate {
    /// The candidate a file makes under its project's policy (the file must exist).
    pub(crate) fn of(state: &ClientState, file: FileId, now: Time) -> DeletionCandidate {
        let info = state.file(file);
        let policy =
            state.projects.get(info.project.index()).map(|p| p.deletion_policy).unwrap_or_default();
        let priority = file_priority(info);
        let expired = policy.expire && is_expired(info, now);
        let reason = if expired {
            DeletionReason::Expired
        } else if policy.priority {
            DeletionReason::Priority(priority)
        } else {
            DeletionReason::LeastRecentlyUsed
        };
        let last_used =
            if info.time_last_used > 0.0 { info.time_last_used } else { info.download_time };
        DeletionCandidate {
            file,
            project: info.project,
            nbytes: sane_bytes(info.nbytes),
            priority,
            expired,
            reason,
            last_used,
            download_time: info.download_time,
        }
    }

    /// Whether the candidate may go when files up to `max_priority` may (seed 004:
    /// "delete ... the lowest priority/expired files"); expired files always may.
    pub fn deletable_at(&self, max_priority: i32) -> bool {
        self.expired || self.priority <= max_priority
    }

    /// The deletion order: expired first, then (priority policy) lowest priority and
    /// oldest download, then least recently used, then file id for determinism.
    fn order(&self, other: &Self, by_priority: bool) -> Ordering {
        other
            .expired
            .cmp(&self.expired)
            .then_with(|| {
                if by_priority {
                    self.priority
                        .cmp(&other.priority)
                        .then(self.download_time.total_cmp(&other.download_time))
                } else {
                    Ordering::Equal
                }
            })
            .then(self.last_used.total_cmp(&other.last_used))
            .then(self.file.cmp(&other.file))
    }
}

/// Every project's expendable files (on disk, taking space, referenced by nothing), each
/// project's in the order its deletion policy deletes them; indexed by [`ProjectId`].
pub fn deletion_orders(
    state: &ClientState,
    references: &FileReferences,
    now: Time,
) -> Vec<Vec<DeletionCandidate>> {
    let mut orders = vec![Vec::new(); state.projects.len()];
    for (index, info) in state.files.iter().enumerate() {
        let file = FileId::from_index(index);
        if occupies_disk(info)
            && sane_bytes(info.nbytes) > 0.0
            && !references.is_referenced(file)
            && let Some(order) = orders.get_mut(info.project.index())
        {
            order.push(DeletionCandidate::of(state, file, now));
        }
    }
    for (project, order) in state.projects.iter().zip(&mut orders) {
        let by_priority = project.deletion_policy.priority;
        order.sort_by(|a, b| a.order(b, by_priority));
    }
    orders
}

/// One project's expendable files in the order its deletion policy deletes them.
pub fn deletion_order(
    state: &ClientState,
    project: ProjectId,
    now: Time,
) -> Vec<DeletionCandidate> {
    let references = FileReferences::of(state);
    deletion_orders(state, &references, now).into_iter().nth(project.index()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::tests_support::DiskStateBuilder;
    use crate::model::DeletionPolicy;

    const DAY: f64 = SECONDS_PER_DAY;

    fn order(b: &DiskStateBuilder, now: Time) -> Vec<FileId> {
        deletion_order(&b.state, ProjectId(0), now).iter().map(|c| c.file).collect()
    }

    #[test]
    fn least_recently_used_is_the_default() {
        let mut b = DiskStateBuilder::new(&[1.0]);
        let newest = b.file(0, 10.0, true, 300.0);
        let oldest = b.file(0, 10.0, true, 100.0);
        let used_late = b.file(0, 10.0, true, 50.0);
        b.state.files[used_late.index()].time_last_used = 400.0;
        // Priorities mean nothing to the default policy's order.
        b.state.files[oldest.index()].priority = Some(P_HIGH);
        assert_eq!(order(&b, 500.0), vec![oldest, newest, used_late]);
        let reasons: Vec<_> =
            deletion_order(&b.state, ProjectId(0), 500.0).iter().map(|c| c.reason).collect();
        assert!(reasons.iter().all(|r| *r == DeletionReason::LeastRecentlyUsed));
    }

    #[test]
    fn priority_policy_deletes_lowest_priority_then_oldest_download() {
        let mut b = DiskStateBuilder::new(&[1.0]);
        b.state.projects[0].deletion_policy =
            DeletionPolicy { priority: true, ..Default::default() };
        let high_old = b.file(0, 10.0, true, 100.0);
        let low_new = b.file(0, 10.0, true, 300.0);
        let low_old = b.file(0, 10.0, true, 200.0);
        let medium = b.file(0, 10.0, true, 50.0);
        b.state.files[high_old.index()].priority = Some(P_HIGH);
        b.state.files[medium.index()].priority = Some(P_MEDIUM);
        assert_eq!(order(&b, 500.0), vec![low_old, low_new, medium, high_old]);
        let first = deletion_order(&b.state, ProjectId(0), 500.0)[0];
        assert_eq!(first.reason, DeletionReason::Priority(P_LOW));
        assert!(first.deletable_at(P_LOW));
        assert!(!deletion_order(&b.state, ProjectId(0), 500.0)[2].deletable_at(P_LOW));
    }

    #[test]
    fn expiration_policy_deletes_expired_files_first() {
        let mut b = DiskStateBuilder::new(&[1.0]);
        b.state.projects[0].deletion_policy = DeletionPolicy { expire: true, ..Default::default() };
        let fresh_old = b.file(0, 10.0, true, 10.0 * DAY);
        let expired_default = b.file(0, 10.0, true, 20.0 * DAY);
        let short_lived = b.file(0, 10.0, true, 75.0 * DAY);
        b.state.files[short_lived.index()].exp_days = Some(1.0);
        b.state.files[fresh_old.index()].exp_days = Some(100.0);
        let now = 81.0 * DAY;
        // Expired: 20 + 60 = 80 < 81 and 75 + 1 = 76 < 81; 10 + 100 is in the future.
        assert_eq!(order(&b, now), vec![expired_default, short_lived, fresh_old]);
        let candidates = deletion_order(&b.state, ProjectId(0), now);
        assert_eq!(candidates[0].reason, DeletionReason::Expired);
        assert!(candidates[1].deletable_at(P_LOW - 1));
        assert_eq!(candidates[2].reason, DeletionReason::LeastRecentlyUsed);
        // The same files under the default policy never expire.
        b.state.projects[0].deletion_policy = DeletionPolicy::default();
        assert_eq!(order(&b, now), vec![fresh_old, expired_default, short_lived]);
    }

    #[test]
    fn expiration_needs_a_known_download_time() {
        let mut b = DiskStateBuilder::new(&[1.0]);
        let file = b.file(0, 10.0, true, 0.0);
        assert_eq!(expiration_date(b.state.file(file)), None);
        assert!(!is_expired(b.state.file(file), 1e12));
        b.state.files[file.index()].download_time = DAY;
        assert_eq!(expiration_date(b.state.file(file)), Some(61.0 * DAY));
    }

    #[test]
    fn needed_absent_and_empty_files_are_no_candidates() {
        let mut b = DiskStateBuilder::new(&[1.0]);
        let needed = b.file(0, 10.0, true, 1.0);
        b.job(0, &[needed], &[], false);
        let absent = b.file(0, 10.0, true, 1.0);
        b.state.files[absent.index()].status = crate::model::FileStatus::NotPresent;
        b.file(0, 0.0, true, 1.0);
        let executable = b.file(0, 10.0, false, 1.0);
        b.state.files[executable.index()].executable = true;
        let expendable = b.file(0, 10.0, false, 1.0);
        assert_eq!(order(&b, 10.0), vec![expendable]);
        assert_eq!(
            file_priority(&FileInfo { priority: Some(9), ..b.state.file(needed).clone() }),
            P_HIGH
        );
    }
}
