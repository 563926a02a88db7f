//! The apps the project serves: each app's executable sits in the download directory
//! under BOINC's naming (`{app}_{version}_{platform}`), with its size, MD5 and the
//! project's signature of it (docs/design.md "Protocol facts": an executable runs only with a
//! `<file_signature>` that verifies with the project's key). The executable is linked
//! (or copied) into the project directory, so what is served is exactly what was
//! signed even if the original is rebuilt.

use super::config::AppSource;
use super::error::ProjectServerError;
use super::keys::ProjectKeys;
use super::signing::sign;
use boinc_core::protocol::app_api::COMPATIBLE_CLIENT_VERSION;
use md5::{Digest, Md5};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The download directory in the project directory.
pub(crate) const DOWNLOAD_DIR: &str = "download";

/// The version number every served app has.
pub(crate) const VERSION_NUM: u32 = 100;

/// The example app's name.
pub(crate) const EXAMPLE_APP: &str = "example_app";

/// One served app and its one app version.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServedApp {
    /// Short name (`<name>`).
    pub name: String,
    /// Name shown to users.
    pub user_friendly_name: String,
    /// BOINC platform it runs on.
    pub platform: String,
    /// The executable's file name in the download directory.
    pub file_name: String,
    /// Its size.
    pub nbytes: u64,
    /// Its MD5, hex.
    pub md5: String,
    /// The project's signature, BOINC's hex text.
    pub signature: String,
    /// Words every job's command line starts with (`example-app` for the example app).
    pub command_prefix: Vec<String>,
    /// The BOINC API version it uses (empty: a plain program).
    pub api_version: String,
    /// The example app (its jobs are given `--seconds`).
    pub is_example: bool,
}

impl ServedApp {
    /// Serves `source` in `project_dir`, signed with `keys`.
    pub(crate) fn install(
        source: &AppSource,
        project_dir: &Path,
        platform: &str,
        keys: &ProjectKeys,
    ) -> Result<ServedApp, ProjectServerError> {
        let (exe, name, user_friendly_name, command_prefix, is_example) = match source {
            AppSource::ExampleApp { exe } => (
                exe.clone(),
                EXAMPLE_APP.to_owned(),
                "boinc-rs example app".to_owned(),
                vec!["example-app".to_owned()],
                true,
            ),
            AppSource::Executable(exe) => {
                let name = app_name(exe)?;
                (exe.clone(), name.clone(), name, Vec::new(), false)
            }
        };
        let file_name = format!("{name}_{VERSION_NUM}_{platform}");
        let served = project_dir.join(DOWNLOAD_DIR).join(&file_name);
        place(&exe, &served)?;
        let (nbytes, md5) = md5_of_file(&served)?;
        let signature = sign(keys.private(), &md5)
            .map_err(|e| ProjectServerError::App { path: served.clone(), reason: e.to_string() })?
            .to_text();
        let (major, minor, release) = COMPATIBLE_CLIENT_VERSION;
        Ok(ServedApp {
            name,
            user_friendly_name,
            platform: platform.to_owned(),
            file_name,
            nbytes,
            md5,
            signature,
            command_prefix,
            api_version: format!("{major}.{minor}.{release}"),
            is_example,
        })
    }

    /// Signs the executable again (after the project's key changed).
    pub(crate) fn resign(&mut self, keys: &ProjectKeys) -> Result<(), ProjectServerError> {
        self.signature = sign(keys.private(), &self.md5)
            .map_err(|e| ProjectServerError::App {
                path: PathBuf::from(&self.file_name),
                reason: e.to_string(),
            })?
            .to_text();
        Ok(())
    }
}

/// An app's name from its executable's file name: letters, digits and `_` only.
fn app_name(exe: &Path) -> Result<String, ProjectServerError> {
    let stem = exe.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    let name: String =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    if name.is_empty() || name == EXAMPLE_APP {
        return Err(ProjectServerError::App {
            path: exe.to_owned(),
            reason: "the file name cannot name an app: rename the executable".into(),
        });
    }
    Ok(name)
}

/// Puts `exe` at `served`: a hard link when it is on the same file system (cheap, and
/// it keeps the content if `exe` is later replaced), a copy otherwise. An existing
/// `served` with the same content is kept.
fn place(exe: &Path, served: &Path) -> Result<(), ProjectServerError> {
    let metadata = std::fs::metadata(exe).map_err(|e| ProjectServerError::App {
        path: exe.to_owned(),
        reason: format!("cannot be read ({e}); give the path of an executable file"),
    })?;
    if !metadata.is_file() {
        return Err(ProjectServerError::App {
            path: exe.to_owned(),
            reason: "is not a file; give the path of an executable file".into(),
        });
    }
    if let Some(dir) = served.parent() {
        std::fs::create_dir_all(dir).map_err(ProjectServerError::io(dir))?;
    }
    if let Ok(existing) = std::fs::metadata(served) {
        use std::os::unix::fs::MetadataExt;
        let same_file = existing.dev() == metadata.dev() && existing.ino() == metadata.ino();
        if same_file
            || (existing.len() == metadata.len() && md5_of_file(served)? == md5_of_file(exe)?)
        {
            return Ok(());
        }
        std::fs::remove_file(served).map_err(ProjectServerError::io(served))?;
    }
    if std::fs::hard_link(exe, served).is_err() {
        let temporary = served.with_extension("partial");
        std::fs::copy(exe, &temporary).map_err(ProjectServerError::io(&temporary))?;
        std::fs::rename(&temporary, served).map_err(ProjectServerError::io(served))?;
    }
    Ok(())
}

/// A file's size and MD5 (hex).
pub(crate) fn md5_of_file(path: &Path) -> Result<(u64, String), ProjectServerError> {
    let mut file = std::fs::File::open(path).map_err(ProjectServerError::io(path))?;
    let mut hasher = Md5::new();
    let mut buffer = vec![0u8; 1 << 16];
    let mut total = 0u64;
    loop {
        let n = file.read(&mut buffer).map_err(ProjectServerError::io(path))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        total += n as u64;
    }
    Ok((total, hex(&hasher.finalize())))
}

/// Lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
