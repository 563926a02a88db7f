//! The event log behind GUI RPC's `get_messages` and `get_notices` (docs/design.md
//! "Protocol facts", GUI RPC): the client's events, in words, kept in the core's bounded
//! [`MessageLog`] (and in `stdoutdae.txt` when the host asks), alerts and the projects'
//! news in its [`NoticeLog`]; the host program adds its own lines and notices through a
//! [`MessageSink`].

use super::event_log_file::EventLogFile;
use boinc_core::Time;
use boinc_core::control::{MessageLog, MessagePriority, NoticeLog, SuspendReason};
use boinc_core::protocol::Notice;
use boinc_runtime::runtime::events::{ClientEvent, SuspendedActivity};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

/// The event log and the notices, as the server shows them, and the event log file.
#[derive(Debug, Default)]
pub(crate) struct EventLog {
    /// The messages (`get_messages`).
    pub(crate) messages: MessageLog,
    /// The notices (`get_notices`).
    pub(crate) notices: NoticeLog,
    file: Option<EventLogFile>,
}

/// The shared event log: the server reads it, the event feed and the host write it.
#[derive(Debug, Clone, Default)]
pub struct MessageSink(Arc<Mutex<EventLog>>);

impl MessageSink {
    /// A log keeping the newest `capacity` messages.
    pub fn with_capacity(capacity: usize) -> Self {
        let log = EventLog { messages: MessageLog::with_capacity(capacity), ..EventLog::default() };
        MessageSink(Arc::new(Mutex::new(log)))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, EventLog> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Writes every message from now on to `stdoutdae.txt` in `dir` as well, rotated
    /// at `max_bytes`.
    pub fn write_to_file(&self, dir: &Path, max_bytes: u64) {
        self.lock().file = Some(EventLogFile::new(dir, max_bytes));
    }

    /// Adds a message (`project` empty for the client itself); returns its number. A
    /// message that asks the user to act (an alert of the client's or of a project's
    /// scheduler) becomes a notice too, as in BOINC.
    pub fn push(&self, time: Time, project: &str, priority: MessagePriority, body: &str) -> u64 {
        let mut log = self.lock();
        // BOINC's words for a scheduler's alert in the event log; the notice is the
        // project's text alone.
        let line = match priority {
            MessagePriority::SchedulerAlert => format!("Message from server: {body}"),
            _ => body.to_owned(),
        };
        let seqno = log.messages.push(time, project, priority, &line);
        if let Some(category) = priority.notice_category() {
            log.notices.push(Notice {
                description: body.to_owned(),
                create_time: time,
                arrival_time: time,
                project_name: project.to_owned(),
                category: category.to_owned(),
                ..Notice::default()
            });
        }
        if let Some(file) = &mut log.file {
            file.write(time, project, &line);
        }
        seqno
    }

    /// Adds a notice (a project's news item); returns its number, or `None` when the
    /// list holds it already.
    pub fn push_notice(&self, notice: Notice) -> Option<u64> {
        self.lock().notices.push(notice)
    }

    /// The notices a feed brought that the list still holds, oldest first.
    pub fn notices_of_feed(&self, feed_url: &str) -> Vec<Notice> {
        self.lock().notices.of_feed(feed_url).cloned().collect()
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
        ClientEvent::DiskAction { time, action, alert } => {
            (*time, String::new(), if *alert { UserAlert } else { Info }, action.clone())
        }
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
        ClientEvent::ProjectNotice { time, project, text } => {
            (*time, project.clone(), UserAlert, text.clone())
        }
        ClientEvent::ProjectMessage { time, project, priority, text } => {
            (*time, project.clone(), MessagePriority::of_server_message(priority), text.clone())
        }
        ClientEvent::Suspension { time, activity, reason: Some(reason) } => {
            // The user's own use of the computer stopping the work is what a volunteer
            // wonders about ("why does nothing run?"): a notice, once, as well.
            let priority = if *reason == SuspendReason::UserActive
                && *activity != SuspendedActivity::Network
            {
                UserAlert
            } else {
                Info
            };
            let body = format!("Suspending {} - {}", activity.words(), reason.words());
            (*time, String::new(), priority, body)
        }
        ClientEvent::Suspension { time, activity, reason: None } => {
            (*time, String::new(), Info, format!("Resuming {}", activity.words()))
        }
        ClientEvent::ProjectFeeds { .. } | ClientEvent::WebPreferences { .. } => return None,
    })
}

