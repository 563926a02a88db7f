//! The configuration files BOINC Manager's dialogs read and write over GUI RPC
//! (docs/design.md "Protocol facts", GUI RPC): `get_cc_config`/`set_cc_config`
//! (cc_config.xml), `get_app_config`/`set_app_config` (a project's app_config.xml),
//! `get_global_prefs_file`, `get_global_prefs_override`/`set_global_prefs_override`
//! (`get_global_prefs_working` is the client's preferences in force, not a file),
//! `get_proxy_settings`/`set_proxy_settings` (cc_config.xml's `<proxy_info>`, where
//! BOINC keeps the proxy its Manager sets; unlike the other files, set at once), and
//! `get_project_init_status` (project_init.xml). A file is sent only when the core reads it as what it should be, and a text a client
//! sends is written only when the core reads it: a bad one is refused with the reader's
//! own message and the file stays as it was. As in BOINC, writing a file does not apply
//! it: the Manager then asks `read_cc_config` or `read_global_prefs_override`.

use boinc_core::control::project_dir;
use boinc_core::model::Prefs;
use boinc_core::model::ProxyInfo;
use boinc_core::protocol::data_dir::{APP_CONFIG, CC_CONFIG, GLOBAL_PREFS, GLOBAL_PREFS_OVERRIDE};
use boinc_core::protocol::gui_rpc as protocol;
use boinc_core::protocol::{
    parse_proxy_info, read_app_config, read_cc_config, read_global_prefs, with_proxy_info,
};
use std::path::{Path, PathBuf};

/// The file BOINC's installers leave to name a project to attach to.
pub const PROJECT_INIT_FILE: &str = "project_init.xml";
/// The largest configuration file read or written, bytes.
const MAX_CONFIG_FILE: u64 = 1 << 20;

/// Which file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConfigFile {
    /// cc_config.xml.
    Options,
    /// global_prefs.xml (what the projects sent).
    Preferences,
    /// global_prefs_override.xml (what the user set here).
    PreferencesOverride,
    /// A project's app_config.xml.
    Apps,
}

impl ConfigFile {
    fn root(self) -> &'static str {
        match self {
            ConfigFile::Options => "cc_config",
            ConfigFile::Preferences | ConfigFile::PreferencesOverride => "global_preferences",
            ConfigFile::Apps => "app_config",
        }
    }

    /// Whether `text` is a file of this kind, as the core reads it; the reader's
    /// message when not.
    fn check(self, text: &str, name: &str) -> Result<(), String> {
        let read = match self {
            ConfigFile::Options => read_cc_config(text, name).map(|_| ()),
            ConfigFile::Preferences | ConfigFile::PreferencesOverride => {
                read_global_prefs(text, name, &mut Prefs::default()).map(|_| ())
            }
            ConfigFile::Apps => read_app_config(text, name).map(|_| ()),
        };
        read.map_err(|error| error.to_string())
    }
}

/// Where the file is: `url` names the project for an app_config.xml.
fn path_of(data_dir: &Path, file: ConfigFile, url: &str) -> PathBuf {
    match file {
        ConfigFile::Options => data_dir.join(CC_CONFIG),
        ConfigFile::Preferences => data_dir.join(GLOBAL_PREFS),
        ConfigFile::PreferencesOverride => data_dir.join(GLOBAL_PREFS_OVERRIDE),
        ConfigFile::Apps => data_dir.join(project_dir(url)).join(APP_CONFIG),
    }
}

