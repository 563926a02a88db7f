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

/// Writes a global_prefs_override.xml that turns the check off into `dir`, unless the
/// test wrote its own (which then says, with [`NO_CPU_BUSY_CHECK`], if it needs it off).
pub fn ignore_other_programs_cpu(dir: &Path) {
    let path = dir.join("global_prefs_override.xml");
    if path.exists() {
        return;
    }
    std::fs::create_dir_all(dir).expect("the data directory");
    let text = format!("<global_preferences>{NO_CPU_BUSY_CHECK}</global_preferences>\n");
    std::fs::write(&path, text).expect("global_prefs_override.xml");
}
