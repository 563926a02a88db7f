//! A volunteer's own build of the example app for a project (BOINC's anonymous
//! platform): the boinc-rs binary under a name of the volunteer's, in the project's
//! directory, declared by an app_info.xml beside it. boinc-rs and the real BOINC client
//! are given the same one.

use boinc_core::protocol::data_dir::APP_INFO;
use std::path::{Path, PathBuf};

/// The volunteer's name for their copy of the example app.
pub const VOLUNTEER_APP: &str = "volunteers_own_example_app";
/// The version number the volunteer gives it (the project server's own is 100).
pub const VOLUNTEER_VERSION: u32 = 107;

/// The volunteer's app_info.xml for the example app, under their file name.
pub fn app_info() -> String {
    format!(
        "<app_info>\n\
         <app><name>example_app</name></app>\n\
         <file_info><name>{VOLUNTEER_APP}</name><executable/></file_info>\n\
         <app_version>\n\
         <app_name>example_app</app_name>\n\
         <version_num>{VOLUNTEER_VERSION}</version_num>\n\
         <avg_ncpus>1</avg_ncpus>\n\
         <max_ncpus>1</max_ncpus>\n\
         <api_version>7.20.5</api_version>\n\
         <file_ref><file_name>{VOLUNTEER_APP}</file_name><main_program/></file_ref>\n\
         </app_version>\n\
         </app_info>\n"
    )
}

/// Fills `project` (a project's directory, made if missing) with the volunteer's copy
/// of the example app (the boinc-rs binary, linked where the file system allows, else
/// copied) and `app_info`; the copy's path, canonical.
pub fn volunteer_project(project: &Path, app_info: &str) -> PathBuf {
    std::fs::create_dir_all(project).expect("the project's directory");
    let own = project.join(VOLUNTEER_APP);
    let binary = env!("CARGO_BIN_EXE_boinc-rs");
    if std::fs::hard_link(binary, &own).is_err() {
        std::fs::copy(binary, &own).expect("the volunteer's copy of the example app");
    }
    std::fs::write(project.join(APP_INFO), app_info).expect("app_info.xml");
    own.canonicalize().expect("the volunteer's app")
}

/// A process of this machine running `exe` (its `/proc/PID/exe`), if one runs now.
pub fn process_running(exe: &Path) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|entry| {
        let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
        (std::fs::read_link(entry.path().join("exe")).ok()? == exe).then_some(pid)
    })
}
