//! The client's data directory, as the disk manager (seed 004) sees it.

use boinc_core::model::ProjectId;

/// The client's data directory.
pub trait FileSystem: Send + Sync {
    /// Bytes the file takes, if it exists.
    fn size(&self, project: ProjectId, name: &str) -> Option<f64>;
    /// Deletes the file; whether it existed.
    fn delete(&self, project: ProjectId, name: &str) -> bool;
    /// Total size and free space of the disk holding the data directory, bytes.
    fn disk_space(&self) -> (f64, f64);
}
