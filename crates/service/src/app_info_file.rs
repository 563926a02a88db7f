//! A project's app_info.xml read from its directory (BOINC's anonymous platform; the
//! core's `control::anonymous_platform` decides what it does): the file, bounded in
//! size, read and checked, the files it lists looked for beside it, at the service's
//! start and when a project is attached while it runs. A file that cannot be read or
//! is damaged leaves the project as if it had none, and says why.

use boinc_core::control::{project_dir, usable_app_info};
use boinc_core::protocol::data_dir::APP_INFO;
use boinc_core::protocol::{AppInfo, read_app_info};
use boinc_runtime::configuration_files::read_bounded;
use std::path::Path;

/// What a project's app_info.xml gave: the declaration to take (`None`: no file, or
/// none usable) and the messages for the event log.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct AppInfoRead {
    /// What the project runs with, its missing files left out.
    pub(crate) app_info: Option<AppInfo>,
    /// What the volunteer should read: the file found, what is wrong with it.
    pub(crate) messages: Vec<String>,
}

/// Reads the app_info.xml of the project at `master_url` in data directory `dir`.
pub(crate) fn read_app_info_file(dir: &Path, master_url: &str) -> AppInfoRead {
    let project = dir.join(project_dir(master_url));
    let name = format!("{}/{APP_INFO}", project_dir(master_url));
    let text = match read_bounded(&project.join(APP_INFO)) {
        Ok(Some(text)) => text,
        Ok(None) => return AppInfoRead::default(),
        Err(reason) => {
            return AppInfoRead {
                app_info: None,
                messages: vec![format!(
                    "cannot read {name}: {reason}; the project runs without the anonymous \
                     platform until the file is fixed"
                )],
            };
        }
    };
    let info = match read_app_info(&text, &name) {
        Ok(info) => info,
        Err(error) => {
            return AppInfoRead {
                app_info: None,
                messages: vec![format!(
                    "{error} (the project runs without the anonymous platform until the file \
                     is fixed)"
                )],
            };
        }
    };
    // The volunteer's files may be links to where a package installed them (Debian's
    // update-boinc-applinks makes such links): followed, as BOINC does.
    let (usable, missing) = usable_app_info(info, |file| {
        std::fs::metadata(project.join(file)).ok().filter(|m| m.is_file()).map(|m| m.len())
    });
    let mut messages = vec![format!("Found {APP_INFO}; using anonymous platform")];
    messages.extend(missing);
    AppInfoRead { app_info: Some(usable), messages }
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "http://127.0.0.1:1/p/";

    fn project(dir: &Path) -> std::path::PathBuf {
        let project = dir.join(project_dir(URL));
        std::fs::create_dir_all(&project).expect("the project's directory");
        project
    }

    #[test]
    fn no_file_is_no_anonymous_platform() {
        let dir = tempfile::tempdir().expect("a directory");
        assert_eq!(read_app_info_file(dir.path(), URL), AppInfoRead::default());
    }

    #[test]
    fn the_files_present_are_taken_and_a_missing_one_named() {
        let dir = tempfile::tempdir().expect("a directory");
        let project = project(dir.path());
        std::fs::write(project.join("mine"), b"#!/bin/sh\n").expect("the app");
        std::fs::write(
            project.join(APP_INFO),
            "<app_info><app><name>a</name></app>\
             <file_info><name>mine</name><executable/></file_info>\
             <file_info><name>gone</name></file_info>\
             <app_version><app_name>a</app_name><version_num>1</version_num>\
             <file_ref><file_name>mine</file_name><main_program/></file_ref></app_version>\
             <app_version><app_name>a</app_name><version_num>2</version_num>\
             <file_ref><file_name>gone</file_name><main_program/></file_ref></app_version>\
             </app_info>",
        )
        .expect("app_info.xml");
        let read = read_app_info_file(dir.path(), URL);
        let info = read.app_info.expect("usable");
        assert_eq!(info.app_versions.len(), 1);
        assert_eq!(info.files[0].nbytes, Some(10.0), "its size on disk");
        assert_eq!(read.messages.len(), 2, "{:?}", read.messages);
        assert!(read.messages[1].contains("does not exist: gone"), "{:?}", read.messages);
    }

    #[test]
    fn a_damaged_or_huge_file_leaves_the_project_as_it_was() {
        let dir = tempfile::tempdir().expect("a directory");
        let project = project(dir.path());
        std::fs::write(project.join(APP_INFO), "<app_info><app><name>a</name>").expect("file");
        let read = read_app_info_file(dir.path(), URL);
        assert_eq!(read.app_info, None);
        assert!(
            read.messages[0].contains("app_info.xml line 1")
                && read.messages[0].contains("runs without the anonymous platform"),
            "{:?}",
            read.messages
        );
        std::fs::write(project.join(APP_INFO), vec![b' '; 2 << 20]).expect("file");
        let read = read_app_info_file(dir.path(), URL);
        assert_eq!(read.app_info, None);
        assert!(read.messages[0].contains("larger than"), "{:?}", read.messages);
    }
}
