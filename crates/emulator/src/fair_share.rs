//! The fair-share violation, a figure of merit beside BOINC's share violation (issue 15
//! item 1): how far each project's processing is from the share seed 003 entitles it
//! to — its share of the host's total processing, as far as the devices it has apps for
//! allow.
//!
//! `fair_share_violation = Σ_p |U_p − T_p| / U`, where U_p is the flops project p used
//! (BOINC's valuation, as for share violation; a GPU job's CPU part counts with its GPU,
//! since that is the device the job was scheduled on), U = Σ_p U_p, and T the weighted
//! max-min fair split ([`boinc_core::accounting::fair_share`]) of the flops actually used on
//! each device among the projects that have app versions for it: water-filling over
//! total processing, zero-share projects getting what the others leave. Where every
//! project can use every device it equals BOINC's share violation; where one project owns
//! a fast GPU it no longer grows with every hour that GPU computes (seed 003's example:
//! A GPU-only, B CPU and GPU, the GPU twice the CPU, equal shares → the CPU all B's, the
//! GPU 75/25 A/B).

use boinc_core::accounting::fair_share::{FairShareProject, TargetAllocation};
use boinc_core::model::{ResourceMap, ResourceType};

/// One project's processing, as the fair-share violation sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProjectProcessing {
    /// Resource share (negative, NaN and infinite count as zero).
    pub share: f64,
    /// The devices it has app versions for.
    pub devices: ResourceMap<bool>,
    /// Flops it used, by the device its jobs were scheduled on (a GPU job's CPU part
    /// counts on its GPU).
    pub used: ResourceMap<f64>,
}

impl ProjectProcessing {
    /// All the flops it used.
    pub fn total_used(&self) -> f64 {
        self.used.0.iter().filter(|u| u.is_finite() && **u > 0.0).sum()
    }
}

/// T: each project's fair part (flops) of what the projects used on each device,
/// in the order given.
pub fn fair_targets(projects: &[ProjectProcessing]) -> Vec<f64> {
    let used_on = ResourceMap::from_fn(|r| {
        projects.iter().map(|p| p.used[r]).filter(|u| u.is_finite() && *u > 0.0).sum::<f64>()
    });
    // Each device's capacity is what was used on it, in flops: one "instance" worth one.
    let target = TargetAllocation::compute(
        used_on,
        ResourceMap::from_fn(|_| 1.0),
        projects.iter().map(|p| FairShareProject { share: p.share, eligible: p.devices }),
    );
    target.projects().iter().map(|t| t.total).collect()
}

/// Σ_p |U_p − T_p| / U (0 when nothing was used).
pub fn fair_share_violation(projects: &[ProjectProcessing]) -> f64 {
    let used: Vec<f64> = projects.iter().map(ProjectProcessing::total_used).collect();
    let total: f64 = used.iter().sum();
    if total <= 0.0 {
        return 0.0;
    }
    let targets = fair_targets(projects);
    used.iter().zip(&targets).map(|(u, t)| (u - t).abs()).sum::<f64>() / total
}

