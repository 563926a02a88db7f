//! The client's side of an app's `boinc_mmap_file` (docs/design.md "Protocol facts", App API).
//!
//! The app maps the file; the client reads and writes it with `pread`/`pwrite` instead
//! of mapping it too. Linux keeps file I/O and shared mappings of a file in one page
//! cache, so both see the same bytes, and an app that truncates or replaces the file can
//! no longer take the client down with it (touching a mapping past the end of a
//! truncated file kills the process with SIGBUS).

use boinc_core::protocol::app_api::{
    AppMessageError, CHANNEL_SIZE, Channel, MMAP_FILE_NAME, SHARED_MEMORY_SIZE, encode_message,
    has_message, message_text,
};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// What went wrong with an app's shared memory.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ChannelFileError {
    /// The file could not be read or written.
    #[error("cannot use {MMAP_FILE_NAME}: {0}")]
    Io(#[from] io::Error),
    /// The app truncated the file.
    #[error("{MMAP_FILE_NAME} is {0} bytes long, not {SHARED_MEMORY_SIZE}: the app truncated it")]
    Truncated(usize),
    /// A message the app left could not be read (it is dropped).
    #[error(transparent)]
    Damaged(#[from] AppMessageError),
}

/// The shared-memory file of one app, as the client holds it.
#[derive(Debug)]
pub(crate) struct ChannelFile {
    file: File,
}

/// The whole file as read at one instant.
pub(crate) struct Snapshot {
    bytes: Vec<u8>,
}

impl Snapshot {
    /// Whether `channel` holds a message.
    pub(crate) fn has_message(&self, channel: Channel) -> bool {
        channel.bytes(&self.bytes).is_some_and(has_message)
    }
}

impl ChannelFile {
    /// Creates the file in `slot_dir`, every channel empty. A file already there (from
    /// an earlier run, or planted by the app: a link would redirect the client's writes)
    /// is replaced, never written through.
    pub(crate) fn create(slot_dir: &Path) -> io::Result<ChannelFile> {
        let path = slot_dir.join(MMAP_FILE_NAME);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
        let file =
            OpenOptions::new().read(true).write(true).create_new(true).mode(0o660).open(&path)?;
        file.set_len(SHARED_MEMORY_SIZE as u64)?;
        Ok(ChannelFile { file })
    }

    /// Opens the file an app already maps in `slot_dir` (one a previous run of the
    /// client made), never through a link; `None` when there is none, or it is not a
    /// plain file of the right size.
    pub(crate) fn open_existing(slot_dir: &Path) -> Option<ChannelFile> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(slot_dir.join(MMAP_FILE_NAME))
            .ok()?;
        let meta = file.metadata().ok()?;
        (meta.is_file() && meta.len() == SHARED_MEMORY_SIZE as u64).then_some(ChannelFile { file })
    }

    /// Puts a message into `channel` whether or not the app read the one before (a
    /// message of a client that is gone does not matter any more).
    pub(crate) fn replace(&self, channel: Channel, text: &str) -> Result<(), ChannelFileError> {
        let bytes = encode_message(text)?;
        self.file.write_all_at(&[0], channel.offset() as u64)?;
        self.file.write_all_at(&bytes, channel.offset() as u64 + 1)?;
        self.file.write_all_at(&[1], channel.offset() as u64)?;
        Ok(())
    }

    /// Reads the whole file.
    pub(crate) fn snapshot(&self) -> Result<Snapshot, ChannelFileError> {
        let mut bytes = vec![0u8; SHARED_MEMORY_SIZE];
        let mut read = 0;
        while read < bytes.len() {
            match self.file.read_at(&mut bytes[read..], read as u64)? {
                0 => return Err(ChannelFileError::Truncated(read)),
                n => read += n,
            }
        }
        Ok(Snapshot { bytes })
    }

    /// Takes the message the app left in `channel` (as of `snapshot`), clearing the
    /// channel so the app can write the next one. A damaged message is cleared too and
    /// reported as an error.
    pub(crate) fn take(
        &self,
        snapshot: &Snapshot,
        channel: Channel,
    ) -> Result<Option<String>, ChannelFileError> {
        let bytes = channel.bytes(&snapshot.bytes).ok_or(ChannelFileError::Truncated(0))?;
        let text = match message_text(bytes) {
            Ok(None) => return Ok(None),
            Ok(Some(text)) => Ok(Some(text.to_owned())),
            Err(error) => Err(ChannelFileError::Damaged(error)),
        };
        self.file.write_at(&[0], channel.offset() as u64)?;
        text
    }

    /// Puts a message into `channel` if the app has read the previous one (as of
    /// `snapshot`): the text first, then the flag. Returns whether it was put.
    pub(crate) fn put(
        &self,
        snapshot: &Snapshot,
        channel: Channel,
        text: &str,
    ) -> Result<bool, ChannelFileError> {
        if snapshot.has_message(channel) {
            return Ok(false);
        }
        let bytes = encode_message(text)?;
        debug_assert!(bytes.len() < CHANNEL_SIZE);
        self.file.write_all_at(&bytes, channel.offset() as u64 + 1)?;
        self.file.write_all_at(&[1], channel.offset() as u64)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_go_both_ways_and_truncation_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let channels = ChannelFile::create(dir.path()).unwrap();
        let snapshot = channels.snapshot().unwrap();
        assert!(channels.put(&snapshot, Channel::Heartbeat, "<heartbeat/>").unwrap());
        let snapshot = channels.snapshot().unwrap();
        assert!(!channels.put(&snapshot, Channel::Heartbeat, "<heartbeat/>").unwrap());
        // The app's side: a status message in its channel.
        let path = dir.path().join(MMAP_FILE_NAME);
        let app = OpenOptions::new().read(true).write(true).open(&path).unwrap();
        app.write_all_at(
            b"\x01<fraction_done>0.5</fraction_done>\0",
            Channel::AppStatus.offset() as u64,
        )
        .unwrap();
        let snapshot = channels.snapshot().unwrap();
        let text = channels.take(&snapshot, Channel::AppStatus).unwrap();
        assert_eq!(text.as_deref(), Some("<fraction_done>0.5</fraction_done>"));
        assert!(!channels.snapshot().unwrap().has_message(Channel::AppStatus));
        // Garbage is dropped with an error, then the channel is free again.
        app.write_all_at(&[1, 0xff, 0xfe, 0], Channel::AppStatus.offset() as u64).unwrap();
        let snapshot = channels.snapshot().unwrap();
        assert!(channels.take(&snapshot, Channel::AppStatus).is_err());
        assert!(!channels.snapshot().unwrap().has_message(Channel::AppStatus));
        app.set_len(100).unwrap();
        assert!(matches!(channels.snapshot(), Err(ChannelFileError::Truncated(100))));
    }

    #[test]
    fn a_planted_link_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join(MMAP_FILE_NAME)).unwrap();
        ChannelFile::create(dir.path()).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    }
}
