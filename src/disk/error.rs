//! Errors of the disk space manager (seed 004).

use thiserror::Error;

/// Why a disk request could not be planned.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DiskError {
    /// The file id is not one of the state's files.
    #[error(
        "file #{file} is not in the client state (it lists {nfiles} files): add the file's \
         <file> entry to the state before associating it with its project"
    )]
    UnknownFile {
        /// The index asked for.
        file: usize,
        /// How many files the state holds.
        nfiles: usize,
    },
}
