//! GUI RPC authentication (docs/design.md "Protocol facts", GUI RPC): the password in the
//! data directory's gui_rpc_auth.cfg, created with a random password on first start
//! (readable by its owner only, mode 0600), the nonce a client gets for `<auth1/>`, and
//! the check of its `<auth2>` answer, md5(nonce + password) in lowercase hex.

use super::error::GuiRpcError;
use md5::{Digest, Md5};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The password file's name, in the data directory.
pub const PASSWORD_FILE: &str = "gui_rpc_auth.cfg";

/// The most bytes read of the password file: only its first line counts, and no
/// password is longer.
const MAX_PASSWORD_FILE_READ: u64 = 4096;

/// The password in the file at `path`: its first line (of at most
/// [`MAX_PASSWORD_FILE_READ`] bytes read), without surrounding whitespace.
fn read_first_line(path: &Path) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(MAX_PASSWORD_FILE_READ).read_to_end(&mut bytes)?;
    let text = String::from_utf8(bytes)
        .map_err(|e| std::io::Error::new(ErrorKind::InvalidData, e.to_string()))?;
    Ok(text.lines().next().unwrap_or("").trim().to_string())
}

/// Reads the GUI RPC password from `dir`'s gui_rpc_auth.cfg (its first line, without
/// surrounding whitespace), creating the file with a new random password, readable by
/// its owner only, when there is none. An empty password means no authentication, as
/// BOINC's client has it.
pub fn load_or_create_password(dir: &Path) -> Result<String, GuiRpcError> {
    let path = dir.join(PASSWORD_FILE);
    let error = |source| GuiRpcError::PasswordFile { path: path.clone(), source };
    match read_first_line(&path) {
        Ok(password) => return Ok(password),
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(error(e)),
    }
    let password = random_hex();
    let created = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path);
    match created {
        Ok(mut file) => {
            file.write_all(password.as_bytes()).and_then(|()| file.sync_all()).map_err(error)?;
            tracing::info!(path = %path.display(), "created the GUI RPC password file");
            Ok(password)
        }
        // Another process created it in the meantime: its password stands.
        Err(e) if e.kind() == ErrorKind::AlreadyExists => read_first_line(&path).map_err(error),
        Err(e) => Err(error(e)),
    }
}

/// The password in `dir`'s gui_rpc_auth.cfg, for a client of the server; `None` when
/// there is no such file (nothing is created).
pub fn read_password(dir: &Path) -> Result<Option<String>, GuiRpcError> {
    let path = dir.join(PASSWORD_FILE);
    match read_first_line(&path) {
        Ok(password) => Ok(Some(password)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(source) => Err(GuiRpcError::PasswordFile { path, source }),
    }
}

/// 32 random hexadecimal digits: a password, or a nonce.
fn random_hex() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// A fresh nonce for `<auth1/>`: random, so an answer seen once is worth nothing later.
pub fn new_nonce() -> String {
    random_hex()
}

/// What a client answers to `nonce` when it knows `password`: md5(nonce + password),
/// lowercase hex.
pub fn nonce_hash(nonce: &str, password: &str) -> String {
    let mut hasher = Md5::new();
    hasher.update(nonce.as_bytes());
    hasher.update(password.as_bytes());
    format!("{:x}", hasher.finalize())
}

/// Whether `answer` proves knowledge of `password` for `nonce`. Compared without an
/// early exit, so the time taken says nothing about how much of it was right.
pub fn check_answer(nonce: &str, password: &str, answer: &str) -> bool {
    let expected = nonce_hash(nonce, password);
    // As BOINC's client: the lowercase hex the hash is written in, nothing else (an
    // upper-case answer is refused there, so it is here).
    let answer = answer.trim();
    expected.len() == answer.len()
        && expected.bytes().zip(answer.bytes()).fold(0u8, |diff, (a, b)| diff | (a ^ b)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// The hash the fixture gui_rpc_samples.txt verified against the real client.
    #[test]
    fn the_fixtures_hash() {
        assert_eq!(
            nonce_hash("1795247909.805998", "testpass123"),
            "2426f7901e9f32fc45a48e58d38138d4"
        );
        assert!(check_answer(
            "1795247909.805998",
            "testpass123",
            "2426f7901e9f32fc45a48e58d38138d4"
        ));
        assert!(
            !check_answer("1795247909.805998", "testpass123", "2426F7901E9F32FC45A48E58D38138D4"),
            "BOINC refuses an upper-case hash"
        );
        assert!(!check_answer(
            "1795247909.805998",
            "testpass12",
            "2426f7901e9f32fc45a48e58d38138d4"
        ));
        assert!(!check_answer("1795247909.805998", "testpass123", ""));
    }

    #[test]
    fn the_password_file_is_created_once_for_its_owner_only() {
        let dir = tempfile::tempdir().expect("temp dir");
        let first = load_or_create_password(dir.path()).expect("created");
        assert_eq!(first.len(), 32);
        let mode =
            std::fs::metadata(dir.path().join(PASSWORD_FILE)).expect("exists").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(load_or_create_password(dir.path()).expect("read"), first);
        assert_eq!(read_password(dir.path()).expect("read"), Some(first.clone()));
        let empty = tempfile::tempdir().expect("temp dir");
        assert_eq!(read_password(empty.path()).expect("nothing"), None);
        assert!(!empty.path().join(PASSWORD_FILE).exists());
        assert_ne!(new_nonce(), new_nonce());
    }

    /// A password file of 64 MiB on one line is read only as far as a password goes.
    #[test]
    fn a_huge_password_file_is_read_only_in_part() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join(PASSWORD_FILE), vec![b'p'; 64 << 20]).expect("write");
        let password = load_or_create_password(dir.path()).expect("read");
        assert_eq!(password.len() as u64, MAX_PASSWORD_FILE_READ);
    }

    #[test]
    fn an_existing_password_is_its_first_line_trimmed() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join(PASSWORD_FILE), "  secret \nignored\n").expect("write");
        assert_eq!(load_or_create_password(dir.path()).expect("read"), "secret");
        std::fs::write(dir.path().join(PASSWORD_FILE), "").expect("write");
        assert_eq!(load_or_create_password(dir.path()).expect("read"), "");
    }

    #[test]
    fn an_unwritable_directory_is_a_clear_error() {
        let error = load_or_create_password(Path::new("/nonexistent/boinc-rs"))
            .expect_err("no such directory");
        assert!(error.to_string().contains("gui_rpc_auth.cfg"), "{error}");
    }
}
