//! A task's slot directory (issue "Running real apps", slot directories; docs/design.md
//! "Protocol facts", App API): `slots/N` beside `projects/`, holding `init_data.xml`,
//! the app's files and inputs by their open names, its outputs while it runs, its
//! standard error and whatever it writes for itself (its checkpoint).
//!
//! Apps using BOINC's API get link files (`<soft_link>../../projects/…</soft_link>`)
//! and resolve them through the API; apps without it get symbolic links, which they open
//! like any file, and write their outputs into the slot, from where they are moved to the
//! project directory when the task ends. `<copy_file/>` files are copied both ways.
//!
//! The slot belongs to the app while it runs: the client never follows a link in it,
//! never writes through a file the app could have replaced, and bounds what it reads.

use boinc_core::control::{SlotFile, SlotFileRole, TaskSpec, is_plain_file_name};
use boinc_core::protocol::app_api::{
    INIT_DATA_FILE, InitData, STDERR_FILE, STDERR_REPORT_BYTES, slot_to_project_path, soft_link,
};
use boinc_runtime::effects::ProcessError;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// The most directory entries counted when measuring a slot's disk use.
const MAX_SLOT_ENTRIES: usize = 100_000;
/// The most bytes read of a small file the app leaves (init data, finish files).
const MAX_SLOT_FILE_READ: u64 = 64 * 1024;

/// Where a task's slot and project directories are.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SlotLayout {
    /// The slot directory, absolute.
    pub(crate) slot_dir: PathBuf,
    /// The project directory, absolute.
    pub(crate) project_dir: PathBuf,
    /// The project directory relative to the data directory (for link targets).
    project_dir_relative: String,
}

/// A path relative to the data directory that stays inside it.
fn inside(data_dir: &Path, relative: &str, slot: u32) -> Result<PathBuf, ProcessError> {
    let path = Path::new(relative);
    let plain =
        !relative.is_empty() && path.components().all(|c| matches!(c, Component::Normal(_)));
    if !plain {
        return Err(ProcessError::Slot {
            slot,
            path: path.to_path_buf(),
            source: io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a plain path inside the data directory; the client state is damaged",
            ),
        });
    }
    Ok(data_dir.join(path))
}

/// Removes whatever is at `path` (a file, a link, an empty or full directory).
fn remove_any(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error),
    }
}

/// Writes a new file at `path`, replacing whatever was there without following it.
pub(crate) fn write_new_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    remove_any(path)?;
    let mut file = OpenOptions::new().write(true).create_new(true).mode(0o644).open(path)?;
    io::Write::write_all(&mut file, bytes)
}