fn read_text(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_FILE + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_FILE {
        return Err(std::io::Error::other(format!("larger than {MAX_CONFIG_FILE} bytes")));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The reply to a `get_...` of `file`: the file's element, or BOINC's error when there
/// is none. A missing cc_config.xml is an empty configuration (BOINC's defaults).
pub(crate) async fn get(data_dir: &Path, file: ConfigFile, url: &str) -> Vec<u8> {
    let path = path_of(data_dir, file, url);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let read = tokio::task::spawn_blocking(move || read_text(&path)).await;
    match read {
        Ok(Ok(text)) => match file.check(&text, &name) {
            Ok(()) => {
                let text = text.trim();
                // The element alone: an XML declaration would end up inside the reply.
                let start = text.find(&format!("<{}", file.root())).unwrap_or(0);
                format!("{}\n", &text[start..]).into_bytes()
            }
            Err(why) => protocol::error(&why),
        },
        Ok(Err(error)) if error.kind() == std::io::ErrorKind::NotFound => match file {
            ConfigFile::Options => b"<cc_config>\n</cc_config>\n".to_vec(),
            ConfigFile::Apps
                if !path_of(data_dir, file, url).parent().is_some_and(Path::is_dir) =>
            {
                protocol::error("no such project")
            }
            ConfigFile::Apps => protocol::error("no app_config.xml file"),
            // BOINC's ERR_FOPEN, as its client answers.
            ConfigFile::Preferences => protocol::error("-108"),
            ConfigFile::PreferencesOverride => protocol::error("no prefs override file"),
        },
        Ok(Err(error)) => protocol::error(&format!("can't read {name}: {error}")),
        Err(_) => protocol::error("reading the file failed"),
    }
}

/// The reply to a `set_...` of `file` with `text`: written (atomically) when the core
/// reads it; an empty override removes the file, as BOINC's Manager's "clear" does.
pub(crate) async fn set(data_dir: &Path, file: ConfigFile, url: &str, text: String) -> Vec<u8> {
    let path = path_of(data_dir, file, url);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if text.trim().is_empty() {
        if file != ConfigFile::PreferencesOverride {
            return protocol::error(&format!("missing <{}>", file.root()));
        }
        return match std::fs::remove_file(&path) {
            Ok(()) => protocol::success(),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => protocol::success(),
            Err(error) => protocol::error(&format!("can't remove {name}: {error}")),
        };
    }
    if let Err(why) = file.check(&text, &name) {
        return protocol::error(&why);
    }
    if file == ConfigFile::Apps && !path.parent().is_some_and(Path::is_dir) {
        return protocol::error("No such project");
    }
    let written = tokio::task::spawn_blocking(move || {
        let temp = path.with_extension("xml.new");
        std::fs::write(&temp, format!("{}\n", text.trim()))?;
        std::fs::rename(&temp, &path)
    })
    .await;
    match written {
        Ok(Ok(())) => protocol::success(),
        Ok(Err(error)) => protocol::error(&format!("can't write {name}: {error}")),
        Err(_) => protocol::error("writing the file failed"),
    }
}

/// The proxy cc_config.xml names (none when there is no file or it cannot be read: the
/// client then follows the environment's proxies).
pub(crate) async fn proxy_settings(data_dir: &Path) -> ProxyInfo {
    let path = data_dir.join(CC_CONFIG);
    let text = tokio::task::spawn_blocking(move || read_text(&path)).await;
    match text {
        Ok(Ok(text)) => read_cc_config(&text, CC_CONFIG).map(|(c, _)| *c.proxy).unwrap_or_default(),
        _ => ProxyInfo::default(),
    }
}

/// `set_proxy_settings`: the `<proxy_info>` a client sent, read, then written into
/// cc_config.xml (the rest of the file kept as it was); the proxy to use, or BOINC's
/// error reply. A cc_config.xml the core cannot read is left alone.
pub(crate) async fn set_proxy_settings(
    data_dir: &Path,
    text: String,
) -> Result<ProxyInfo, Vec<u8>> {
    if text.trim().is_empty() {
        return Err(protocol::error("missing <proxy_info>"));
    }
    let proxy = parse_proxy_info(&text).map_err(|e| protocol::error(&e.to_string()))?;
    let path = data_dir.join(CC_CONFIG);
    let written_proxy = proxy.clone();
    let written = tokio::task::spawn_blocking(move || {
        let old = match read_text(&path) {
            Ok(old) => old,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(error) => return Err(format!("can't read {CC_CONFIG}: {error}")),
        };
        let new = with_proxy_info(&old, &written_proxy)
            .map_err(|error| format!("{CC_CONFIG} is left as it is: {error}"))?;
        let temp = path.with_extension("xml.new");
        std::fs::write(&temp, new)
            .and_then(|()| std::fs::rename(&temp, &path))
            .map_err(|error| format!("can't write {CC_CONFIG}: {error}"))
    })
    .await;
    match written {
        Ok(Ok(())) => Ok(proxy),
        Ok(Err(why)) => Err(protocol::error(&why)),
        Err(_) => Err(protocol::error("writing the file failed")),
    }
}

/// `get_project_init_status`: the project project_init.xml names (nothing when there
/// is no such file).
pub(crate) async fn project_init_status(data_dir: &Path) -> Vec<u8> {
    let path = data_dir.join(PROJECT_INIT_FILE);
    let text = tokio::task::spawn_blocking(move || read_text(&path)).await;
    let init = match text {
        Ok(Ok(text)) => boinc_core::protocol::read_project_init(&text).ok(),
        _ => None,
    };
    protocol::project_init_status(init.as_ref())
}
