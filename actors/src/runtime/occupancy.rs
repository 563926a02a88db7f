//! Which task holds which instances of each processing resource, kept as the scheduler's
//! commands change it (docs/design.md "Actors": a resource actor owns its instances and
//! their assignment; messages carry what changed, not the state). A decision that starts,
//! resumes, preempts or aborts a few tasks tells the resources those tasks use about
//! those tasks alone, instead of listing every running task to every resource.

use crate::runtime::messages::InstanceChange;
use boinc_core::control::TaskCommand;
use boinc_core::model::{ResourceType, ResourceUsage};
use std::collections::BTreeMap;

/// The resources' occupancy as the commands so far left it: the usage of the task in each
/// slot (running, or suspended in memory: a resumed task takes its instances again), and
/// what changed since the resource actors were last told.
#[derive(Debug, Default)]
pub(crate) struct Occupancy {
    /// By slot: what the task there uses.
    usage: BTreeMap<u32, ResourceUsage>,
    /// By resource index: the changes not yet told, in order.
    pending: [Vec<InstanceChange>; ResourceType::ALL.len()],
}

impl Occupancy {
    /// The occupancy of tasks already holding slots (a client that restarted): `tasks`
    /// gives each one's slot, usage and GPU instances, and whether it runs now.
    pub(crate) fn of(
        tasks: impl IntoIterator<Item = (u32, ResourceUsage, Vec<u32>, bool)>,
    ) -> Self {
        let mut occupancy = Occupancy::default();
        for (slot, usage, gpus, running) in tasks {
            occupancy.usage.insert(slot, usage);
            if running {
                occupancy.occupy(slot, usage, &gpus);
            }
        }
        occupancy
    }

    /// Takes a command in; `usage_of_job` finds the usage of a task resumed in a slot the
    /// occupancy does not know (started before the occupancy was kept).
    pub(crate) fn command(
        &mut self,
        command: &TaskCommand,
        usage_of_job: impl FnOnce() -> Option<ResourceUsage>,
    ) {
        match command {
            TaskCommand::Start(spec) => {
                self.usage.insert(spec.slot, spec.usage);
                self.occupy(spec.slot, spec.usage, &spec.gpu_instances);
            }
            TaskCommand::Resume { slot, gpu_instances, .. } => {
                let usage = match self.usage.get(slot) {
                    Some(usage) => Some(*usage),
                    None => usage_of_job(),
                };
                if let Some(usage) = usage {
                    self.usage.insert(*slot, usage);
                    self.occupy(*slot, usage, gpu_instances);
                }
            }
            TaskCommand::Preempt { slot, .. } => {
                if let Some(usage) = self.usage.get(slot).copied() {
                    self.vacate(*slot, usage);
                }
            }
            TaskCommand::Abort { slot, .. } => self.ended(*slot),
            TaskCommand::WatchCheckpoint { .. } => {}
        }
    }

    /// The task in `slot` ended: its instances are free and the slot is forgotten.
    pub(crate) fn ended(&mut self, slot: u32) {
        if let Some(usage) = self.usage.remove(&slot) {
            self.vacate(slot, usage);
        }
    }

    /// The changes for `resource` not yet told, taken (empty when there are none).
    pub(crate) fn take_changes(&mut self, resource: ResourceType) -> Vec<InstanceChange> {
        std::mem::take(&mut self.pending[resource.index()])
    }

    /// Whether some resource has changes not yet told.
    pub(crate) fn has_changes(&self) -> bool {
        self.pending.iter().any(|changes| !changes.is_empty())
    }

    fn occupy(&mut self, slot: u32, usage: ResourceUsage, gpus: &[u32]) {
        for resource in ResourceType::ALL {
            let used = usage.usage_of(resource);
            if used > 0.0 {
                let gpus = if resource.is_gpu() { gpus.to_vec() } else { Vec::new() };
                self.pending[resource.index()].push(InstanceChange::Occupied { slot, used, gpus });
            }
        }
    }

    fn vacate(&mut self, slot: u32, usage: ResourceUsage) {
        for resource in ResourceType::ALL {
            if usage.usage_of(resource) > 0.0 {
                self.pending[resource.index()].push(InstanceChange::Vacated { slot });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use boinc_core::model::ProjectId;

    fn gpu_job() -> ResourceUsage {
        ResourceUsage { avg_ncpus: 0.5, coprocessor: Some((ResourceType::Nvidia, 1.0)) }
    }

    fn preempt(slot: u32) -> TaskCommand {
        TaskCommand::Preempt {
            project: ProjectId(0),
            job: "j".into(),
            slot,
            remove_from_memory: false,
            for_deadline: false,
        }
    }

    #[test]
    fn a_resumed_task_takes_its_instances_again_and_an_ended_one_frees_them() {
        let mut occupancy = Occupancy::of([(3, gpu_job(), vec![1], true)]);
        assert_eq!(
            occupancy.take_changes(ResourceType::Nvidia),
            vec![InstanceChange::Occupied { slot: 3, used: 1.0, gpus: vec![1] }]
        );
        assert_eq!(
            occupancy.take_changes(ResourceType::Cpu),
            vec![InstanceChange::Occupied { slot: 3, used: 0.5, gpus: vec![] }]
        );
        assert!(!occupancy.has_changes());

        occupancy.command(&preempt(3), || None);
        let resume = TaskCommand::Resume {
            project: ProjectId(0),
            job: "j".into(),
            slot: 3,
            gpu_instances: vec![0],
        };
        occupancy.command(&resume, || panic!("the slot's usage is known"));
        assert_eq!(
            occupancy.take_changes(ResourceType::Nvidia),
            vec![
                InstanceChange::Vacated { slot: 3 },
                InstanceChange::Occupied { slot: 3, used: 1.0, gpus: vec![0] },
            ]
        );
        assert_eq!(occupancy.take_changes(ResourceType::Cpu).len(), 2);
        assert!(occupancy.take_changes(ResourceType::Amd).is_empty());

        occupancy.ended(3);
        assert_eq!(
            occupancy.take_changes(ResourceType::Nvidia),
            vec![InstanceChange::Vacated { slot: 3 }]
        );
        // Forgotten: a second end tells nothing.
        occupancy.take_changes(ResourceType::Cpu);
        occupancy.ended(3);
        assert!(!occupancy.has_changes());
    }

    #[test]
    fn a_task_resumed_in_an_unknown_slot_is_looked_up_and_a_preempted_unknown_one_is_ignored() {
        let mut occupancy = Occupancy::default();
        occupancy.command(&preempt(9), || None);
        assert!(!occupancy.has_changes());
        let resume = TaskCommand::Resume {
            project: ProjectId(0),
            job: "j".into(),
            slot: 9,
            gpu_instances: vec![],
        };
        occupancy.command(&resume, || Some(ResourceUsage { avg_ncpus: 4.0, coprocessor: None }));
        assert_eq!(
            occupancy.take_changes(ResourceType::Cpu),
            vec![InstanceChange::Occupied { slot: 9, used: 4.0, gpus: vec![] }]
        );
    }
}
