//! The client's event log: what `boinccmd --get_messages` and the Manager's event log
//! show (docs/design.md "Protocol facts", GUI RPC `get_messages`, `get_message_count`,
//! `get_notices`). Messages are numbered from 1 in the order they happen; the log keeps
//! the newest ones up to its capacity, and each body is cut to a bounded length, so a
//! client that runs for months holds a bounded log however chatty its projects are.

use crate::Time;
use std::collections::VecDeque;

/// How many messages a log keeps unless told otherwise (BOINC's event log shows 2000).
pub const DEFAULT_MESSAGE_CAPACITY: usize = 2000;

/// The longest message body kept, bytes; longer ones are cut at a character boundary.
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// How much a message matters (BOINC's `MSG_INFO`, `MSG_USER_ALERT`,
/// `MSG_INTERNAL_ERROR`, `MSG_SCHEDULER_ALERT`, numbered as in the protocol's `<pri>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessagePriority {
    /// Something happened (1).
    Info,
    /// The user should do something about it (2); shown as a notice too.
    UserAlert,
    /// Something went wrong inside the client (3).
    InternalError,
    /// A project's scheduler asked for the message to be shown as a notice (a reply's
    /// `<message priority="notice">`; BOINC's 4 inside the client, 2 in `<pri>`).
    SchedulerAlert,
}

impl MessagePriority {
    /// The protocol's number for the priority.
    pub fn code(self) -> i64 {
        match self {
            MessagePriority::Info => 1,
            MessagePriority::UserAlert => 2,
            MessagePriority::InternalError => 3,
            // BOINC keeps 4 inside the client and hands its GUI clients a user alert.
            MessagePriority::SchedulerAlert => 2,
        }
    }

    /// The priority BOINC gives a scheduler reply's message: `notice` is shown as a
    /// notice too; every other priority (`low`, `high`, anything else) is an event log
    /// line.
    pub fn of_server_message(priority: &crate::protocol::MessagePriority) -> Self {
        match priority {
            crate::protocol::MessagePriority::Notice => MessagePriority::SchedulerAlert,
            _ => MessagePriority::Info,
        }
    }

    /// Whether a message of this priority is also a notice, and its category there.
    pub fn notice_category(self) -> Option<&'static str> {
        match self {
            MessagePriority::UserAlert => Some("client"),
            MessagePriority::SchedulerAlert => Some("scheduler"),
            MessagePriority::Info | MessagePriority::InternalError => None,
        }
    }
}

/// One message of the log.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Sequence number, from 1, increasing.
    pub seqno: u64,
    /// When it happened.
    pub time: Time,
    /// The project it is about (its name); empty for the client itself.
    pub project: String,
    /// How much it matters.
    pub priority: MessagePriority,
    /// The text.
    pub body: String,
}

/// The newest messages, up to a capacity.
#[derive(Debug, Clone)]
pub struct MessageLog {
    messages: VecDeque<Message>,
    capacity: usize,
    last_seqno: u64,
}

impl Default for MessageLog {
    fn default() -> Self {
        MessageLog::with_capacity(DEFAULT_MESSAGE_CAPACITY)
    }
}

/// `text` cut to at most `max` bytes at a character boundary.
fn bounded(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}

impl MessageLog {
    /// An empty log keeping the newest `capacity` messages (at least one).
    pub fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        MessageLog { messages: VecDeque::with_capacity(capacity.min(256)), capacity, last_seqno: 0 }
    }

    /// How many messages the log keeps at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Adds a message; returns its sequence number. The oldest message goes when the
    /// log is full.
    pub fn push(
        &mut self,
        time: Time,
        project: &str,
        priority: MessagePriority,
        body: &str,
    ) -> u64 {
        self.last_seqno += 1;
        if self.messages.len() == self.capacity {
            self.messages.pop_front();
        }
        self.messages.push_back(Message {
            seqno: self.last_seqno,
            time,
            project: bounded(project, MAX_MESSAGE_BYTES).to_string(),
            priority,
            body: bounded(body, MAX_MESSAGE_BYTES).to_string(),
        });
        self.last_seqno
    }

    /// The newest message's sequence number (0: none yet).
    pub fn last_seqno(&self) -> u64 {
        self.last_seqno
    }

    /// The messages kept whose sequence number is above `after`, oldest first.
    pub fn after(&self, after: u64) -> impl Iterator<Item = &Message> {
        // Sequence numbers are consecutive, so the first one wanted is found by index.
        let oldest = self.messages.front().map_or(self.last_seqno + 1, |m| m.seqno);
        let skip = after.saturating_sub(oldest.saturating_sub(1));
        let skip = usize::try_from(skip).unwrap_or(usize::MAX);
        self.messages.iter().skip(skip)
    }

    /// Messages kept now.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether no message is kept.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn numbers_from_one_and_reads_after_a_number() {
        let mut log = MessageLog::with_capacity(10);
        assert_eq!(log.last_seqno(), 0);
        assert_eq!(log.after(0).count(), 0);
        for i in 0..4 {
            log.push(f64::from(i), "", MessagePriority::Info, &format!("m{i}"));
        }
        assert_eq!(log.last_seqno(), 4);
        let bodies: Vec<&str> = log.after(2).map(|m| m.body.as_str()).collect();
        assert_eq!(bodies, ["m2", "m3"]);
        assert_eq!(log.after(4).count(), 0);
        assert_eq!(log.after(99).count(), 0);
    }

    #[test]
    fn bodies_are_cut_at_a_character_boundary() {
        let mut log = MessageLog::with_capacity(2);
        let long = "é".repeat(MAX_MESSAGE_BYTES);
        log.push(0.0, "", MessagePriority::UserAlert, &long);
        let kept = &log.after(0).next().expect("kept").body;
        assert!(kept.len() <= MAX_MESSAGE_BYTES && kept.chars().all(|c| c == 'é'));
    }

    proptest! {
        /// However many messages come, the log keeps the newest `capacity`, in order,
        /// and `after(n)` gives exactly those above n.
        #[test]
        fn keeps_the_newest_in_order(capacity in 1usize..20, pushed in 0u64..60, after in 0u64..70) {
            let mut log = MessageLog::with_capacity(capacity);
            for i in 0..pushed {
                log.push(i as f64, "p", MessagePriority::Info, "x");
            }
            prop_assert!(log.len() <= capacity);
            let kept: Vec<u64> = log.after(0).map(|m| m.seqno).collect();
            let first = pushed.saturating_sub(capacity as u64) + 1;
            prop_assert_eq!(kept, (first..=pushed).collect::<Vec<_>>());
            let wanted: Vec<u64> = log.after(after).map(|m| m.seqno).collect();
            prop_assert_eq!(wanted, (first.max(after + 1)..=pushed).collect::<Vec<_>>());
        }
    }
}
