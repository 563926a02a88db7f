//! The other files BOINC's app API and the client agree on in a slot directory
//! (docs/design.md "Protocol facts", App API), and how much of an app's standard error the
//! client keeps.

/// Where the client sends an app's standard error.
pub const STDERR_FILE: &str = "stderr.txt";
/// The lock an app using BOINC's API holds while it runs in the slot.
pub const LOCK_FILE: &str = "boinc_lockfile";
/// How much of `stderr.txt` goes into a result's report: its last 63 KB, as BOINC keeps.
pub const STDERR_REPORT_BYTES: usize = 63 * 1024;
/// The size past which the client cuts `stderr.txt` back to its reported tail while the
/// app runs (BOINC's API rotates its own standard error at 2 MB): an app that floods its
/// standard error cannot fill the disk through it.
pub const STDERR_FILE_LIMIT: u64 = 2 * 1024 * 1024;
