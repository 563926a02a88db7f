//! The message journal (docs/design.md "Time, effects, determinism"): every message
//! delivered to every actor, and every input from the outside world (the clock, the
//! host, processes, servers), as JSON lines of (sequence, virtual time, actor, kind,
//! message). Recording writes them out; verifying compares a replayed run with a
//! recorded one entry by entry and feeds the recorded inputs back to the effects.

use super::gate::Gate;
use boinc_core::Time;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What a journal entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// How the run was set up (first line).
    Setup,
    /// A message one actor sent another: a decision, checked on replay.
    Message,
    /// Something the outside world said (time, availability, a process's state, a
    /// server's reply): fed back on replay.
    Input,
}

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// Position in the journal, from 0.
    pub seq: u64,
    /// Virtual (or wall) time of delivery.
    pub time: Time,
    /// The receiving actor.
    pub actor: String,
    /// Message or input.
    pub kind: EntryKind,
    /// The message's type.
    pub name: String,
    /// The message.
    pub body: serde_json::Value,
}

/// Why a journal could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The file could not be opened, read or written.
    #[error("journal {path}: {source}; check the path and the permissions")]
    Io {
        /// The journal file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A line is not a journal entry.
    #[error(
        "journal {path}, line {line}: not a journal entry ({source}); was it written by `boinc-rs sim --journal` or `boinc-rs run --journal`?"
    )]
    Parse {
        /// The journal file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The cause.
        source: serde_json::Error,
    },
    /// The journal has no setup line.
    #[error(
        "journal {path} is empty or does not start with its setup line (a live journal rotated more than once has lost its beginning: record a shorter run, or give `run --journal-limit-mb` more room)"
    )]
    NoSetup {
        /// The journal file.
        path: String,
    },
}

/// Reads a whole journal. A live journal that was rotated once starts in `FILE.1`:
/// that part is read first.
pub fn read_journal(path: &Path) -> Result<Vec<JournalEntry>, JournalError> {
    let mut entries = read_lines(path)?;
    if entries.first().is_some_and(|e| e.kind != EntryKind::Setup) {
        let older = rotated_path(path);
        if older.exists() {
            let mut whole = read_lines(&older)?;
            let follows = match (whole.last(), entries.first()) {
                (Some(last), Some(first)) => last.seq + 1 == first.seq,
                _ => false,
            };
            if follows {
                whole.append(&mut entries);
                entries = whole;
            }
        }
    }
    if entries.first().is_none_or(|e: &JournalEntry| e.kind != EntryKind::Setup) {
        return Err(JournalError::NoSetup { path: path.display().to_string() });
    }
    Ok(entries)
}

/// A journal file's entries, as they are.
fn read_lines(path: &Path) -> Result<Vec<JournalEntry>, JournalError> {
    let shown = path.display().to_string();
    let file =
        File::open(path).map_err(|source| JournalError::Io { path: shown.clone(), source })?;
    let mut entries = Vec::new();
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|source| JournalError::Io { path: shown.clone(), source })?;
        if line.trim().is_empty() {
            continue;
        }
        let entry = serde_json::from_str(&line).map_err(|source| JournalError::Parse {
            path: shown.clone(),
            line: index + 1,
            source,
        })?;
        entries.push(entry);
    }
    Ok(entries)
}

/// The first difference between a replay and its journal.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// Sequence number where they differ.
    pub seq: u64,
    /// What the journal recorded there (`None`: the journal had ended).
    pub recorded: Option<JournalEntry>,
    /// What the replay produced (`None`: the replay ended first).
    pub replayed: Option<JournalEntry>,
    /// The last input fed before the difference, if any.
    pub last_input: Option<u64>,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |e: &Option<JournalEntry>| {
            e.as_ref().map_or("(nothing)".to_string(), |e| {
                serde_json::to_string(e).unwrap_or_else(|_| format!("{e:?}"))
            })
        };
        writeln!(f, "replay diverged at message {}", self.seq)?;
        writeln!(f, "  recorded: {}", show(&self.recorded))?;
        write!(f, "  replayed: {}", show(&self.replayed))?;
        if let Some(input) = self.last_input {
            write!(f, "\n  after input {input}")?;
        }
        Ok(())
    }
}

