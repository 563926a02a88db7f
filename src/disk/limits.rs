//! Seed 004's quantities: Total_Limit (from the preferences, the disk's size and its free
//! space), Core_Usage, all_Projects_limit = Total_Limit − Core_Usage, Project_limit(p) =
//! all_Projects_limit × p's share fraction, Project_usage(p) and free_space =
//! all_Projects_limit − all_Project_usage.
//!
//! Preferences follow BOINC: `disk_max_used_gb` 0 means no absolute limit, and a GB is
//! 10⁹ bytes. A `disk_max_used_pct` of 0 is read the same way as "no limit" (a 0 % limit
//! would forbid BOINC any disk at all, which no user means). A host whose disk size is
//! unknown (`d_total` 0, as in hand-made scenarios) has no percentage or minimum-free
//! limit, so without `disk_max_used_gb` the limit is infinite and nothing is deleted.

use crate::model::{ClientState, FileInfo, FileStatus, Host, Prefs, ProjectId};
use serde::Serialize;

/// Bytes in one of the preferences' gigabytes (BOINC counts disk in powers of ten).
pub const BYTES_PER_GB: f64 = 1e9;

/// Whether a file takes space on disk now: downloaded (or written) and not deleted.
pub fn occupies_disk(file: &FileInfo) -> bool {
    file.status == FileStatus::Present
}

/// Project_usage(p) for every project (indexed by [`ProjectId`]): bytes of its files on
/// disk.
pub fn project_usage(state: &ClientState) -> Vec<f64> {
    let mut usage = vec![0.0; state.projects.len()];
    for file in state.files.iter().filter(|f| occupies_disk(f)) {
        if let Some(total) = usage.get_mut(file.project.index()) {
            *total += sane_bytes(file.nbytes);
        }
    }
    usage
}

/// A byte count the sums can use: corrupt values count as nothing.
pub(crate) fn sane_bytes(nbytes: f64) -> f64 {
    if nbytes.is_finite() && nbytes > 0.0 { nbytes } else { 0.0 }
}

/// Total_Limit: the bytes BOINC as a whole may use, the smallest of `disk_max_used_gb`,
/// `disk_max_used_pct` of the disk, and what leaves `disk_min_free_gb` free.
/// `boinc_usage` is what BOINC uses now (core and projects): `d_free` is measured with
/// those files on disk, so they count as space BOINC may keep.
pub fn total_limit(prefs: &Prefs, host: &Host, boinc_usage: f64) -> f64 {
    let positive = |x: f64| x.is_finite() && x > 0.0;
    let mut limit = f64::INFINITY;
    if positive(prefs.disk_max_used_gb) {
        limit = limit.min(prefs.disk_max_used_gb * BYTES_PER_GB);
    }
    if positive(host.d_total) {
        if positive(prefs.disk_max_used_pct) {
            limit = limit.min(host.d_total * prefs.disk_max_used_pct.min(100.0) / 100.0);
        }
        let min_free = if positive(prefs.disk_min_free_gb) {
            prefs.disk_min_free_gb * BYTES_PER_GB
        } else {
            0.0
        };
        let free = if host.d_free.is_finite() { host.d_free.max(0.0) } else { 0.0 };
        limit = limit.min(sane_bytes(boinc_usage) + free - min_free);
    }
    limit.max(0.0)
}

/// Each project's fraction of the total resource share (equal fractions when no project
/// has a positive share), indexed by [`ProjectId`].
fn share_fractions(state: &ClientState) -> Vec<f64> {
    let total = state.total_share(|_| true);
    let n = state.projects.len() as f64;
    state
        .projects
        .iter()
        .map(|p| if total > 0.0 { p.resource_share.max(0.0) / total } else { 1.0 / n })
        .collect()
}

/// The limits of seed 004 at one moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiskLimits {
    /// Total_Limit, bytes.
    pub total_limit: f64,
    /// Core_Usage: what the client itself uses, bytes.
    pub core_usage: f64,
    /// all_Projects_limit = Total_Limit − Core_Usage (at least 0), bytes.
    pub all_projects_limit: f64,
    /// Project_limit(p) = all_Projects_limit × p's share fraction, by [`ProjectId`].
    pub project_limits: Vec<f64>,
}

impl DiskLimits {
    /// The limits for a state whose projects use `project_usage` bytes each.
    pub fn new(state: &ClientState, core_usage: f64, project_usage: &[f64]) -> DiskLimits {
        let core_usage = sane_bytes(core_usage);
        let boinc_usage = core_usage + project_usage.iter().copied().map(sane_bytes).sum::<f64>();
        let total_limit = total_limit(&state.prefs, &state.host, boinc_usage);
        let all_projects_limit = (total_limit - core_usage).max(0.0);
        let project_limits =
            share_fractions(state).into_iter().map(|f| f * all_projects_limit).collect();
        DiskLimits { total_limit, core_usage, all_projects_limit, project_limits }
    }

