//! The account files of a data directory (docs/design.md "State"; fixtures/boinc-7.20.5/state/
//! account_127.0.0.1_8088.xml): `boinc-rs attach` writes one, atomically, for a running
//! client (or the next one started) to take in with
//! [`apply_accounts`](boinc_core::control::apply_accounts); the client reads them all on
//! start; a detach removes the project's account file and everything else the data
//! directory keeps for it.

use super::atomic_file::{AtomicWriteError, write_atomically};
use boinc_core::protocol::data_dir::{account_file_name, is_account_file_name, project_files};
use boinc_core::protocol::{Account, parse_account, write_account};
use std::io;
use std::path::{Path, PathBuf};

/// The largest account file read: real ones are a few hundred bytes (project
/// preferences can add some kilobytes); anything far larger is not one.
const MAX_ACCOUNT_FILE: u64 = 1 << 20;

/// Why an account file could not be written, or a project's files removed.
#[derive(Debug, thiserror::Error)]
pub enum AccountFileError {
    /// The master URL is not one a project can have.
    #[error(
        "'{0}' is not a project URL: give the project's master URL, e.g. https://example.org/project/"
    )]
    BadUrl(String),
    /// The authenticator is empty or not text a file can hold.
    #[error(
        "the authenticator is empty or has spaces or control characters; copy it again from the project's web site"
    )]
    BadAuthenticator,
    /// The authenticator is longer than any project's.
    #[error(
        "the authenticator is {0} bytes long, more than a project's ({MAX_AUTHENTICATOR} at most); copy it again from the project's web site"
    )]
    LongAuthenticator(usize),
    /// The data directory cannot be created or listed.
    #[error("cannot use the data directory {path}: {source}")]
    Directory {
        /// The directory.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// The account file could not be written.
    #[error("cannot write the account file: {0}")]
    Write(#[source] AtomicWriteError),
    /// A project file could not be removed.
    #[error("cannot remove {path}: {source}")]
    Remove {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
}

/// A project's master URL as the client keeps it: trimmed, `http://` or `https://`, a
/// host, and a trailing slash (`https://example.org/project` →
/// `https://example.org/project/`), as the real client canonicalises it.
pub fn canonical_master_url(url: &str) -> Result<String, AccountFileError> {
    let url = url.trim();
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .ok_or_else(|| AccountFileError::BadUrl(url.to_owned()))?;
    let host = rest.split('/').next().unwrap_or_default();
    if host.is_empty() || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(AccountFileError::BadUrl(url.to_owned()));
    }
    Ok(if url.ends_with('/') { url.to_owned() } else { format!("{url}/") })
}

/// The longest authenticator an account file takes, bytes (BOINC's are 32 hexadecimal
/// digits; a project's scheduler refuses one over 256).
pub const MAX_AUTHENTICATOR: usize = 256;

/// Writes the account file of `master_url` (canonicalised) into `dir`, creating the
/// directory if needed; returns the file written. An existing account file of the same
/// project is replaced.
pub fn write_account_file(
    dir: &Path,
    master_url: &str,
    authenticator: &str,
) -> Result<PathBuf, AccountFileError> {
    let master_url = canonical_master_url(master_url)?;
    let authenticator = authenticator.trim();
    // Bounded before anything is written: the file is read back at every start.
    if authenticator.len() > MAX_AUTHENTICATOR {
        return Err(AccountFileError::LongAuthenticator(authenticator.len()));
    }
    if authenticator.is_empty()
        || authenticator.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(AccountFileError::BadAuthenticator);
    }
    std::fs::create_dir_all(dir)
        .map_err(|source| AccountFileError::Directory { path: dir.to_path_buf(), source })?;
    let account = Account {
        master_url: master_url.clone(),
        authenticator: authenticator.to_owned(),
        project_name: None,
        project_preferences: None,
    };
    let name = account_file_name(&master_url);
    let temp = format!("{name}.tmp");
    write_atomically(dir, &name, &temp, None, write_account(&account).as_bytes())
        .map_err(AccountFileError::Write)?;
    Ok(dir.join(name))
}

/// The accounts of a data directory, and what was wrong with the files that could not
/// be read (one bad file does not hide the others).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AccountFiles {
    /// The accounts read, in file-name order.
    pub accounts: Vec<Account>,
    /// One line per file that could not be read.
    pub problems: Vec<String>,
}

