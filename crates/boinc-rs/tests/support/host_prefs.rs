//! The preferences the live tests' clients run under on the shared build machines:
//! other programs (builds, other tests) keep the CPUs busy there, and BOINC's default
//! `suspend_cpu_usage` of 25 % would suspend every task for "CPU is busy". The tests of
//! that preference set it themselves.

use boinc_core::model::Prefs;
use std::path::Path;

/// The element that turns the check off.
pub const NO_CPU_BUSY_CHECK: &str = "<suspend_cpu_usage>0</suspend_cpu_usage>";

/// The default preferences without the check, for a client built in the test.
pub fn prefs_without_cpu_busy_check() -> Prefs {
    let mut prefs = Prefs::default();
    prefs.reported.suspend_cpu_usage = 0.0;
    prefs
}

/// Puts the check's "off" into `dir`'s global_prefs_override.xml, written or added to
/// the test's own, unless that already says how busy the CPU may be.
pub fn ignore_other_programs_cpu(dir: &Path) {
    let path = dir.join("global_prefs_override.xml");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) if text.contains("suspend_cpu_usage") => return,
        Ok(text) if text.contains("<global_preferences>") => text.replacen(
            "<global_preferences>",
            &format!("<global_preferences>{NO_CPU_BUSY_CHECK}"),
            1,
        ),
        _ => format!("<global_preferences>{NO_CPU_BUSY_CHECK}</global_preferences>\n"),
    };
    std::fs::create_dir_all(dir).expect("the data directory");
    std::fs::write(&path, text).expect("global_prefs_override.xml");
}
