//! BOINC's anonymous platform (docs/design.md "Anonymous platform"; BOINC's
//! AnonymousPlatform page): a project whose directory holds an app_info.xml runs the
//! volunteer's own apps. What the file declares becomes the project's apps, files and
//! app versions; the project is marked, so that its requests say `anonymous` and list
//! those versions, its replies replace none of them, and the files are never
//! downloaded, checked against a signature or deleted.
//!
//! The caller reads the file and looks at the project's directory: [`usable_app_info`]
//! leaves out the files that are not there (and the versions that need them), each
//! named for the event log in BOINC's words; [`take_app_info`] puts the rest into the
//! state, again at every start (what a saved state holds is matched, not doubled).

use super::reply::{find_app, find_version, usage_of};
use crate::model::{
    App, AppConfig, AppVersion, ClientState, FileId, FileInfo, FileRef, FileStatus,
    FileTransferState, ProjectId,
};
use crate::protocol::AppInfo;
use std::collections::HashMap;

/// `info` without the files `size_of` cannot find in the project's directory (it gives
/// a present file's size in bytes) and without the app versions that need one of them;
/// a file that lists no size takes the one found. Returns it with a message for each
/// file missing, naming it and the versions left out.
pub fn usable_app_info(
    mut info: AppInfo,
    size_of: impl Fn(&str) -> Option<u64>,
) -> (AppInfo, Vec<String>) {
    let mut messages = Vec::new();
    let mut missing = Vec::new();
    info.files.retain_mut(|file| match size_of(&file.name) {
        Some(size) => {
            file.nbytes = file.nbytes.filter(|n| *n > 0.0).or(Some(size as f64));
            true
        }
        None => {
            missing.push(file.name.clone());
            false
        }
    });
    for name in &missing {
        let left_out: Vec<String> = info
            .app_versions
            .iter()
            .filter(|v| v.file_refs.iter().any(|r| &r.file_name == name))
            .map(|v| {
                format!("{} {}{}", v.app_name, v.version_num, plan_class_clause(&v.plan_class))
            })
            .collect();
        messages.push(format!(
            "File referenced in app_info.xml does not exist: {name}; put it in the project's \
             directory, or remove it from app_info.xml (versions not offered to the project \
             until then: {})",
            if left_out.is_empty() { "none".to_string() } else { left_out.join(", ") }
        ));
    }
    info.app_versions.retain(|v| !v.file_refs.iter().any(|r| missing.contains(&r.file_name)));
    (info, messages)
}

fn plan_class_clause(plan_class: &str) -> String {
    if plan_class.is_empty() { String::new() } else { format!(" ({plan_class})") }
}

