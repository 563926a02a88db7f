//! Job generation on an emulated server (docs/design.md "Emulator", following BOINC's client
//! emulator): what the project serves, taken from the scenario (its apps with their
//! emulation parameters, its app versions), which of its apps can make jobs for each
//! resource, the app chosen for the next job by weight, and the job's true size drawn
//! from Normal(`fpops_mean`, `fpops_std_dev`).
//!
//! An app's version for a resource R is its fastest app version whose main resource is R
//! (BOINC's emulator takes the fastest version among those for the requested
//! resources). Only apps with emulation parameters and a positive size make jobs. A drawn
//! size below [`MIN_FLOPS_FRACTION`] of the mean is raised to it: BOINC's emulator clamps
//! at 0, which makes jobs that finish the moment they start.

use super::super::random::normal;
use boinc_core::model::{AppEmulation, ClientState, ProjectId, ResourceMap, ResourceUsage};
use rand::Rng;

/// A drawn job size is at least this fraction of the app's mean size.
pub const MIN_FLOPS_FRACTION: f64 = 0.1;

/// An app the project serves.
#[derive(Debug, Clone, PartialEq)]
pub struct ServedApp {
    /// Its name.
    pub name: String,
    /// The name shown to users.
    pub user_friendly_name: String,
    /// Its jobs barely use the CPU.
    pub non_cpu_intensive: bool,
    /// How its jobs are made (`None`: it makes none).
    pub emulation: Option<AppEmulation>,
}

/// An app version the project serves.
#[derive(Debug, Clone, PartialEq)]
pub struct ServedVersion {
    /// Its app, by position in [`Catalogue::apps`].
    pub app: usize,
    /// Version number.
    pub version_num: u32,
    /// Plan class.
    pub plan_class: String,
    /// Platform.
    pub platform: String,
    /// What each of its jobs occupies.
    pub usage: ResourceUsage,
    /// Speed of a job on the host, flops.
    pub flops: f64,
}

/// One app the server can make jobs of for a resource, with the version it sends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Candidate {
    pub(super) app: usize,
    pub(super) version: usize,
    pub(super) weight: f64,
    pub(super) emulation: AppEmulation,
}

/// What a project serves.
#[derive(Debug, Clone, PartialEq)]
pub struct Catalogue {
    /// Its apps, in the scenario's order.
    pub apps: Vec<ServedApp>,
    /// Its app versions, in the scenario's order.
    pub versions: Vec<ServedVersion>,
    /// Per resource, the apps that make jobs for it, in app order.
    pub(super) candidates: ResourceMap<Vec<Candidate>>,
    /// Per resource, whether the project has any app version for it.
    pub(super) has_version: ResourceMap<bool>,
}

impl Catalogue {
    /// What `project` serves in the scenario `state`.
    pub fn of(state: &ClientState, project: ProjectId) -> Catalogue {
        let mut app_index = vec![None; state.apps.len()];
        let mut apps = Vec::new();
        for (i, app) in state.apps.iter().enumerate().filter(|(_, a)| a.project == project) {
            app_index[i] = Some(apps.len());
            apps.push(ServedApp {
                name: app.name.clone(),
                user_friendly_name: app.user_friendly_name.clone(),
                non_cpu_intensive: app.non_cpu_intensive,
                emulation: app.emulation,
            });
        }
        let mut has_version = ResourceMap::<bool>::default();
        let mut versions = Vec::new();
        // Fastest version per (app, resource).
        let mut fastest: Vec<ResourceMap<Option<usize>>> = vec![ResourceMap::default(); apps.len()];
        for version in state.app_versions.iter().filter(|v| v.project == project) {
            let resource = version.usage.main_resource();
            has_version[resource] = true;
            let Some(app) = app_index.get(version.app.index()).copied().flatten() else {
                continue;
            };
            let index = versions.len();
            versions.push(ServedVersion {
                app,
                version_num: version.version_num,
                plan_class: version.plan_class.clone(),
                platform: version.platform.clone(),
                usage: version.usage,
                flops: version.flops,
            });
            let best = &mut fastest[app][resource];
            if best.is_none_or(|b: usize| version.flops > versions[b].flops) {
                *best = Some(index);
            }
        }
        let mut candidates = ResourceMap::<Vec<Candidate>>::default();
        for (app, slots) in fastest.iter().enumerate() {
            let Some(emulation) = apps[app].emulation else { continue };
            if job_mean_size(&emulation).is_none() {
                continue;
            }
            let weight = if emulation.weight.is_finite() && emulation.weight > 0.0 {
                emulation.weight
            } else {
                0.0
            };
            for (resource, version) in slots.iter() {
                if let Some(version) = *version {
                    candidates[resource].push(Candidate { app, version, weight, emulation });
                }
            }
        }
        Catalogue { apps, versions, candidates, has_version }
    }
}

/// A positive finite value, else `None`.
pub(super) fn usable(x: f64) -> Option<f64> {
    (x.is_finite() && x > 0.0).then_some(x)
}

/// Mean true size of an app's jobs: `fpops_mean`, else `fpops_est`; `None` when neither
/// is a positive number (the app can't make jobs).
pub(super) fn job_mean_size(emulation: &AppEmulation) -> Option<f64> {
    usable(emulation.fpops_mean).or(usable(emulation.fpops_est))
}

