//! A project's app_config.xml into [`AppConfig`]: `<app>` with `<name>`,
//! `<max_concurrent>` and `<gpu_versions>` (`<gpu_usage>`, `<cpu_usage>`),
//! `<app_version>` with `<app_name>`, `<plan_class>`, `<cmdline>`, `<avg_ncpus>` and
//! `<ngpus>`, `<project_max_concurrent>` and `<report_results_immediately>`. Values are
//! bounded; a bad `<app>` or `<app_version>` is a problem of its own and is left out,
//! the rest applies; an element BOINC's format does not have is named as a problem.

use super::error::{XmlError, XmlProblem};
use super::xml_tree::{Element, parse_document};
use crate::model::{AppConfig, AppSettings, AppVersionSettings};

/// The most `<app>` entries read (and the most `<app_version>` entries).
const MAX_APPS: usize = 1024;
/// The longest command line an `<app_version>` may give, bytes.
const MAX_CMDLINE: usize = 4096;
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
            "app_version" if config.app_versions.len() >= MAX_APPS => {
                Err(child.error(XmlProblem::TooMany { element: "app_version", limit: MAX_APPS }))
            }
            "app_version" => version_settings(child).map(|v| config.app_versions.push(v)),
            "project_max_concurrent" => {
                concurrency(child).map(|limit| config.project_max_concurrent = Some(limit))
            }
            "report_results_immediately" => {
                child.flag().map(|on| config.report_results_immediately = on)
            }
            _ => Err(child.error(XmlProblem::Unrecognized)),
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

fn version_settings(element: &Element) -> Result<AppVersionSettings, XmlError> {
    let mut settings = AppVersionSettings {
        app_name: element.required_text("app_name")?.to_string(),
        plan_class: element.child("plan_class").map(Element::string).unwrap_or_default(),
        ..AppVersionSettings::default()
    };
    if let Some(cmdline) = element.child("cmdline") {
        let text = cmdline.string();
        if text.len() > MAX_CMDLINE {
            return Err(cmdline.error(XmlProblem::OutOfRange {
                value: format!("{} bytes", text.len()),
                expected: "at most 4096 bytes",
            }));
        }
        settings.cmdline = Some(text);
    }
    if let Some(avg_ncpus) = element.child("avg_ncpus") {
        settings.avg_ncpus = Some(avg_ncpus.f64_in(0.0, 4096.0, "between 0 and 4096 CPUs")?);
    }
    if let Some(ngpus) = element.child("ngpus") {
        settings.ngpus = Some(ngpus.f64_in(0.001, 1024.0, "between 0.001 and 1024 GPUs")?);
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
            config.app_versions,
            vec![AppVersionSettings {
                app_name: "x".into(),
                plan_class: "cuda".into(),
                ..AppVersionSettings::default()
            }]
        );
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
    fn app_versions_and_reporting() {
        let (config, problems) = read_app_config(
            "<app_config>\n<app_version><app_name>astro</app_name><plan_class>cuda</plan_class>\
             <cmdline>--fast -x</cmdline><avg_ncpus>0.5</avg_ncpus><ngpus>0.25</ngpus>\
             </app_version>\n<app_version><app_name>plain</app_name><avg_ncpus>4</avg_ncpus>\
             </app_version>\n<app_version><plan_class>x</plan_class></app_version>\n\
             <app_version><app_name>y</app_name><ngpus>0</ngpus></app_version>\n\
             <report_results_immediately/>\n<max_concurent>2</max_concurent>\n</app_config>",
            "app_config.xml",
        )
        .expect("an app_config");
        let found: Vec<(usize, Option<&str>)> =
            problems.iter().map(|p| (p.line, p.element.as_deref())).collect();
        assert_eq!(
            found,
            vec![(4, Some("app_version")), (5, Some("ngpus")), (7, Some("max_concurent"))],
            "{problems:?}"
        );
        assert!(problems[2].to_string().contains("unrecognized tag"), "{}", problems[2]);
        assert!(config.report_results_immediately);
        assert_eq!(
            config.app_versions,
            vec![
                AppVersionSettings {
                    app_name: "astro".into(),
                    plan_class: "cuda".into(),
                    cmdline: Some("--fast -x".into()),
                    avg_ncpus: Some(0.5),
                    ngpus: Some(0.25),
                },
                AppVersionSettings {
                    app_name: "plain".into(),
                    avg_ncpus: Some(4.0),
                    ..AppVersionSettings::default()
                },
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
