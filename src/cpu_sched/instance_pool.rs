//! Fitting jobs onto the processors (seed 000 6.4 note 7: scheduling and enforcement
//! "take coprocs and avg_ncpus into account"). One set of rules shared by the CPU
//! scheduler and enforcement, so a run list never asks for a placement enforcement
//! would refuse:
//!
//! - CPU jobs are added while the CPUs in use are fewer than `ncpus`, and only if the
//!   total stays within `ncpus + 1`: a multithread job may overcommit by at most one CPU
//!   rather than leave several CPUs idle waiting for room (the BOINC 8 behaviour). A job
//!   asking for more CPUs than the host has is fitted as if it asked for all of them,
//!   otherwise it could never run.
//! - GPU jobs are fitted per instance: each instance has a free capacity of 1. A job
//!   using a fraction `u < 1` goes to the instance with the least free capacity that
//!   still holds `u` (best fit, so fractional jobs pack), a job using `u ≥ 1` takes
//!   `ceil(u)` wholly free instances. A GPU job's CPUs are added to the CPU usage, so
//!   they are not handed to CPU jobs, but a GPU job is never refused for lack of CPU:
//!   keeping GPUs busy comes first.

use crate::model::{ClientState, ResourceMap, ResourceType, ResourceUsage};

/// Slack allowed when comparing fractional usages, so that e.g. three jobs of a third of
/// a GPU fill one instance despite rounding.
pub const FIT_TOLERANCE: f64 = 1e-9;

/// The processors of the host and how much of each is taken.
#[derive(Debug, Clone, PartialEq)]
pub struct InstancePool {
    ncpus: f64,
    cpu_used: f64,
    /// Free capacity (0–1) of each instance of each GPU type; empty for the CPU.
    gpu_free: ResourceMap<Vec<f64>>,
}

impl InstancePool {
    /// All usable processors of the host, nothing taken.
    pub fn new(state: &ClientState) -> Self {
        InstancePool {
            ncpus: f64::from(state.ncpus()),
            cpu_used: 0.0,
            gpu_free: ResourceMap::from_fn(|r| {
                if r.is_gpu() { vec![1.0; state.instances(r) as usize] } else { Vec::new() }
            }),
        }
    }

    /// CPUs the client may use.
    pub fn ncpus(&self) -> f64 {
        self.ncpus
    }

    /// CPUs taken so far, including those held by GPU jobs.
    pub fn cpu_used(&self) -> f64 {
        self.cpu_used
    }

    /// Free capacity of each instance of a GPU type (empty for the CPU).
    pub fn gpu_free(&self, resource: ResourceType) -> &[f64] {
        &self.gpu_free[resource]
    }

    /// Whether another job of the resource could still fit somewhere: CPUs in use are
    /// fewer than `ncpus`, or some instance of the GPU type has free capacity.
    pub fn has_room(&self, resource: ResourceType) -> bool {
        if resource.is_gpu() {
            self.gpu_free[resource].iter().any(|&free| free > FIT_TOLERANCE)
        } else {
            self.cpu_used < self.ncpus - FIT_TOLERANCE
        }
    }

    /// The CPUs a job counts for when fitting: at most all of them.
    fn fitted_ncpus(&self, usage: &ResourceUsage) -> f64 {
        usage.avg_ncpus.max(0.0).min(self.ncpus)
    }

    /// The GPU instances a job would take (empty for a CPU job), or `None` when it does
    /// not fit now. `preferred` are the instances a running job already holds: they are
    /// kept when they still have room, so a running GPU job never moves.
    pub fn find(&self, usage: &ResourceUsage, preferred: &[u32]) -> Option<Vec<u32>> {
        // Most jobs are CPU jobs: their answer needs no list.
        if usage.coprocessor.is_none() {
            return self.cpu_job_fits(usage).then(Vec::new);
        }
        let mut instances = Vec::new();
        self.find_into(usage, preferred, &mut instances).then_some(instances)
    }

