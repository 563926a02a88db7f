//! The heartbeat channel's message (docs/design.md "Protocol facts", App API; the fixture
//! slot's channel 4): `<heartbeat/>` once a second from the client, with the task's
//! working set and the most it may use. An app that finds no heartbeat for a while, and
//! cannot see the client's process, exits; the client takes a heartbeat left unread for
//! long as a sign the app is hung.

use super::error::AppMessageError;
use super::fragment::{number, parse_fragment};
use crate::protocol::XmlProblem;

/// What the client tells an app with each heartbeat.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Heartbeat {
    /// The task's working set size, bytes.
    pub working_set_size: f64,
    /// The most memory the task may use, bytes.
    pub max_working_set_size: f64,
    /// The client suspended network activity.
    pub network_suspended: bool,
}

impl Heartbeat {
    /// The message text.
    pub fn to_message(&self) -> String {
        let mut text = format!(
            "<heartbeat/><wss>{}</wss><max_wss>{}</max_wss>",
            number(self.working_set_size),
            number(self.max_working_set_size)
        );
        if self.network_suspended {
            text.push_str("<network_suspended/>");
        }
        text
    }

    /// Reads a heartbeat message; one without `<heartbeat/>` is not a heartbeat.
    pub fn parse(text: &str) -> Result<Heartbeat, AppMessageError> {
        let message = parse_fragment(text)?;
        if message.child("heartbeat").is_none() {
            return Err(message.error(XmlProblem::Missing("heartbeat")).into());
        }
        let mut heartbeat = Heartbeat::default();
        for child in &message.children {
            match child.name.as_str() {
                "wss" => heartbeat.working_set_size = child.non_negative_f64()?,
                "max_wss" => heartbeat.max_working_set_size = child.non_negative_f64()?,
                "network_suspended" => heartbeat.network_suspended = child.flag()?,
                _ => {}
            }
        }
        Ok(heartbeat)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_real_clients_heartbeat() {
        let heartbeat =
            Heartbeat::parse("<heartbeat/><wss>4.030464e+06</wss><max_wss>2.274886e+10</max_wss>")
                .unwrap();
        assert_eq!(heartbeat.working_set_size, 4.030464e6);
        assert_eq!(heartbeat.max_working_set_size, 2.274886e10);
        assert!(!heartbeat.network_suspended);
    }

    #[test]
    fn round_trips() {
        let heartbeat = Heartbeat {
            working_set_size: 1.5e6,
            max_working_set_size: 8e9,
            network_suspended: true,
        };
        assert_eq!(Heartbeat::parse(&heartbeat.to_message()), Ok(heartbeat));
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(Heartbeat::parse("<wss>1</wss>").is_err());
        assert!(Heartbeat::parse("<heartbeat/><wss>-1</wss>").is_err());
        assert!(Heartbeat::parse("<heartbeat/><wss>nan</wss>").is_err());
        assert!(Heartbeat::parse("<heartbeat/></x>").is_err());
    }
}
