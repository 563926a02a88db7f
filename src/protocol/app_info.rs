//! A project's app_info.xml (BOINC's anonymous platform, docs/design.md "Anonymous
//! platform"): the volunteer's own apps for a project, in the project's directory:
//! `<app>` (name, user-friendly name), `<file_info>` (name, executable, nbytes, md5)
//! and `<app_version>` (app_name, version_num, platform, plan_class, avg_ncpus,
//! max_ncpus, flops, api_version, cmdline, `<coproc>`, `<file_ref>` with open_name,
//! main_program, copy_file), in the elements a scheduler reply uses for the same things.
//!
//! The file is the volunteer's, but it is read as any outside input: a text that is not
//! a well-formed `<app_info>`, a file name that is not a plain name, a download URL (the
//! volunteer's files are never downloaded), a version naming an app or a file the
//! document does not declare, or a coprocessor type without a resource is an error
//! naming its line, and the whole file is refused: a half-read app_info.xml would
//! declare apps the volunteer did not mean to run as declared.

use super::app_description::{AppDescription, AppVersionDescription};
use super::error::{XmlError, XmlProblem};
use super::file_description::FileDescription;
use super::list_counts::ListCounts;
use super::xml_tree::{Element, parse_document};
use crate::control::is_plain_file_name;
use crate::model::ResourceType;
use serde::{Deserialize, Serialize};

/// The most `<app>`, `<file_info>` or `<app_version>` entries one app_info.xml may list:
/// far beyond any volunteer's optimised apps for one project.
pub const MAX_APP_INFO_ENTRIES: usize = 1024;

/// What an app_info.xml declares.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AppInfo {
    /// The apps (`<app>`).
    pub apps: Vec<AppDescription>,
    /// The files, all in the project's directory (`<file_info>` or `<file>`).
    pub files: Vec<FileDescription>,
    /// The app versions, each naming its app and its files (`<app_version>`).
    pub app_versions: Vec<AppVersionDescription<'static>>,
}

/// Reads an app_info.xml named `name` (for the errors); any problem refuses the whole
/// file (see the module documentation).
pub fn read_app_info(text: &str, name: &str) -> Result<AppInfo, XmlError> {
    parse(text).map_err(|e| e.in_file(name))
}

fn parse(text: &str) -> Result<AppInfo, XmlError> {
    let root = parse_document(text)?;
    if root.name != "app_info" {
        return Err(root.error(XmlProblem::WrongRoot { expected: "app_info" }));
    }
    let mut info = AppInfo::default();
    let mut counted = ListCounts::default();
    for child in &root.children {
        match child.name.as_str() {
            "app" => {
                counted.check(child, "app", MAX_APP_INFO_ENTRIES)?;
                info.apps.push(AppDescription::parse(child)?);
            }
            "file_info" | "file" => {
                counted.check(child, "file_info", MAX_APP_INFO_ENTRIES)?;
                info.files.push(volunteer_file(child)?);
            }
            "app_version" => {
                counted.check(child, "app_version", MAX_APP_INFO_ENTRIES)?;
                info.app_versions.push(AppVersionDescription::parse(child)?);
            }
            _ => {}
        }
    }
    check_references(&root, &info)?;
    Ok(info)
}

/// A `<file_info>` of the volunteer's: a plain name, no URL.
fn volunteer_file(element: &Element) -> Result<FileDescription, XmlError> {
    let file = FileDescription::parse(element)?;
    // A name that could reach outside the project's directory never names a file.
    if !is_plain_file_name(&file.name) {
        return Err(element.error(XmlProblem::NotAPlainFileName(file.name)));
    }
    if !file.urls.is_empty() {
        return Err(element.error(XmlProblem::UrlInAppInfo));
    }
    Ok(file)
}