    /// Whether a CPU job fits (see the module comment).
    fn cpu_job_fits(&self, usage: &ResourceUsage) -> bool {
        let ncpus = self.fitted_ncpus(usage);
        self.cpu_used < self.ncpus - FIT_TOLERANCE
            && self.cpu_used + ncpus <= self.ncpus + 1.0 + FIT_TOLERANCE
    }

    /// [`InstancePool::find`], appending the instances to `instances` (which is left as
    /// it was when the job does not fit), so that a caller counting many jobs keeps
    /// them in one list rather than a list per job.
    pub(crate) fn find_into(
        &self,
        usage: &ResourceUsage,
        preferred: &[u32],
        instances: &mut Vec<u32>,
    ) -> bool {
        let Some((resource, amount)) = usage.coprocessor else {
            return self.cpu_job_fits(usage);
        };
        let free = &self.gpu_free[resource];
        let amount = amount.max(0.0);
        if amount < 1.0 {
            if let [instance] = preferred
                && free.get(*instance as usize).is_some_and(|&f| f >= amount - FIT_TOLERANCE)
            {
                instances.push(*instance);
                return true;
            }
            // Best fit: the fullest instance that still holds the job; ties to the lowest.
            let mut best: Option<(usize, f64)> = None;
            for (index, &f) in free.iter().enumerate() {
                if f >= amount - FIT_TOLERANCE
                    && f > FIT_TOLERANCE
                    && best.is_none_or(|(_, b)| f < b)
                {
                    best = Some((index, f));
                }
            }
            best.map(|(index, _)| instances.push(index as u32)).is_some()
        } else {
            let needed = (amount - FIT_TOLERANCE).ceil() as usize;
            let wholly_free = |i: usize| free.get(i).is_some_and(|&f| f >= 1.0 - FIT_TOLERANCE);
            if preferred.len() == needed && preferred.iter().all(|&i| wholly_free(i as usize)) {
                instances.extend_from_slice(preferred);
                return true;
            }
            let before = instances.len();
            instances
                .extend((0..free.len()).filter(|&i| wholly_free(i)).take(needed).map(|i| i as u32));
            if instances.len() - before == needed {
                return true;
            }
            instances.truncate(before);
            false
        }
    }

    /// Capacity taken from each GPU instance a job holds.
    fn per_instance(usage: &ResourceUsage) -> f64 {
        usage.coprocessor.map_or(0.0, |(_, amount)| amount.clamp(0.0, 1.0))
    }

    /// Marks a job as holding its CPUs and the given GPU instances (indices the host
    /// doesn't have are ignored). Used for jobs already running, whatever the rules say.
    pub fn occupy(&mut self, usage: &ResourceUsage, gpu_instances: &[u32]) {
        self.cpu_used += self.fitted_ncpus(usage);
        if let Some((resource, _)) = usage.coprocessor {
            let taken = Self::per_instance(usage);
            for &i in gpu_instances {
                if let Some(free) = self.gpu_free[resource].get_mut(i as usize) {
                    *free -= taken;
                }
            }
        }
    }

    /// Gives back what [`InstancePool::occupy`] took.
    pub fn release(&mut self, usage: &ResourceUsage, gpu_instances: &[u32]) {
        self.cpu_used = (self.cpu_used - self.fitted_ncpus(usage)).max(0.0);
        if let Some((resource, _)) = usage.coprocessor {
            let taken = Self::per_instance(usage);
            for &i in gpu_instances {
                if let Some(free) = self.gpu_free[resource].get_mut(i as usize) {
                    *free += taken;
                }
            }
        }
    }

