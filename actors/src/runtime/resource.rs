//! ResourceActor: one per processing resource (the CPU, each GPU type). It owns the
//! resource's instance count, its availability (from host discovery) and which task
//! occupies which instance, and tells the scheduler when availability changes.

use super::scheduler::SchedulerActor;
use crate::runtime::context::ActorContext;
use crate::runtime::messages::{HostChanged, InstanceAssignment, ResourceAvailable};
use actix::{Actor, Addr, Context, Handler};
use boinc_core::control::HostView;
use boinc_core::model::{ResourceType, ResourceUsage};

/// The actor of one processing resource.
pub struct ResourceActor {
    id: String,
    resource: ResourceType,
    instances: u32,
    context: ActorContext,
    scheduler: Addr<SchedulerActor>,
    boinc_compat: bool,
    available: bool,
    assignment: Vec<(String, f64, Vec<u32>)>,
}

impl ResourceActor {
    /// The actor of `resource` with `instances` instances.
    pub fn new(
        resource: ResourceType,
        instances: u32,
        boinc_compat: bool,
        context: ActorContext,
        scheduler: Addr<SchedulerActor>,
    ) -> Self {
        ResourceActor {
            id: format!("resource:{}", resource.key()),
            resource,
            instances,
            context,
            scheduler,
            boinc_compat,
            available: true,
            assignment: Vec::new(),
        }
    }

    fn may_compute(&self, host: &HostView) -> bool {
        let usage = if self.resource.is_gpu() {
            ResourceUsage { avg_ncpus: 0.0, coprocessor: Some((self.resource, 1.0)) }
        } else {
            ResourceUsage { avg_ncpus: 1.0, coprocessor: None }
        };
        host.may_compute(&usage, self.boinc_compat)
    }

    /// Instances of the resource.
    pub fn instances(&self) -> u32 {
        self.instances
    }
}

impl Actor for ResourceActor {
    type Context = Context<Self>;
}

impl Handler<HostChanged> for ResourceActor {
    type Result = ();

    fn handle(&mut self, message: HostChanged, _: &mut Context<Self>) {
        self.context.input(&self.id, "HostChanged", &message);
        self.available = self.may_compute(&message.view);
        self.scheduler.do_send(ResourceAvailable {
            resource: self.resource,
            may_compute: self.available,
            host: message.view,
        });
    }
}

impl Handler<InstanceAssignment> for ResourceActor {
    type Result = ();

    fn handle(&mut self, message: InstanceAssignment, _: &mut Context<Self>) {
        self.context.delivered(&self.id, "InstanceAssignment", &message);
        self.assignment = message.tasks;
    }
}