/// The devices a resource map marks, as a list (for the trace).
pub(crate) fn device_list(devices: &ResourceMap<bool>) -> Vec<ResourceType> {
    ResourceType::ALL.into_iter().filter(|&r| devices[r]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CPU: ResourceType = ResourceType::Cpu;
    const GPU: ResourceType = ResourceType::Nvidia;
    const AMD: ResourceType = ResourceType::Amd;

    fn project(
        share: f64,
        used: &[(ResourceType, f64)],
        devices: &[ResourceType],
    ) -> ProjectProcessing {
        let mut p = ProjectProcessing {
            share,
            devices: ResourceMap::from_fn(|r| devices.contains(&r)),
            used: ResourceMap::default(),
        };
        for &(r, flops) in used {
            p.used[r] += flops;
        }
        p
    }

    #[test]
    fn seed_003_example_gives_cpu_all_b_and_gpu_75_25() {
        // The GPU is twice the CPU: CPU 1 unit, GPU 2 units, all used. Equal shares: each
        // project is owed 1.5; A can only use the GPU, so B gets the CPU and 0.5 of the
        // GPU, A 1.5 of it (75 / 25).
        let a = project(100.0, &[(GPU, 1.5)], &[GPU]);
        let b = project(100.0, &[(CPU, 1.0), (GPU, 0.5)], &[CPU, GPU]);
        assert_eq!(fair_targets(&[a, b]), vec![1.5, 1.5]);
        assert_eq!(fair_share_violation(&[a, b]), 0.0);
        // B running only on the CPU and A owning the GPU is 0.5 off each way.
        let a = project(100.0, &[(GPU, 2.0)], &[GPU]);
        let b = project(100.0, &[(CPU, 1.0)], &[CPU, GPU]);
        assert_eq!(fair_targets(&[a, b]), vec![1.5, 1.5]);
        assert!((fair_share_violation(&[a, b]) - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn equals_share_violation_where_every_project_can_use_every_device() {
        let a = project(75.0, &[(CPU, 0.6)], &[CPU]);
        let b = project(25.0, &[(CPU, 0.4)], &[CPU]);
        // BOINC's: |0.6 − 0.75| + |0.4 − 0.25| = 0.3.
        assert!((fair_share_violation(&[a, b]) - 0.3).abs() < 1e-12);
    }

    #[test]
    fn a_busy_gpu_only_project_is_not_a_violation() {
        // starved_gpu's shape: G alone has a GPU app and uses the GPU heavily; C1 and C2
        // split the CPU evenly.
        let g = project(100.0, &[(GPU, 90.0)], &[GPU]);
        let c1 = project(100.0, &[(CPU, 6.7)], &[CPU]);
        let c2 = project(100.0, &[(CPU, 6.7)], &[CPU]);
        assert!(fair_share_violation(&[g, c1, c2]) < 1e-12);
    }

    #[test]
    fn zero_share_projects_get_what_the_others_leave() {
        let a = project(100.0, &[(CPU, 1.0)], &[CPU]);
        let z = project(0.0, &[(GPU, 2.0)], &[CPU, GPU]);
        assert_eq!(fair_targets(&[a, z]), vec![1.0, 2.0]);
    }

    #[test]
    fn nothing_used_is_no_violation() {
        let a = project(100.0, &[], &[CPU]);
        assert_eq!(fair_share_violation(&[a]), 0.0);
        assert_eq!(fair_share_violation(&[]), 0.0);
    }

    fn processing() -> impl Strategy<Value = Vec<ProjectProcessing>> {
        let one = (
            prop_oneof![Just(0.0), 1.0f64..400.0],
            prop::collection::vec(prop_oneof![Just(0.0), 0.0f64..100.0], 3),
            1u8..8,
        )
            .prop_map(|(share, used, mask)| {
                let devices = ResourceMap::from_fn(|r| match r {
                    ResourceType::Cpu => mask & 1 != 0,
                    ResourceType::Nvidia => mask & 2 != 0,
                    ResourceType::Amd => mask & 4 != 0,
                    ResourceType::Intel => false,
                });
                let mut p = ProjectProcessing { share, devices, used: ResourceMap::default() };
                // A project uses only devices it has apps for.
                for (r, flops) in [CPU, GPU, AMD].into_iter().zip(used) {
                    if devices[r] {
                        p.used[r] = flops;
                    }
                }
                p
            });
        prop::collection::vec(one, 1..6)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// T is feasible (it divides exactly what was used, and each project's part lies
        /// on devices it has apps for) and max-min fair: no project with a share can gain
        /// without taking from one whose level (T / share) is no higher.
        #[test]
        fn targets_are_feasible_and_max_min(projects in processing()) {
            let used_on = ResourceMap::from_fn(|r| projects.iter().map(|p| p.used[r]).sum::<f64>());
            let target = TargetAllocation::compute(
                used_on,
                ResourceMap::from_fn(|_| 1.0),
                projects.iter().map(|p| FairShareProject { share: p.share, eligible: p.devices }),
            );
            let targets = fair_targets(&projects);
            let scale = used_on.0.iter().sum::<f64>().max(1.0);
            // Feasible: per device, the parts add up to at most what was used there, and
            // every device some project may use is divided entirely.
            for r in ResourceType::ALL {
                let given: f64 = (0..projects.len())
                    .map(|p| target.projects()[p].instances[r])
                    .sum();
                prop_assert!(given <= used_on[r] + 1e-9 * scale, "{r}: {given} > {}", used_on[r]);
                if projects.iter().any(|p| p.devices[r]) {
                    prop_assert!((given - used_on[r]).abs() <= 1e-9 * scale, "{r} not divided");
                }
                for (p, project) in projects.iter().enumerate() {
                    if !project.devices[r] {
                        prop_assert!(target.projects()[p].instances[r] == 0.0);
                    }
                }
            }
            // Max-min: a project with a share below another's level on a device both may
            // use means that the higher one holds nothing there to give.
            let level = |p: usize| targets[p] / projects[p].share;
            for (i, a) in projects.iter().enumerate() {
                for (j, b) in projects.iter().enumerate() {
                    if a.share <= 0.0 || b.share <= 0.0 || level(i) >= level(j) * (1.0 - 1e-9) - 1e-12 {
                        continue;
                    }
                    for r in ResourceType::ALL {
                        if a.devices[r] && b.devices[r] {
                            let held = target.projects()[j].instances[r];
                            prop_assert!(held <= 1e-9 * scale,
                                "project {i} (level {}) could take {held} of {r} from {j} (level {})",
                                level(i), level(j));
                        }
                    }
                }
            }
            // Zero-share projects hold nothing on a device a project with a share may use.
            for (z, _) in projects.iter().enumerate().filter(|(_, p)| p.share <= 0.0) {
                for r in ResourceType::ALL {
                    if projects.iter().any(|p| p.share > 0.0 && p.devices[r]) {
                        prop_assert!(target.projects()[z].instances[r] <= 1e-9 * scale,
                            "zero-share project {z} holds {r}");
                    }
                }
            }
            let v = fair_share_violation(&projects);
            prop_assert!(v.is_finite() && (0.0..=2.0 + 1e-9).contains(&v), "{v}");
        }
    }
}
