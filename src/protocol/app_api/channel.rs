//! The layout of `boinc_mmap_file` (docs/design.md "Protocol facts", App API; the fixture
//! `boinc-7.20.5/slot/boinc_mmap_file`): 8 channels of 1024 bytes, in a fixed order. In
//! each channel the first byte says whether a message is present; the text follows,
//! NUL-terminated. The writer of a channel writes only while the flag is clear (text
//! first, then the flag), the reader clears it after copying the text out, so each side
//! owns the channel in turn. This module reads and writes a channel's bytes; who holds
//! the memory (the client by file I/O, an app by a mapping) is the caller's business.

use super::error::AppMessageError;

/// The shared-memory file's name in a slot directory.
pub const MMAP_FILE_NAME: &str = "boinc_mmap_file";
/// Bytes per channel (flag, text, NUL).
pub const CHANNEL_SIZE: usize = 1024;
/// Channels in the file.
pub const CHANNEL_COUNT: usize = 8;
/// The file's size: every channel, nothing else.
pub const SHARED_MEMORY_SIZE: usize = CHANNEL_SIZE * CHANNEL_COUNT;
/// The longest text a channel holds: its size less the flag byte and the NUL.
pub const MAX_MESSAGE_LEN: usize = CHANNEL_SIZE - 2;

/// The channels, in the file's order; each has one writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Channel {
    /// Client → app: `<suspend/>`, `<resume/>`, `<quit/>`, `<abort/>`.
    ProcessControlRequest,
    /// App → client (unused by current apps).
    ProcessControlReply,
    /// Client → app: graphics requests (unused).
    GraphicsRequest,
    /// App → client: graphics URLs.
    GraphicsReply,
    /// Client → app: the heartbeat, once a second.
    Heartbeat,
    /// App → client: CPU times, checkpoint, fraction done.
    AppStatus,
    /// App → client: trickle-up and upload notices.
    TrickleUp,
    /// Client → app: trickle-down and upload status notices.
    TrickleDown,
}

impl Channel {
    /// Every channel, in the file's order.
    pub const ALL: [Channel; CHANNEL_COUNT] = [
        Channel::ProcessControlRequest,
        Channel::ProcessControlReply,
        Channel::GraphicsRequest,
        Channel::GraphicsReply,
        Channel::Heartbeat,
        Channel::AppStatus,
        Channel::TrickleUp,
        Channel::TrickleDown,
    ];

    /// The channel's first byte (its flag) in the file.
    pub const fn offset(self) -> usize {
        let index = match self {
            Channel::ProcessControlRequest => 0,
            Channel::ProcessControlReply => 1,
            Channel::GraphicsRequest => 2,
            Channel::GraphicsReply => 3,
            Channel::Heartbeat => 4,
            Channel::AppStatus => 5,
            Channel::TrickleUp => 6,
            Channel::TrickleDown => 7,
        };
        index * CHANNEL_SIZE
    }

    /// The channel's bytes within the whole file's bytes (`None` if the file is short:
    /// an app truncated it).
    pub fn bytes(self, file: &[u8]) -> Option<&[u8]> {
        file.get(self.offset()..self.offset() + CHANNEL_SIZE)
    }
}

/// Whether a channel's flag says a message is present.
pub fn has_message(channel: &[u8]) -> bool {
    channel.first().is_some_and(|&flag| flag != 0)
}

/// The message a channel holds: `None` when its flag is clear, its text otherwise.
/// Text that is not NUL-terminated or not UTF-8 is an error (the reader still clears
/// the flag, so a damaged message is dropped, not read again and again).
pub fn message_text(channel: &[u8]) -> Result<Option<&str>, AppMessageError> {
    if !has_message(channel) {
        return Ok(None);
    }
    let text = &channel[1..];
    let end =
        text.iter().position(|&b| b == 0).ok_or(AppMessageError::Unterminated(channel.len()))?;
    std::str::from_utf8(&text[..end]).map(Some).map_err(|_| AppMessageError::NotText)
}

/// The bytes that follow the flag for a message: its text and the terminating NUL.
/// Messages longer than a channel holds are an error, never cut (a cut message would be
/// malformed XML at the other end).
pub fn encode_message(text: &str) -> Result<Vec<u8>, AppMessageError> {
    if text.len() > MAX_MESSAGE_LEN || text.as_bytes().contains(&0) {
        return Err(AppMessageError::TooLong { len: text.len(), max: MAX_MESSAGE_LEN });
    }
    let mut bytes = Vec::with_capacity(text.len() + 1);
    bytes.extend_from_slice(text.as_bytes());
    bytes.push(0);
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn channels_are_laid_out_in_boincs_order() {
        assert_eq!(Channel::Heartbeat.offset(), 4096);
        assert_eq!(Channel::AppStatus.offset(), 5120);
        assert_eq!(Channel::TrickleDown.offset() + CHANNEL_SIZE, SHARED_MEMORY_SIZE);
        let offsets: Vec<usize> = Channel::ALL.iter().map(|c| c.offset()).collect();
        assert!(offsets.windows(2).all(|w| w[1] == w[0] + CHANNEL_SIZE));
    }

    #[test]
    fn a_message_round_trips_through_a_channel() {
        let mut channel = [0u8; CHANNEL_SIZE];
        assert_eq!(message_text(&channel), Ok(None));
        let bytes = encode_message("<suspend/>").unwrap();
        channel[1..1 + bytes.len()].copy_from_slice(&bytes);
        channel[0] = 1;
        assert_eq!(message_text(&channel), Ok(Some("<suspend/>")));
    }

    #[test]
    fn damaged_channels_are_errors() {
        let mut channel = [b'x'; CHANNEL_SIZE];
        assert_eq!(message_text(&channel), Err(AppMessageError::Unterminated(CHANNEL_SIZE)));
        channel[1] = 0xff;
        channel[2] = 0;
        assert_eq!(message_text(&channel), Err(AppMessageError::NotText));
        assert!(message_text(&[1u8]).is_err(), "a flag alone is unterminated");
        assert!(Channel::AppStatus.bytes(&[0u8; 100]).is_none(), "a truncated file");
    }

    #[test]
    fn long_messages_are_refused() {
        assert!(encode_message(&"a".repeat(MAX_MESSAGE_LEN)).is_ok());
        assert!(encode_message(&"a".repeat(MAX_MESSAGE_LEN + 1)).is_err());
        assert!(encode_message("a\0b").is_err());
    }

    proptest! {
        #[test]
        fn any_channel_bytes_read_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..CHANNEL_SIZE)) {
            let _ = message_text(&bytes);
        }
    }
}
