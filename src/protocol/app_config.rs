//! A project's app_config.xml into [`AppConfig`]: `<app>` with `<name>`,
//! `<max_concurrent>` and `<gpu_versions>` (`<gpu_usage>`, `<cpu_usage>`), and
//! `<project_max_concurrent>`. Values are bounded; a bad `<app>` is a problem of its own
//! and is left out, the rest applies.

use super::error::{XmlError, XmlProblem};
use super::xml_tree::{Element, parse_document};
use crate::model::{AppConfig, AppSettings};

/// The most `<app>` entries read.
const MAX_APPS: usize = 1024;
/// The most jobs a limit may allow (more is no limit at all).
const MAX_CONCURRENT: u32 = 100_000;

/// Reads an app_config.xml: a text that is not XML or not an `<app_config>` is an
/// error; a bad element is one of the problems returned and its entry is left out.
pub fn read_app_config(text: &str, name: &str) -> Result<(AppConfig, Vec<XmlError>), XmlError> {
    let root = parse_document(text).map_err(|e| e.in_file(name))?;
    if root.name != "app_config" {
        return Err(root.error(XmlProblem::WrongRoot { expected: "app_config" }).in_file(name));
    }
    let mut config = AppConfig::default();
    let mut problems = Vec::new();
    for child in &root.children {
        let outcome = match child.name.as_str() {
            "app" if config.apps.len() >= MAX_APPS => {
                Err(child.error(XmlProblem::TooMany { element: "app", limit: MAX_APPS }))
            }
            "app" => app_settings(child).map(|app| config.apps.push(app)),
            "project_max_concurrent" => {
                concurrency(child).map(|limit| config.project_max_concurrent = Some(limit))
            }
            _ => Ok(()),
        };
        if let Err(problem) = outcome {
            problems.push(problem.in_file(name));
        }
    }
    Ok((config, problems))
}

fn concurrency(element: &Element) -> Result<u32, XmlError> {
    element.u32_in(1, MAX_CONCURRENT, "between 1 and 100000 jobs")
}

fn app_settings(element: &Element) -> Result<AppSettings, XmlError> {
    let mut settings =
        AppSettings { name: element.required_text("name")?.to_string(), ..AppSettings::default() };
    if let Some(limit) = element.child("max_concurrent") {
        // BOINC's 0 means no limit.
        settings.max_concurrent = match limit.i64()? {
            0 => None,
            _ => Some(concurrency(limit)?),
        };
    }
    if let Some(gpu_versions) = element.child("gpu_versions") {
        if let Some(gpu_usage) = gpu_versions.child("gpu_usage") {
            // Under 1/1000 of a GPU a job would be counted as no GPU job at all.
            settings.gpu_usage =
                Some(gpu_usage.f64_in(0.001, 1024.0, "between 0.001 and 1024 GPUs")?);
        }
        if let Some(cpu_usage) = gpu_versions.child("cpu_usage") {
            settings.cpu_usage = Some(cpu_usage.f64_in(0.0, 4096.0, "between 0 and 4096 CPUs")?);
        }
    }
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apps_and_project_limit() {
        let (config, problems) = read_app_config(
            "<app_config>\
               <app><name>astropulse</name><max_concurrent>2</max_concurrent>\
                 <gpu_versions><gpu_usage>0.5</gpu_usage><cpu_usage>0.25</cpu_usage></gpu_versions>\
               </app>\
               <app><name>setiathome</name><max_concurrent>0</max_concurrent></app>\
               <app_version><app_name>x</app_name><plan_class>cuda</plan_class></app_version>\
               <project_max_concurrent>3</project_max_concurrent>\
             </app_config>",
            "app_config.xml",
        )
        .expect("valid");
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(config.project_max_concurrent, Some(3));
        assert_eq!(
            config.apps,
            vec![
                AppSettings {
                    name: "astropulse".into(),
                    max_concurrent: Some(2),
                    gpu_usage: Some(0.5),
                    cpu_usage: Some(0.25),
                },
                AppSettings { name: "setiathome".into(), ..AppSettings::default() },
            ]
        );
    }

    #[test]
    fn a_bad_app_is_left_out_and_the_rest_applies() {
        let (config, problems) = read_app_config(
            "<app_config>\n<app><max_concurrent>2</max_concurrent></app>\n\
             <app><name>a</name><gpu_versions><gpu_usage>0</gpu_usage></gpu_versions></app>\n\
             <app><name>b</name><max_concurrent>-4</max_concurrent></app>\n\
             <app><name>c</name><gpu_versions><cpu_usage>1e99</cpu_usage></gpu_versions></app>\n\
             <project_max_concurrent>lots</project_max_concurrent>\n\
             <app><name>good</name><max_concurrent>1</max_concurrent></app>\n</app_config>",
            "projects/p/app_config.xml",
        )
        .expect("an app_config");
        let lines: Vec<usize> = problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, vec![2, 3, 4, 5, 6]);
        assert!(problems.iter().all(|p| p.file == "projects/p/app_config.xml"));
        assert_eq!(config.apps.len(), 1);
        assert_eq!(config.apps[0].name, "good");
        assert_eq!(config.project_max_concurrent, None);
        assert!(read_app_config("<cc_config/>", "app_config.xml").is_err());
        assert!(read_app_config("<app_config><app>", "app_config.xml").is_err());
    }
}
