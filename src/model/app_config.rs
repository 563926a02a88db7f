//! A project's app_config.xml, as the user writes it in the project's directory: how
//! many jobs of an app may run at once, and how much of a GPU and of a CPU each of its
//! GPU jobs takes (seed 003's instance usage, which the CPU scheduler fits).

use super::client_state::ClientState;
use super::ids::ProjectId;
use serde::{Deserialize, Serialize};

/// The settings of one project's app_config.xml.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AppConfig {
    /// Per-app settings (`<app>`).
    pub apps: Vec<AppSettings>,
    /// At most this many of the project's jobs at once (`<project_max_concurrent>`).
    pub project_max_concurrent: Option<u32>,
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
    /// named gets its `max_concurrent`, and each of its GPU versions the GPU and CPU
    /// usage given. Returns the names of apps the project does not have (the user may
    /// have misspelt one, or the project has not sent it yet). Apply again after a
    /// scheduler reply: new app versions come with the project's own usage.
    pub fn apply(&self, state: &mut ClientState, project: ProjectId) -> Vec<String> {
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
        unknown
    }
}
