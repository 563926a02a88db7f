//! The open connections of a GUI RPC server and the rule that keeps them bounded: a new
//! connection over the limit makes room by closing one that never completed a request
//! (the oldest first), or else the one idle longest; only when every connection is in
//! the middle of a request is the new one refused. A flood of silent connections thus
//! pushes out only its own kind, and a tool that polls (boinctui) keeps its place.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Notify;

#[derive(Debug)]
struct Entry {
    opened: Instant,
    last_active: Instant,
    /// A request was answered on it.
    served: bool,
    /// A request is being carried out.
    busy: bool,
    /// Told when the connection must close to make room.
    evict: Arc<Notify>,
}

/// The open connections.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    next_id: u64,
    entries: HashMap<u64, Entry>,
}

impl Registry {
    /// Connections open now.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Admits a new connection under `limit`, closing another to make room if need be;
    /// `None` when none can go. Returns the connection's id and what tells it to close.
    pub(crate) fn admit(&mut self, limit: usize, now: Instant) -> Option<(u64, Arc<Notify>)> {
        if self.entries.len() >= limit.max(1) {
            let victim = self
                .entries
                .iter()
                .filter(|(_, e)| !e.busy)
                .min_by_key(|(_, e)| (e.served, if e.served { e.last_active } else { e.opened }))
                .map(|(&id, _)| id)?;
            if let Some(entry) = self.entries.remove(&victim) {
                entry.evict.notify_one();
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        let evict = Arc::new(Notify::new());
        self.entries.insert(
            id,
            Entry {
                opened: now,
                last_active: now,
                served: false,
                busy: false,
                evict: evict.clone(),
            },
        );
        Some((id, evict))
    }

    /// A request started on connection `id`.
    pub(crate) fn started(&mut self, id: u64, now: Instant) {
        if let Some(entry) = self.entries.get_mut(&id) {
            entry.busy = true;
            entry.last_active = now;
        }
    }

    /// A request was answered on connection `id`.
    pub(crate) fn answered(&mut self, id: u64, now: Instant) {
        if let Some(entry) = self.entries.get_mut(&id) {
            entry.busy = false;
            entry.served = true;
            entry.last_active = now;
        }
    }

    /// Connection `id` closed.
    pub(crate) fn remove(&mut self, id: u64) {
        self.entries.remove(&id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn silent_connections_make_room_first() {
        let mut registry = Registry::default();
        let t0 = Instant::now();
        let (tool, _) = registry.admit(3, t0).expect("room");
        registry.started(tool, t0);
        registry.answered(tool, t0);
        let (silent_old, old_evict) = registry.admit(3, t0 + Duration::from_secs(1)).expect("room");
        let (_silent_new, _) = registry.admit(3, t0 + Duration::from_secs(2)).expect("room");
        // Full: the oldest silent connection goes, not the tool that last spoke at t0.
        let (_, _) = registry.admit(3, t0 + Duration::from_secs(3)).expect("room made");
        assert_eq!(registry.len(), 3);
        assert!(!registry.entries.contains_key(&silent_old));
        assert!(registry.entries.contains_key(&tool));
        // The evicted connection's notifier holds a permit for it.
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_time().build().expect("rt");
        runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(1), old_evict.notified()).await.expect("told")
        });
    }

    #[test]
    fn busy_connections_are_never_closed_for_room() {
        let mut registry = Registry::default();
        let now = Instant::now();
        let (a, _) = registry.admit(2, now).expect("room");
        let (b, _) = registry.admit(2, now).expect("room");
        registry.started(a, now);
        registry.started(b, now);
        assert!(registry.admit(2, now).is_none());
        registry.answered(b, now);
        assert!(registry.admit(2, now).is_some());
        assert!(registry.entries.contains_key(&a) && !registry.entries.contains_key(&b));
        registry.remove(a);
        assert_eq!(registry.len(), 1);
    }
}
