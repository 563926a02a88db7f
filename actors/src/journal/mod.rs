//! The message journal and its replay (docs/design.md "Time, effects, determinism"),
//! of simulated and of live runs (docs/actors.md "Live journal and replay").

mod gate;
mod live;
mod live_replay;
mod record;
mod replay;

pub use live::{JournaledFileSystem, LatchedClock, LiveSetup};
pub use record::{
    Divergence, EntryKind, Journal, JournalEntry, JournalError, read_journal, rotated_path,
};
pub use replay::{ReplayReport, replay};
