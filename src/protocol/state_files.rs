//! Loading a state directory's files together, in the order the real client applies them
//! (docs/design.md "Protocol facts", "State"): client_state.xml, then global_prefs.xml, then
//! global_prefs_override.xml on top of it, then cc_config.xml. The caller reads the files;
//! this module only interprets their text.

use super::cc_config::parse_cc_config;
use super::client_state::parse_client_state_with_warnings;
use super::error::XmlError;
use super::prefs::parse_global_prefs;
use crate::model::ClientState;

/// The text of one file and the name to report errors under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceText<'a> {
    /// File name or path, used only in error messages.
    pub name: &'a str,
    /// The file's contents.
    pub text: &'a str,
}

/// The files of a BOINC data directory that make up the client state; the optional ones
/// are `None` where the directory doesn't have them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateFiles<'a> {
    /// client_state.xml.
    pub client_state: SourceText<'a>,
    /// global_prefs.xml.
    pub global_prefs: Option<SourceText<'a>>,
    /// global_prefs_override.xml: the local preferences that win over the project's.
    pub global_prefs_override: Option<SourceText<'a>>,
    /// cc_config.xml.
    pub cc_config: Option<SourceText<'a>>,
}

/// Reads the state, then the global preferences, then the override on top of them
/// (element by element, the override wins), then the client configuration.
pub fn load_state(files: &StateFiles) -> Result<ClientState, XmlError> {
    load_state_with_warnings(files).map(|(state, _)| state)
}

/// [`load_state`], with what it had to drop or change to load client_state.xml (see
/// [`super::parse_client_state_with_warnings`]).
pub fn load_state_with_warnings(
    files: &StateFiles,
) -> Result<(ClientState, Vec<String>), XmlError> {
    let (mut state, warnings) =
        parse_client_state_with_warnings(files.client_state.text, files.client_state.name)?;
    for prefs in [files.global_prefs, files.global_prefs_override].into_iter().flatten() {
        parse_global_prefs(prefs.text, prefs.name, &mut state.prefs)?;
    }
    if let Some(config) = files.cc_config {
        state.config = parse_cc_config(config.text, config.name)?;
    }
    Ok((state, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATE: &str = "<client_state><host_info><p_ncpus>4</p_ncpus></host_info></client_state>";

    #[test]
    fn override_wins_element_by_element() {
        let files = StateFiles {
            client_state: SourceText { name: "client_state.xml", text: STATE },
            global_prefs: Some(SourceText {
                name: "global_prefs.xml",
                text: "<global_preferences><work_buf_min_days>1</work_buf_min_days>\
                       <max_ncpus_pct>50</max_ncpus_pct></global_preferences>",
            }),
            global_prefs_override: Some(SourceText {
                name: "global_prefs_override.xml",
                text: "<global_preferences><max_ncpus_pct>75</max_ncpus_pct></global_preferences>",
            }),
            cc_config: Some(SourceText {
                name: "cc_config.xml",
                text: "<cc_config><options><ncpus>2</ncpus></options></cc_config>",
            }),
        };
        let state = load_state(&files).expect("valid");
        assert_eq!(state.prefs.work_buf_min_days, 1.0);
        assert_eq!(state.prefs.max_ncpus_pct, 75.0);
        assert_eq!(state.config.ncpus, Some(2));
    }

    #[test]
    fn errors_name_the_failing_file() {
        let files = StateFiles {
            client_state: SourceText { name: "client_state.xml", text: STATE },
            global_prefs: None,
            global_prefs_override: Some(SourceText {
                name: "override.xml",
                text: "<global_preferences>",
            }),
            cc_config: None,
        };
        assert_eq!(load_state(&files).expect_err("unclosed").file, "override.xml");
    }
}
