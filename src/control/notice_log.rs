//! The client's notices (docs/design.md "Protocol facts", GUI RPC `get_notices`): the
//! project news its feeds bring, the schedulers' alerts (a reply's `<message
//! priority="notice">`) and the client's own (an event log message that asks the user to
//! act). Notices are numbered from 1 as they arrive; one the list already holds (the
//! same feed item fetched again, the same alert repeated) is not added again, and the
//! list keeps the newest up to its capacity, each text bounded by the protocol's reader.

use crate::protocol::Notice;
use std::collections::VecDeque;

/// How many notices the list keeps unless told otherwise.
pub const DEFAULT_NOTICE_CAPACITY: usize = 500;

/// The notices, numbered, newest last.
#[derive(Debug, Clone)]
pub struct NoticeLog {
    notices: VecDeque<Notice>,
    capacity: usize,
    last_seqno: u64,
}

impl Default for NoticeLog {
    fn default() -> Self {
        NoticeLog::with_capacity(DEFAULT_NOTICE_CAPACITY)
    }
}

/// Whether two notices are the same one: the same feed item (its guid, or its title and
/// text when the feed gives none), or the same alert of the same project.
fn same(a: &Notice, b: &Notice) -> bool {
    if a.feed_url != b.feed_url || a.project_name != b.project_name {
        return false;
    }
    if !a.guid.is_empty() || !b.guid.is_empty() {
        return a.guid == b.guid;
    }
    a.title == b.title && a.description == b.description
}

impl NoticeLog {
    /// An empty list keeping the newest `capacity` notices (at least one).
    pub fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        NoticeLog { notices: VecDeque::new(), capacity, last_seqno: 0 }
    }

    /// Adds `notice` unless the list holds it already; returns its number when added.
    /// A client or scheduler alert repeated later is shown again only once the earlier
    /// one has left the list.
    pub fn push(&mut self, mut notice: Notice) -> Option<u64> {
        if self.notices.iter().any(|held| same(held, &notice)) {
            return None;
        }
        self.last_seqno += 1;
        notice.seqno = self.last_seqno;
        if self.notices.len() == self.capacity {
            self.notices.pop_front();
        }
        self.notices.push_back(notice);
        Some(self.last_seqno)
    }

    /// The notices numbered above `after`, oldest first; without the private ones for a
    /// client that has not authenticated.
    pub fn after(&self, after: u64, public_only: bool) -> impl Iterator<Item = &Notice> {
        self.notices.iter().filter(move |n| n.seqno > after && !(public_only && n.is_private))
    }

    /// The notices one feed brought, oldest first (what its archive keeps).
    pub fn of_feed<'a>(&'a self, feed_url: &'a str) -> impl Iterator<Item = &'a Notice> + 'a {
        self.notices.iter().filter(move |n| n.feed_url == feed_url)
    }

    /// Forgets a project's scheduler alerts: a new reply from its scheduler says what
    /// is true now, as BOINC drops a project's earlier scheduler notices with each
    /// reply (a "no work for your GPU" that no longer holds must not stay listed).
    pub fn remove_scheduler_notices(&mut self, project_name: &str) {
        self.notices.retain(|n| !(n.project_name == project_name && n.category == "scheduler"));
    }

    /// Forgets a project's notices (it was detached).
    pub fn remove_project(&mut self, project_name: &str) {
        self.notices.retain(|n| n.project_name != project_name);
    }

    /// The newest notice's number (0: none yet).
    pub fn last_seqno(&self) -> u64 {
        self.last_seqno
    }

    /// Notices kept now.
    pub fn len(&self) -> usize {
        self.notices.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.notices.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(guid: &str, title: &str) -> Notice {
        Notice {
            title: title.into(),
            guid: guid.into(),
            feed_url: "http://p/notices.php".into(),
            project_name: "P".into(),
            ..Notice::default()
        }
    }

    #[test]
    fn a_new_reply_clears_only_that_projects_scheduler_alerts() {
        let mut log = NoticeLog::with_capacity(10);
        let alert = |project: &str, text: &str| Notice {
            description: text.into(),
            project_name: project.into(),
            category: "scheduler".into(),
            ..Notice::default()
        };
        log.push(alert("P", "no work for your GPU"));
        log.push(alert("Q", "old app"));
        log.push(item("1", "news of P"));
        log.remove_scheduler_notices("P");
        let left: Vec<&str> =
            log.after(0, false).map(|n| n.description.as_str().max(n.title.as_str())).collect();
        assert_eq!(left, ["old app", "news of P"]);
        // The same alert sent again is shown again.
        assert!(log.push(alert("P", "no work for your GPU")).is_some());
    }

    #[test]
    fn a_feed_item_fetched_again_is_not_new() {
        let mut log = NoticeLog::with_capacity(10);
        assert_eq!(log.push(item("1", "a")), Some(1));
        assert_eq!(log.push(item("1", "a, edited")), None);
        assert_eq!(log.push(item("2", "b")), Some(2));
        assert_eq!(log.push(item("", "c")), Some(3));
        assert_eq!(log.push(item("", "c")), None);
        let titles: Vec<&str> = log.after(1, false).map(|n| n.title.as_str()).collect();
        assert_eq!(titles, ["b", "c"]);
        assert_eq!(log.of_feed("http://p/notices.php").count(), 3);
    }

    #[test]
    fn keeps_the_newest_and_hides_private_ones_from_the_public() {
        let mut log = NoticeLog::with_capacity(2);
        for i in 0..5 {
            log.push(Notice { is_private: i == 4, ..item(&i.to_string(), "t") });
        }
        assert_eq!(log.len(), 2);
        assert_eq!(log.last_seqno(), 5);
        assert_eq!(log.after(0, true).map(|n| n.seqno).collect::<Vec<_>>(), [4]);
        assert_eq!(log.after(0, false).count(), 2);
        log.remove_project("P");
        assert!(log.is_empty());
    }
}
