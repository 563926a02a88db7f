//! ResourceActor: one per processing resource (the CPU, each GPU type). It owns the
//! resource's instance count, its availability (from host discovery) and which task
//! occupies which instance, and answers each availability change with whether the
//! resource may compute: the scheduler computes with that answer.

use super::context::ActorContext;
use super::messages::{Availability, InstanceAssignment, ResourceAvailable};
use super::supervision::{ActorId, ActorKind};
use actix::{Actor, Context, Handler, MessageResult};
use boinc_core::control::HostView;
use boinc_core::model::ResourceType;

/// The actor of one processing resource.
pub struct ResourceActor {
    id: String,
    resource: ResourceType,
    instances: u32,
    context: ActorContext,
    boinc_compat: bool,
    available: bool,
    /// (slot, instances used, GPU instances) of each task on the resource.
    assignment: Vec<(u32, f64, Vec<u32>)>,
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
            assignment: Vec::new(),
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

impl Handler<InstanceAssignment> for ResourceActor {
    type Result = ();

    fn handle(&mut self, message: InstanceAssignment, _: &mut Context<Self>) {
        self.context.delivered(&self.id, "InstanceAssignment", &message);
        self.assignment = message.tasks;
    }
}
