//! Seed 004's offenders: a project is an offender when Project_usage(p) −
//! Project_limit(p) > 0, and the greatest offender is the one with the largest such
//! difference; space is always taken from the greatest offender first.

use super::limits::DiskUsage;
use crate::model::ProjectId;

/// Whether a project uses more than its share of the space.
pub fn is_offender(usage: &DiskUsage, project: ProjectId) -> bool {
    usage.overage(project) > 0.0
}

/// Every offender, greatest first (ties: lower id first).
pub fn offenders(usage: &DiskUsage) -> Vec<ProjectId> {
    let mut offenders: Vec<ProjectId> = (0..usage.project_usage.len())
        .map(ProjectId::from_index)
        .filter(|&p| is_offender(usage, p))
        .collect();
    offenders.sort_by(|&a, &b| usage.overage(b).total_cmp(&usage.overage(a)).then(a.cmp(&b)));
    offenders
}

/// The greatest offender among the projects for which `eligible` holds; `None` when none
/// of them offends. Ties go to the lower id, so plans are deterministic.
pub fn greatest_offender(
    usage: &DiskUsage,
    mut eligible: impl FnMut(ProjectId) -> bool,
) -> Option<ProjectId> {
    let mut greatest: Option<(ProjectId, f64)> = None;
    for project in (0..usage.project_usage.len()).map(ProjectId::from_index) {
        let overage = usage.overage(project);
        if overage > 0.0 && greatest.is_none_or(|(_, most)| overage > most) && eligible(project) {
            greatest = Some((project, overage));
        }
    }
    greatest.map(|(project, _)| project)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::limits::DiskLimits;

    fn usage(limits: &[f64], usage: &[f64]) -> DiskUsage {
        DiskUsage {
            limits: DiskLimits {
                total_limit: limits.iter().sum(),
                core_usage: 0.0,
                all_projects_limit: limits.iter().sum(),
                project_limits: limits.to_vec(),
            },
            project_usage: usage.to_vec(),
        }
    }

    #[test]
    fn offenders_by_overage() {
        let u = usage(&[10.0, 10.0, 10.0, 10.0], &[12.0, 5.0, 19.0, 12.0]);
        assert!(is_offender(&u, ProjectId(0)));
        assert!(!is_offender(&u, ProjectId(1)));
        assert_eq!(offenders(&u), vec![ProjectId(2), ProjectId(0), ProjectId(3)]);
        assert_eq!(greatest_offender(&u, |_| true), Some(ProjectId(2)));
        assert_eq!(greatest_offender(&u, |p| p != ProjectId(2)), Some(ProjectId(0)));
        assert_eq!(greatest_offender(&u, |p| p == ProjectId(1)), None);
    }

    #[test]
    fn at_the_limit_is_no_offence() {
        let u = usage(&[10.0, 10.0], &[10.0, 0.0]);
        assert!(offenders(&u).is_empty());
        assert_eq!(greatest_offender(&u, |_| true), None);
    }
}