/// Every version names a declared app, declared files and a coprocessor type the
/// client schedules.
fn check_references(root: &Element, info: &AppInfo) -> Result<(), XmlError> {
    let versions = root.children.iter().filter(|c| c.name == "app_version");
    for (element, version) in versions.zip(&info.app_versions) {
        if !info.apps.iter().any(|a| a.name == version.app_name) {
            let app = version.app_name.to_string();
            return Err(element.error(XmlProblem::UndeclaredApp(app)));
        }
        for reference in &version.file_refs {
            if !info.files.iter().any(|f| f.name == reference.file_name) {
                let file = reference.file_name.clone();
                return Err(element.error(XmlProblem::UndeclaredFile(file)));
            }
        }
        if let Some(coprocessor) = &version.coprocessor {
            let kind = &coprocessor.kind;
            if ResourceType::from_boinc_name(kind).is_none_or(|r| !r.is_gpu()) {
                return Err(element.error(XmlProblem::UnknownCoprocessor(kind.to_string())));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An app_info.xml as volunteers write them (BOINC's AnonymousPlatform page's
    /// elements): a plain CPU version and a GPU version of one app.
    const FIXTURE: &str = include_str!("../../tests/fixtures/app_info/app_info.xml");

    #[test]
    fn a_volunteers_app_info_is_read_whole() {
        let info = read_app_info(FIXTURE, "app_info.xml").expect("valid");
        assert_eq!(info.apps.len(), 1);
        assert_eq!(info.apps[0].name, "example_app");
        assert_eq!(info.apps[0].user_friendly_name, "My own example app");
        let names: Vec<&str> = info.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["my_example_app", "my_example_app_cuda", "tables.dat"]);
        assert!(info.files[0].executable && !info.files[2].executable);
        assert_eq!(info.files[0].nbytes, Some(1234.0));
        let cpu = &info.app_versions[0];
        assert_eq!((cpu.app_name.as_ref(), cpu.version_num), ("example_app", 107));
        assert_eq!(cpu.platform, "x86_64-pc-linux-gnu");
        assert_eq!((cpu.avg_ncpus, cpu.max_ncpus, cpu.flops), (Some(1.0), Some(1.0), Some(3e9)));
        assert_eq!(cpu.api_version, "7.20.0");
        assert_eq!(cpu.cmdline, "--fast");
        assert_eq!(cpu.file_refs.len(), 2);
        assert!(cpu.file_refs[0].main_program && cpu.file_refs[0].file_name == "my_example_app");
        assert_eq!(cpu.file_refs[1].open_name, "tables");
        assert!(cpu.file_refs[1].copy_file);
        let gpu = &info.app_versions[1];
        assert_eq!(gpu.plan_class, "cuda");
        let coprocessor = gpu.coprocessor.as_ref().expect("a GPU version");
        assert_eq!((coprocessor.kind.as_ref(), coprocessor.count), ("NVIDIA", 0.5));
    }

    fn problem_of(text: &str) -> XmlError {
        read_app_info(text, "app_info.xml").expect_err("refused")
    }

    #[test]
    fn a_damaged_or_hostile_file_is_refused_with_its_line() {
        let error = problem_of("<app_info>\n<app><name>a</name>\n");
        assert_eq!((error.file.as_str(), error.problem), ("app_info.xml", XmlProblem::Unclosed));
        let error = problem_of("<app_config/>");
        assert_eq!(error.problem, XmlProblem::WrongRoot { expected: "app_info" });
        let error =
            problem_of("<app_info>\n<file_info><name>../../bin/sh</name></file_info></app_info>");
        assert_eq!(error.problem, XmlProblem::NotAPlainFileName("../../bin/sh".into()));
        let error = problem_of(
            "<app_info>\n\n<file_info><name>a</name><url>http://x/a</url></file_info></app_info>",
        );
        assert_eq!((error.line, error.problem), (3, XmlProblem::UrlInAppInfo));
        let error = problem_of(
            "<app_info><app><name>a</name></app>\n<app_version><app_name>b</app_name>\
             </app_version></app_info>",
        );
        assert_eq!((error.line, error.problem), (2, XmlProblem::UndeclaredApp("b".into())));
        let error = problem_of(
            "<app_info><app><name>a</name></app><app_version><app_name>a</app_name>\
             <file_ref><file_name>gone</file_name></file_ref></app_version></app_info>",
        );
        assert_eq!(error.problem, XmlProblem::UndeclaredFile("gone".into()));
        let error = problem_of(
            "<app_info><app><name>a</name></app><app_version><app_name>a</app_name>\
             <coproc><type>apple_gpu</type></coproc></app_version></app_info>",
        );
        assert_eq!(error.problem, XmlProblem::UnknownCoprocessor("apple_gpu".into()));
        let error = problem_of(
            "<app_info><app_version><app_name>a</app_name><version_num>-1</version_num>\
             </app_version></app_info>",
        );
        assert_eq!(error.element.as_deref(), Some("version_num"));
        let many = "<app><name>a</name></app>".repeat(MAX_APP_INFO_ENTRIES + 1);
        let error = problem_of(&format!("<app_info>{many}</app_info>"));
        assert_eq!(
            error.problem,
            XmlProblem::TooMany { element: "app", limit: MAX_APP_INFO_ENTRIES }
        );
        assert!(error.to_string().starts_with("app_info.xml line 1"), "{error}");
    }
}
