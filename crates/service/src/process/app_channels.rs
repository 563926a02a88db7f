//! The client's conversation with an app that uses BOINC's API (docs/design.md "Protocol
//! facts", App API): a heartbeat whenever the app has read the previous one, its status
//! reports read as they come, and process-control requests queued until the app's
//! channel is free, as BOINC's client queues them. A message of the client's left unread
//! for too long means the app is hung.

use super::shared_memory::{ChannelFile, ChannelFileError, Snapshot};
use boinc_core::protocol::app_api::{AppStatusMessage, Channel, Heartbeat, ProcessControl};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Damaged messages are logged when their count reaches a power of two: the first few,
/// then ever more rarely, so an app writing garbage cannot flood the log.
fn worth_logging(count: u64) -> bool {
    count.is_power_of_two()
}

/// One app's channels and what the client has sent and heard.
#[derive(Debug)]
pub(crate) struct AppChannels {
    file: ChannelFile,
    /// Requests not yet put into the app's channel, oldest first.
    queue: VecDeque<ProcessControl>,
    /// Since when a heartbeat has been waiting for the app to read it.
    heartbeat_unread_since: Option<Instant>,
    /// Since when a request has been waiting (unread, or queued behind an unread one).
    control_unread_since: Option<Instant>,
    /// The app's latest status report.
    reported: Option<AppStatusMessage>,
    /// Messages that could not be read, and the times the file could not be read.
    damaged: u64,
}

impl AppChannels {
    /// The channels of an app about to start (the file was just created empty).
    pub(crate) fn new(file: ChannelFile) -> Self {
        AppChannels {
            file,
            queue: VecDeque::new(),
            heartbeat_unread_since: None,
            control_unread_since: None,
            reported: None,
            damaged: 0,
        }
    }

    /// The app's latest status report.
    pub(crate) fn reported(&self) -> Option<&AppStatusMessage> {
        self.reported.as_ref()
    }

    /// Asks the app for something; a pending opposite request that has not reached the
    /// app yet is withdrawn instead (a suspend and a resume cancel out), and a quit or
    /// abort replaces pending suspends and resumes. Tries to deliver at once.
    pub(crate) fn request(&mut self, request: ProcessControl, now: Instant, slot: u32) {
        let opposite = match request {
            ProcessControl::Suspend => Some(ProcessControl::Resume),
            ProcessControl::Resume => Some(ProcessControl::Suspend),
            _ => None,
        };
        if let Some(opposite) = opposite
            && let Some(at) = self.queue.iter().position(|&r| r == opposite)
        {
            self.queue.remove(at);
        } else {
            if matches!(request, ProcessControl::Quit | ProcessControl::Abort) {
                self.queue
                    .retain(|r| !matches!(r, ProcessControl::Suspend | ProcessControl::Resume));
            }
            self.queue.push_back(request);
        }
        if let Ok(snapshot) = self.file.snapshot() {
            self.deliver(&snapshot, now, slot);
        }
    }

    /// Puts the oldest queued request into the app's channel if the app has read the
    /// previous one, and keeps the time the client's request has been waiting.
    fn deliver(&mut self, snapshot: &Snapshot, now: Instant, slot: u32) {
        if snapshot.has_message(Channel::ProcessControlRequest) {
            self.control_unread_since.get_or_insert(now);
            return;
        }
        let Some(&next) = self.queue.front() else {
            self.control_unread_since = None;
            return;
        };
        match self.file.put(snapshot, Channel::ProcessControlRequest, next.to_message()) {
            Ok(true) => {
                self.queue.pop_front();
                self.control_unread_since = Some(now);
            }
            Ok(false) => {
                self.control_unread_since.get_or_insert(now);
            }
            Err(error) => self.damage(slot, &error),
        }
    }

    fn damage(&mut self, slot: u32, error: &ChannelFileError) {
        self.damaged += 1;
        if worth_logging(self.damaged) {
            tracing::warn!(slot, %error, damaged = self.damaged, "the app's shared memory is damaged");
        }
    }

    /// One poll's exchange: read the app's status, send a heartbeat if the last one was
    /// read, deliver a queued request. Returns how long the oldest unread message of the
    /// client's has waited.
    pub(crate) fn exchange(&mut self, heartbeat: &Heartbeat, now: Instant, slot: u32) -> Duration {
        let snapshot = match self.file.snapshot() {
            Ok(snapshot) => snapshot,
            Err(error) => {
                self.damage(slot, &error);
                // Nothing reaches the app any more: its messages count as unread.
                let since = *self.heartbeat_unread_since.get_or_insert(now);
                return now.saturating_duration_since(since);
            }
        };
        match self.file.take(&snapshot, Channel::AppStatus) {
            Ok(Some(text)) => match AppStatusMessage::parse(&text) {
                Ok(status) => self.reported = Some(status),
                Err(error) => self.damage(slot, &ChannelFileError::Damaged(error)),
            },
            Ok(None) => {}
            Err(error) => self.damage(slot, &error),
        }
        if snapshot.has_message(Channel::Heartbeat) {
            self.heartbeat_unread_since.get_or_insert(now);
        } else {
            self.heartbeat_unread_since = None;
            if let Err(error) =
                self.file.put(&snapshot, Channel::Heartbeat, &heartbeat.to_message())
            {
                self.damage(slot, &error);
            }
        }
        self.deliver(&snapshot, now, slot);
        [self.heartbeat_unread_since, self.control_unread_since]
            .into_iter()
            .flatten()
            .map(|since| now.saturating_duration_since(since))
            .max()
            .unwrap_or_default()
    }

    /// Reads the app's last status report after it exited.
    pub(crate) fn final_report(&mut self, slot: u32) {
        if let Ok(snapshot) = self.file.snapshot() {
            match self.file.take(&snapshot, Channel::AppStatus) {
                Ok(Some(text)) => {
                    if let Ok(status) = AppStatusMessage::parse(&text) {
                        self.reported = Some(status);
                    }
                }
                Ok(None) => {}
                Err(error) => self.damage(slot, &error),
            }
        }
    }
}
