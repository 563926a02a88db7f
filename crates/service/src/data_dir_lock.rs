//! One client per data directory (docs/design.md "State"; issue "The host service"): a running
//! client holds a write lock on the directory's `lockfile`, as the real BOINC client
//! does, and a second client (boinc-rs or BOINC's own) is refused with a message naming
//! the process that holds it.
//!
//! The lock is an open-file-description lock (`F_OFD_SETLK`, through nix): on Linux it
//! conflicts with the record lock the real client takes on the same file, and, unlike a
//! record lock, with a second lock taken by the same process, so two clients embedded in
//! one program are kept apart too. It is released when the lock is dropped or the
//! process ends, however it ends (`kill -9` included): a stale file never blocks a
//! restart. Elsewhere than Linux a record lock stands in for it, which keeps other
//! processes out but not a second client in the same process.

use boinc_core::protocol::data_dir::LOCK_FILE;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Why the data directory could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another client holds it.
    #[error(
        "another client ({holder}) is already using the data directory {dir}; stop it first, \
         or give this one a directory of its own"
    )]
    Held {
        /// The directory.
        dir: PathBuf,
        /// Who holds it, as far as the lock file says (`process 1234`).
        holder: String,
    },
    /// The lock file could not be opened or locked.
    #[error("cannot lock {path}: {source}; check that the data directory exists and is writable")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
}

/// The lock on a data directory, held until dropped.
#[derive(Debug)]
pub struct DataDirLock {
    /// The locked file; closing it releases the lock.
    _file: File,
    path: PathBuf,
}

impl DataDirLock {
    /// Locks `dir` for this client, writing its process id into the lock file.
    pub fn acquire(dir: &Path) -> Result<DataDirLock, LockError> {
        let path = dir.join(LOCK_FILE);
        let io_error = |source| LockError::Io { path: path.clone(), source };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_error)?;
        match try_lock(&file) {
            Ok(()) => {}
            Err(e) if is_contended(&e) => {
                return Err(LockError::Held { dir: dir.to_path_buf(), holder: holder(&mut file) });
            }
            Err(e) => return Err(io_error(e)),
        }
        file.set_len(0).map_err(io_error)?;
        file.rewind().map_err(io_error)?;
        writeln!(file, "{}", std::process::id()).map_err(io_error)?;
        Ok(DataDirLock { _file: file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn is_contended(error: &io::Error) -> bool {
    matches!(error.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::PermissionDenied)
        || error.raw_os_error() == Some(nix::libc::EAGAIN)
}

/// Who holds the lock, from the process id the holder wrote.
fn holder(file: &mut File) -> String {
    let mut text = String::new();
    let _ = file.rewind();
    let _ = file.take(32).read_to_string(&mut text);
    match text.trim().parse::<u32>() {
        Ok(pid) => format!("process {pid}"),
        Err(_) => "a process that left no id".to_owned(),
    }
}

/// A write lock on the whole file (start 0, length 0), as the real client takes it.
fn whole_file_write_lock() -> nix::libc::flock {
    // SAFETY: `flock` is a plain C struct of integers, for which all-zero is a valid
    // value; the fields that matter are set below.
    let mut lock: nix::libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = nix::libc::F_WRLCK as _;
    lock.l_whence = nix::libc::SEEK_SET as _;
    lock
}

fn try_lock(file: &File) -> io::Result<()> {
    use nix::fcntl::{FcntlArg, fcntl};
    use std::os::fd::AsRawFd;
    let lock = whole_file_write_lock();
    #[cfg(target_os = "linux")]
    let arg = FcntlArg::F_OFD_SETLK(&lock);
    // Without open-file-description locks, a record lock: other processes are kept out,
    // a second lock in the same process is not.
    #[cfg(not(target_os = "linux"))]
    let arg = FcntlArg::F_SETLK(&lock);
    fcntl(file.as_raw_fd(), arg).map(drop).map_err(io::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_client_is_refused_until_the_first_stops() {
        let dir = tempfile::tempdir().expect("temp dir");
        let first = DataDirLock::acquire(dir.path()).expect("first client");
        let error = DataDirLock::acquire(dir.path()).expect_err("second client");
        let message = error.to_string();
        assert!(
            message.contains(&format!("process {}", std::process::id())),
            "names the holder: {message}"
        );
        assert!(message.contains("already using the data directory"), "{message}");
        drop(first);
        DataDirLock::acquire(dir.path()).expect("free again once the first is gone");
    }

    #[test]
    fn a_missing_directory_is_an_io_error() {
        let dir = tempfile::tempdir().expect("temp dir");
        let error = DataDirLock::acquire(&dir.path().join("absent")).expect_err("no dir");
        assert!(matches!(error, LockError::Io { .. }), "{error}");
    }
}