enum Sink {
    /// Nothing is kept (no journal asked for).
    Off,
    /// Lines go to a writer (rotated at a size limit when it is a file); optionally
    /// also kept in memory.
    Record {
        writer: Option<Box<dyn Write + Send>>,
        kept: Option<Vec<JournalEntry>>,
        rotation: Option<Rotation>,
    },
    /// Lines are compared with a recording.
    Verify {
        recorded: Vec<JournalEntry>,
        cursor: usize,
        divergence: Option<Box<Divergence>>,
        last_input: Option<u64>,
    },
}

/// A journal shared by the actors of one run. Whether it records is fixed when it is
/// made, and read without the lock: every message of every actor asks.
#[derive(Clone)]
pub struct Journal {
    on: bool,
    /// A live run's journal: inputs that arrive on their own (replies, transfers) are
    /// taken in at the driver's quiet points, and the effects' answers are recorded.
    gated: bool,
    inner: Arc<Mutex<JournalInner>>,
    gate: Arc<Gate>,
}

struct JournalInner {
    seq: u64,
    sink: Sink,
    error: Option<std::io::Error>,
}

impl Journal {
    /// A journal that records nothing.
    pub fn off() -> Self {
        Journal::with(Sink::Off)
    }

    /// A journal written to `writer`, and kept in memory when `keep`.
    pub fn record(writer: Option<Box<dyn Write + Send>>, keep: bool) -> Self {
        Journal::with(Sink::Record { writer, kept: keep.then(Vec::new), rotation: None })
    }

    /// A live run's journal, written to the file at `path`: when it grows past
    /// `limit` bytes it is renamed `path.1` (replacing an older one) and a new file
    /// goes on from the next line.
    pub fn live_to_file(path: &Path, limit: u64) -> Result<Self, JournalError> {
        let file = File::create(path)
            .map_err(|source| JournalError::Io { path: path.display().to_string(), source })?;
        let rotation = Rotation { path: path.to_path_buf(), limit, written: 0 };
        let mut journal = Journal::with(Sink::Record {
            writer: Some(Box::new(BufWriter::new(file))),
            kept: None,
            rotation: Some(rotation),
        });
        journal.gated = true;
        Ok(journal)
    }

    /// A live run's journal kept in memory only (tests).
    pub fn live_in_memory() -> Self {
        let mut journal = Journal::record(None, true);
        journal.gated = true;
        journal
    }

    /// A journal that checks the replay of a live run against `recorded`.
    pub fn verify_live(recorded: Vec<JournalEntry>) -> Self {
        let mut journal = Journal::verify(recorded);
        journal.gated = true;
        journal
    }

    /// A journal written to the file at `path`.
    pub fn to_file(path: &Path) -> Result<Self, JournalError> {
        let file = File::create(path)
            .map_err(|source| JournalError::Io { path: path.display().to_string(), source })?;
        Ok(Journal::record(Some(Box::new(BufWriter::new(file))), false))
    }

