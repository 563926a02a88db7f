//! A scheduler reply's `<message priority="…">` (docs/design.md "Protocol facts"), and the
//! reasons for sending no work that real servers give only as messages: seed 000's "no
//! work because of deadlines" is BOINC's "Tasks won't finish in time: …", seed 004's
//! disk-space refusal is "… needs N MB more disk space. …". A server written for
//! boinc-rs sends them in the same words ([`ServerMessage::tasks_wont_finish_in_time`],
//! [`ServerMessage::needs_more_disk_space`]), so the client reads one form; so are
//! BOINC's other no-work notes ("No tasks sent", the limit on tasks in progress, ...).

use super::xml_tree::Element;
use super::xml_write::XmlWriter;
use serde::{Deserialize, Serialize};

/// How prominently the client shows a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum MessagePriority {
    /// `low`: a note in the event log.
    Low,
    /// `high`: an error (older servers' notices too).
    High,
    /// `notice`: shown to the user as a notice.
    Notice,
    /// Any other priority, as written.
    Other(String),
}

impl MessagePriority {
    fn from_attribute(value: &str) -> MessagePriority {
        match value {
            "low" => MessagePriority::Low,
            "high" => MessagePriority::High,
            "notice" => MessagePriority::Notice,
            other => MessagePriority::Other(other.to_owned()),
        }
    }

    fn attribute(&self) -> &str {
        match self {
            MessagePriority::Low => "low",
            MessagePriority::High => "high",
            MessagePriority::Notice => "notice",
            MessagePriority::Other(other) => other,
        }
    }
}

/// Why a server sent no work, as its messages say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NoWorkReason {
    /// It has work, but the jobs would not meet their deadlines on this host (seed 000
    /// "no work because of deadlines").
    DeadlinesNotMet,
    /// It has work, but the jobs' files would not fit the disk space the request
    /// offered (seed 004).
    DiskSpace,
}

/// The start of BOINC's message for jobs that would miss their deadlines.
const DEADLINES_PREFIX: &str = "Tasks won't finish in time";
/// The part of BOINC's message for jobs whose files would not fit.
const DISK_SPACE_PHRASE: &str = "more disk space";

/// One message from the project to the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerMessage {
    /// How prominently to show it.
    pub priority: MessagePriority,
    /// The text.
    pub text: String,
}

impl ServerMessage {
    /// A message of low priority.
    pub fn low(text: impl Into<String>) -> ServerMessage {
        ServerMessage { priority: MessagePriority::Low, text: text.into() }
    }

    /// BOINC's message for jobs that would not finish in time, with the host's
    /// on-fraction and active-fraction (0 to 1).
    pub fn tasks_wont_finish_in_time(on_frac: f64, active_frac: f64) -> ServerMessage {
        ServerMessage::low(format!(
            "{DEADLINES_PREFIX}: BOINC runs {:.1}% of the time; computation is enabled {:.1}% \
             of that",
            100.0 * on_frac,
            100.0 * active_frac
        ))
    }

    /// BOINC's message for a job of `app` whose files need `needed` bytes where only
    /// `available` are offered.
    pub fn needs_more_disk_space(app: &str, available: f64, needed: f64) -> ServerMessage {
        const MB: f64 = 1e6;
        ServerMessage {
            priority: MessagePriority::High,
            text: format!(
                "{app} needs {:.2}MB {DISK_SPACE_PHRASE}.  You currently have {:.2} MB available \
                 and it needs {:.2} MB.",
                (needed - available) / MB,
                available / MB,
                needed / MB
            ),
        }
    }

    /// BOINC's note that a reply carries no job although the client asked for work.
    pub fn no_tasks_sent() -> ServerMessage {
        ServerMessage::low("No tasks sent")
    }

    /// BOINC's note that an app has no job to send.
    pub fn no_tasks_available_for(app: &str) -> ServerMessage {
        ServerMessage::low(format!("No tasks are available for {app}"))
    }

    /// BOINC's note that the host holds as many jobs as the project lets one host hold.
    pub fn tasks_in_progress_limit() -> ServerMessage {
        ServerMessage::low("This computer has reached a limit on tasks in progress")
    }

    /// BOINC's notice that the project has no app version for the host's platforms.
    pub fn computer_type_not_supported() -> ServerMessage {
        ServerMessage {
            priority: MessagePriority::Notice,
            text: "Your computer type is not supported by this project".to_owned(),
        }
    }

    /// The reason for no work this message gives, if it gives one.
    pub fn no_work_reason(&self) -> Option<NoWorkReason> {
        if self.text.starts_with(DEADLINES_PREFIX) {
            Some(NoWorkReason::DeadlinesNotMet)
        } else if self.text.contains(DISK_SPACE_PHRASE) {
            Some(NoWorkReason::DiskSpace)
        } else {
            None
        }
    }

    /// Reads a `<message>`; a message without a priority is a low one.
    pub(crate) fn parse(element: &Element) -> ServerMessage {
        ServerMessage {
            priority: element
                .attribute("priority")
                .map_or(MessagePriority::Low, MessagePriority::from_attribute),
            text: element.string(),
        }
    }

    /// Writes the `<message>`.
    pub(crate) fn write(&self, writer: &mut XmlWriter) {
        writer.text_with_attribute("message", ("priority", self.priority.attribute()), &self.text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_read_from_boinc_wording() {
        let deadlines = ServerMessage::tasks_wont_finish_in_time(0.5, 1.0);
        assert_eq!(
            deadlines.text,
            "Tasks won't finish in time: BOINC runs 50.0% of the time; computation is enabled \
             100.0% of that"
        );
        assert_eq!(deadlines.no_work_reason(), Some(NoWorkReason::DeadlinesNotMet));
        let disk = ServerMessage::needs_more_disk_space("upper", 1e6, 3.5e6);
        assert_eq!(
            disk.text,
            "upper needs 2.50MB more disk space.  You currently have 1.00 MB available and it \
             needs 3.50 MB."
        );
        assert_eq!(disk.no_work_reason(), Some(NoWorkReason::DiskSpace));
        assert_eq!(ServerMessage::low("No tasks sent").no_work_reason(), None);
    }
}
