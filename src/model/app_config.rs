//! A project's app_config.xml, as the user writes it in the project's directory: how
//! many jobs of an app, and of the project, may run at once, how much of a GPU and of a
//! CPU each of its GPU jobs takes (seed 003's instance usage, which the CPU scheduler
//! fits), one app version's command line and usage, and whether the project's results
//! are reported as soon as they are uploaded. The project keeps its settings, so the
//! apps and versions a later scheduler reply brings take them too.

use super::client_state::ClientState;
use super::ids::ProjectId;
use serde::{Deserialize, Serialize};

/// The settings of one project's app_config.xml.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AppConfig {
    /// Per-app settings (`<app>`).
    pub apps: Vec<AppSettings>,
    /// Per-version settings (`<app_version>`).
    #[serde(default)]
    pub app_versions: Vec<AppVersionSettings>,
    /// At most this many of the project's jobs at once (`<project_max_concurrent>`).
    pub project_max_concurrent: Option<u32>,
    /// Report the project's results as soon as they are uploaded
    /// (`<report_results_immediately>`).
    #[serde(default)]
    pub report_results_immediately: bool,
}

/// One `<app_version>` of app_config.xml: the versions of an app with one plan class.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AppVersionSettings {
    /// The app's short name (`<app_name>`).
    pub app_name: String,
    /// The versions' plan class (`<plan_class>`; empty: the versions without one).
    pub plan_class: String,
    /// The command line the versions run with, instead of the project's (`<cmdline>`).
    pub cmdline: Option<String>,
    /// CPUs one job takes (`<avg_ncpus>`).
    pub avg_ncpus: Option<f64>,
    /// GPU instances one job takes (`<ngpus>`; only for a GPU version).
    pub ngpus: Option<f64>,
}

/// One `<app>` of app_config.xml.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AppSettings {
    /// The app's short name (`<name>`).
    pub name: String,
    /// At most this many of its jobs at once (`<max_concurrent>`).
    pub max_concurrent: Option<u32>,
    /// GPU instances one of its GPU jobs takes (`<gpu_versions><gpu_usage>`, 0.5: two
    /// jobs share a GPU).
    pub gpu_usage: Option<f64>,
    /// CPUs one of its GPU jobs takes (`<gpu_versions><cpu_usage>`).
    pub cpu_usage: Option<f64>,
}

impl AppConfig {
    /// Applies the settings to `project`'s apps and app versions in `state`: each app
    /// named gets its `max_concurrent`, each of its GPU versions the GPU and CPU usage
    /// given, each version an `<app_version>` names its command line and usage. Returns
    /// the names of apps the project does not have (the user may have misspelt one, or
    /// the project has not sent it yet). The project keeps the settings (its limit and
    /// reporting; [`AppConfig::reapply`] after a scheduler reply: new app versions come
    /// with the project's own usage).
    pub fn apply(&self, state: &mut ClientState, project: ProjectId) -> Vec<String> {
        if let Some(p) = state.projects.get_mut(project.index()) {
            p.app_config = self.clone();
        }
        let mut unknown = Vec::new();
        for settings in &self.apps {
            let app =
                state.apps.iter().position(|a| a.project == project && a.name == settings.name);
            let Some(app) = app else {
                unknown.push(settings.name.clone());
                continue;
            };
            if settings.max_concurrent.is_some() {
                state.apps[app].max_concurrent = settings.max_concurrent;
            }
            for version in state.app_versions.iter_mut().filter(|v| v.app.index() == app) {
                let Some((_, instances)) = &mut version.usage.coprocessor else { continue };
                if let Some(gpu_usage) = settings.gpu_usage {
                    *instances = gpu_usage;
                }
                if let Some(cpu_usage) = settings.cpu_usage {
                    version.usage.avg_ncpus = cpu_usage;
                }
            }
        }
        for settings in &self.app_versions {
            let app =
                state.apps.iter().position(|a| a.project == project && a.name == settings.app_name);
            let Some(app) = app else {
                unknown.push(settings.app_name.clone());
                continue;
            };
            let versions = state
                .app_versions
                .iter_mut()
                .filter(|v| v.app.index() == app && v.plan_class == settings.plan_class);
            for version in versions {
                if let Some(cmdline) = &settings.cmdline {
                    version.cmdline.clone_from(cmdline);
                }
                if let Some(avg_ncpus) = settings.avg_ncpus {
                    version.usage.avg_ncpus = avg_ncpus;
                }
                if let (Some(ngpus), Some((_, instances))) =
                    (settings.ngpus, &mut version.usage.coprocessor)
                {
                    *instances = ngpus;
                }
            }
        }
        unknown
    }

    /// Applies the settings `project` keeps again (after a scheduler reply brought apps
    /// or versions); apps still missing are no news.
    pub fn reapply(state: &mut ClientState, project: ProjectId) {
        let Some(config) = state.projects.get(project.index()).map(|p| p.app_config.clone()) else {
            return;
        };
        if config != AppConfig::default() {
            config.apply(state, project);
        }
    }

    /// At most this many of `project`'s jobs may run at once (its
    /// `<project_max_concurrent>`).
    pub fn project_limit(state: &ClientState, project: ProjectId) -> Option<u32> {
        state.projects.get(project.index())?.app_config.project_max_concurrent
    }
}

/// How many of `project`'s jobs run, counted from the jobs running per app
/// (`app_running`, by app index): the schedulers keep those counts, and a project's
/// limit is rare enough that summing its apps when one is set costs nothing otherwise.
pub fn project_running(state: &ClientState, project: ProjectId, app_running: &[u32]) -> u32 {
    state
        .apps
        .iter()
        .zip(app_running)
        .filter(|(app, _)| app.project == project)
        .map(|(_, running)| running)
        .sum()
}
