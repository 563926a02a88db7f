//! The app's mapping of `boinc_mmap_file` (docs/design.md "Protocol facts", App API): the
//! app maps the file its client created in the slot, as BOINC's API does, and moves
//! whole messages in and out of it. The client writes into the same pages at any time,
//! so every access is volatile and a message's text is written before its flag.

use boinc_core::protocol::app_api::{CHANNEL_SIZE, Channel, SHARED_MEMORY_SIZE};
use nix::sys::mman::{MapFlags, ProtFlags, mmap, munmap};
use std::fs::OpenOptions;
use std::io;
use std::num::NonZeroUsize;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::atomic::{Ordering, fence};

/// The shared-memory file, mapped.
#[derive(Debug)]
pub(crate) struct SharedMapping {
    base: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain shared memory; every access goes through volatile reads
// and writes of single bytes inside it, which any thread may make.
unsafe impl Send for SharedMapping {}
// SAFETY: as above; `&self` methods only read and write bytes of the mapping.
unsafe impl Sync for SharedMapping {}

impl SharedMapping {
    /// Maps the file at `path`, which must hold all the channels.
    pub(crate) fn open(path: &Path) -> io::Result<SharedMapping> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        let len = usize::try_from(file.metadata()?.len()).unwrap_or(0);
        if len < SHARED_MEMORY_SIZE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is {len} bytes, not {SHARED_MEMORY_SIZE}", path.display()),
            ));
        }
        let length = NonZeroUsize::new(SHARED_MEMORY_SIZE).ok_or(io::ErrorKind::InvalidData)?;
        // SAFETY: a fresh shared mapping of a file we opened read-write, at an address
        // of the kernel's choosing; it is unmapped only in `drop`.
        let base = unsafe {
            mmap(
                None,
                length,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
                &file,
                0,
            )
        }?;
        Ok(SharedMapping { base: base.cast(), len: SHARED_MEMORY_SIZE })
    }

    fn byte(&self, offset: usize) -> *mut u8 {
        debug_assert!(offset < self.len);
        // SAFETY: callers pass offsets inside the mapping (channel offset + < 1024).
        unsafe { self.base.as_ptr().add(offset) }
    }

    /// A copy of `channel`'s bytes.
    pub(crate) fn read(&self, channel: Channel) -> [u8; CHANNEL_SIZE] {
        let mut bytes = [0u8; CHANNEL_SIZE];
        for (i, byte) in bytes.iter_mut().enumerate() {
            // SAFETY: inside the mapping, which lives as long as `self`.
            *byte = unsafe { self.byte(channel.offset() + i).read_volatile() };
        }
        fence(Ordering::Acquire);
        bytes
    }

    /// Clears `channel`'s flag: its message was read.
    pub(crate) fn clear(&self, channel: Channel) {
        fence(Ordering::Release);
        // SAFETY: inside the mapping.
        unsafe { self.byte(channel.offset()).write_volatile(0) }
    }

    /// Writes a message (`text` NUL-terminated, from
    /// [`boinc_core::protocol::app_api::encode_message`]) and then sets the flag.
    pub(crate) fn write(&self, channel: Channel, text: &[u8]) {
        for (i, &byte) in text.iter().take(CHANNEL_SIZE - 1).enumerate() {
            // SAFETY: inside the mapping (at most the channel's last byte).
            unsafe { self.byte(channel.offset() + 1 + i).write_volatile(byte) }
        }
        fence(Ordering::Release);
        // SAFETY: inside the mapping.
        unsafe { self.byte(channel.offset()).write_volatile(1) }
    }

    /// Overwrites every byte of the mapping with `fill(offset)` (a test app damaging its
    /// shared memory on purpose).
    pub(crate) fn overwrite(&self, fill: impl Fn(usize) -> u8) {
        for offset in 0..self.len {
            // SAFETY: inside the mapping.
            unsafe { self.byte(offset).write_volatile(fill(offset)) }
        }
    }
}

impl Drop for SharedMapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `open`, unmapped once.
        let _ = unsafe { munmap(self.base.cast(), self.len) };
    }
}
