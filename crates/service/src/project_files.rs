//! The files a volunteer puts in a project's directory, taken when the project is
//! attached or the service starts: app_info.xml (the volunteer's own apps, BOINC's
//! anonymous platform, read by `app_info_file.rs`) and app_config.xml (read with the
//! rest of the configuration). A project attached while the client runs, by an account
//! file or GUI RPC `project_attach`, takes both at once, as one attached before the
//! start does; what is wrong in them goes to the event log.

use super::app_info_file::read_app_info_file;
use boinc_core::control::{MessagePriority, UserAction, take_app_info};
use boinc_core::model::{ClientState, ProjectId};
use boinc_core::protocol::AppInfo;
use boinc_core::protocol::data_dir::APP_CONFIG;
use boinc_gui_rpc::MessageSink;
use boinc_runtime::client::ClientHandle;
use boinc_runtime::configuration_files::read_configuration_dir;
use std::path::Path;

/// An event log line about a project: its name, how it is shown, the text.
pub(crate) type ProjectMessage = (String, MessagePriority, String);

/// What the attached projects' app_info.xml declare, read at the start.
pub(crate) struct AppInfoFiles {
    /// Each project's usable declaration.
    declared: Vec<(ProjectId, AppInfo)>,
    /// The lines for the event log.
    pub(crate) lines: Vec<ProjectMessage>,
}

impl AppInfoFiles {
    /// Reads every attached project's app_info.xml in `dir`.
    pub(crate) fn read(dir: &Path, state: &ClientState) -> AppInfoFiles {
        let mut files = AppInfoFiles { declared: Vec::new(), lines: Vec::new() };
        for project in state.project_ids().filter(|&p| !state.project(p).detached) {
            let record = state.project(project);
            let read = read_app_info_file(dir, &record.master_url);
            files.lines.extend(event_lines(&record.name, read.app_info.is_some(), read.messages));
            files.declared.extend(read.app_info.map(|info| (project, info)));
        }
        files
    }

    /// Takes the declarations into `state`: before the configuration, whose
    /// app_config.xml may name the volunteer's apps, and again once the host is
    /// described, so that a version that gives no speed takes the host's (taking one
    /// again changes nothing else).
    pub(crate) fn take(&self, state: &mut ClientState) {
        for (project, info) in &self.declared {
            take_app_info(state, *project, info);
        }
    }
}

/// The messages of an app_info.xml read as event log lines: that it was found is news,
/// anything after it (or a file refused) the volunteer must act on.
fn event_lines(project: &str, usable: bool, messages: Vec<String>) -> Vec<ProjectMessage> {
    messages
        .into_iter()
        .enumerate()
        .map(|(i, text)| {
            let priority =
                if usable && i == 0 { MessagePriority::Info } else { MessagePriority::UserAlert };
            (project.to_owned(), priority, text)
        })
        .collect()
}

/// A project just attached (at `master_url`) takes the app_info.xml and app_config.xml
/// its directory holds; what they say goes to the log and, when there is one, to the
/// event log `sink`.
pub(crate) async fn take_project_files(
    dir: &Path,
    client: &ClientHandle,
    master_url: &str,
    sink: Option<&MessageSink>,
) {
    let Ok(snapshot) = client.snapshot().await else { return };
    let name = snapshot
        .state
        .project_by_url(master_url)
        .map(|p| snapshot.state.project(p).name.clone())
        .unwrap_or_default();
    let (read_dir, url) = (dir.to_path_buf(), master_url.to_owned());
    let Ok(read) = tokio::task::spawn_blocking(move || read_app_info_file(&read_dir, &url)).await
    else {
        return;
    };
    let lines = event_lines(&name, read.app_info.is_some(), read.messages);
    if let Some(info) = read.app_info {
        let action =
            UserAction::TakeAppInfo { master_url: master_url.to_owned(), app_info: Box::new(info) };
        if let Err(error) = client.act(action).await {
            tracing::warn!(%error, project = %master_url, "app_info.xml not taken");
        }
    }
    let now = snapshot.time;
    for (project, priority, text) in &lines {
        tracing::info!(project = %master_url, %text, "app_info.xml");
        if let Some(sink) = sink {
            sink.push(now, project, *priority, text);
        }
    }
    take_app_config(dir, client, master_url, sink).await;
}

/// The app_config.xml a project just attached has in its directory (written before the
/// attach), applied; its problems logged.
async fn take_app_config(
    dir: &Path,
    client: &ClientHandle,
    master_url: &str,
    sink: Option<&MessageSink>,
) {
    let Ok(snapshot) = client.snapshot().await else { return };
    let read_dir = dir.to_path_buf();
    let read =
        tokio::task::spawn_blocking(move || read_configuration_dir(&read_dir, &snapshot.state))
            .await;
    let Ok((configuration, _)) = read else { return };
    let file = format!("{}/{APP_CONFIG}", boinc_core::control::project_dir(master_url));
    for problem in configuration.problems.iter().filter(|p| p.file == file) {
        tracing::warn!(%problem, "configuration");
        if let Some(sink) = sink {
            sink.push(snapshot.time, "", MessagePriority::UserAlert, &problem.to_string());
        }
    }
    let configs: Vec<_> =
        configuration.app_configs.into_iter().filter(|(url, _)| url == master_url).collect();
    if !configs.is_empty() {
        if let Err(error) = client.act(UserAction::SetAppConfigs(configs)).await {
            tracing::warn!(%error, project = %master_url, "app_config.xml not applied");
        }
    }
}