/// Reads every `account_*.xml` of `dir`.
pub fn read_account_files(dir: &Path) -> Result<AccountFiles, AccountFileError> {
    let directory = |source| AccountFileError::Directory { path: dir.to_path_buf(), source };
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(directory)?
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| is_account_file_name(name))
        .collect();
    names.sort();
    let mut files = AccountFiles::default();
    for name in names {
        let path = dir.join(&name);
        match read_bounded(&path) {
            Ok(text) => match parse_account(&text, &name) {
                Ok(account) => files.accounts.push(account),
                Err(error) => files.problems.push(error.to_string()),
            },
            Err(error) => files.problems.push(format!("cannot read {}: {error}", path.display())),
        }
    }
    Ok(files)
}

fn read_bounded(path: &Path) -> io::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(MAX_ACCOUNT_FILE + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_ACCOUNT_FILE {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "over 1 MiB: not an account file"));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Removes what `dir` keeps for the project with `master_url` (its account file, its
/// statistics, scheduler and master-page files, job log, and its project directory with
/// the apps and job files in it): the files side of a detach. Returns what was removed;
/// what was not there is not an error.
pub fn remove_project_files(
    dir: &Path,
    master_url: &str,
) -> Result<Vec<PathBuf>, AccountFileError> {
    let files = project_files(master_url);
    let mut removed = Vec::new();
    let gone = |result: io::Result<()>, path: PathBuf, removed: &mut Vec<PathBuf>| match result {
        Ok(()) => {
            removed.push(path);
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(AccountFileError::Remove { path, source }),
    };
    for name in &files.files {
        let path = dir.join(name);
        gone(std::fs::remove_file(&path), path, &mut removed)?;
    }
    let project_dir = dir.join(&files.directory);
    gone(std::fs::remove_dir_all(&project_dir), project_dir, &mut removed)?;
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_canonicalised_and_bad_ones_refused() {
        assert_eq!(
            canonical_master_url(" https://example.org/p ").expect("valid"),
            "https://example.org/p/"
        );
        assert_eq!(
            canonical_master_url("http://127.0.0.1:8088/").expect("valid"),
            "http://127.0.0.1:8088/"
        );
        for bad in ["example.org", "ftp://x/", "http://", "http:///x", "http://a b/"] {
            assert!(canonical_master_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_file_written_is_the_real_clients_and_reads_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().join("data");
        let path =
            write_account_file(&data, "http://127.0.0.1:8088", "0123456789abcdef").expect("writes");
        assert_eq!(path, data.join("account_127.0.0.1_8088.xml"));
        // A file that is not an account file, and a damaged account file, beside it.
        std::fs::write(data.join("master_127.0.0.1_8088.xml"), "<html/>").expect("write");
        std::fs::write(data.join("account_x.xml"), "<account><master_url>").expect("write");
        let files = read_account_files(&data).expect("reads");
        assert_eq!(files.accounts.len(), 1);
        assert_eq!(files.accounts[0].master_url, "http://127.0.0.1:8088/");
        assert_eq!(files.accounts[0].authenticator, "0123456789abcdef");
        assert_eq!(files.problems.len(), 1);
        assert!(files.problems[0].contains("account_x.xml"), "{:?}", files.problems);
        assert!(matches!(
            write_account_file(&data, "http://x/", "two words"),
            Err(AccountFileError::BadAuthenticator)
        ));
        // A 300 KB key is refused before any file is written.
        let huge = "k".repeat(300 * 1024);
        assert!(matches!(
            write_account_file(&data, "http://huge.example/", &huge),
            Err(AccountFileError::LongAuthenticator(n)) if n == huge.len()
        ));
        assert!(!data.join("account_huge.example.xml").exists());
        assert!(write_account_file(&data, "http://huge.example/", &"k".repeat(256)).is_ok());
    }

    #[test]
    fn the_fixture_account_file_is_read() {
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/boinc-7.20.5/state");
        let files = read_account_files(&fixture).expect("reads");
        assert_eq!(files.accounts.len(), 1, "{:?}", files.problems);
        assert_eq!(files.accounts[0].authenticator, "0123456789abcdef0123456789abcdef");
    }

    #[test]
    fn a_detach_removes_the_projects_files_only() {
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path();
        write_account_file(data, "http://a.org/", "key").expect("a");
        write_account_file(data, "http://b.org/", "key").expect("b");
        std::fs::write(data.join("master_a.org.xml"), "<html/>").expect("write");
        std::fs::create_dir_all(data.join("projects/a.org")).expect("project dir");
        std::fs::write(data.join("projects/a.org/input"), "x").expect("write");
        let removed = remove_project_files(data, "http://a.org/").expect("removes");
        assert_eq!(removed.len(), 3, "{removed:?}");
        assert!(!data.join("account_a.org.xml").exists());
        assert!(!data.join("projects/a.org").exists());
        assert!(data.join("account_b.org.xml").exists(), "the other project keeps its files");
        assert!(remove_project_files(data, "http://a.org/").expect("again").is_empty());
    }
}
