//! Reads the user's configuration files from a data directory (cc_config.xml,
//! global_prefs.xml, global_prefs_override.xml, each project's app_config.xml) into the
//! core's [`Configuration`] (`boinc_core::control::configuration`): at the service's
//! start and when a GUI RPC client asks for a reload.

use boinc_core::control::{Configuration, ConfigurationFiles, read_configuration};
use boinc_core::model::ClientState;
use boinc_core::protocol::SourceText;
use boinc_core::protocol::data_dir::{APP_CONFIG, CC_CONFIG, GLOBAL_PREFS, GLOBAL_PREFS_OVERRIDE};
use std::io::{ErrorKind, Read};
use std::path::Path;

/// The largest configuration file read, bytes; a bigger one is not a user's file.
const MAX_CONFIG_FILE: u64 = 1 << 20;

/// The configuration in `dir` over `state` (the client's state now), and the warnings
/// to log: each problem in a file, each file that could not be read (its settings stay
/// as the client had them), each app an app_config.xml names that its project lacks.
pub fn read_configuration_dir(dir: &Path, state: &ClientState) -> (Configuration, Vec<String>) {
    let mut unreadable = Vec::new();
    let mut read = |relative: String| match read_bounded(&dir.join(&relative)) {
        Ok(text) => text.map(|text| (relative, text)),
        Err(reason) => {
            unreadable.push((relative, reason));
            None
        }
    };
    let cc_config = read(CC_CONFIG.to_string());
    let global_prefs = read(GLOBAL_PREFS.to_string());
    let global_prefs_override = read(GLOBAL_PREFS_OVERRIDE.to_string());
    let app_configs: Vec<_> = state
        .project_ids()
        .filter(|&p| !state.project(p).detached)
        .filter_map(|p| {
            let project_dir = boinc_core::control::project_dir(&state.project(p).master_url);
            read(format!("{project_dir}/{APP_CONFIG}")).map(|file| (p, file))
        })
        .collect();
    let files = ConfigurationFiles {
        cc_config: source(&cc_config),
        global_prefs: source(&global_prefs),
        global_prefs_override: source(&global_prefs_override),
        app_configs: app_configs
            .iter()
            .map(|(p, (name, text))| (*p, SourceText { name: name.as_str(), text: text.as_str() }))
            .collect(),
    };
    let mut configuration = read_configuration(&files, state);
    let mut warnings = configuration.warnings(state);
    for (name, reason) in unreadable {
        // Nothing the client holds is lost to a file it cannot read.
        if name == CC_CONFIG {
            configuration.cc_config = state.config.clone();
        } else if name == GLOBAL_PREFS || name == GLOBAL_PREFS_OVERRIDE {
            configuration.prefs = state.prefs.clone();
        }
        warnings.push(format!("cannot read {name}: {reason}; its settings stay as they were"));
        configuration.unread.push(name);
    }
    (configuration, warnings)
}

/// A file read (its name in the data directory, its text) as the core takes it.
fn source(file: &Option<(String, String)>) -> Option<SourceText<'_>> {
    file.as_ref().map(|(name, text)| SourceText { name: name.as_str(), text: text.as_str() })
}

/// A file's text; `None` when it is absent; an error when it cannot be read, is not
/// text, or is larger than a megabyte (no user's configuration file is). The service
/// reads the projects' app_info.xml with it too.
pub fn read_bounded(path: &Path) -> Result<Option<String>, String> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_FILE + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_CONFIG_FILE {
        return Err(format!("larger than {MAX_CONFIG_FILE} bytes"));
    }
    String::from_utf8(bytes).map(Some).map_err(|_| "not UTF-8 text".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use boinc_core::control::apply_user_action;
    use boinc_core::model::{App, Project, ProjectId};

    #[test]
    fn files_of_a_data_directory_apply_and_bad_ones_keep_the_settings() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut state = ClientState::default();
        state.projects.push(Project::new("p", "http://127.0.0.1/p/", 100.0));
        state.apps.push(App::new(ProjectId::from_index(0), "astro"));
        state.prefs.work_buf_min_days = 3.0;
        std::fs::write(
            dir.path().join(CC_CONFIG),
            "<cc_config><options><report_results_immediately/><max_file_xfers>0</max_file_xfers>\
             </options></cc_config>",
        )
        .expect("cc_config");
        std::fs::write(dir.path().join(GLOBAL_PREFS_OVERRIDE), vec![0xff_u8; 10]).expect("prefs");
        let project_dir = dir.path().join(boinc_core::control::project_dir("http://127.0.0.1/p/"));
        std::fs::create_dir_all(&project_dir).expect("project dir");
        std::fs::write(
            project_dir.join(APP_CONFIG),
            "<app_config><app><name>astro</name><max_concurrent>2</max_concurrent></app></app_config>",
        )
        .expect("app_config");
        let (configuration, warnings) = read_configuration_dir(dir.path(), &state);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("max_file_xfers"), "{warnings:?}");
        assert!(warnings[1].contains("global_prefs_override.xml") && warnings[1].contains("UTF-8"));
        assert_eq!(configuration.prefs.work_buf_min_days, 3.0, "kept");
        for action in configuration.user_actions() {
            apply_user_action(&mut state, &action, 0.0).expect("applies");
        }
        assert!(state.config.report_results_immediately);
        assert_eq!(state.apps[0].max_concurrent, Some(2));
    }

    /// A cc_config.xml of more than a megabyte is not read: a warning says so and the
    /// client's settings stay.
    #[test]
    fn a_huge_file_is_not_read_and_keeps_the_settings() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut state = ClientState::default();
        state.config.report_results_immediately = true;
        let huge = format!(
            "<cc_config><options>{}</options></cc_config>",
            "<!-- padding -->".repeat(MAX_CONFIG_FILE as usize / 16 + 1)
        );
        std::fs::write(dir.path().join(CC_CONFIG), huge).expect("cc_config");
        let (configuration, warnings) = read_configuration_dir(dir.path(), &state);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("larger than 1048576 bytes"), "{warnings:?}");
        assert!(configuration.cc_config.report_results_immediately, "kept");
    }

    #[test]
    fn an_empty_directory_is_the_defaults() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (configuration, warnings) = read_configuration_dir(dir.path(), &ClientState::default());
        assert!(warnings.is_empty());
        assert_eq!(configuration.cc_config, boinc_core::model::CcConfig::default());
    }
}
