//! Writing a file of the data directory so that a crash at any moment leaves either the
//! old file or the new one whole (docs/design.md "State"): the new content goes to a temporary
//! file beside it, is flushed to the disk, and only then takes the file's name; the
//! directory is flushed last, so the rename itself survives a power loss.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Where a write failed, and what the system said.
#[derive(Debug, thiserror::Error)]
#[error("{step} {path}: {source}")]
pub struct AtomicWriteError {
    /// What was being done (`writing`, `renaming`, …).
    pub step: &'static str,
    /// The file it was done to.
    pub path: std::path::PathBuf,
    /// What the system said.
    #[source]
    pub source: io::Error,
}

fn at<'p>(step: &'static str, path: &'p Path) -> impl FnOnce(io::Error) -> AtomicWriteError + 'p {
    move |source| AtomicWriteError { step, path: path.to_path_buf(), source }
}

/// Writes `contents` as `dir/name` through `dir/temp_name`. With `previous`, the file
/// being replaced is kept under that name first, so a damaged new file still has its
/// predecessor beside it.
pub fn write_atomically(
    dir: &Path,
    name: &str,
    temp_name: &str,
    previous: Option<&str>,
    contents: &[u8],
) -> Result<(), AtomicWriteError> {
    let temp = dir.join(temp_name);
    let target = dir.join(name);
    // The client's files are its own (docs/app-isolation.md): no other user reads an
    // authenticator or the state, whatever the umask.
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)
        .map_err(at("creating", &temp))?;
    file.write_all(contents).map_err(at("writing", &temp))?;
    file.sync_all().map_err(at("flushing", &temp))?;
    drop(file);
    if let Some(previous) = previous {
        let kept = dir.join(previous);
        match fs::rename(&target, &kept) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(at("keeping the previous copy of", &target)(e)),
        }
    }
    fs::rename(&temp, &target).map_err(at("renaming into place", &target))?;
    sync_directory(dir)
}

/// Flushes a directory's entries (new names, renames) to the disk.
pub fn sync_directory(dir: &Path) -> Result<(), AtomicWriteError> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(at("flushing the directory", dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_keeps_the_previous_copy() {
        let dir = tempfile::tempdir().expect("temp dir");
        write_atomically(dir.path(), "s.xml", "s_next.xml", Some("s_prev.xml"), b"one")
            .expect("first write");
        assert!(!dir.path().join("s_prev.xml").exists(), "nothing to keep the first time");
        write_atomically(dir.path(), "s.xml", "s_next.xml", Some("s_prev.xml"), b"two")
            .expect("second write");
        assert_eq!(fs::read(dir.path().join("s.xml")).expect("main"), b"two");
        assert_eq!(fs::read(dir.path().join("s_prev.xml")).expect("previous"), b"one");
        assert!(!dir.path().join("s_next.xml").exists(), "the temporary file is renamed");
        use std::os::unix::fs::PermissionsExt;
        for name in ["s.xml", "s_prev.xml"] {
            let mode = fs::metadata(dir.path().join(name)).expect("written").permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{name} is the client's alone");
        }
    }

    #[test]
    fn a_failure_names_the_file_and_the_step() {
        let dir = tempfile::tempdir().expect("temp dir");
        let missing = dir.path().join("no such dir");
        let error = write_atomically(&missing, "a", "a.tmp", None, b"x").expect_err("no dir");
        assert_eq!(error.step, "creating");
        assert!(error.to_string().contains("no such dir"), "{error}");
    }
}
