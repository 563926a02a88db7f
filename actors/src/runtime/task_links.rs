//! The scheduler's task actors by slot (docs/design.md "Actors": one actor per running
//! task). Every step looks each running task's actor up to poll it, dozens per step
//! on a big host: slots are small numbers handed out from 0, so they index a vector;
//! a slot beyond it (a state file from another client may number its slots as it
//! likes) goes to an ordered map instead, so that no slot number makes the vector huge.

use super::poll_bell::PollBell;
use super::task::TaskActor;
use actix::Addr;
use std::collections::BTreeMap;

/// Slots below this are kept in the vector.
const DENSE_SLOTS: u32 = 1024;

/// A task actor as its scheduler holds it: its address (for commands) and the bell it
/// is polled through.
pub(crate) struct TaskLink {
    pub(crate) actor: Addr<TaskActor>,
    pub(crate) bell: PollBell,
}

/// Task actors by slot.
#[derive(Default)]
pub(crate) struct TaskLinks {
    dense: Vec<Option<TaskLink>>,
    sparse: BTreeMap<u32, TaskLink>,
}

impl TaskLinks {
    /// The actor of the task in `slot`.
    pub(crate) fn get(&self, slot: u32) -> Option<&TaskLink> {
        match slot < DENSE_SLOTS {
            true => self.dense.get(slot as usize).and_then(Option::as_ref),
            false => self.sparse.get(&slot),
        }
    }

    /// Keeps `link` as the actor of the task in `slot`.
    pub(crate) fn insert(&mut self, slot: u32, link: TaskLink) {
        if slot >= DENSE_SLOTS {
            self.sparse.insert(slot, link);
            return;
        }
        let index = slot as usize;
        if self.dense.len() <= index {
            self.dense.resize_with(index + 1, || None);
        }
        self.dense[index] = Some(link);
    }

    /// Forgets the actor of the task in `slot` (its bell goes with it).
    pub(crate) fn remove(&mut self, slot: u32) -> Option<TaskLink> {
        match slot < DENSE_SLOTS {
            true => self.dense.get_mut(slot as usize).and_then(Option::take),
            false => self.sparse.remove(&slot),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::effects::{ProcessError, ProcessHost, ProcessReport};
    use crate::journal::Journal;
    use crate::runtime::context::ActorContext;
    use crate::runtime::events::EventBus;
    use crate::runtime::task::TaskSupervision;
    use crate::sim::effects::VirtualClock;
    use boinc_core::control::TaskCommand;
    use boinc_core::supervise::{RestartPolicy, RestartTracker};
    use std::sync::Arc;

    /// A host without processes: the links are only held, never polled.
    struct NoProcesses;

    impl ProcessHost for NoProcesses {
        fn command(&self, _: &TaskCommand) -> Result<(), ProcessError> {
            Ok(())
        }
        fn poll(&self, _: u32) -> Result<ProcessReport, ProcessError> {
            Ok(ProcessReport::Gone)
        }
        fn reap(&self, _: u32) -> Result<(), ProcessError> {
            Ok(())
        }
        fn kill(&self, _: u32) -> Result<(), ProcessError> {
            Ok(())
        }
    }

    fn link(slot: u32) -> TaskLink {
        let context = ActorContext {
            clock: Arc::new(VirtualClock::new(0.0)),
            journal: Journal::off(),
            events: EventBus::default(),
            faults: Default::default(),
        };
        let actor = TaskActor::new(
            slot,
            "job",
            context,
            Arc::new(NoProcesses),
            TaskSupervision { policy: RestartPolicy::APP, seed: 1 },
            None,
            RestartTracker::new(),
            None,
        );
        let (actor, bell) = actor.start_with_bell();
        TaskLink { actor, bell }
    }

    #[actix::test]
    async fn small_and_huge_slots_are_kept_apart_without_a_huge_vector() {
        let mut links = TaskLinks::default();
        links.insert(3, link(3));
        links.insert(u32::MAX, link(u32::MAX));
        assert!(links.get(3).is_some());
        assert!(links.get(u32::MAX).is_some());
        assert!(links.get(2).is_none());
        assert!(links.get(4_000_000).is_none());
        assert_eq!(links.dense.len(), 4);
        assert!(links.remove(3).is_some());
        assert!(links.remove(3).is_none());
        assert!(links.remove(u32::MAX).is_some());
        assert!(links.get(u32::MAX).is_none());
    }
}