/// Writes every event of `events` into `sink` until the client's event stream ends.
pub(crate) async fn feed(mut events: tokio::sync::mpsc::Receiver<ClientEvent>, sink: MessageSink) {
    while let Some(event) = events.recv().await {
        if let ClientEvent::RpcDone { project, success: true, .. } = &event {
            // The reply's own messages follow this event: what the scheduler said
            // before is replaced by what it says now.
            sink.lock().notices.remove_scheduler_notices(project);
        }
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
        // A disk that stops computing is a client notice; files deleted are a note.
        for (alert, priority) in
            [(true, MessagePriority::UserAlert), (false, MessagePriority::Info)]
        {
            let (_, _, got, _) =
                words(ClientEvent::DiskAction { time: 1.0, action: "disk full".into(), alert });
            assert_eq!(got, priority);
        }
        assert_eq!(MessagePriority::UserAlert.notice_category(), Some("client"));
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

    /// A project's scheduler alert lasts until its next reply, which says anew what
    /// holds; another project's alert and the project's news stay.
    #[tokio::test]
    async fn a_reply_replaces_its_projects_earlier_alerts() {
        let (sender, receiver) = tokio::sync::mpsc::channel(16);
        let sink = MessageSink::with_capacity(100);
        let feeding = tokio::spawn(feed(receiver, sink.clone()));
        let alert = |project: &str, text: &str| ClientEvent::ProjectMessage {
            time: 1.0,
            project: project.into(),
            priority: boinc_core::protocol::MessagePriority::Notice,
            text: text.into(),
        };
        let done = |project: &str| ClientEvent::RpcDone {
            time: 2.0,
            project: project.into(),
            success: true,
            jobs: 0,
        };
        for event in [
            alert("alpha", "no work for your GPU"),
            alert("beta", "old app"),
            done("alpha"),
            alert("alpha", "disk full on the server"),
        ] {
            sender.send(event).await.expect("sent");
        }
        drop(sender);
        feeding.await.expect("fed");
        let log = sink.lock();
        let notices: Vec<(&str, &str)> = log
            .notices
            .after(0, false)
            .map(|n| (n.project_name.as_str(), n.description.as_str()))
            .collect();
        assert_eq!(notices, [("beta", "old app"), ("alpha", "disk full on the server")]);
    }

    /// Suspensions and resumptions are in the event log in BOINC's words; the computer
    /// being in use is a client notice too, once however often the user comes back.
    #[tokio::test]
    async fn a_computer_in_use_is_a_notice_and_every_suspension_a_message() {
        let (sender, receiver) = tokio::sync::mpsc::channel(16);
        let sink = MessageSink::with_capacity(100);
        let feeding = tokio::spawn(feed(receiver, sink.clone()));
        let suspension =
            |time, activity, reason| ClientEvent::Suspension { time, activity, reason };
        for event in [
            suspension(1.0, SuspendedActivity::GpuComputation, Some(SuspendReason::UserActive)),
            suspension(2.0, SuspendedActivity::GpuComputation, None),
            suspension(3.0, SuspendedActivity::GpuComputation, Some(SuspendReason::UserActive)),
            suspension(4.0, SuspendedActivity::Network, Some(SuspendReason::TimeOfDay)),
            suspension(5.0, SuspendedActivity::Computation, Some(SuspendReason::Batteries)),
        ] {
            sender.send(event).await.expect("sent");
        }
        drop(sender);
        feeding.await.expect("fed");
        let log = sink.lock();
        let lines: Vec<&str> = log.messages.after(0).map(|m| m.body.as_str()).collect();
        assert_eq!(
            lines,
            [
                "Suspending GPU computation - computer is in use",
                "Resuming GPU computation",
                "Suspending GPU computation - computer is in use",
                "Suspending network activity - time of day",
                "Suspending computation - on batteries",
            ]
        );
        let notices: Vec<&str> =
            log.notices.after(0, false).map(|n| n.description.as_str()).collect();
        assert_eq!(notices, ["Suspending GPU computation - computer is in use"]);
    }

    /// A client notice about a project (a GPU it has no app for) is a notice of the
    /// client's category, under the project's name, and the project's next reply
    /// leaves it.
    #[tokio::test]
    async fn a_project_notice_of_the_clients_stays_past_the_next_reply() {
        let (sender, receiver) = tokio::sync::mpsc::channel(16);
        let sink = MessageSink::with_capacity(100);
        let feeding = tokio::spawn(feed(receiver, sink.clone()));
        let text = "This project has no applications for your NVIDIA GPU";
        for event in [
            ClientEvent::ProjectNotice { time: 1.0, project: "alpha".into(), text: text.into() },
            ClientEvent::RpcDone { time: 2.0, project: "alpha".into(), success: true, jobs: 0 },
        ] {
            sender.send(event).await.expect("sent");
        }
        drop(sender);
        feeding.await.expect("fed");
        let log = sink.lock();
        let notices: Vec<(&str, &str, &str)> = log
            .notices
            .after(0, false)
            .map(|n| (n.project_name.as_str(), n.category.as_str(), n.description.as_str()))
            .collect();
        assert_eq!(notices, [("alpha", "client", text)]);
    }
}
