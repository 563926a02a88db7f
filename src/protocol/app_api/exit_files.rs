//! The files an app using BOINC's API leaves in its slot to say how it ended (docs/design.md
//! "Protocol facts", App API): `boinc_finish_called` (written by `boinc_finish`: the
//! exit status on the first line, then an optional message and `notice`) and
//! `boinc_temporary_exit` (written by `boinc_temporary_exit`: the delay in seconds before
//! the client may restart the app, then the reason). An app that exits 0 without the
//! first did not finish; with the second it asked to be restarted later.

use super::error::AppMessageError;

/// The file `boinc_finish` writes.
pub const FINISH_FILE: &str = "boinc_finish_called";
/// The file `boinc_temporary_exit` writes.
pub const TEMPORARY_EXIT_FILE: &str = "boinc_temporary_exit";
/// The delay BOINC assumes when a temporary-exit file gives none it can use, seconds.
pub const DEFAULT_TEMPORARY_EXIT_DELAY: f64 = 300.0;
/// The longest delay a temporary-exit file may ask for, seconds.
pub const MAX_TEMPORARY_EXIT_DELAY: f64 = 86_400.0;

/// What `boinc_finish_called` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinishFile {
    /// The status the app finished with (0: success).
    pub status: i32,
    /// A message for the user, if any.
    pub message: Option<String>,
    /// The message is to be shown as a notice.
    pub is_notice: bool,
}

impl FinishFile {
    /// The file's text.
    pub fn to_text(&self) -> String {
        match &self.message {
            Some(message) => format!(
                "{}\n{}\n{}\n",
                self.status,
                one_line(message),
                if self.is_notice { "notice" } else { "" }
            ),
            None => format!("{}\n", self.status),
        }
    }

    /// Reads the file's text.
    pub fn parse(text: &str) -> Result<FinishFile, AppMessageError> {
        let mut lines = text.lines();
        let first = lines.next().unwrap_or("").trim();
        let status = first.parse::<i32>().map_err(|_| AppMessageError::BadExitFile {
            file: FINISH_FILE,
            found: first.chars().take(40).collect(),
        })?;
        let message = lines.next().map(str::trim).filter(|m| !m.is_empty()).map(str::to_owned);
        let is_notice = lines.next().is_some_and(|l| l.trim() == "notice");
        Ok(FinishFile { status, message, is_notice })
    }
}

/// What `boinc_temporary_exit` says.
#[derive(Debug, Clone, PartialEq)]
pub struct TemporaryExit {
    /// Seconds before the app may be restarted.
    pub delay: f64,
    /// Why, in the app's words (may be empty).
    pub reason: String,
    /// The reason is to be shown as a notice.
    pub is_notice: bool,
}

impl TemporaryExit {
    /// The file's text.
    pub fn to_text(&self) -> String {
        let mut text = format!("{}\n", self.delay.round().clamp(0.0, MAX_TEMPORARY_EXIT_DELAY));
        if !self.reason.is_empty() {
            text.push_str(&one_line(&self.reason));
            text.push('\n');
            if self.is_notice {
                text.push_str("notice\n");
            }
        }
        text
    }

    /// Reads the file's text. As BOINC does, a delay that is missing, not a whole
    /// number or outside 0–86400 s becomes 300 s: the app did ask to be restarted later.
    pub fn parse(text: &str) -> TemporaryExit {
        let mut lines = text.lines();
        let delay = lines
            .next()
            .and_then(|l| l.trim().parse::<i64>().ok())
            .map(|d| d as f64)
            .filter(|d| (0.0..=MAX_TEMPORARY_EXIT_DELAY).contains(d))
            .unwrap_or(DEFAULT_TEMPORARY_EXIT_DELAY);
        let reason: String = lines.next().map(str::trim).unwrap_or("").chars().take(256).collect();
        // Cut short, the reason may end in blanks the whole line did not end in.
        let reason = reason.trim_end().to_owned();
        let is_notice = lines.next().is_some_and(|l| l.trim() == "notice");
        TemporaryExit { delay, reason, is_notice }
    }
}

/// A message on one line (the files are line-oriented).
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_files_round_trip() {
        for file in [
            FinishFile { status: 0, message: None, is_notice: false },
            FinishFile { status: 3, message: Some("out of GPU memory".into()), is_notice: true },
        ] {
            assert_eq!(FinishFile::parse(&file.to_text()), Ok(file));
        }
        assert!(FinishFile::parse("").is_err());
        assert!(FinishFile::parse("zero\n").is_err());
    }

    #[test]
    fn temporary_exits_round_trip_and_bad_delays_become_five_minutes() {
        let exit = TemporaryExit { delay: 60.0, reason: "no GPU".into(), is_notice: false };
        assert_eq!(TemporaryExit::parse(&exit.to_text()), exit);
        assert_eq!(TemporaryExit::parse("").delay, DEFAULT_TEMPORARY_EXIT_DELAY);
        assert_eq!(TemporaryExit::parse("-5\nx").delay, DEFAULT_TEMPORARY_EXIT_DELAY);
        assert_eq!(TemporaryExit::parse("100000\n").delay, DEFAULT_TEMPORARY_EXIT_DELAY);
        assert_eq!(TemporaryExit::parse("60\nwaiting\nnotice\n").reason, "waiting");
    }

    /// Found by fuzzing (fuzz target slot_files): a reason cut to 256 characters just
    /// after a blank ended in it, so the file written from it read back shorter.
    #[test]
    fn a_cut_reason_reads_back_the_same() {
        let text = format!("60\n{}  x\n", "a".repeat(255));
        let exit = TemporaryExit::parse(&text);
        assert_eq!(exit.reason, "a".repeat(255));
        assert_eq!(TemporaryExit::parse(&exit.to_text()), exit);
    }
}