    /// Fits a job and takes its share; `None` (and nothing taken) when it doesn't fit.
    pub fn try_place(&mut self, usage: &ResourceUsage, preferred: &[u32]) -> Option<Vec<u32>> {
        let instances = self.find(usage, preferred)?;
        self.occupy(usage, &instances);
        Some(instances)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu_sched::test_support::StateBuilder;

    fn cpu(n: f64) -> ResourceUsage {
        ResourceUsage { avg_ncpus: n, coprocessor: None }
    }

    fn gpu(cpus: f64, amount: f64) -> ResourceUsage {
        ResourceUsage { avg_ncpus: cpus, coprocessor: Some((ResourceType::Nvidia, amount)) }
    }

    #[test]
    fn cpu_jobs_fill_ncpus_and_multithread_overcommits_by_at_most_one() {
        let state = StateBuilder::new(4).build();
        let mut pool = InstancePool::new(&state);
        assert!(pool.try_place(&cpu(1.0), &[]).is_some());
        assert!(pool.try_place(&cpu(1.0), &[]).is_some());
        assert!(pool.try_place(&cpu(1.0), &[]).is_some());
        // 3 used of 4: a 3-thread job would make 6 > 5, a 2-thread one makes 5 = 4 + 1.
        assert!(pool.find(&cpu(3.0), &[]).is_none());
        assert!(pool.try_place(&cpu(2.0), &[]).is_some());
        assert!(!pool.has_room(ResourceType::Cpu));
        assert!(pool.find(&cpu(0.5), &[]).is_none());
    }

    #[test]
    fn oversized_multithread_job_fits_an_empty_host() {
        let state = StateBuilder::new(4).build();
        let mut pool = InstancePool::new(&state);
        assert!(pool.try_place(&cpu(16.0), &[]).is_some());
        assert!((pool.cpu_used() - 4.0).abs() < 1e-12);
    }

    #[test]
    fn fractional_gpu_jobs_pack_two_per_instance_best_fit() {
        let state = StateBuilder::new(4).gpus(ResourceType::Nvidia, 2).build();
        let mut pool = InstancePool::new(&state);
        assert_eq!(pool.try_place(&gpu(0.1, 0.5), &[]), Some(vec![0]));
        assert_eq!(pool.try_place(&gpu(0.1, 0.5), &[]), Some(vec![0]));
        assert_eq!(pool.try_place(&gpu(0.1, 0.5), &[]), Some(vec![1]));
        assert_eq!(pool.find(&gpu(0.1, 1.0), &[]), None);
        assert_eq!(pool.try_place(&gpu(0.1, 0.5), &[]), Some(vec![1]));
        assert!(!pool.has_room(ResourceType::Nvidia));
    }

    #[test]
    fn whole_gpu_jobs_need_wholly_free_instances_and_keep_their_place() {
        let state = StateBuilder::new(4).gpus(ResourceType::Nvidia, 3).build();
        let mut pool = InstancePool::new(&state);
        assert_eq!(pool.try_place(&gpu(1.0, 1.0), &[2]), Some(vec![2]));
        assert_eq!(pool.try_place(&gpu(1.0, 0.3), &[]), Some(vec![0]));
        assert_eq!(pool.find(&gpu(1.0, 1.5), &[]), None);
        assert_eq!(pool.find(&gpu(1.0, 1.0), &[]), Some(vec![1]));
    }

    #[test]
    fn gpu_job_is_not_refused_for_lack_of_cpu_but_holds_its_cpus() {
        let state = StateBuilder::new(2).gpus(ResourceType::Nvidia, 1).build();
        let mut pool = InstancePool::new(&state);
        pool.try_place(&cpu(1.0), &[]).unwrap();
        pool.try_place(&cpu(1.0), &[]).unwrap();
        assert!(pool.try_place(&gpu(1.0, 1.0), &[]).is_some());
        assert!((pool.cpu_used() - 3.0).abs() < 1e-12);
        assert!(pool.find(&cpu(1.0), &[]).is_none());
    }

    #[test]
    fn release_undoes_occupy() {
        let state = StateBuilder::new(2).gpus(ResourceType::Nvidia, 1).build();
        let mut pool = InstancePool::new(&state);
        let before = pool.clone();
        let placed = pool.try_place(&gpu(0.5, 0.5), &[]).unwrap();
        pool.release(&gpu(0.5, 0.5), &placed);
        assert_eq!(pool, before);
    }
}