/// Reads at most `limit` bytes of the regular file at `path` (`None` if there is none:
/// a link, a pipe or a directory the app put there counts as none).
pub(crate) fn read_regular_file(path: &Path, limit: u64) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() {
        return None;
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

impl SlotLayout {
    /// The layout of `spec`'s task under `data_dir` (absolute). The spec's paths and
    /// file names must stay inside the data directory.
    pub(crate) fn of(data_dir: &Path, spec: &TaskSpec) -> Result<SlotLayout, ProcessError> {
        let program = &spec.program;
        let slot_dir = inside(data_dir, &program.slot_dir, spec.slot)?;
        let project_dir = inside(data_dir, &program.project_dir, spec.slot)?;
        let names = program.files.iter().flat_map(|f| [&f.open_name, &f.file_name]);
        if let Some(bad) = names.chain([&program.executable]).find(|n| !is_plain_file_name(n)) {
            return Err(ProcessError::File {
                slot: spec.slot,
                path: PathBuf::from(bad),
                source: io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not a plain file name; the project sent a bad file reference",
                ),
            });
        }
        Ok(SlotLayout { slot_dir, project_dir, project_dir_relative: program.project_dir.clone() })
    }

    /// The main program, which must be an executable file in the project directory.
    pub(crate) fn executable(&self, spec: &TaskSpec) -> Result<PathBuf, ProcessError> {
        if spec.program.executable.is_empty() {
            return Err(ProcessError::NoProgram { slot: spec.slot });
        }
        let path = self.project_dir.join(&spec.program.executable);
        let refuse =
            |source: io::Error| ProcessError::File { slot: spec.slot, path: path.clone(), source };
        let meta = std::fs::metadata(&path).map_err(refuse)?;
        if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
            return Err(refuse(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "not an executable file; reset the project so the client downloads the app again",
            )));
        }
        Ok(path)
    }

    /// The result name of the task whose files the slot holds, from its
    /// `init_data.xml` (`None`: an empty or unknown slot).
    pub(crate) fn occupant(&self) -> Option<String> {
        let text = read_regular_file(&self.slot_dir.join(INIT_DATA_FILE), MAX_SLOT_FILE_READ)?;
        InitData::parse(&text).ok().map(|data| data.result_name)
    }

    /// Sets the slot up for a start: emptied first for a task new to it (`fresh`), kept
    /// otherwise (a restart finds its checkpoint). Returns the standard-error file.
    pub(crate) fn prepare(
        &self,
        spec: &TaskSpec,
        init_data: &InitData,
        fresh: bool,
    ) -> Result<File, ProcessError> {
        let slot = spec.slot;
        let slot_error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ProcessError::Slot { slot, path, source }
        };
        if fresh {
            remove_any(&self.slot_dir).map_err(slot_error(&self.slot_dir))?;
        }
        std::fs::create_dir_all(&self.slot_dir).map_err(slot_error(&self.slot_dir))?;
        let api = spec.program.uses_boinc_api();
        for file in &spec.program.files {
            self.place(spec, file, api, fresh)?;
        }
        let init_path = self.slot_dir.join(INIT_DATA_FILE);
        write_new_file(&init_path, init_data.to_xml().as_bytes())
            .map_err(slot_error(&init_path))?;
        let stderr_path = self.slot_dir.join(STDERR_FILE);
        let planted = std::fs::symlink_metadata(&stderr_path).is_ok_and(|m| !m.is_file());
        if planted {
            remove_any(&stderr_path).map_err(slot_error(&stderr_path))?;
        }
        OpenOptions::new()
            .append(true)
            .create(true)
            .read(true)
            .mode(0o644)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&stderr_path)
            .map_err(slot_error(&stderr_path))
    }

    /// Puts one of the task's files where the app looks for it.
    fn place(
        &self,
        spec: &TaskSpec,
        file: &SlotFile,
        api: bool,
        fresh: bool,
    ) -> Result<(), ProcessError> {
        let in_slot = self.slot_dir.join(&file.open_name);
        let in_project = self.project_dir.join(&file.file_name);
        let file_error = |path: &Path| {
            let path = path.to_path_buf();
            let slot = spec.slot;
            move |source| ProcessError::File { slot, path, source }
        };
        if file.role == SlotFileRole::Output {
            // An output the app writes through a link file lands in the project
            // directory; every other output is written in the slot.
            if api && !file.copy {
                let target = slot_to_project_path(&self.project_dir_relative, &file.file_name);
                write_new_file(&in_slot, soft_link(&target).as_bytes())
                    .map_err(file_error(&in_slot))?;
            }
            return Ok(());
        }
        std::fs::metadata(&in_project).map_err(file_error(&in_project))?;
        if file.copy {
            // The client copies with its own rights, so never through a link an app
            // could have put in the project directory.
            let own = std::fs::symlink_metadata(&in_project).map_err(file_error(&in_project))?;
            if !own.file_type().is_file() {
                return Err(file_error(&in_project)(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "not a regular file (an app may have put a link there); reset the project",
                )));
            }
            // A copy the app may have changed is its own business on a restart.
            if fresh || std::fs::symlink_metadata(&in_slot).is_err() {
                remove_any(&in_slot).map_err(file_error(&in_slot))?;
                std::fs::copy(&in_project, &in_slot).map_err(file_error(&in_slot))?;
            }
            return Ok(());
        }
        let target = slot_to_project_path(&self.project_dir_relative, &file.file_name);
        if api {
            write_new_file(&in_slot, soft_link(&target).as_bytes()).map_err(file_error(&in_slot))
        } else {
            remove_any(&in_slot).map_err(file_error(&in_slot))?;
            std::os::unix::fs::symlink(&target, &in_slot).map_err(file_error(&in_slot))
        }
    }

    /// Where an output file is while the app runs, and where it belongs.
    fn output_paths(&self, file: &SlotFile, api: bool) -> (PathBuf, PathBuf) {
        let in_project = self.project_dir.join(&file.file_name);
        if api && !file.copy {
            (in_project.clone(), in_project)
        } else {
            (self.slot_dir.join(&file.open_name), in_project)
        }
    }

    /// The first output the app has not written (as a regular file), by open name.
    pub(crate) fn missing_output(&self, spec: &TaskSpec) -> Option<String> {
        let api = spec.program.uses_boinc_api();
        spec.program
            .files
            .iter()
            .filter(|f| f.role == SlotFileRole::Output)
            .find(|f| {
                let (written, _) = self.output_paths(f, api);
                !std::fs::symlink_metadata(&written).is_ok_and(|m| m.file_type().is_file())
            })
            .map(|f| f.open_name.clone())
    }

    /// Moves the outputs the app wrote in the slot to the project directory (only
    /// regular files: a link the app left in their place is not followed). Returns
    /// the outputs that are now in the project directory, by open name.
    pub(crate) fn move_outputs(&self, spec: &TaskSpec) -> Vec<(String, PathBuf)> {
        let api = spec.program.uses_boinc_api();
        let mut moved = Vec::new();
        for file in spec.program.files.iter().filter(|f| f.role == SlotFileRole::Output) {
            let (written, destination) = self.output_paths(file, api);
            let regular =
                std::fs::symlink_metadata(&written).is_ok_and(|m| m.file_type().is_file());
            if !regular {
                continue;
            }
            if written != destination {
                // The copy (another file system) replaces whatever is at the
                // destination rather than writing through it.
                let renamed = std::fs::rename(&written, &destination).or_else(|_| {
                    remove_any(&destination)
                        .and_then(|()| std::fs::copy(&written, &destination).map(|_| ()))
                });
                if let Err(error) = renamed {
                    tracing::warn!(slot = spec.slot, file = %destination.display(), %error, "cannot move an output file to the project directory");
                    continue;
                }
            }
            moved.push((file.open_name.clone(), destination));
        }
        moved
    }

    /// Bytes the slot's files take (links count as themselves; at most
    /// [`MAX_SLOT_ENTRIES`] entries are counted).
    pub(crate) fn disk_usage(&self) -> u64 {
        let mut total = 0u64;
        let mut entries = 0usize;
        let mut pending = vec![self.slot_dir.clone()];
        while let Some(dir) = pending.pop() {
            let Ok(listing) = std::fs::read_dir(&dir) else { continue };
            for entry in listing.flatten() {
                entries += 1;
                if entries > MAX_SLOT_ENTRIES {
                    return total;
                }
                let Ok(meta) = entry.metadata() else { continue };
                if meta.is_dir() {
                    pending.push(entry.path());
                } else {
                    total = total.saturating_add(meta.len());
                }
            }
        }
        total
    }

    /// Reads a small file the app leaves in the slot (bounded; regular files only).
    pub(crate) fn read_small(&self, name: &str) -> Option<String> {
        read_regular_file(&self.slot_dir.join(name), MAX_SLOT_FILE_READ)
    }

    /// The last 63 KB of the app's standard error (what BOINC reports with a result),
    /// if the slot has the file.
    pub(crate) fn stderr_tail(&self) -> Option<String> {
        let path = self.slot_dir.join(STDERR_FILE);
        if !std::fs::symlink_metadata(&path).ok()?.file_type().is_file() {
            return None;
        }
        let mut file =
            OpenOptions::new().read(true).custom_flags(nix::libc::O_NOFOLLOW).open(&path).ok()?;
        let length = file.metadata().ok()?.len();
        let keep = STDERR_REPORT_BYTES as u64;
        io::Seek::seek(&mut file, io::SeekFrom::Start(length.saturating_sub(keep))).ok()?;
        let mut bytes = Vec::new();
        file.take(keep).read_to_end(&mut bytes).ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Removes a file the app left in the slot, if it is there.
    pub(crate) fn remove_file(&self, name: &str) {
        let _ = remove_any(&self.slot_dir.join(name));
    }

    /// Removes the slot directory and everything in it.
    pub(crate) fn remove(&self) -> io::Result<()> {
        remove_any(&self.slot_dir)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use boinc_core::control::TaskProgram;
    use boinc_core::model::{ProjectId, ResourceUsage};

    /// A task of project `p` in slot 0, an API app (`api`) or not, with an input, a
    /// copied input and an output.
    pub(crate) fn spec(api: bool) -> TaskSpec {
        let file = |open: &str, name: &str, role, copy| SlotFile {
            open_name: open.into(),
            file_name: name.into(),
            copy,
            role,
        };
        TaskSpec {
            project: ProjectId(0),
            job: "job".into(),
            slot: 0,
            usage: ResourceUsage { avg_ncpus: 1.0, coprocessor: None },
            gpu_instances: Vec::new(),
            status: Default::default(),
            program: TaskProgram {
                project_dir: "projects/p".into(),
                slot_dir: "slots/0".into(),
                api_version: if api { "7.20.5".into() } else { String::new() },
                executable: "app".into(),
                result_name: "job".into(),
                files: vec![
                    file("in", "in_1", SlotFileRole::Input, false),
                    file("copied", "in_2", SlotFileRole::Input, true),
                    file("out", "out_1", SlotFileRole::Output, false),
                ],
                ..TaskProgram::default()
            },
        }
    }

    fn data_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("projects/p")).unwrap();
        std::fs::write(dir.path().join("projects/p/in_1"), "one").unwrap();
        std::fs::write(dir.path().join("projects/p/in_2"), "two").unwrap();
        dir
    }

    #[test]
    fn api_apps_get_link_files_and_wrapper_apps_symbolic_links() {
        let dir = data_dir();
        for api in [true, false] {
            let spec = spec(api);
            let layout = SlotLayout::of(dir.path(), &spec).unwrap();
            let init = InitData { result_name: "job".into(), ..InitData::default() };
            layout.prepare(&spec, &init, true).unwrap();
            let slot = &layout.slot_dir;
            assert_eq!(std::fs::read_to_string(slot.join("copied")).unwrap(), "two");
            assert_eq!(layout.occupant().as_deref(), Some("job"));
            if api {
                assert_eq!(
                    std::fs::read_to_string(slot.join("in")).unwrap(),
                    "<soft_link>../../projects/p/in_1</soft_link>\n"
                );
                assert!(slot.join("out").is_file(), "a link file for the output");
            } else {
                assert_eq!(std::fs::read_to_string(slot.join("in")).unwrap(), "one");
                assert!(!slot.join("out").exists());
            }
            assert_eq!(layout.missing_output(&spec).as_deref(), Some("out"));
        }
    }

    #[test]
    fn outputs_move_to_the_project_and_links_are_not_followed() {
        let dir = data_dir();
        let spec = spec(false);
        let layout = SlotLayout::of(dir.path(), &spec).unwrap();
        layout.prepare(&spec, &InitData::default(), true).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", layout.slot_dir.join("out")).unwrap();
        assert_eq!(layout.missing_output(&spec).as_deref(), Some("out"));
        assert!(layout.move_outputs(&spec).is_empty());
        std::fs::remove_file(layout.slot_dir.join("out")).unwrap();
        std::fs::write(layout.slot_dir.join("out"), "result").unwrap();
        assert_eq!(layout.missing_output(&spec), None);
        assert!(layout.disk_usage() >= 6);
        let moved = layout.move_outputs(&spec);
        assert_eq!(moved, [("out".to_string(), dir.path().join("projects/p/out_1"))]);
        layout.remove().unwrap();
        assert!(!layout.slot_dir.exists());
    }

    #[test]
    fn a_copied_input_that_is_a_planted_link_is_not_copied() {
        let dir = data_dir();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "the user's secret").unwrap();
        std::fs::remove_file(dir.path().join("projects/p/in_2")).unwrap();
        std::os::unix::fs::symlink(&secret, dir.path().join("projects/p/in_2")).unwrap();
        let spec = spec(true);
        let layout = SlotLayout::of(dir.path(), &spec).unwrap();
        let refused = layout.prepare(&spec, &InitData::default(), true).unwrap_err();
        assert!(refused.to_string().contains("not a regular file"), "{refused}");
        assert!(std::fs::symlink_metadata(layout.slot_dir.join("copied")).is_err());
    }

    #[test]
    fn paths_leaving_the_data_directory_are_refused() {
        let dir = data_dir();
        let mut bad = spec(true);
        bad.program.slot_dir = "slots/../../etc".into();
        assert!(SlotLayout::of(dir.path(), &bad).is_err());
        let mut bad = spec(true);
        bad.program.files[0].open_name = "../x".into();
        assert!(SlotLayout::of(dir.path(), &bad).is_err());
        let missing = spec(true);
        let layout = SlotLayout::of(dir.path(), &missing).unwrap();
        assert!(matches!(layout.executable(&missing), Err(ProcessError::File { .. })));
    }
}