/// Puts what `info` declares into `project`'s apps, files and app versions (found by
/// name, version, plan class and platform, or added) and marks the project anonymous.
/// The files are taken as present: [`usable_app_info`] left out the missing ones.
pub fn take_app_info(state: &mut ClientState, project: ProjectId, info: &AppInfo) {
    let Some(record) = state.projects.get_mut(project.index()) else { return };
    record.anonymous_platform = true;
    for description in &info.apps {
        match find_app(state, project, &description.name) {
            Some(app) => {
                let app = &mut state.apps[app.index()];
                app.user_friendly_name.clone_from(&description.user_friendly_name);
                app.non_cpu_intensive = description.non_cpu_intensive;
            }
            None => state.apps.push(App {
                user_friendly_name: description.user_friendly_name.clone(),
                non_cpu_intensive: description.non_cpu_intensive,
                ..App::new(project, description.name.clone())
            }),
        }
    }
    let mut files: HashMap<&str, FileId> = HashMap::new();
    for description in &info.files {
        let existing =
            state.files.iter().position(|f| f.project == project && f.name == description.name);
        let index = existing.unwrap_or_else(|| {
            state.files.push(FileInfo::new(project, description.name.clone(), 0.0));
            state.files.len() - 1
        });
        let file = &mut state.files[index];
        file.nbytes = description.nbytes.unwrap_or(0.0);
        description.md5_cksum.clone_into(&mut file.md5_cksum);
        file.executable = description.executable;
        file.status = FileStatus::Present;
        file.anonymous_platform = true;
        file.download_urls.clear();
        file.upload_urls.clear();
        file.upload_when_present = false;
        file.file_signature = None;
        file.transfer = FileTransferState::default();
        files.insert(&description.name, FileId::from_index(index));
    }
    for description in &info.app_versions {
        let (Some(app), Ok(usage)) =
            (find_app(state, project, &description.app_name), usage_of(description))
        else {
            continue;
        };
        let refs = description
            .file_refs
            .iter()
            .filter_map(|reference| {
                Some(FileRef {
                    file: *files.get(reference.file_name.as_str())?,
                    open_name: reference.open_name.clone(),
                    main_program: reference.main_program,
                    copy_file: reference.copy_file,
                })
            })
            .collect();
        let found = find_version(
            state,
            app,
            Some(description.version_num),
            &description.plan_class,
            &description.platform,
        );
        let index = found.map(|v| v.index()).unwrap_or_else(|| {
            state.app_versions.push(AppVersion::new(
                project,
                app,
                description.version_num,
                description.plan_class.to_string(),
                usage,
                0.0,
            ));
            state.app_versions.len() - 1
        });
        // No speed given: its CPUs' share of the host's, as BOINC 7.20.5 estimates it
        // (a GPU's speed is not known here).
        let flops =
            description.flops.filter(|f| *f > 0.0).unwrap_or(usage.avg_ncpus * state.host.p_fpops);
        let version = &mut state.app_versions[index];
        version.usage = usage;
        version.flops = flops;
        description.platform.as_ref().clone_into(&mut version.platform);
        description.api_version.as_ref().clone_into(&mut version.api_version);
        description.cmdline.as_ref().clone_into(&mut version.cmdline);
        version.files = refs;
        state.projects[project.index()].resources[usage.main_resource()].has_app_version = true;
    }
    // The user's app_config.xml applies to these versions too.
    AppConfig::reapply(state, project);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Project;
    use crate::protocol::read_app_info;

    const FIXTURE: &str = include_str!("../../tests/fixtures/app_info/app_info.xml");

    fn state() -> ClientState {
        let mut state = ClientState::default();
        state.projects.push(Project::new("p", "http://127.0.0.1/p/", 100.0));
        state.host.p_fpops = 2e9;
        state
    }

    #[test]
    fn a_missing_file_is_named_and_its_version_left_out() {
        let info = read_app_info(FIXTURE, "app_info.xml").expect("valid");
        let (usable, messages) =
            usable_app_info(info, |name| (name != "my_example_app_cuda").then_some(77));
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(
            messages[0].starts_with(
                "File referenced in app_info.xml does not exist: my_example_app_cuda;"
            ) && messages[0].contains("example_app 107 (cuda)"),
            "{messages:?}"
        );
        assert_eq!(usable.app_versions.len(), 1);
        assert_eq!(usable.files.len(), 2);
        assert_eq!(usable.files[0].nbytes, Some(1234.0), "the size the file gives");
        assert_eq!(usable.files[1].nbytes, Some(77.0), "the size found");
    }

    #[test]
    fn the_declared_versions_are_taken_once_and_marked() {
        let info = read_app_info(FIXTURE, "app_info.xml").expect("valid");
        let (usable, _) = usable_app_info(info, |_| Some(10));
        let mut state = state();
        take_app_info(&mut state, ProjectId(0), &usable);
        let again = state.clone();
        // At the next start the saved state holds them already: matched, not doubled.
        take_app_info(&mut state, ProjectId(0), &usable);
        assert_eq!(state, again);
        assert!(state.projects[0].anonymous_platform);
        assert_eq!((state.apps.len(), state.files.len(), state.app_versions.len()), (1, 3, 2));
        assert!(
            state.files.iter().all(|f| f.anonymous_platform && f.status == FileStatus::Present)
        );
        let cpu = &state.app_versions[0];
        assert_eq!((cpu.version_num, cpu.flops, cpu.cmdline.as_str()), (107, 3e9, "--fast"));
        let main = cpu.main_program().expect("the executable");
        assert_eq!(state.file(main.file).name, "my_example_app");
        let gpu = &state.app_versions[1];
        assert_eq!(gpu.flops, 0.2 * 2e9, "no flops given: its CPUs' share of the host's");
        assert_eq!(gpu.usage.coprocessor, Some((crate::model::ResourceType::Nvidia, 0.5)));
    }
}
