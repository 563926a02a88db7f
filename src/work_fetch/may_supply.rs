//! Which resources a project may supply work for (seed 003 "Problems": "If a GPU is
//! idle, we should get work from a project that potentially has jobs for it"). Asking a
//! CPU-only project for GPU work wastes an RPC and backs it off for nothing, a known
//! annoyance of BOINC clients.

use crate::model::{ClientState, Project, ProjectId, ResourceMap};

/// Per project, the resources it may supply: not excluded by the project
/// (`no_apps`), and either the project has an app version for the resource or it has no
/// app versions at all yet (freshly attached: anything may come). An app version counts
/// whether the project's `has_app_version` flag says so or the state holds one.
///
/// One pass over the app versions for all projects, so a decision never rescans them.
pub fn may_supply_all(state: &ClientState) -> Vec<ResourceMap<bool>> {
    let has_version = app_version_resources(state);
    state
        .projects
        .iter()
        .zip(&has_version)
        .map(|(project, flags)| may_supply_from(project, flags))
        .collect()
}

/// The resources `project` may supply (see [`may_supply_all`]), given those it has an
/// app version for.
pub(crate) fn may_supply_from(
    project: &Project,
    has_version: &ResourceMap<bool>,
) -> ResourceMap<bool> {
    let no_versions_yet = !has_version.0.iter().any(|&f| f);
    ResourceMap::from_fn(|r| !project.resources[r].no_apps && (has_version[r] || no_versions_yet))
}

/// The resources project `id` may supply (see [`may_supply_all`]), from one pass over
/// the app versions.
pub(crate) fn project_may_supply(state: &ClientState, id: ProjectId) -> ResourceMap<bool> {
    let project = state.project(id);
    let mut has_version = project.resources.map(|_, r| r.has_app_version);
    for version in state.app_versions.iter().filter(|v| v.project == id) {
        has_version[version.usage.main_resource()] = true;
    }
    may_supply_from(project, &has_version)
}

/// Per project, the resources it has an app version for: by the project's
/// `has_app_version` flags or an app version the state holds (one pass over them).
pub fn app_version_resources(state: &ClientState) -> Vec<ResourceMap<bool>> {
    let mut has_version = Vec::new();
    app_version_resources_into(state, &mut has_version);
    has_version
}

/// [`app_version_resources`] into `has_version` (whatever it held is replaced).
pub(crate) fn app_version_resources_into(
    state: &ClientState,
    has_version: &mut Vec<ResourceMap<bool>>,
) {
    has_version.clear();
    has_version.extend(state.projects.iter().map(|p| p.resources.map(|_, r| r.has_app_version)));
    for version in &state.app_versions {
        if let Some(flags) = has_version.get_mut(version.project.index()) {
            flags[version.usage.main_resource()] = true;
        }
    }
}

/// Whether one project may supply one resource (see [`may_supply_all`]).
pub fn may_supply(
    state: &ClientState,
    project: ProjectId,
    resource: crate::model::ResourceType,
) -> bool {
    project_may_supply(state, project)[resource]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AppId, AppVersion, Project, ResourceType, ResourceUsage};

    fn version(project: u32, coprocessor: Option<(ResourceType, f64)>) -> AppVersion {
        let usage = ResourceUsage { avg_ncpus: 1.0, coprocessor };
        AppVersion::new(ProjectId(project), AppId(0), 1, "", usage, 1e9)
    }

    #[test]
    fn cpu_only_project_is_not_asked_for_gpu_work() {
        let mut state = ClientState::default();
        state.projects.push(Project::new("cpu", "http://cpu/", 1.0));
        state.projects.push(Project::new("gpu", "http://gpu/", 1.0));
        state.projects.push(Project::new("new", "http://new/", 1.0));
        state.projects.push(Project::new("refused", "http://refused/", 1.0));
        state.app_versions.push(version(0, None));
        state.app_versions.push(version(1, Some((ResourceType::Nvidia, 1.0))));
        state.projects[3].resources[ResourceType::Amd].no_apps = true;

        let all = may_supply_all(&state);
        assert!(all[0][ResourceType::Cpu]);
        assert!(!all[0][ResourceType::Nvidia]);
        assert!(all[1][ResourceType::Nvidia]);
        assert!(!all[1][ResourceType::Cpu]);
        assert!(ResourceType::ALL.iter().all(|&r| all[2][r]));
        assert!(!all[3][ResourceType::Amd]);
        assert!(all[3][ResourceType::Nvidia]);
        for p in state.project_ids() {
            assert_eq!(project_may_supply(&state, p), all[p.index()], "{p:?}");
            for r in ResourceType::ALL {
                assert_eq!(may_supply(&state, p, r), all[p.index()][r], "{p:?} {r}");
            }
        }
    }

    #[test]
    fn has_app_version_flag_counts_without_a_version_in_the_state() {
        let mut state = ClientState::default();
        state.projects.push(Project::new("flagged", "http://f/", 1.0));
        state.projects[0].resources[ResourceType::Intel].has_app_version = true;
        let all = may_supply_all(&state);
        assert!(all[0][ResourceType::Intel]);
        assert!(!all[0][ResourceType::Cpu]);
    }
}
