//! The event log behind GUI RPC's `get_messages` (docs/design.md "Protocol facts", GUI
//! RPC): the client's events, in words, kept in the core's bounded
//! [`MessageLog`]; the host program can add its own lines through a [`MessageSink`].

use boinc_core::Time;
use boinc_core::control::{MessageLog, MessagePriority};
use boinc_runtime::runtime::events::ClientEvent;
use std::sync::{Arc, Mutex, MutexGuard};

/// The shared event log: the server reads it, the event feed and the host write it.
#[derive(Debug, Clone, Default)]
pub struct MessageSink(Arc<Mutex<MessageLog>>);

impl MessageSink {
    /// A log keeping the newest `capacity` messages.
    pub fn with_capacity(capacity: usize) -> Self {
        MessageSink(Arc::new(Mutex::new(MessageLog::with_capacity(capacity))))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, MessageLog> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds a message (`project` empty for the client itself); returns its number.
    pub fn push(&self, time: Time, project: &str, priority: MessagePriority, body: &str) -> u64 {
        self.lock().push(time, project, priority, body)
    }
}

/// A duration as BOINC's messages write it: `00:01:47`.
fn hours_minutes_seconds(seconds: f64) -> String {
    let total = if seconds.is_finite() { seconds.max(0.0).round() as u64 } else { 0 };
    format!("{:02}:{:02}:{:02}", total / 3600, total % 3600 / 60, total % 60)
}

/// An event as a message: (when, project, priority, text); `None` for an event the log
/// leaves out (a transfer's progress).
pub(crate) fn message_for(event: &ClientEvent) -> Option<(Time, String, MessagePriority, String)> {
    use MessagePriority::{Info, InternalError, UserAlert};
    let direction = |upload: bool| if upload { "upload" } else { "download" };
    Some(match event {
        ClientEvent::TaskStarted { time, project, job } => {
            (*time, project.clone(), Info, format!("Starting task {job}"))
        }
        ClientEvent::TaskPreempted { time, project, job, removed_from_memory } => {
            let how = if *removed_from_memory { "removed from memory" } else { "left in memory" };
            (*time, project.clone(), Info, format!("Suspending task {job} ({how})"))
        }
        ClientEvent::TaskRestarting { time, job, restart_at } => (
            *time,
            String::new(),
            Info,
            format!(
                "Task {job} exited; restarting it from its checkpoint in {}",
                hours_minutes_seconds(restart_at - time)
            ),
        ),
        ClientEvent::TaskFinished { time, project, job, error } => {
            let body = if *error {
                format!("Computation for task {job} ended in an error")
            } else {
                format!("Computation for task {job} finished")
            };
            (*time, project.clone(), Info, body)
        }
        ClientEvent::WorkRequested { time, project, req_seconds } => {
            let asked: Vec<String> = req_seconds
                .iter()
                .map(|(resource, seconds)| format!("{resource} {seconds:.0} seconds"))
                .collect();
            let body =
                format!("Sending scheduler request: requesting new tasks ({})", asked.join(", "));
            (*time, project.clone(), Info, body)
        }
        ClientEvent::RpcDone { time, project, success: true, jobs } => (
            *time,
            project.clone(),
            Info,
            format!("Scheduler request completed: got {jobs} new tasks"),
        ),
        ClientEvent::RpcDone { time, project, success: false, .. } => {
            (*time, project.clone(), Info, "Scheduler request failed".to_string())
        }
        ClientEvent::BackoffSet { time, project, resource: None, until } => (
            *time,
            project.clone(),
            Info,
            format!("Deferring communication for {}", hours_minutes_seconds(until - time)),
        ),
        ClientEvent::BackoffSet { time, project, resource: Some(resource), until } => (
            *time,
            project.clone(),
            Info,
            format!("Not asking for {resource} work for {}", hours_minutes_seconds(until - time)),
        ),
        ClientEvent::DiskAction { time, action } => (*time, String::new(), Info, action.clone()),
        ClientEvent::ActorRestarted { time, actor, failures, restart_at } => (
            *time,
            String::new(),
            InternalError,
            format!(
                "{actor} failed ({failures} in a row); rebuilding it in {}",
                hours_minutes_seconds(restart_at - time)
            ),
        ),
        ClientEvent::ActorGaveUp { time, actor } => (
            *time,
            String::new(),
            UserAlert,
            format!("{actor} kept failing and was given up on; see the log for why"),
        ),
        ClientEvent::TransferStarted { time, project, file, upload, .. } => {
            (*time, project.clone(), Info, format!("Started {} of {file}", direction(*upload)))
        }
        ClientEvent::TransferProgress { .. } => return None,
        ClientEvent::TransferEnded { time, project, file, upload, success: true, .. } => {
            (*time, project.clone(), Info, format!("Finished {} of {file}", direction(*upload)))
        }
        ClientEvent::TransferEnded { time, project, file, upload, success: false, message } => (
            *time,
            project.clone(),
            Info,
            format!("Temporarily failed {} of {file}: {message}", direction(*upload)),
        ),
        ClientEvent::TransferNotice { time, project, text, error } => {
            (*time, project.clone(), if *error { UserAlert } else { Info }, text.clone())
        }
    })
}

/// Writes every event of `events` into `sink` until the client's event stream ends.
pub(crate) async fn feed(mut events: tokio::sync::mpsc::Receiver<ClientEvent>, sink: MessageSink) {
    while let Some(event) = events.recv().await {
        if let Some((time, project, priority, body)) = message_for(&event) {
            sink.push(time, &project, priority, &body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use boinc_core::model::ResourceType;

    #[test]
    fn events_in_words() {
        let words = |event: ClientEvent| message_for(&event).expect("a message");
        let (_, project, priority, body) = words(ClientEvent::TaskStarted {
            time: 5.0,
            project: "alpha".into(),
            job: "wu_1_0".into(),
        });
        assert_eq!(
            (project.as_str(), priority, body.as_str()),
            ("alpha", MessagePriority::Info, "Starting task wu_1_0")
        );
        let (_, _, _, body) = words(ClientEvent::BackoffSet {
            time: 100.0,
            project: "alpha".into(),
            resource: None,
            until: 207.0,
        });
        assert_eq!(body, "Deferring communication for 00:01:47");
        let (_, _, _, body) = words(ClientEvent::WorkRequested {
            time: 0.0,
            project: "alpha".into(),
            req_seconds: vec![(ResourceType::Cpu, 8640.0)],
        });
        assert!(body.contains("cpu 8640 seconds"), "{body}");
        let (_, _, priority, _) =
            words(ClientEvent::ActorGaveUp { time: 0.0, actor: "project 1".into() });
        assert_eq!(priority, MessagePriority::UserAlert);
        let (_, _, _, body) = words(ClientEvent::TransferEnded {
            time: 0.0,
            project: "alpha".into(),
            file: "in_1".into(),
            upload: false,
            success: true,
            message: String::new(),
        });
        assert_eq!(body, "Finished download of in_1");
        let (_, _, priority, body) = words(ClientEvent::TransferNotice {
            time: 0.0,
            project: "alpha".into(),
            text: "App version upper 101 rejected".into(),
            error: true,
        });
        assert_eq!(
            (priority, body.as_str()),
            (MessagePriority::UserAlert, "App version upper 101 rejected")
        );
        assert!(
            message_for(&ClientEvent::TransferProgress {
                time: 0.0,
                project: "alpha".into(),
                file: "in_1".into(),
                upload: false,
                bytes: 10,
                total: None,
                rate: 1.0,
            })
            .is_none(),
            "progress stays out of the event log"
        );
    }
}
