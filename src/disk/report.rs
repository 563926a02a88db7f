//! The disk manager's state at one instant, for `boinc-rs explain` (seed 004): the limits,
//! each project's usage against its share, and the files violation handling would
//! delete now, in order, with the reason each one goes first.

use super::limits::{BYTES_PER_GB, DiskUsage};
use super::offender::is_offender;
use super::violation::{DataManager, DiskEffect, data_manager_poll};
use crate::Time;
use crate::model::{ClientState, project_labels};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The limits and totals, bytes (`null` in JSON where there is no limit).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiskLimitsReport {
    /// Total_Limit.
    pub total_limit: f64,
    /// Core_Usage.
    pub core_usage: f64,
    /// all_Projects_limit.
    pub all_projects_limit: f64,
    /// all_Project_usage.
    pub all_projects_usage: f64,
    /// free_space (negative in a violation).
    pub free_space: f64,
}

/// One project's usage against its share, bytes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiskProjectReport {
    /// Project_usage(p).
    pub usage: f64,
    /// Project_limit(p).
    pub limit: f64,
    /// It uses more than its limit.
    pub offender: bool,
}

/// A file violation handling would delete now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeleteNextReport {
    /// File name.
    pub file: String,
    /// Project name.
    pub project: String,
    /// Bytes it frees.
    pub nbytes: f64,
    /// Why it goes before the project's other files (`expired`, `priority N`, `least
    /// recently used`).
    pub reason: String,
}

/// The disk section of `explain`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiskReport {
    /// Limits and totals.
    pub limits: DiskLimitsReport,
    /// Per project, keyed by name.
    pub projects: BTreeMap<String, DiskProjectReport>,
    /// What `data_manager_poll` would delete now, in order (empty without a violation).
    pub delete_next: Vec<DeleteNextReport>,
    /// The disk is full (`disk::disk_full`): new tasks wait for room (a running one runs
    /// on), no work is asked for and downloads wait.
    pub full: bool,
}

impl DiskReport {
    /// The report for a state at `now`; `core_usage` is what the client itself uses.
    pub fn new(state: &ClientState, core_usage: f64, now: Time) -> DiskReport {
        let usage = DiskUsage::measure(state, core_usage);
        let limits = DiskLimitsReport {
            total_limit: usage.limits.total_limit,
            core_usage: usage.limits.core_usage,
            all_projects_limit: usage.limits.all_projects_limit,
            all_projects_usage: usage.all_projects_usage(),
            free_space: usage.free_space(),
        };
        let labels = project_labels(&state.projects);
        let projects = state
            .project_ids()
            .map(|p| {
                let report = DiskProjectReport {
                    usage: usage.project_usage[p.index()],
                    limit: usage.limits.project_limit(p),
                    offender: is_offender(&usage, p),
                };
                (labels[p.index()].clone(), report)
            })
            .collect();
        let outcome = data_manager_poll(&mut DataManager::default(), state, core_usage, now);
        let delete_next = outcome
            .effects
            .iter()
            .filter_map(|effect| match effect {
                DiskEffect::Delete(d) => Some(DeleteNextReport {
                    file: state.file(d.file).name.clone(),
                    project: labels[d.project.index()].clone(),
                    nbytes: d.nbytes,
                    reason: d.reason.to_string(),
                }),
                _ => None,
            })
            .collect();
        DiskReport { limits, projects, delete_next, full: super::disk_full(state) }
    }

    /// The report as text for a terminal.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let l = &self.limits;
        let _ = writeln!(
            out,
            "  limit {} (projects {}, core {}), projects use {}, free {}",
            gigabytes(l.total_limit),
            gigabytes(l.all_projects_limit),
            gigabytes(l.core_usage),
            gigabytes(l.all_projects_usage),
            gigabytes(l.free_space)
        );
        for (name, p) in &self.projects {
            let _ = writeln!(
                out,
                "  {:<16} uses {:>10}  share {:>10}{}",
                name,
                gigabytes(p.usage),
                gigabytes(p.limit),
                if p.offender { "  [offender]" } else { "" }
            );
        }
        if self.full {
            let _ = writeln!(
                out,
                "  the disk is full: new tasks wait for room, no work is asked for, downloads wait"
            );
        }
        if self.delete_next.is_empty() {
            let _ = writeln!(out, "  nothing to delete: usage is within the limit");
        } else {
            let _ = writeln!(out, "  violation handling would delete, in order:");
            for d in &self.delete_next {
                let _ = writeln!(
                    out,
                    "    {:<28} {:<16} {:>10}  {}",
                    d.file,
                    d.project,
                    gigabytes(d.nbytes),
                    d.reason
                );
            }
        }
        out
    }
}

fn gigabytes(bytes: f64) -> String {
    if bytes.is_finite() { format!("{:.2} GB", bytes / BYTES_PER_GB) } else { "none".into() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::tests_support::DiskStateBuilder;

    #[test]
    fn report_of_a_violation() {
        let mut b = DiskStateBuilder::new(&[3.0, 1.0]);
        b.state.prefs.disk_max_used_gb = 4.0;
        for day in 0..3 {
            b.file(0, BYTES_PER_GB, true, f64::from(day) + 1.0);
            b.file(1, BYTES_PER_GB, true, f64::from(day) + 1.0);
        }
        let report = DiskReport::new(&b.state, 0.0, 10.0);
        assert_eq!(report.limits.free_space, -2.0 * BYTES_PER_GB);
        assert_eq!(
            report.projects["p1"],
            DiskProjectReport { usage: 3.0 * BYTES_PER_GB, limit: BYTES_PER_GB, offender: true }
        );
        assert!(!report.projects["p0"].offender);
        let next: Vec<(&str, &str)> =
            report.delete_next.iter().map(|d| (d.file.as_str(), d.project.as_str())).collect();
        assert_eq!(next, vec![("f1", "p1"), ("f3", "p1")]);
        assert_eq!(report.delete_next[0].reason, "least recently used");
        let text = report.render_text();
        assert!(text.contains("[offender]") && text.contains("f3"), "{text}");
        // Unlimited: nothing to delete, limits print as "none".
        b.state.prefs.disk_max_used_gb = 0.0;
        let text = DiskReport::new(&b.state, 0.0, 10.0).render_text();
        assert!(text.contains("limit none") && text.contains("nothing to delete"), "{text}");
    }
}
