//! Reading a BOINC data directory or emulator scenario from disk into the core's model.

use anyhow::{Context, Result};
use boinc_core::model::ClientState;
use boinc_core::protocol::{SourceText, StateFiles, load_state};
use std::path::Path;

/// Reads a file of the directory; `None` when the file is absent.
fn read_optional(dir: &Path, name: &str) -> Result<Option<String>> {
    let path = dir.join(name);
    match std::fs::read(&path) {
        // State files are XML in UTF-8; a stray invalid byte must not make a user's
        // whole state unreadable, so it is replaced rather than rejected.
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Loads `client_state.xml` (or, failing that, the previous copy the client keeps,
/// `client_state_prev.xml`) with the preferences and configuration beside it.
pub fn load_state_dir(dir: &Path) -> Result<ClientState> {
    let (name, client_state) = match read_optional(dir, "client_state.xml")? {
        Some(text) => ("client_state.xml", text),
        None => match read_optional(dir, "client_state_prev.xml")? {
            Some(text) => ("client_state_prev.xml", text),
            None => anyhow::bail!(
                "{} has no client_state.xml: point --state at a BOINC data directory or scenario",
                dir.display()
            ),
        },
    };
    let global_prefs = read_optional(dir, "global_prefs.xml")?;
    let global_prefs_override = read_optional(dir, "global_prefs_override.xml")?;
    let cc_config = read_optional(dir, "cc_config.xml")?;
    let files = StateFiles {
        client_state: SourceText { name, text: &client_state },
        global_prefs: global_prefs
            .as_deref()
            .map(|text| SourceText { name: "global_prefs.xml", text }),
        global_prefs_override: global_prefs_override
            .as_deref()
            .map(|text| SourceText { name: "global_prefs_override.xml", text }),
        cc_config: cc_config.as_deref().map(|text| SourceText { name: "cc_config.xml", text }),
    };
    load_state(&files).with_context(|| format!("cannot load the state in {}", dir.display()))
}