    /// A journal that checks a replay against `recorded` (which starts with its setup).
    pub fn verify(recorded: Vec<JournalEntry>) -> Self {
        Journal::with(Sink::Verify { recorded, cursor: 0, divergence: None, last_input: None })
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, JournalInner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn with(sink: Sink) -> Self {
        let on = !matches!(sink, Sink::Off);
        Journal {
            on,
            gated: false,
            inner: Arc::new(Mutex::new(JournalInner { seq: 0, sink, error: None })),
            gate: Arc::default(),
        }
    }

    /// Whether anything is recorded or checked (messages need not be serialised
    /// otherwise).
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// Whether this is a live run's journal (recorded or replayed): see [`Gate`].
    pub fn is_gated(&self) -> bool {
        self.gated
    }

    /// Whether this journal checks a replay (rather than recording a run).
    pub fn is_replay(&self) -> bool {
        matches!(self.inner().sink, Sink::Verify { .. })
    }

    /// The gate of a live run's inputs that arrive on their own.
    pub(crate) fn gate(&self) -> &Gate {
        &self.gate
    }

    /// Appends an entry.
    pub fn append<T: Serialize + ?Sized>(
        &self,
        time: Time,
        actor: &str,
        kind: EntryKind,
        name: &str,
        body: &T,
    ) {
        let mut inner = self.inner();
        if matches!(inner.sink, Sink::Off) {
            return;
        }
        let body = serde_json::to_value(body)
            .unwrap_or_else(|e| serde_json::Value::String(format!("unserialisable: {e}")));
        let entry = JournalEntry {
            seq: inner.seq,
            time,
            actor: actor.to_string(),
            kind,
            name: name.to_string(),
            body,
        };
        inner.seq += 1;
        let JournalInner { sink, error, .. } = &mut *inner;
        match sink {
            Sink::Off => {}
            Sink::Record { writer, kept, rotation } => {
                if writer.is_some() && error.is_none() {
                    let written = serde_json::to_vec(&entry).map_err(std::io::Error::other);
                    let written = written.and_then(|mut line| {
                        line.push(b'\n');
                        match rotation {
                            Some(rotation) => rotation.write(writer, &line),
                            None => writer.as_mut().map_or(Ok(()), |out| out.write_all(&line)),
                        }
                    });
                    if let Err(e) = written {
                        *error = Some(e);
                    }
                }
                if let Some(kept) = kept {
                    kept.push(entry);
                }
            }
            Sink::Verify { recorded, cursor, divergence, last_input } => {
                if divergence.is_some() {
                    return;
                }
                let expected = recorded.get(*cursor);
                if expected != Some(&entry) {
                    *divergence = Some(Box::new(Divergence {
                        seq: entry.seq,
                        recorded: expected.cloned(),
                        replayed: Some(entry),
                        last_input: *last_input,
                    }));
                    return;
                }
                if entry.kind == EntryKind::Input {
                    *last_input = Some(entry.seq);
                }
                *cursor += 1;
            }
        }
    }

    /// On replay: the recorded entry that comes next, if any.
    pub fn next_recorded(&self) -> Option<JournalEntry> {
        match &self.inner().sink {
            Sink::Verify { recorded, cursor, divergence: None, .. } => {
                recorded.get(*cursor).cloned()
            }
            _ => None,
        }
    }

    /// On replay: the input named `name` that the journal has next, for an effect to
    /// hand back. `None` (and a divergence) when the journal has something else there.
    pub fn recorded_input<T: DeserializeOwned>(&self, name: &str) -> Option<T> {
        let mut inner = self.inner();
        let seq = inner.seq;
        let Sink::Verify { recorded, cursor, divergence, last_input } = &mut inner.sink else {
            return None;
        };
        if divergence.is_some() {
            return None;
        }
        let expected = recorded.get(*cursor);
        match expected {
            Some(e) if e.kind == EntryKind::Input && e.name == name => {
                match serde_json::from_value(e.body.clone()) {
                    Ok(value) => Some(value),
                    Err(_) => {
                        *divergence = Some(Box::new(Divergence {
                            seq,
                            recorded: Some(e.clone()),
                            replayed: None,
                            last_input: *last_input,
                        }));
                        None
                    }
                }
            }
            _ => {
                *divergence = Some(Box::new(Divergence {
                    seq,
                    recorded: expected.cloned(),
                    replayed: Some(JournalEntry {
                        seq,
                        time: f64::NAN,
                        actor: String::new(),
                        kind: EntryKind::Input,
                        name: name.to_string(),
                        body: serde_json::Value::Null,
                    }),
                    last_input: *last_input,
                }));
                None
            }
        }
    }

    /// On replay: the first divergence found, or, once the run is over, the journal
    /// having more than the replay produced.
    pub fn divergence(&self, finished: bool) -> Option<Divergence> {
        let inner = self.inner();
        let Sink::Verify { recorded, cursor, divergence, last_input } = &inner.sink else {
            return None;
        };
        if divergence.is_some() || !finished {
            return divergence.as_deref().cloned();
        }
        recorded.get(*cursor).map(|e| Divergence {
            seq: e.seq,
            recorded: Some(e.clone()),
            replayed: None,
            last_input: *last_input,
        })
    }

    /// On replay: the journal has an entry here that the replay did not make (nothing
    /// asked for the input, or no actor delivered the message).
    pub fn nothing_replayed(&self) {
        let mut inner = self.inner();
        let Sink::Verify { recorded, cursor, divergence, last_input } = &mut inner.sink else {
            return;
        };
        if divergence.is_none() {
            *divergence = recorded.get(*cursor).map(|e| {
                Box::new(Divergence {
                    seq: e.seq,
                    recorded: Some(e.clone()),
                    replayed: None,
                    last_input: *last_input,
                })
            });
        }
    }

    /// Entries appended so far.
    pub fn len(&self) -> u64 {
        self.inner().seq
    }

    /// Whether nothing was appended.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries kept in memory (a recording made with `keep`).
    pub fn kept(&self) -> Vec<JournalEntry> {
        match &self.inner().sink {
            Sink::Record { kept: Some(kept), .. } => kept.clone(),
            _ => Vec::new(),
        }
    }

    /// Flushes the writer; the first write error, if any.
    pub fn finish(&self) -> std::io::Result<()> {
        let mut inner = self.inner();
        if let Some(error) = inner.error.take() {
            return Err(error);
        }
        if let Sink::Record { writer: Some(writer), .. } = &mut inner.sink {
            writer.flush()?;
        }
        Ok(())
    }
}

/// A live journal file's size limit: past it the file becomes `FILE.1` and a new one
/// goes on.
struct Rotation {
    path: PathBuf,
    limit: u64,
    written: u64,
}

impl Rotation {
    /// Writes one line to `writer`, rotating the file first when the line would take it
    /// past the limit (a line is never split between files).
    fn write(
        &mut self,
        writer: &mut Option<Box<dyn Write + Send>>,
        line: &[u8],
    ) -> std::io::Result<()> {
        if self.written > 0 && self.written + line.len() as u64 > self.limit {
            if let Some(mut old) = writer.take() {
                old.flush()?;
            }
            std::fs::rename(&self.path, rotated_path(&self.path))?;
            *writer = Some(Box::new(BufWriter::new(File::create(&self.path)?)));
            self.written = 0;
        }
        let Some(out) = writer.as_mut() else { return Ok(()) };
        out.write_all(line)?;
        self.written += line.len() as u64;
        Ok(())
    }
}

/// Where a rotated journal's older part is kept: `FILE.1`.
pub fn rotated_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".1");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A live journal of `lines` entries, each about 100 bytes, rotated past `limit`.
    fn written(dir: &Path, limit: u64, lines: usize) -> PathBuf {
        let path = dir.join("journal.jsonl");
        let journal = Journal::live_to_file(&path, limit).expect("the journal");
        journal.append(0.0, "driver", EntryKind::Setup, "LiveSetup", &"setup");
        for i in 1..lines {
            journal.append(i as f64, "scheduler", EntryKind::Input, "Tick", &"x".repeat(20));
        }
        journal.finish().expect("written");
        path
    }

    #[test]
    fn a_journal_past_its_limit_goes_on_in_a_new_file_and_reads_whole_after_one_rotation() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = written(dir.path(), 2_000, 30);
        let older = std::fs::metadata(rotated_path(&path)).expect("FILE.1").len();
        assert!(older <= 2_000, "{older} bytes in FILE.1");
        let entries = read_journal(&path).expect("FILE.1 then FILE");
        assert_eq!(entries.len(), 30);
        assert!(entries.iter().enumerate().all(|(i, e)| e.seq == i as u64));
    }

    #[test]
    fn a_journal_rotated_twice_says_its_beginning_is_gone() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = written(dir.path(), 1_000, 60);
        for file in [&path, &rotated_path(&path)] {
            let size = std::fs::metadata(file).expect("the file").len();
            assert!(size <= 1_000, "{} is {size} bytes", file.display());
        }
        let error = read_journal(&path).expect_err("no setup line left");
        assert!(matches!(error, JournalError::NoSetup { .. }), "{error}");
        assert!(error.to_string().contains("--journal-limit-mb"), "{error}");
    }
}
