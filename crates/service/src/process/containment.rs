//! Keeping an app's writes in its slot (issue "Running real apps", bad apps): with
//! Landlock (Linux 5.13 and later) an app and everything it starts may create, change,
//! truncate, rename and remove files only beneath its slot directory, its project
//! directory (where BOINC's link files point its outputs) and `/dev` (`/dev/null`, GPU
//! devices). Reading and executing stay open: apps need their libraries. A write
//! anywhere else fails with "permission denied", which a well-behaved app reports by
//! exiting with an error status; the task then ends in an error.
//!
//! The rules are built in the client before the app's process is forked; the forked
//! process only enforces them (two system calls, nothing that allocates) before it
//! executes the app. Where the kernel has no Landlock the app runs unconfined, and the
//! host says so once when it starts.

use landlock::{
    ABI, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, path_beneath_rules,
};
use std::path::Path;

/// The write accesses confined: every filesystem write up to Landlock's fourth ABI
/// (device ioctls, which GPU apps need, stay open).
fn write_access() -> landlock::BitFlags<AccessFs> {
    AccessFs::from_write(ABI::V4)
}

/// Whether the running kernel can confine an app's writes.
pub fn write_containment_available() -> bool {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_write(ABI::V1))
        .and_then(|ruleset| ruleset.create())
        .is_ok()
}

/// The rules confining an app's writes to `slot_dir`, `project_dir` and `/dev`, ready to
/// be enforced in the app's process before it executes.
pub(crate) fn write_rules(
    slot_dir: &Path,
    project_dir: &Path,
) -> Result<RulesetCreated, landlock::RulesetError> {
    Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(write_access())?
        .create()?
        .add_rules(path_beneath_rules([slot_dir, project_dir, Path::new("/dev")], write_access()))
}
