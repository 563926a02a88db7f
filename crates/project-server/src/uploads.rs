//! Output files arriving by BOINC's data server protocol ([`boinc_core::protocol`]'s
//! `DataServerRequest`): kept in `upload/` in the project directory under their own
//! names. A partial file stays for the client to resume after asking its size; a file
//! is complete when it has the announced size and MD5.

use super::apps::md5_of_file;
use super::error::ProjectServerError;
use std::path::{Path, PathBuf};

/// The upload directory in the project directory.
pub(crate) const UPLOAD_DIR: &str = "upload";

/// The longest file name accepted in a URL or an upload.
const MAX_FILE_NAME: usize = 255;

/// Whether `name` is a plain file name a client may ask for: no directories, nothing
/// hidden, no `..`, only characters BOINC names use.
pub(crate) fn is_safe_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_FILE_NAME
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Where an output file is kept.
pub(crate) fn upload_path(upload_dir: &Path, name: &str) -> PathBuf {
    upload_dir.join(name)
}

/// The bytes held of `name` (0 when none).
pub(crate) fn size_held(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// A complete file's size and MD5.
pub(crate) fn checksum(path: &Path) -> Result<(u64, String), ProjectServerError> {
    md5_of_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names() {
        for good in ["example_app_3_0_out", "a.b-c", "x"] {
            assert!(is_safe_file_name(good), "{good}");
        }
        let long = "a".repeat(256);
        for bad in ["", "..", "../x", "/etc/passwd", ".hidden", "a/b", "a b", "é", long.as_str()] {
            assert!(!is_safe_file_name(bad), "{bad}");
        }
    }
}
