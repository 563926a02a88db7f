//! The message journal and its replay (docs/design.md "Time, effects, determinism").

mod record;
mod replay;

pub use record::{Divergence, EntryKind, Journal, JournalEntry, JournalError, read_journal};
pub use replay::{ReplayReport, replay};