    /// Project_limit(p); 0 for a project the limits don't know.
    pub fn project_limit(&self, project: ProjectId) -> f64 {
        self.project_limits.get(project.index()).copied().unwrap_or(0.0)
    }
}

/// The limits together with every project's usage: what offenders, deletion and the
/// free-space figures are computed from. Deleting a file lowers its project's usage and
/// leaves the limits as they are (the free space the file leaves behind is BOINC's to
/// use again).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiskUsage {
    /// The limits.
    pub limits: DiskLimits,
    /// Project_usage(p), bytes, by [`ProjectId`].
    pub project_usage: Vec<f64>,
}

impl DiskUsage {
    /// Measures a state: its present files' sizes and the limits they imply.
    pub fn measure(state: &ClientState, core_usage: f64) -> DiskUsage {
        let project_usage = project_usage(state);
        let limits = DiskLimits::new(state, core_usage, &project_usage);
        DiskUsage { limits, project_usage }
    }

    /// all_Project_usage: bytes all projects use.
    pub fn all_projects_usage(&self) -> f64 {
        self.project_usage.iter().sum()
    }

    /// free_space = all_Projects_limit − all_Project_usage (negative in a violation).
    pub fn free_space(&self) -> f64 {
        self.limits.all_projects_limit - self.all_projects_usage()
    }

    /// Project_usage(p) − Project_limit(p): positive for an offender.
    pub fn overage(&self, project: ProjectId) -> f64 {
        let usage = self.project_usage.get(project.index()).copied().unwrap_or(0.0);
        usage - self.limits.project_limit(project)
    }

    /// Whether BOINC uses more than the user allows (seed 004 "Violating User Disk Usage
    /// Preferences").
    pub fn is_violated(&self) -> bool {
        self.all_projects_usage() > self.limits.all_projects_limit
    }

    /// Accounts a file of `project` leaving the disk.
    pub(crate) fn remove(&mut self, project: ProjectId, nbytes: f64) {
        if let Some(usage) = self.project_usage.get_mut(project.index()) {
            *usage = (*usage - sane_bytes(nbytes)).max(0.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Project;

    const GB: f64 = BYTES_PER_GB;

    fn host(d_total: f64, d_free: f64) -> Host {
        Host { d_total, d_free, ..Host::default() }
    }

    #[test]
    fn total_limit_is_the_smallest_of_the_three_preferences() {
        let prefs = Prefs {
            disk_max_used_gb: 50.0,
            disk_max_used_pct: 10.0,
            disk_min_free_gb: 1.0,
            ..Prefs::default()
        };
        // 10 % of 1000 GB = 100 GB; 50 GB wins.
        assert_eq!(total_limit(&prefs, &host(1000.0 * GB, 500.0 * GB), 0.0), 50.0 * GB);
        // Only 21 GB free, 5 GB of it BOINC's own: 5 + 21 − 1 = 25 GB.
        assert_eq!(total_limit(&prefs, &host(1000.0 * GB, 21.0 * GB), 5.0 * GB), 25.0 * GB);
        // No absolute limit: 10 % of the disk.
        let prefs = Prefs { disk_max_used_gb: 0.0, ..prefs };
        assert_eq!(total_limit(&prefs, &host(1000.0 * GB, 500.0 * GB), 0.0), 100.0 * GB);
        // A full disk leaves nothing, never a negative limit.
        assert_eq!(total_limit(&prefs, &host(1000.0 * GB, 0.0), 0.0), 0.0);
    }

    #[test]
    fn unknown_disk_and_no_absolute_limit_means_no_limit() {
        assert_eq!(total_limit(&Prefs::default(), &host(0.0, 0.0), 0.0), f64::INFINITY);
        let prefs = Prefs { disk_max_used_gb: 2.0, ..Prefs::default() };
        assert_eq!(total_limit(&prefs, &host(0.0, 0.0), 0.0), 2.0 * GB);
    }

    #[test]
    fn project_limits_split_what_the_core_leaves_by_share() {
        let mut state = ClientState::default();
        state.prefs.disk_max_used_gb = 10.0;
        state.projects.push(Project::new("a", "http://a/", 300.0));
        state.projects.push(Project::new("b", "http://b/", 100.0));
        let limits = DiskLimits::new(&state, 2.0 * GB, &[0.0, 0.0]);
        assert_eq!(limits.all_projects_limit, 8.0 * GB);
        assert_eq!(limits.project_limit(ProjectId(0)), 6.0 * GB);
        assert_eq!(limits.project_limit(ProjectId(1)), 2.0 * GB);
        assert_eq!(limits.project_limit(ProjectId(7)), 0.0);
        // A core bigger than the limit leaves the projects nothing.
        assert_eq!(DiskLimits::new(&state, 20.0 * GB, &[0.0, 0.0]).all_projects_limit, 0.0);
    }
}
