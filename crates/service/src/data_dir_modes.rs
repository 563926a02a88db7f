//! The data directory's owners and modes (issue 16 item 4; docs/app-isolation.md "The
//! data directory"), after BOINC's scheme: the directory itself 0771 (others may pass
//! through it to reach what they are given, not list it), the client's files in it
//! (client_state*.xml, account files, gui_rpc_auth.cfg, the account manager's files,
//! the configuration, by BOINC's names) private to the client, 0600; `projects/` and
//! `slots/` 0770.
//!
//! With an app user (BOINC's `boinc_project`), `projects/` and `slots/` belong to the
//! app user's primary group and are setgid, so what is created in them is the group's:
//! a slot is the app's to write (02770), a project directory takes the app's outputs
//! but is sticky (03770), so an app can add files there and never remove or replace the
//! project's files, which the group may only read (and execute). Everything is set
//! when the client starts, which also fixes a directory an older client left; files
//! made later get these modes where they are made.

use boinc_core::control::task_program::{PROJECTS_DIR, SLOTS_DIR};
use std::io;
use std::os::unix::fs::{PermissionsExt, lchown};
use std::path::{Path, PathBuf};

/// The data directory's mode.
pub const DATA_DIR_MODE: u32 = 0o771;
/// The mode of the client's own files in the data directory.
pub const PRIVATE_FILE_MODE: u32 = 0o600;
/// The mode of `projects/` and `slots/` without an app user.
pub const CLIENT_TREE_MODE: u32 = 0o770;
/// The mode of `projects/`, `slots/` and each slot with an app user (setgid).
pub const SHARED_DIR_MODE: u32 = 0o2770;
/// The mode of each project directory with an app user (setgid, sticky).
pub const PROJECT_DIR_MODE: u32 = 0o3770;

/// The most entries visited when fixing `projects/` and `slots/` at start.
const MAX_ENTRIES: usize = 1_000_000;

/// Why the data directory's modes could not be set.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot set the owner or mode of {path}: {source}; run the client as the data \
     directory's owner (as root with --app-user)"
)]
pub struct DataDirModesError {
    /// The path.
    pub path: PathBuf,
    /// The system's error.
    #[source]
    pub source: io::Error,
}

/// The files directly in the data directory that are the client's (BOINC's names):
/// those are made private; anything else someone put there is left as it is.
const CLIENT_FILE_PREFIXES: [&str; 11] = [
    "client_state",
    "account_",
    "acct_mgr_",
    "statistics_",
    "sched_request_",
    "sched_reply_",
    "master_",
    "job_log_",
    "global_prefs",
    "cc_config",
    "gui_rpc_auth",
];
const CLIENT_FILE_NAMES: [&str; 5] =
    ["remote_hosts.cfg", "time_stats_log", "lockfile", "stdoutdae.txt", "stderrdae.txt"];

fn is_client_file(name: &str) -> bool {
    CLIENT_FILE_NAMES.contains(&name) || CLIENT_FILE_PREFIXES.iter().any(|p| name.starts_with(p))
}

fn at(path: &Path) -> impl FnOnce(io::Error) -> DataDirModesError + '_ {
    move |source| DataDirModesError { path: path.to_path_buf(), source }
}

fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Sets the modes of `dir` (and, with `app_group`, gives `projects/` and `slots/` to
/// that group); creates `projects/` and `slots/` if missing. Links are never followed.
pub fn set_data_dir_modes(dir: &Path, app_group: Option<u32>) -> Result<(), DataDirModesError> {
    set_mode(dir, DATA_DIR_MODE).map_err(at(dir))?;
    for entry in std::fs::read_dir(dir).map_err(at(dir))?.flatten() {
        if !entry.file_name().to_str().is_some_and(is_client_file) {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if meta.file_type().is_file() && meta.permissions().mode() & 0o7077 != 0 {
            set_mode(&path, meta.permissions().mode() & 0o700).map_err(at(&path))?;
        }
    }
    for tree in [PROJECTS_DIR, SLOTS_DIR] {
        let top = dir.join(tree);
        std::fs::create_dir_all(&top).map_err(at(&top))?;
        match app_group {
            None => set_mode(&top, CLIENT_TREE_MODE).map_err(at(&top))?,
            Some(group) => share_tree(&top, group, tree == PROJECTS_DIR)?,
        }
    }
    Ok(())
}

/// Gives `top` and everything in it to `group`: directories setgid (project
/// directories also sticky), slots' files writable by the group, projects' files
/// readable (and executable where their owner may execute them).
fn share_tree(top: &Path, group: u32, projects: bool) -> Result<(), DataDirModesError> {
    lchown(top, None, Some(group)).map_err(at(top))?;
    set_mode(top, SHARED_DIR_MODE).map_err(at(top))?;
    let mut pending: Vec<(PathBuf, usize)> = vec![(top.to_path_buf(), 0)];
    let mut visited = 0usize;
    while let Some((dir, depth)) = pending.pop() {
        for entry in std::fs::read_dir(&dir).map_err(at(&dir))?.flatten() {
            visited += 1;
            if visited > MAX_ENTRIES {
                tracing::warn!(dir = %top.display(), "too many files to fix them all; the rest keep their modes");
                return Ok(());
            }
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            if meta.file_type().is_symlink() {
                continue;
            }
            lchown(&path, None, Some(group)).map_err(at(&path))?;
            let mode = meta.permissions().mode() & 0o7777;
            let new_mode = if meta.is_dir() {
                pending.push((path.clone(), depth + 1));
                match (depth, projects) {
                    (0, true) => PROJECT_DIR_MODE,
                    (0, false) => SHARED_DIR_MODE,
                    _ => mode | 0o2070,
                }
            } else if projects {
                mode | 0o040 | if mode & 0o100 != 0 { 0o010 } else { 0 }
            } else {
                mode | 0o060
            };
            if new_mode != mode {
                set_mode(&path, new_mode).map_err(at(&path))?;
            }
        }
    }
    Ok(())
}

/// Opens a slot the client just prepared to the app user's `group`: the slot 02770,
/// the files the client put in it group-writable (the API reopens `stderr.txt`).
pub(crate) fn share_slot(slot_dir: &Path, group: u32) -> io::Result<()> {
    lchown(slot_dir, None, Some(group))?;
    set_mode(slot_dir, SHARED_DIR_MODE)?;
    for entry in std::fs::read_dir(slot_dir)?.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if !meta.file_type().is_file() {
            continue;
        }
        lchown(&path, None, Some(group))?;
        set_mode(&path, meta.permissions().mode() & 0o7777 | 0o060)?;
    }
    Ok(())
}

/// Opens a project directory to the app user's `group` for its outputs (03770).
pub(crate) fn share_project_dir(project_dir: &Path, group: u32) -> io::Result<()> {
    lchown(project_dir, None, Some(group))?;
    set_mode(project_dir, PROJECT_DIR_MODE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn the_clients_files_become_private_and_the_trees_closed() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        for name in ["client_state.xml", "gui_rpc_auth.cfg", "account_x.xml", "cc_config.xml"] {
            std::fs::write(data.join(name), "x").unwrap();
            set_mode(&data.join(name), 0o664).unwrap();
        }
        let outside = data.join("outside");
        std::fs::write(&outside, "x").unwrap();
        set_mode(&outside, 0o644).unwrap();
        std::os::unix::fs::symlink(&outside, data.join("client_state_prev.xml")).unwrap();
        set_data_dir_modes(data, None).unwrap();
        assert_eq!(mode(&outside), 0o644, "not the client's, and a link is not followed");
        assert_eq!(mode(data), DATA_DIR_MODE);
        for name in ["client_state.xml", "gui_rpc_auth.cfg", "account_x.xml", "cc_config.xml"] {
            assert_eq!(mode(&data.join(name)), PRIVATE_FILE_MODE, "{name}");
        }
        assert_eq!(mode(&data.join("projects")), CLIENT_TREE_MODE);
        assert_eq!(mode(&data.join("slots")), CLIENT_TREE_MODE);
    }

    #[test]
    fn with_an_app_group_the_trees_are_shared_as_the_scheme_says() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        let project = data.join("projects/p");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join("input"), "x").unwrap();
        set_mode(&project.join("input"), 0o600).unwrap();
        std::fs::write(project.join("app"), "x").unwrap();
        set_mode(&project.join("app"), 0o700).unwrap();
        std::fs::create_dir_all(data.join("slots/0")).unwrap();
        std::fs::write(data.join("slots/0/checkpoint"), "x").unwrap();
        set_mode(&data.join("slots/0/checkpoint"), 0o600).unwrap();
        // The process's own group: any process may give its files to it.
        let group = nix::unistd::Gid::effective().as_raw();
        set_data_dir_modes(data, Some(group)).unwrap();
        assert_eq!(mode(&data.join("projects")), SHARED_DIR_MODE);
        assert_eq!(mode(&project), PROJECT_DIR_MODE);
        assert_eq!(mode(&project.join("input")), 0o640, "the group reads inputs");
        assert_eq!(mode(&project.join("app")), 0o750, "and executes the app");
        assert_eq!(mode(&data.join("slots")), SHARED_DIR_MODE);
        assert_eq!(mode(&data.join("slots/0")), SHARED_DIR_MODE);
        assert_eq!(mode(&data.join("slots/0/checkpoint")), 0o660, "the slot is the app's");
    }
}
