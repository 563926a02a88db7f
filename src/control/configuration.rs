//! Reloading the user's configuration (issue "The host service", configuration users
//! rely on): cc_config.xml, global_prefs.xml with global_prefs_override.xml on top (the
//! override wins, element by element), and each project's app_config.xml, read from
//! their texts into the actions that apply them. The service calls it at start and when
//! asked (GUI RPC `read_cc_config`, `read_global_prefs_override`); the caller reads the
//! files.
//!
//! Nothing the client holds is lost to a bad file: a file that does not parse keeps the
//! values the client had, and a bad element is reported and leaves its setting at the
//! default while the rest of the file applies.

use super::user_action::UserAction;
use crate::model::log_flags::silent_flags;
use crate::model::{AppConfig, CcConfig, ClientState, Prefs, ProjectId};
use crate::protocol::{
    SourceText, XmlError, read_app_config, read_cc_config, read_global_prefs,
    read_global_prefs_in_venue,
};

/// The texts of the configuration files present (`None`: the file is absent).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConfigurationFiles<'a> {
    /// cc_config.xml.
    pub cc_config: Option<SourceText<'a>>,
    /// global_prefs.xml (the preferences the projects sent).
    pub global_prefs: Option<SourceText<'a>>,
    /// global_prefs_override.xml (the user's own, which win).
    pub global_prefs_override: Option<SourceText<'a>>,
    /// Each project's app_config.xml.
    pub app_configs: Vec<(ProjectId, SourceText<'a>)>,
}

/// The configuration read, and what was wrong in the files.
#[derive(Debug, Clone, PartialEq)]
pub struct Configuration {
    /// The client options.
    pub cc_config: CcConfig,
    /// The preferences.
    pub prefs: Prefs,
    /// The app configurations, by project master URL.
    pub app_configs: Vec<(String, AppConfig)>,
    /// Each problem found, with its file, line and element; for the event log.
    pub problems: Vec<XmlError>,
    /// The files that could not be read at all, whose settings stay as they were.
    pub unread: Vec<String>,
}

impl Configuration {
    /// The actions that apply the configuration to a client's state.
    pub fn user_actions(&self) -> Vec<UserAction> {
        vec![
            UserAction::SetPreferences(Box::new(self.prefs.clone())),
            UserAction::SetConfig(Box::new(self.cc_config.clone())),
            UserAction::SetAppConfigs(self.app_configs.clone()),
        ]
    }

    /// The warnings to log: each problem, each log flag turned on that shows nothing
    /// in boinc-rs, and each app an app_config.xml names that its project does not have
    /// in `state`.
    pub fn warnings(&self, state: &ClientState) -> Vec<String> {
        let mut warnings: Vec<String> = self.problems.iter().map(ToString::to_string).collect();
        for flag in silent_flags(&self.cc_config.log_flags) {
            warnings.push(format!(
                "cc_config.xml: log flag <{flag}> shows nothing more: boinc-rs has no messages of that kind"
            ));
        }
        for (url, config) in &self.app_configs {
            let Some(project) = state.project_by_url(url) else { continue };
            let names = config.apps.iter().map(|a| &a.name);
            for name in names.chain(config.app_versions.iter().map(|v| &v.app_name)) {
                let known = state.apps.iter().any(|a| a.project == project && &a.name == name);
                if !known {
                    warnings.push(format!(
                        "app_config.xml of {url} names app \"{name}\", which the project has not sent (yet); check its spelling"
                    ));
                }
            }
        }
        warnings
    }
}

/// Reads the configuration files over `current` (the client's state now): the values
/// of a file that cannot be read at all stay as `current` has them.
pub fn read_configuration(files: &ConfigurationFiles, current: &ClientState) -> Configuration {
    let mut problems = Vec::new();
    let mut unread = Vec::new();
    let cc_config = match files.cc_config {
        None => CcConfig::default(),
        Some(file) => match read_cc_config(file.text, file.name) {
            Ok((config, found)) => {
                problems.extend(found);
                config
            }
            Err(error) => {
                unread.push(file.name.to_string());
                problems.push(error);
                current.config.clone()
            }
        },
    };
    let prefs = read_preferences(files, current, &mut problems, &mut unread);
    let mut app_configs = Vec::new();
    for (project, file) in &files.app_configs {
        let Some(url) = current.projects.get(project.index()).map(|p| p.master_url.clone()) else {
            continue;
        };
        match read_app_config(file.text, file.name) {
            Ok((config, found)) => {
                problems.extend(found);
                app_configs.push((url, config));
            }
            Err(error) => {
                unread.push(file.name.to_string());
                problems.push(error);
            }
        }
    }
    Configuration { cc_config, prefs, app_configs, problems, unread }
}

