//! ResourceActor: one per processing resource (the CPU, each GPU type). It owns the
//! resource's instance count, its availability (from host discovery), which task
//! occupies which instance, and its buffer as the scheduler's round-robin simulation
//! last saw it (idle instances, shortfall, saturated time: seed 003). It answers each
//! availability change with whether the resource may compute (the scheduler computes
//! with that answer), and the fetch actor's question with its buffer.

use super::context::ActorContext;
use super::messages::{
    AskForecast, Availability, InstanceAssignment, ResourceAvailable, ResourceForecast,
};
use super::supervision::{ActorId, ActorKind};
use actix::{Actor, Context, Handler, MessageResult};
use boinc_core::control::HostView;
use boinc_core::model::ResourceType;
use boinc_core::work_fetch::ResourceOutlook;

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
    forecast: Option<ResourceOutlook>,
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
            forecast: None,
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

impl Handler<ResourceForecast> for ResourceActor {
    type Result = ();

    fn handle(&mut self, message: ResourceForecast, _: &mut Context<Self>) {
        self.context.delivered(&self.id, "ResourceForecast", &message);
        self.forecast = Some(message.outlook);
    }
}

impl Handler<AskForecast> for ResourceActor {
    type Result = Option<ResourceOutlook>;

    fn handle(&mut self, message: AskForecast, _: &mut Context<Self>) -> Self::Result {
        self.context.delivered(&self.id, "AskForecast", &message);
        self.forecast
    }
}