/// A job's true size, flops: drawn around `mean`, at least [`MIN_FLOPS_FRACTION`] of it.
pub(super) fn draw_true_flops(emulation: &AppEmulation, mean: f64, rng: &mut impl Rng) -> f64 {
    let drawn = normal(rng, mean, emulation.fpops_std_dev);
    if drawn.is_finite() { drawn } else { mean }.max(MIN_FLOPS_FRACTION * mean)
}

/// Picks a candidate with probability proportional to its weight (one uniform draw);
/// uniformly when no weight is positive.
pub(super) fn choose_by_weight(candidates: &[Candidate], rng: &mut impl Rng) -> usize {
    let total: f64 = candidates.iter().map(|c| c.weight).sum();
    // Weights are already finite and non-negative.
    if total <= 0.0 {
        return rng.random_range(0..candidates.len());
    }
    let mut x = rng.random::<f64>() * total;
    for (i, candidate) in candidates.iter().enumerate() {
        if candidate.weight > 0.0 && x < candidate.weight {
            return i;
        }
        x -= candidate.weight;
    }
    candidates.iter().rposition(|c| c.weight > 0.0).unwrap_or(candidates.len() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use boinc_core::model::{App, AppFiles, AppId, AppVersion, Project, ResourceType};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn emulation(mean: f64, std_dev: f64, weight: f64) -> AppEmulation {
        AppEmulation {
            latency_bound: 1e6,
            fpops_est: mean,
            fpops_mean: mean,
            fpops_std_dev: std_dev,
            weight,
            checkpoint_period: 0.0,
            files: AppFiles::default(),
        }
    }

    fn candidate(weight: f64) -> Candidate {
        Candidate { app: 0, version: 0, weight, emulation: emulation(1.0, 0.0, weight) }
    }

    #[test]
    fn apps_are_chosen_by_weight() {
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        let candidates = [candidate(3.0), candidate(1.0), candidate(0.0)];
        let draws = 10_000;
        let first = (0..draws).filter(|_| choose_by_weight(&candidates, &mut rng) == 0).count();
        let share = first as f64 / f64::from(draws);
        assert!((share - 0.75).abs() < 0.02, "app 0 got {share}");
        let unweighted = [candidate(0.0), candidate(0.0)];
        assert!(choose_by_weight(&unweighted, &mut rng) < 2);
    }

    #[test]
    fn sizes_follow_the_normal_distribution_with_a_floor() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let e = emulation(100.0, 20.0, 1.0);
        let sizes: Vec<f64> = (0..10_000).map(|_| draw_true_flops(&e, 100.0, &mut rng)).collect();
        let n = sizes.len() as f64;
        let mean = sizes.iter().sum::<f64>() / n;
        let sd = (sizes.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
        assert!((mean - 100.0).abs() < 1.0, "mean {mean}");
        assert!((sd - 20.0).abs() < 1.0, "sd {sd}");
        let wide = emulation(100.0, 300.0, 1.0);
        let floor = MIN_FLOPS_FRACTION * 100.0;
        let sizes: Vec<f64> = (0..1000).map(|_| draw_true_flops(&wide, 100.0, &mut rng)).collect();
        assert!(sizes.iter().all(|&s| s >= floor) && sizes.contains(&floor));
    }

    #[test]
    fn catalogue_offers_each_apps_fastest_version_per_resource() {
        let mut state = ClientState::default();
        state.projects.push(Project::new("p", "http://p/", 1.0));
        state.projects.push(Project::new("q", "http://q/", 1.0));
        let cpu = ResourceUsage { avg_ncpus: 1.0, coprocessor: None };
        let gpu = ResourceUsage { avg_ncpus: 0.1, coprocessor: Some((ResourceType::Amd, 1.0)) };
        state.apps.push(App {
            emulation: Some(emulation(1e12, 0.0, 1.0)),
            ..App::new(ProjectId(0), "a")
        });
        state.apps.push(App::new(ProjectId(0), "plain"));
        state.apps.push(App {
            emulation: Some(emulation(1e12, 0.0, 1.0)),
            ..App::new(ProjectId(1), "b")
        });
        for (app, num, usage, flops) in
            [(0, 1, cpu, 1e9), (0, 2, cpu, 2e9), (0, 3, gpu, 1e11), (1, 1, cpu, 1e9)]
        {
            let project = state.apps[app].project;
            state.app_versions.push(AppVersion::new(
                project,
                AppId::from_index(app),
                num,
                "",
                usage,
                flops,
            ));
        }
        state.app_versions.push(AppVersion::new(ProjectId(1), AppId(2), 1, "", cpu, 1e9));
        let catalogue = Catalogue::of(&state, ProjectId(0));
        assert_eq!(catalogue.apps.len(), 2);
        assert_eq!(catalogue.versions.len(), 4);
        let offered = |r: ResourceType| -> Vec<(usize, u32)> {
            catalogue.candidates[r]
                .iter()
                .map(|c| (c.app, catalogue.versions[c.version].version_num))
                .collect()
        };
        assert_eq!(offered(ResourceType::Cpu), [(0, 2)], "the app without emulation makes no jobs");
        assert_eq!(offered(ResourceType::Amd), [(0, 3)]);
        assert!(
            catalogue.has_version[ResourceType::Cpu] && catalogue.has_version[ResourceType::Amd]
        );
        assert!(!catalogue.has_version[ResourceType::Nvidia]);
    }
}
