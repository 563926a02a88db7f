//! The disk space manager (seed 004): how much disk BOINC may use and how it is split
//! among projects by resource share, which projects offend, which files go first under
//! each project's deletion policy, making room for a new file (`associate_file`),
//! handling a violation of the user's limits (`data_manager_poll`) and the three
//! free-space figures a scheduler request carries.
//!
//! Everything here plans; nothing deletes. The functions return the deletions (and, for
//! violation handling, the suspension) as values for the caller to carry out, so that
//! the same plan serves the live client, the emulator and `explain`. Files that a
//! running task, a queued job or an unreported result refers to are never planned for
//! deletion ([`references`]).

pub mod associate;
pub mod control;
pub mod deletion_policy;
pub mod error;
pub mod free_space;
pub mod full;
pub mod limits;
pub mod offender;
pub mod plan;
pub mod references;
pub mod report;
#[cfg(test)]
pub(crate) mod tests_support;
pub mod violation;

pub use associate::{Association, associate_file, get_more_disk_space};
pub use control::{DiskChange, DiskControl};
pub use deletion_policy::{
    DEFAULT_EXP_DAYS, DeletionCandidate, DeletionReason, P_HIGH, P_LOW, P_MEDIUM, deletion_order,
    deletion_orders, expiration_date, file_priority, is_expired,
};
pub use error::DiskError;
pub use free_space::{FreeSpaceFigures, free_space_figures, free_space_report};
pub use full::{MIN_ROOM, disk_full};
pub use limits::{BYTES_PER_GB, DiskLimits, DiskUsage, occupies_disk, project_usage, total_limit};
pub use offender::{greatest_offender, is_offender, offenders};
pub use plan::{Deletion, DeletionPlan};
pub use references::FileReferences;
pub use report::{DeleteNextReport, DiskLimitsReport, DiskProjectReport, DiskReport};
pub use violation::{DataManager, DiskEffect, PollOutcome, data_manager_poll};