/// BOINC's defaults, then global_prefs.xml, then the override on top; the current
/// preferences if either file cannot be read at all.
fn read_preferences(
    files: &ConfigurationFiles,
    current: &ClientState,
    problems: &mut Vec<XmlError>,
    unread: &mut Vec<String>,
) -> Prefs {
    let mut prefs = Prefs::default();
    // Projects are told whether the user's own preferences override theirs.
    prefs.reported.override_file_present = files.global_prefs_override.is_some();
    // The web preferences apply in the venue their project puts this host in; the
    // user's override is the same everywhere (BOINC reads no venue in it).
    let venue = files.global_prefs.map(|file| source_venue(file.text, current)).unwrap_or_default();
    let venues = [venue.as_str(), ""];
    for (file, venue) in [files.global_prefs, files.global_prefs_override].into_iter().zip(venues) {
        let Some(file) = file else { continue };
        match read_global_prefs_in_venue(file.text, file.name, venue, &mut prefs) {
            Ok(found) => problems.extend(found),
            Err(error) => {
                unread.push(file.name.to_string());
                problems.push(error);
                return current.prefs.clone();
            }
        }
    }
    prefs
}

/// The host's venue at the project the web preferences in `text` came from
/// (`<source_project>`); none when they name no project the client knows.
fn source_venue(text: &str, current: &ClientState) -> String {
    let mut scratch = Prefs::default();
    if read_global_prefs(text, "global_prefs.xml", &mut scratch).is_err() {
        return String::new();
    }
    current
        .project_by_url(&scratch.reported.source_project)
        .map(|p| current.project(p).host_venue.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::apply_user_action;
    use crate::model::{App, AppVersion, Project, ResourceType, ResourceUsage};

    fn source<'a>(name: &'a str, text: &'a str) -> Option<SourceText<'a>> {
        Some(SourceText { name, text })
    }

    fn state_with_a_gpu_app() -> ClientState {
        let mut state = ClientState::default();
        state.projects.push(Project::new("p", "http://p/", 100.0));
        let project = ProjectId::from_index(0);
        state.apps.push(App::new(project, "astro"));
        let usage =
            ResourceUsage { avg_ncpus: 1.0, coprocessor: Some((ResourceType::Nvidia, 1.0)) };
        let app = crate::model::AppId::from_index(0);
        state.app_versions.push(AppVersion::new(project, app, 1, "cuda", usage, 1e10));
        state
    }

    #[test]
    fn the_override_wins_and_everything_applies() {
        let mut state = state_with_a_gpu_app();
        let files = ConfigurationFiles {
            cc_config: source(
                "cc_config.xml",
                "<cc_config><options><ncpus>3</ncpus></options></cc_config>",
            ),
            global_prefs: source(
                "global_prefs.xml",
                "<global_preferences><work_buf_min_days>2</work_buf_min_days>\
                 <max_ncpus_pct>50</max_ncpus_pct></global_preferences>",
            ),
            global_prefs_override: source(
                "global_prefs_override.xml",
                "<global_preferences><max_ncpus_pct>75</max_ncpus_pct></global_preferences>",
            ),
            app_configs: vec![(
                ProjectId::from_index(0),
                SourceText {
                    name: "projects/p/app_config.xml",
                    text: "<app_config><app><name>astro</name><max_concurrent>1</max_concurrent>\
                           <gpu_versions><gpu_usage>0.5</gpu_usage><cpu_usage>0.2</cpu_usage>\
                           </gpu_versions></app><app><name>typo</name></app></app_config>",
                },
            )],
        };
        let configuration = read_configuration(&files, &state);
        assert!(configuration.problems.is_empty(), "{:?}", configuration.problems);
        for action in configuration.user_actions() {
            apply_user_action(&mut state, &action, 0.0).expect("applies");
        }
        assert_eq!(state.config.ncpus, Some(3));
        assert_eq!((state.prefs.work_buf_min_days, state.prefs.max_ncpus_pct), (2.0, 75.0));
        assert_eq!(state.apps[0].max_concurrent, Some(1));
        let usage = state.app_versions[0].usage;
        assert_eq!((usage.avg_ncpus, usage.coprocessor), (0.2, Some((ResourceType::Nvidia, 0.5))));
        let warnings = configuration.warnings(&state);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("\"typo\""), "{warnings:?}");
    }

    #[test]
    fn web_preferences_apply_in_the_hosts_venue_under_the_override() {
        let mut state = state_with_a_gpu_app();
        state.projects[0].host_venue = "home".into();
        let web = crate::control::web_prefs_update(
            None,
            "<mod_time>5</mod_time><cpu_usage_limit>90</cpu_usage_limit>             <work_buf_min_days>1</work_buf_min_days>             <venue name=\"home\"><cpu_usage_limit>30</cpu_usage_limit>             <max_ncpus_pct>50</max_ncpus_pct></venue>",
            "http://p/",
        )
        .expect("preferences")
        .expect("no file yet");
        let files = ConfigurationFiles {
            global_prefs: source("global_prefs.xml", &web),
            global_prefs_override: source(
                "global_prefs_override.xml",
                "<global_preferences><max_ncpus_pct>75</max_ncpus_pct>                 <venue name=\"home\"><max_ncpus_pct>10</max_ncpus_pct></venue>                 </global_preferences>",
            ),
            ..ConfigurationFiles::default()
        };
        let configuration = read_configuration(&files, &state);
        assert!(configuration.problems.is_empty(), "{:?}", configuration.problems);
        let prefs = &configuration.prefs;
        // The home section, not the general values; the override's general value on top.
        assert_eq!((prefs.cpu_usage_limit, prefs.max_ncpus_pct), (30.0, 75.0));
        assert_eq!(prefs.work_buf_min_days, Prefs::default().work_buf_min_days);
        assert_eq!(prefs.reported.source_project, "http://p/");
        assert!(prefs.reported.override_file_present);
        state.projects[0].host_venue = String::new();
        let general = read_configuration(&files, &state).prefs;
        assert_eq!((general.cpu_usage_limit, general.work_buf_min_days), (90.0, 1.0));
    }

    #[test]
    fn a_file_that_does_not_parse_keeps_what_the_client_had() {
        let mut state = state_with_a_gpu_app();
        state.prefs.work_buf_min_days = 4.0;
        state.config.report_results_immediately = true;
        let files = ConfigurationFiles {
            cc_config: source("cc_config.xml", "<cc_config><options>"),
            global_prefs: None,
            global_prefs_override: source("global_prefs_override.xml", "\0garbage"),
            app_configs: vec![(
                ProjectId::from_index(0),
                SourceText { name: "app_config.xml", text: "<x/>" },
            )],
        };
        let configuration = read_configuration(&files, &state);
        assert_eq!(configuration.problems.len(), 3);
        assert_eq!(
            configuration.unread,
            ["cc_config.xml", "global_prefs_override.xml", "app_config.xml"]
        );
        assert_eq!(configuration.prefs, state.prefs);
        assert_eq!(configuration.cc_config, state.config);
        assert!(configuration.app_configs.is_empty());
    }

    #[test]
    fn absent_files_mean_the_defaults() {
        let mut state = state_with_a_gpu_app();
        state.prefs.work_buf_min_days = 4.0;
        let configuration = read_configuration(&ConfigurationFiles::default(), &state);
        assert_eq!(
            (configuration.prefs, configuration.cc_config),
            (Prefs::default(), CcConfig::default())
        );
        assert!(configuration.problems.is_empty());
    }

    #[test]
    fn the_real_clients_files_read_without_problems() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/boinc-7.20.5/state/");
        let cc = std::fs::read_to_string(format!("{dir}cc_config.xml")).expect("cc_config fixture");
        let prefs = std::fs::read_to_string(format!("{dir}global_prefs_override.xml"))
            .expect("override fixture");
        let files = ConfigurationFiles {
            cc_config: source("cc_config.xml", &cc),
            global_prefs_override: source("global_prefs_override.xml", &prefs),
            ..ConfigurationFiles::default()
        };
        let configuration = read_configuration(&files, &ClientState::default());
        assert!(configuration.problems.is_empty(), "{:?}", configuration.problems);
        assert!(configuration.cc_config.no_gpus);
    }
}
