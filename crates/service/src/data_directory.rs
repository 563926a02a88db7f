//! The data directory as the disk manager acts on it (seed 004 carried out on a real
//! disk): a project's files live in `projects/<escaped master URL>/`, as BOINC keeps
//! them, and the free space is the file system's (statvfs).

use boinc_core::control::{is_plain_file_name, project_dir};
use boinc_runtime::effects::{DiskSpace, FileSystem, FileSystemError};
use std::io;
use std::path::{Path, PathBuf};

/// A client's data directory on the local disk.
#[derive(Debug, Clone)]
pub struct DataDirectory {
    root: PathBuf,
}

impl DataDirectory {
    /// The data directory at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        DataDirectory { root: root.into() }
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the project's file `name` lives; a name that would leave the project's
    /// directory is refused.
    pub fn file_path(&self, project_url: &str, name: &str) -> Result<PathBuf, FileSystemError> {
        if !is_plain_file_name(name) {
            return Err(FileSystemError::NotAPlainName {
                project: project_url.to_string(),
                name: name.to_string(),
            });
        }
        Ok(self.root.join(project_dir(project_url)).join(name))
    }
}

fn io_error(operation: &'static str, path: &Path, source: io::Error) -> FileSystemError {
    FileSystemError::Io { operation, path: path.to_path_buf(), source }
}

impl FileSystem for DataDirectory {
    fn size(&self, project_url: &str, name: &str) -> Result<Option<f64>, FileSystemError> {
        let path = self.file_path(project_url, name)?;
        // A link is measured as itself, never followed out of the directory.
        match std::fs::symlink_metadata(&path) {
            Ok(meta) => Ok(Some(meta.len() as f64)),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(io_error("read the size of", &path, error)),
        }
    }

    fn delete(&self, project_url: &str, name: &str) -> Result<bool, FileSystemError> {
        let path = self.file_path(project_url, name)?;
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(error) => Err(io_error("delete", &path, error)),
        }
    }

    fn disk_space(&self) -> Result<DiskSpace, FileSystemError> {
        let stats = nix::sys::statvfs::statvfs(&self.root)
            .map_err(|errno| io_error("measure the disk of", &self.root, errno.into()))?;
        let fragment = stats.fragment_size() as f64;
        Ok(DiskSpace {
            total: stats.blocks() as f64 * fragment,
            free: stats.blocks_available() as f64 * fragment,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "http://127.0.0.1:8088/test/";

    #[test]
    fn files_are_measured_and_deleted_in_their_project_directory() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDirectory::new(dir.path());
        let project = dir.path().join("projects/127.0.0.1_8088_test");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join("input_1"), vec![0u8; 1234]).unwrap();
        assert_eq!(data.size(URL, "input_1").unwrap(), Some(1234.0));
        assert_eq!(data.size(URL, "missing").unwrap(), None);
        assert!(data.delete(URL, "input_1").unwrap());
        assert!(!data.delete(URL, "input_1").unwrap());
        assert!(!project.join("input_1").exists());
    }

    #[test]
    fn names_that_leave_the_project_directory_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("client_state.xml");
        std::fs::write(&outside, "keep").unwrap();
        let data = DataDirectory::new(dir.path());
        for name in ["../../client_state.xml", "..", ".", "", "a/b", "nul\0"] {
            assert!(
                matches!(data.delete(URL, name), Err(FileSystemError::NotAPlainName { .. })),
                "{name:?}"
            );
        }
        assert!(outside.exists());
    }

    #[test]
    fn the_disk_space_is_the_file_systems() {
        let dir = tempfile::tempdir().unwrap();
        let space = DataDirectory::new(dir.path()).disk_space().unwrap();
        assert!(space.total > 0.0 && space.free > 0.0 && space.free <= space.total);
        assert!(DataDirectory::new(dir.path().join("absent")).disk_space().is_err());
    }
}

#[cfg(test)]
mod live_disk_tests {
    use super::DataDirectory;
    use boinc_core::model::{ClientState, FileStatus};
    use boinc_core::model::{FileInfo, Project, ProjectId};
    use boinc_runtime::effects::{DiskManager, FileSystem};
    use boinc_runtime::runtime::live_disk::LiveDisk;
    use std::sync::Arc;

    #[test]
    fn a_file_over_the_limit_is_deleted_from_the_disk_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let url = "http://127.0.0.1:1/p/";
        let project_dir = dir.path().join("projects/127.0.0.1_1_p");
        std::fs::create_dir_all(&project_dir).unwrap();
        let mut state = ClientState::default();
        state.projects.push(Project::new("p", url, 1.0));
        for (name, nbytes) in [("old", 3e6), ("new", 3e6)] {
            std::fs::write(project_dir.join(name), vec![0u8; nbytes as usize]).unwrap();
            let mut info = FileInfo::new(ProjectId(0), name, nbytes);
            info.status = FileStatus::Present;
            info.sticky = true;
            state.files.push(info);
        }
        state.files[0].time_last_used = 10.0;
        state.files[1].time_last_used = 20.0;
        state.prefs.disk_max_used_gb = 0.005;
        let data: Arc<dyn FileSystem> = Arc::new(DataDirectory::new(dir.path()));
        let mut disk = LiveDisk::new(&state, data);
        disk.poll(&mut state, 100.0);
        assert_eq!(state.files[0].status, FileStatus::NotPresent, "least recently used goes");
        assert!(!project_dir.join("old").exists());
        assert_eq!(state.files[1].status, FileStatus::Present);
        assert!(project_dir.join("new").exists());
        assert!(state.host.d_total > 0.0);
    }
}
