//! ResourceActor: one per processing resource (the CPU, each GPU type). It owns the
//! resource's instance count, its availability (from host discovery) and which task
//! occupies which instance, and answers each availability change with whether the
//! resource may compute: the scheduler computes with that answer.

use super::context::ActorContext;
use super::messages::{Availability, InstanceChange, InstanceChanges, ResourceAvailable};
use super::supervision::{ActorId, ActorKind};
use actix::{Actor, Context, Handler, MessageResult};
use boinc_core::control::HostView;
use boinc_core::model::ResourceType;
use std::collections::BTreeMap;

/// The actor of one processing resource.
pub struct ResourceActor {
    id: String,
    resource: ResourceType,
    instances: u32,
    context: ActorContext,
    boinc_compat: bool,
    available: bool,
    /// By slot of each task on the resource: instances used, and the GPU instances.
    assignment: BTreeMap<u32, (f64, Vec<u32>)>,
}

impl ResourceActor {
    /// The actor of `resource` with `instances` instances.
    pub fn new(
        resource: ResourceType,
        instances: u32,
        boinc_compat: bool,
        context: ActorContext,
    ) -> Self {
        ResourceActor {
            id: format!("resource:{}", resource.key()),
            resource,
            instances,
            context,
            boinc_compat,
            available: true,
            assignment: BTreeMap::new(),
        }
    }

    fn may_compute(&self, host: &HostView) -> bool {
        host.resource_may_compute(self.resource, self.boinc_compat)
    }

    /// Instances of the resource.
    pub fn instances(&self) -> u32 {
        self.instances
    }

    /// The resource.
    pub fn resource(&self) -> ResourceType {
        self.resource
    }

    /// Instances in use by the tasks on the resource, by slot.
    pub fn assignment(&self) -> impl Iterator<Item = (u32, f64, &[u32])> {
        self.assignment.iter().map(|(slot, (used, gpus))| (*slot, *used, gpus.as_slice()))
    }
}

impl Actor for ResourceActor {
    type Context = Context<Self>;
}

impl Handler<Availability> for ResourceActor {
    type Result = MessageResult<Availability>;

    fn handle(&mut self, message: Availability, _: &mut Context<Self>) -> Self::Result {
        self.context.delivered(&self.id, "Availability", &message);
        self.context.maybe_panic(
            ActorId { kind: ActorKind::Resource, index: self.resource.index() as u32 },
            self.context.clock.now(),
        );
        self.available = self.may_compute(&message.view);
        let _span = tracing::debug_span!("resource", resource = %self.resource.key()).entered();
        tracing::debug!(available = self.available, "availability changed");
        MessageResult(ResourceAvailable {
            resource: self.resource,
            may_compute: self.available,
            host: message.view,
        })
    }
}

impl Handler<InstanceChanges> for ResourceActor {
    type Result = ();

    fn handle(&mut self, message: InstanceChanges, _: &mut Context<Self>) {
        self.context.delivered(&self.id, "InstanceChanges", &message);
        self.apply(message.changes);
    }
}

impl ResourceActor {
    /// Takes a decision's changes of the occupancy in, in order.
    fn apply(&mut self, changes: Vec<InstanceChange>) {
        for change in changes {
            match change {
                InstanceChange::Occupied { slot, used, gpus } => {
                    self.assignment.insert(slot, (used, gpus));
                }
                InstanceChange::Vacated { slot } => {
                    self.assignment.remove(&slot);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::Journal;
    use crate::runtime::events::EventBus;
    use crate::sim::effects::VirtualClock;
    use std::sync::Arc;

    #[test]
    fn the_occupancy_follows_the_changes_in_order() {
        let context = ActorContext {
            clock: Arc::new(VirtualClock::new(0.0)),
            journal: Journal::off(),
            events: EventBus::default(),
            faults: Default::default(),
        };
        let mut actor = ResourceActor::new(ResourceType::Nvidia, 2, false, context);
        actor.apply(vec![
            InstanceChange::Occupied { slot: 4, used: 1.0, gpus: vec![0] },
            InstanceChange::Occupied { slot: 7, used: 0.5, gpus: vec![1] },
        ]);
        // Preempted, then resumed on the other GPU; a slot never seen is vacated harmlessly.
        actor.apply(vec![
            InstanceChange::Vacated { slot: 4 },
            InstanceChange::Occupied { slot: 4, used: 1.0, gpus: vec![1] },
            InstanceChange::Vacated { slot: 7 },
            InstanceChange::Vacated { slot: 99 },
        ]);
        let held: Vec<(u32, f64, Vec<u32>)> =
            actor.assignment().map(|(slot, used, gpus)| (slot, used, gpus.to_vec())).collect();
        assert_eq!(held, vec![(4, 1.0, vec![1])]);
    }
}
