//! Reading a BOINC data directory or emulator scenario from disk into the core's model
//! (for the binary and for programs that embed the client).

use boinc_core::model::ClientState;
use boinc_core::protocol::{SourceText, StateFiles, load_state_with_warnings};
use std::path::{Path, PathBuf};

/// Why a state directory could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StateDirError {
    /// A file exists but cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Neither client_state.xml nor client_state_prev.xml is there.
    #[error("{0} has no client_state.xml: point at a BOINC data directory or scenario")]
    NoState(PathBuf),
    /// The files are not a valid state.
    #[error("cannot load the state in {dir}: {message}")]
    Invalid {
        /// The directory.
        dir: PathBuf,
        /// What is wrong, with file, line and element.
        message: String,
    },
}

/// Reads a file of the directory; `None` when the file is absent.
fn read_optional(dir: &Path, name: &str) -> Result<Option<String>, StateDirError> {
    let path = dir.join(name);
    match std::fs::read(&path) {
        // State files are XML in UTF-8; a stray invalid byte must not make a user's
        // whole state unreadable, so it is replaced rather than rejected.
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(StateDirError::Read { path, source }),
    }
}

/// Loads `client_state.xml` (or, failing that, the previous copy the client keeps,
/// `client_state_prev.xml`) with the preferences and configuration beside it.
pub fn load_state_dir(dir: &Path) -> Result<ClientState, StateDirError> {
    load_state_dir_with_warnings(dir).map(|(state, _)| state)
}

/// [`load_state_dir`], with what had to be dropped or changed to load the state (an
/// active task of a result the file does not hold, a result without its app version,
/// an app version using more CPUs than the host has), one message each.
pub fn load_state_dir_with_warnings(
    dir: &Path,
) -> Result<(ClientState, Vec<String>), StateDirError> {
    let (name, client_state) = match read_optional(dir, "client_state.xml")? {
        Some(text) => ("client_state.xml", text),
        None => match read_optional(dir, "client_state_prev.xml")? {
            Some(text) => ("client_state_prev.xml", text),
            None => return Err(StateDirError::NoState(dir.to_path_buf())),
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
    load_state_with_warnings(&files)
        .map_err(|e| StateDirError::Invalid { dir: dir.to_path_buf(), message: format!("{e}") })
}
