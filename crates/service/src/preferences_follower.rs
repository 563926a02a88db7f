//! The preferences the host service keeps in step (docs/service.md, preferences): a
//! project's web preferences from a scheduler reply (`ClientEvent::WebPreferences`)
//! are written to global_prefs.xml when they are newer than the file's (the core's
//! `control::web_prefs_update` decides) and applied with the override on top, as a
//! `read_global_prefs_override` would; and the host's conditions are judged under the
//! preferences and options in force, whichever way they changed (a reload over GUI RPC,
//! an account manager, a reply), so the live host discovery and the CPU usage limit
//! follow the client's state, and the log's filter cc_config's log flags.

use super::atomic_file::write_atomically;
use super::host_discovery::{DiscoverySettings, LiveHostDiscovery};
use super::process::CpuThrottler;
use boinc_core::control::{UserAction, web_prefs_update};
use boinc_core::model::{CcConfig, Prefs};
use boinc_core::protocol::data_dir::GLOBAL_PREFS;
use boinc_runtime::configuration_files::read_configuration_dir;
use boinc_runtime::{ClientEvent, ClientHandle};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How often the settings the host discovery judges by are brought in step with the
/// client's state: a changed preference counts within this.
const FOLLOW_INTERVAL: Duration = Duration::from_secs(2);
/// The largest global_prefs.xml read; a bigger one is not the client's.
const MAX_PREFS_FILE: u64 = 1 << 20;

/// Follows the client's events and state until the event stream ends.
pub(crate) async fn follow_preferences(
    dir: PathBuf,
    client: ClientHandle,
    discovery: Arc<LiveHostDiscovery>,
    throttler: CpuThrottler,
    mut events: tokio::sync::mpsc::Receiver<ClientEvent>,
) {
    let mut seen: Option<(Prefs, CcConfig)> = None;
    let mut interval = tokio::time::interval(FOLLOW_INTERVAL);
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Some(ClientEvent::WebPreferences { project, master_url, text, .. }) => {
                    take_web_preferences(&dir, &client, &project, &master_url, text).await;
                }
                Some(_) => continue,
                None => return,
            },
            _ = interval.tick() => {}
        }
        let Ok(snapshot) = client.snapshot().await else { return };
        let now = (snapshot.state.prefs, snapshot.state.config);
        if seen.as_ref() != Some(&now) {
            discovery.set_settings(DiscoverySettings::follow(&now.0, &now.1));
            throttler.set_limit(now.0.cpu_usage_limit);
            let flags =
                |config: &CcConfig| (config.log_flags.clone(), config.log_flags_off.clone());
            if seen.as_ref().is_none_or(|(_, config)| flags(config) != flags(&now.1)) {
                super::log_filter::follow_log_flags(&now.1);
            }
            seen = Some(now);
        }
    }
}

/// Keeps `text` (the reply's preferences from `master_url`) in global_prefs.xml when it
/// is newer, then applies the preferences the files now say.
async fn take_web_preferences(
    dir: &Path,
    client: &ClientHandle,
    project: &str,
    master_url: &str,
    text: String,
) {
    let current = read_bounded(&dir.join(GLOBAL_PREFS));
    let new_file = match web_prefs_update(current.as_deref(), &text, master_url) {
        Ok(Some(file)) => file,
        Ok(None) => {
            tracing::debug!(%project, "the web preferences sent are not newer than ours");
            return;
        }
        Err(error) => {
            tracing::warn!(%project, %error, "web preferences not taken");
            return;
        }
    };
    if let Err(error) =
        write_atomically(dir, GLOBAL_PREFS, "global_prefs_next.xml", None, new_file.as_bytes())
    {
        tracing::warn!(%project, %error, "global_prefs.xml not written");
        return;
    }
    tracing::info!(%project, "new web preferences kept in global_prefs.xml");
    let Ok(snapshot) = client.snapshot().await else { return };
    let dir = dir.to_path_buf();
    let read =
        tokio::task::spawn_blocking(move || read_configuration_dir(&dir, &snapshot.state)).await;
    let Ok((configuration, warnings)) = read else { return };
    for warning in &warnings {
        tracing::warn!(%warning, "configuration");
    }
    if let Err(error) = client.act(UserAction::SetPreferences(Box::new(configuration.prefs))).await
    {
        tracing::warn!(%error, "web preferences not applied");
    }
}

/// The file's text, `None` when it is absent, unreadable or too big (a damaged file
/// gives way to the project's preferences).
fn read_bounded(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_PREFS_FILE + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > MAX_PREFS_FILE {
        return None;
    }
    String::from_utf8(bytes).ok()
}
