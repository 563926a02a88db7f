//! The event log on disk (docs/design.md "Protocol facts", the data directory):
//! `stdoutdae.txt` beside the state, one line a message as BOINC writes it
//! (`29-Nov-2026 02:48:01 [Project] text`, times in UTC), moved to `stdoutdae.old` when it
//! would grow past cc_config's `max_stdout_file_size`, so the two files together never
//! hold more than twice that.

use boinc_core::Time;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The event log file's name in the data directory.
pub const EVENT_LOG_FILE: &str = "stdoutdae.txt";
/// Where the previous event log goes when the file is full.
pub const OLD_EVENT_LOG_FILE: &str = "stdoutdae.old";

/// The event log file being written.
#[derive(Debug)]
pub(crate) struct EventLogFile {
    path: PathBuf,
    old_path: PathBuf,
    max_bytes: u64,
    file: Option<File>,
    written: u64,
}

/// A time as BOINC's event log writes it: `29-Nov-2026 02:48:01`.
fn log_time(time: Time) -> String {
    let seconds = if time.is_finite() { time.floor() as i64 } else { 0 };
    let Ok(at) = time::OffsetDateTime::from_unix_timestamp(seconds) else {
        return String::from("01-Jan-1970 00:00:00");
    };
    const MONTHS: [&str; 12] =
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    format!(
        "{:02}-{}-{} {:02}:{:02}:{:02}",
        at.day(),
        MONTHS[usize::from(u8::from(at.month())) - 1],
        at.year(),
        at.hour(),
        at.minute(),
        at.second()
    )
}

impl EventLogFile {
    /// The event log of the data directory `dir`, rotated at `max_bytes`.
    pub(crate) fn new(dir: &Path, max_bytes: u64) -> Self {
        let path = dir.join(EVENT_LOG_FILE);
        let written = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        EventLogFile {
            path,
            old_path: dir.join(OLD_EVENT_LOG_FILE),
            max_bytes: max_bytes.max(1024),
            file: None,
            written,
        }
    }

    /// Appends one message. A file that cannot be written is skipped (the messages
    /// stay in the log GUI RPC shows); the next message tries again.
    pub(crate) fn write(&mut self, time: Time, project: &str, body: &str) {
        let mut line = log_time(time);
        if !project.is_empty() {
            line.push_str(&format!(" [{project}]"));
        }
        // One message, one line: a body's own line breaks would make lines that look
        // like messages of their own.
        line.push(' ');
        line.push_str(&body.replace(['\n', '\r'], " "));
        line.push('\n');
        if self.written + line.len() as u64 > self.max_bytes {
            self.file = None;
            if let Err(error) = std::fs::rename(&self.path, &self.old_path)
                && error.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(%error, "the event log file could not be rotated");
            }
            self.written = 0;
        }
        if self.file.is_none() {
            match OpenOptions::new().create(true).append(true).open(&self.path) {
                Ok(file) => self.file = Some(file),
                Err(error) => {
                    tracing::warn!(%error, path = %self.path.display(), "event log file");
                    return;
                }
            }
        }
        if let Some(file) = &mut self.file {
            match file.write_all(line.as_bytes()) {
                Ok(()) => self.written += line.len() as u64,
                Err(error) => {
                    tracing::warn!(%error, "the event log file could not be written");
                    self.file = None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_as_boinc_writes_them() {
        assert_eq!(log_time(1_795_917_600.0), "29-Nov-2026 02:00:00");
        let dir = tempfile::tempdir().expect("a directory");
        let mut log = EventLogFile::new(dir.path(), 4096);
        log.write(1_795_917_600.0, "Project", "line one\nand two");
        log.write(1_795_917_601.0, "", "client");
        let text = std::fs::read_to_string(dir.path().join(EVENT_LOG_FILE)).expect("the file");
        assert_eq!(
            text,
            "29-Nov-2026 02:00:00 [Project] line one and two\n29-Nov-2026 02:00:01 client\n"
        );
    }

    #[test]
    fn rotates_at_the_size_and_stays_bounded() {
        let dir = tempfile::tempdir().expect("a directory");
        let mut log = EventLogFile::new(dir.path(), 2048);
        for i in 0..500 {
            log.write(f64::from(i), "P", &format!("message {i} {}", "x".repeat(40)));
        }
        let current = std::fs::metadata(dir.path().join(EVENT_LOG_FILE)).expect("current");
        let old = std::fs::metadata(dir.path().join(OLD_EVENT_LOG_FILE)).expect("rotated");
        assert!(current.len() <= 2048 && old.len() <= 2048, "{} {}", current.len(), old.len());
        let text = std::fs::read_to_string(dir.path().join(EVENT_LOG_FILE)).expect("the file");
        assert!(text.ends_with(&format!("message 499 {}\n", "x".repeat(40))), "{text}");
    }
}
