//! The app-status channel's message (docs/design.md "Protocol facts", App API; the fixture
//! slot's channel 5): once a second an app using BOINC's API reports its CPU time, the
//! CPU time at its last checkpoint and its fraction done. The client learns of a
//! checkpoint when the reported checkpoint CPU time moves.

use super::error::AppMessageError;
use super::fragment::{number, parse_fragment};

/// What an app reports about itself.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AppStatusMessage {
    /// CPU seconds of the job so far, over every run of the app.
    pub current_cpu_time: f64,
    /// CPU seconds of the job at its last checkpoint.
    pub checkpoint_cpu_time: f64,
    /// Fraction done, 0–1 (`None`: the app has not said).
    pub fraction_done: Option<f64>,
    /// The app wants the network.
    pub want_network: bool,
    /// Another process the app computes through (a wrapper's child).
    pub other_pid: Option<i32>,
    /// Bytes the app sent over the network.
    pub bytes_sent: f64,
    /// Bytes the app received over the network.
    pub bytes_received: f64,
}

impl AppStatusMessage {
    /// The message text, as BOINC's API writes it.
    pub fn to_message(&self) -> String {
        let mut text = format!(
            "<current_cpu_time>{}</current_cpu_time>\n<checkpoint_cpu_time>{}</checkpoint_cpu_time>\n",
            number(self.current_cpu_time),
            number(self.checkpoint_cpu_time)
        );
        if self.want_network {
            text.push_str("<want_network>1</want_network>\n");
        }
        if let Some(fraction_done) = self.fraction_done {
            text.push_str(&format!("<fraction_done>{}</fraction_done>\n", number(fraction_done)));
        }
        if let Some(pid) = self.other_pid {
            text.push_str(&format!("<other_pid>{pid}</other_pid>\n"));
        }
        if self.bytes_sent > 0.0 {
            text.push_str(&format!("<bytes_sent>{:.6}</bytes_sent>\n", self.bytes_sent));
        }
        if self.bytes_received > 0.0 {
            text.push_str(&format!(
                "<bytes_received>{:.6}</bytes_received>\n",
                self.bytes_received
            ));
        }
        text
    }

    /// Reads a status message. Times must be finite and not negative; the fraction done
    /// must lie in 0–1 (an app's rounding just past 1 is clamped).
    pub fn parse(text: &str) -> Result<AppStatusMessage, AppMessageError> {
        let message = parse_fragment(text)?;
        let mut status = AppStatusMessage::default();
        for child in &message.children {
            match child.name.as_str() {
                "current_cpu_time" => status.current_cpu_time = child.non_negative_f64()?,
                "checkpoint_cpu_time" => status.checkpoint_cpu_time = child.non_negative_f64()?,
                "fraction_done" => {
                    let fraction = child.f64_in(0.0, 1.001, "between 0 and 1")?;
                    status.fraction_done = Some(fraction.min(1.0));
                }
                "want_network" => status.want_network = child.flag()?,
                "other_pid" => status.other_pid = Some(child.i32()?),
                "bytes_sent" => status.bytes_sent = child.non_negative_f64()?,
                "bytes_received" => status.bytes_received = child.non_negative_f64()?,
                _ => {}
            }
        }
        Ok(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_the_real_apps_status() {
        let status = AppStatusMessage::parse(
            "<current_cpu_time>3.867000e-03</current_cpu_time>\n<checkpoint_cpu_time>0.000000e+00</checkpoint_cpu_time>\n<fraction_done>1.000000e-01</fraction_done>\n",
        )
        .unwrap();
        assert_eq!(status.current_cpu_time, 3.867e-3);
        assert_eq!(status.checkpoint_cpu_time, 0.0);
        assert_eq!(status.fraction_done, Some(0.1));
        assert!(!status.want_network);
    }

    #[test]
    fn round_trips() {
        let status = AppStatusMessage {
            current_cpu_time: 12.5,
            checkpoint_cpu_time: 10.25,
            fraction_done: Some(0.5),
            want_network: true,
            other_pid: Some(1234),
            bytes_sent: 10.0,
            bytes_received: 20.0,
        };
        assert_eq!(AppStatusMessage::parse(&status.to_message()), Ok(status));
    }

    #[test]
    fn hostile_values_are_errors() {
        for text in [
            "<current_cpu_time>-1</current_cpu_time>",
            "<current_cpu_time>inf</current_cpu_time>",
            "<fraction_done>7</fraction_done>",
            "<checkpoint_cpu_time>x</checkpoint_cpu_time>",
            "<other_pid>99999999999</other_pid>",
            "<current_cpu_time>1",
        ] {
            assert!(AppStatusMessage::parse(text).is_err(), "{text}");
        }
    }

    proptest! {
        #[test]
        fn any_text_parses_or_fails_cleanly(text in "\\PC{0,300}") {
            let _ = AppStatusMessage::parse(&text);
        }

        #[test]
        fn tagged_garbage_parses_or_fails_cleanly(value in "\\PC{0,40}") {
            let _ = AppStatusMessage::parse(&format!("<current_cpu_time>{value}</current_cpu_time><fraction_done>{value}</fraction_done>"));
        }
    }
}
