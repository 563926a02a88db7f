//! The target allocation: how much of each processing resource each project is entitled
//! to (seed 003 "Example", "Long-term debt": "the notion of LTD needs to span
//! resources"), used as the per-resource share `share(P, R)` by the long-term debt and by
//! the round-robin simulation's per-project shortfall.
//!
//! Dividing each resource separately among the projects that can use it gives seed
//! 003's example (A has only GPU jobs, B has CPU and GPU jobs, equal shares, the GPU
//! twice as fast as the CPU) a 50/50 GPU split, although B already has the whole CPU.
//! The target divides the host's processing as a whole instead: every resource's
//! capacity is counted in CPU-equivalents (`instances × relative speed`), and the
//! projects get a **weighted max-min fair** allocation of it, each restricted to the
//! resources it is eligible for. In the example A gets 0.75 of the GPU and B the CPU plus
//! 0.25 of the GPU: 1.5 CPU-equivalents each, seed 003's target. Since the target is
//! always a feasible division of what the host has, debts accrued against it stay
//! bounded even where only one project can use a resource (it simply gets all of it).
//!
//! # The algorithm
//!
//! A project's *level* is its allocation (CPU-equivalents) over its resource share.
//! Projects with the same eligible resources are one *class*; with at most 4 resources
//! there are at most 15 classes, so everything below works on fixed arrays.
//!
//! 1. **Progressive filling.** All unfrozen projects rise to a common level `t`. The
//!    largest feasible `t` is, by Hall's condition, the minimum over the subsets S of the
//!    remaining resources of `capacity(S) / Σ share of the unfrozen projects whose
//!    remaining eligible resources all lie in S` (16 subsets; the sums over subsets by a
//!    subset-sum transform). The union S* of the subsets reaching the minimum is
//!    saturated by the projects confined to it: they freeze at `t`, S*'s resources are
//!    removed, and the filling goes on with the others. Each round removes a resource,
//!    so there are at most 4.
//! 2. **Per-resource split.** The frozen totals are routed onto resources by a max-flow
//!    (Edmonds–Karp on source → class → eligible resource → sink, the classes holding
//!    their totals, the resources their capacities). Every full flow is a valid split,
//!    because a saturated set can only be filled by the projects confined to it; the
//!    search visits classes by mask and resources in [`ResourceType::ALL`] order, so the
//!    split is deterministic. Within a class the flow on each resource is divided in
//!    proportion to the shares, so projects alike get alike targets.
//! 3. **Zero shares.** Projects with a zero (or invalid) share get nothing where a
//!    project with a share is eligible: such resources are always saturated by step 1.
//!    Resources that only zero-share projects can use are divided among them by the
//!    same two steps with equal weights, so they are split equally where possible.
//!    Resources no project is eligible for stay unallocated.
//!
//! A resource's speed is [`crate::model::Host::relative_speed`]; where that is unknown
//! (not positive or not finite) the resource counts as fast as a CPU.

use crate::model::{ClientState, ProjectId, ResourceMap, ResourceType, is_positive_finite};

const NRESOURCES: usize = ResourceType::ALL.len();
const NMASKS: usize = 1 << NRESOURCES;
const SOURCE: usize = 0;
const SINK: usize = NMASKS + NRESOURCES;
const NODES: usize = SINK + 1;
/// Relative size below which a tight subset counts as equally tight (rounding).
const TIGHT_TOLERANCE: f64 = 1e-12;

/// One project as the target allocation sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FairShareProject {
    /// The project's resource share (negative, NaN and infinite count as zero).
    pub share: f64,
    /// The resources the project may be allotted.
    pub eligible: ResourceMap<bool>,
}

/// What one project is entitled to.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProjectTarget {
    /// Entitled instances of each resource (not weighted by speed: comparable with usage
    /// in instance-seconds per second).
    pub instances: ResourceMap<f64>,
    /// The whole entitlement in CPU-equivalents (instances weighted by relative speed).
    pub total: f64,
    /// `total / share` for a project with a share; for a zero-share project its total
    /// (the zero-share projects are levelled with equal weights among themselves).
    pub level: f64,
}

/// The weighted max-min fair division of the host's processing resources among the
/// projects (see the module documentation), indexed by project.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TargetAllocation {
    projects: Vec<ProjectTarget>,
    /// Instances of each resource that nobody was allotted.
    unallocated: ResourceMap<f64>,
}

impl TargetAllocation {
    /// Divides `instances` of each resource, each instance worth `speed` CPU-equivalents,
    /// among `projects` (in project-id order).
    pub fn compute(
        instances: ResourceMap<f64>,
        speed: ResourceMap<f64>,
        projects: impl IntoIterator<Item = FairShareProject>,
    ) -> Self {
        let instances = instances.map(|_, &n| if n.is_finite() { n.max(0.0) } else { 0.0 });
        let speed = speed.map(|_, &s| if is_positive_finite(s) { s } else { 1.0 });
        let capacity: [f64; NRESOURCES] = ResourceType::ALL.map(|r| instances[r] * speed[r]);
        let usable =
            (0..NRESOURCES).filter(|&r| capacity[r] > 0.0).fold(0usize, |mask, r| mask | 1 << r);

        let projects = projects.into_iter();
        let mut masks: Vec<(usize, f64)> = Vec::with_capacity(projects.size_hint().0);
        let mut weight = [0.0; NMASKS];
        let mut zero_count = [0.0; NMASKS];
        for project in projects {
            let mask = ResourceType::ALL
                .into_iter()
                .filter(|&r| project.eligible[r])
                .fold(0usize, |mask, r| mask | 1 << r.index())
                & usable;
            let share = sane_share(project.share);
            if share > 0.0 {
                weight[mask] += share;
            } else {
                zero_count[mask] += 1.0;
            }
            masks.push((mask, share));
        }
        weight[0] = 0.0;
        zero_count[0] = 0.0;

        let with_share = fill(capacity, usable, &weight);
        // Resources a project with a share is eligible for end up saturated by it; the
        // zero-share projects divide the others.
        let claimed = (1..NMASKS).filter(|&m| weight[m] > 0.0).fold(0, |acc, m| acc | m);
        let leftover = usable & !claimed;
        let zero_share = fill(capacity, leftover, &zero_count);

        let mut allocated = [0.0; NRESOURCES];
        let targets = masks
            .into_iter()
            .map(|(mask, share)| {
                let (filled, fraction) = if mask == 0 {
                    return ProjectTarget::default();
                } else if share > 0.0 {
                    (&with_share, share / weight[mask])
                } else if zero_count[mask] > 0.0 {
                    (&zero_share, 1.0 / zero_count[mask])
                } else {
                    return ProjectTarget::default();
                };
                let mut target = ProjectTarget::default();
                for (r, resource) in ResourceType::ALL.into_iter().enumerate() {
                    let equivalents = filled.flow[mask][r] * fraction;
                    target.instances[resource] = equivalents / speed[resource];
                    target.total += equivalents;
                    allocated[r] += target.instances[resource];
                }
                target.level = if share > 0.0 { target.total / share } else { target.total };
                target
            })
            .collect();
        let unallocated = ResourceMap::from_fn(|r| (instances[r] - allocated[r.index()]).max(0.0));
        TargetAllocation { projects: targets, unallocated }
    }

    /// The target allocation for a client: every resource the client may use (its
    /// instances and [`crate::model::Host::relative_speed`]), the projects' resource
    /// shares, and `eligible(P, R)` deciding which resources each project may be allotted.
    pub fn for_state(
        state: &ClientState,
        mut eligible: impl FnMut(ProjectId, ResourceType) -> bool,
    ) -> Self {
        let instances = ResourceMap::from_fn(|r| f64::from(state.instances(r)));
        let speed = ResourceMap::from_fn(|r| state.host.relative_speed(r));
        let projects = state.project_ids().map(|p| FairShareProject {
            share: state.project(p).resource_share,
            eligible: ResourceMap::from_fn(|r| eligible(p, r)),
        });
        TargetAllocation::compute(instances, speed, projects)
    }

    /// Instances of `resource` the project is entitled to (0 for an unknown project).
    pub fn instances(&self, project: ProjectId, resource: ResourceType) -> f64 {
        self.projects.get(project.index()).map_or(0.0, |t| t.instances[resource])
    }

    /// The project's whole entitlement in CPU-equivalents (0 for an unknown project).
    pub fn total(&self, project: ProjectId) -> f64 {
        self.projects.get(project.index()).map_or(0.0, |t| t.total)
    }

    /// Everything about one project's target, if the project is known.
    pub fn project(&self, project: ProjectId) -> Option<&ProjectTarget> {
        self.projects.get(project.index())
    }

    /// The targets of all projects, in project-id order.
    pub fn projects(&self) -> &[ProjectTarget] {
        &self.projects
    }

    /// Instances of `resource` nobody is entitled to (no project is eligible for it).
    pub fn unallocated(&self, resource: ResourceType) -> f64 {
        self.unallocated[resource]
    }
}

/// The latest target allocation of a client and what it was computed from, for a caller
/// that asks at every decision (the round-robin simulation, the long-term debt): the
/// shares, the eligibilities and the host change far less often than decisions are
/// made, and [`TargetAllocation::compute`] depends on nothing else.
#[derive(Debug, Clone, Default)]
pub struct TargetCache {
    /// The host's instances and speeds, and the projects, of `target` (none before the
    /// first computation).
    inputs: Option<(ResourceMap<f64>, ResourceMap<f64>)>,
    projects: Vec<FairShareProject>,
    /// The projects of the current request, compared with `projects`.
    asked: Vec<FairShareProject>,
    target: TargetAllocation,
}

impl TargetCache {
    /// [`TargetAllocation::for_state`], computed only when its inputs differ (to the bit)
    /// from those of the previous call.
    pub fn for_state(
        &mut self,
        state: &ClientState,
        mut eligible: impl FnMut(ProjectId, ResourceType) -> bool,
    ) -> &TargetAllocation {
        let instances = ResourceMap::from_fn(|r| f64::from(state.instances(r)));
        let speed = ResourceMap::from_fn(|r| state.host.relative_speed(r));
        self.asked.clear();
        self.asked.extend(state.project_ids().map(|p| FairShareProject {
            share: state.project(p).resource_share,
            eligible: ResourceMap::from_fn(|r| eligible(p, r)),
        }));
        let same_bits = |a: &ResourceMap<f64>, b: &ResourceMap<f64>| {
            a.0.iter().zip(&b.0).all(|(x, y)| x.to_bits() == y.to_bits())
        };
        let unchanged =
            self.inputs.is_some_and(|(i, s)| same_bits(&i, &instances) && same_bits(&s, &speed))
                && self.projects.len() == self.asked.len()
                && self.projects.iter().zip(&self.asked).all(|(old, new)| {
                    old.share.to_bits() == new.share.to_bits() && old.eligible == new.eligible
                });
        if !unchanged {
            std::mem::swap(&mut self.projects, &mut self.asked);
            self.inputs = Some((instances, speed));
            self.target =
                TargetAllocation::compute(instances, speed, self.projects.iter().copied());
        }
        &self.target
    }
}

fn sane_share(share: f64) -> f64 {
    if is_positive_finite(share) { share } else { 0.0 }
}

/// The result of dividing some resources among weighted classes: each class's flow onto
/// each resource, in CPU-equivalents.
struct Filled {
    flow: [[f64; NRESOURCES]; NMASKS],
}

/// Weighted max-min fair division of the resources in `resources` (a mask) among the
/// classes (indexed by their eligibility mask, weighted by `weight`): progressive
/// filling for the totals, then a max-flow for the split (steps 1 and 2 of the module
/// documentation).
fn fill(capacity: [f64; NRESOURCES], resources: usize, weight: &[f64; NMASKS]) -> Filled {
    let mut level = [0.0; NMASKS];
    let mut frozen = [false; NMASKS];
    let mut remaining = resources;
    for (m, frozen) in frozen.iter_mut().enumerate() {
        *frozen = weight[m] <= 0.0 || m & resources == 0;
    }
    let capacity_of = |set: usize| -> f64 {
        (0..NRESOURCES).filter(|&r| set & 1 << r != 0).map(|r| capacity[r]).sum()
    };
    while remaining != 0 {
        // demand[S]: weight of the unfrozen classes confined to S (subset-sum transform).
        let mut demand = [0.0; NMASKS];
        for m in (1..NMASKS).filter(|&m| !frozen[m]) {
            demand[m & remaining] += weight[m];
        }
        for bit in 0..NRESOURCES {
            for set in 0..NMASKS {
                if set & 1 << bit != 0 {
                    demand[set] += demand[set ^ 1 << bit];
                }
            }
        }
        let subsets = || (1..NMASKS).filter(|&s| s & !remaining == 0 && demand[s] > 0.0);
        let Some(t) = subsets().map(|s| capacity_of(s) / demand[s]).min_by(f64::total_cmp) else {
            break;
        };
        let tight = subsets()
            .filter(|&s| capacity_of(s) / demand[s] <= t * (1.0 + TIGHT_TOLERANCE))
            .fold(0, |acc, s| acc | s);
        for m in 1..NMASKS {
            if !frozen[m] && m & remaining & !tight == 0 {
                level[m] = t;
                frozen[m] = true;
            }
        }
        remaining &= !tight;
    }

    // Classes that can use one resource only have nowhere else to go: their flow is
    // their total. When every class is like that (a CPU-only host, or projects each
    // confined to one resource) no flow needs solving.
    let classes_in_use = (1..NMASKS).filter(|&m| level[m] > 0.0 && weight[m] > 0.0);
    if classes_in_use.clone().all(|m| (m & resources).count_ones() <= 1) {
        let mut flow = [[0.0; NRESOURCES]; NMASKS];
        for m in classes_in_use {
            if let Some(r) = (0..NRESOURCES).find(|&r| m & resources & 1 << r != 0) {
                flow[m][r] = level[m] * weight[m];
            }
        }
        return Filled { flow };
    }
    let mut network = Network::default();
    for r in (0..NRESOURCES).filter(|&r| resources & 1 << r != 0) {
        network.resource_sink[r] = capacity[r];
        network.total_capacity += capacity[r];
    }
    for m in (1..NMASKS).filter(|&m| level[m] > 0.0) {
        network.classes[network.nclasses] = m;
        network.nclasses += 1;
        network.source_class[m] = level[m] * weight[m];
        for r in (0..NRESOURCES).filter(|&r| m & resources & 1 << r != 0) {
            network.class_resource[m][r] = f64::INFINITY;
        }
    }
    network.max_flow();
    let mut flow = [[0.0; NRESOURCES]; NMASKS];
    for (m, row) in flow.iter_mut().enumerate().skip(1) {
        for (r, cell) in row.iter_mut().enumerate() {
            // The reverse residual of class → resource is the flow along it.
            *cell = network.resource_class[r][m];
        }
    }
    Filled { flow }
}

/// The residual network source → class → resource → sink, edge by edge: the only edges
/// it can have, so a search visits a handful of them rather than every pair of nodes.
/// Nodes are numbered source, classes by mask, resources, sink.
#[derive(Default)]
struct Network {
    /// The classes with a total, in mask order.
    classes: [usize; NMASKS],
    nclasses: usize,
    source_class: [f64; NMASKS],
    class_source: [f64; NMASKS],
    class_resource: [[f64; NRESOURCES]; NMASKS],
    resource_class: [[f64; NMASKS]; NRESOURCES],
    resource_sink: [f64; NRESOURCES],
    sink_resource: [f64; NRESOURCES],
    total_capacity: f64,
}

impl Network {
    /// The residual capacity of the edge `from → to` (both adjacent in the network).
    fn residual(&mut self, from: usize, to: usize) -> &mut f64 {
        match (from, to) {
            (SOURCE, m) => &mut self.source_class[m],
            (m, SOURCE) => &mut self.class_source[m],
            (r, SINK) => &mut self.resource_sink[r - NMASKS],
            (SINK, r) => &mut self.sink_resource[r - NMASKS],
            (m, r) if m < NMASKS => &mut self.class_resource[m][r - NMASKS],
            (r, m) => &mut self.resource_class[r - NMASKS][m],
        }
    }

    /// Edmonds–Karp: augments along shortest paths from the source to the sink, ignoring
    /// residuals of a rounding's size so that it cannot chase ever smaller paths. Each
    /// node's neighbours are visited in node order, which makes the result deterministic.
    fn max_flow(&mut self) {
        let epsilon = self.total_capacity * TIGHT_TOLERANCE;
        // Every augmentation saturates an edge along a shortest path; Edmonds–Karp needs
        // at most nodes × edges of them, and this bound also guards against rounding.
        for _ in 0..NODES * NODES * NODES {
            let mut search = Search::new(epsilon);
            while let Some(node) = search.next() {
                if node == SOURCE {
                    for &m in &self.classes[..self.nclasses] {
                        search.reach(node, m, self.source_class[m]);
                    }
                } else if node < NMASKS {
                    // The source, its only other neighbour, is always reached already.
                    for r in 0..NRESOURCES {
                        search.reach(node, NMASKS + r, self.class_resource[node][r]);
                    }
                } else if node < SINK {
                    let r = node - NMASKS;
                    for &m in &self.classes[..self.nclasses] {
                        search.reach(node, m, self.resource_class[r][m]);
                    }
                    search.reach(node, SINK, self.resource_sink[r]);
                }
            }
            let parent = search.parent;
            if parent[SINK] == usize::MAX {
                return;
            }
            let mut bottleneck = f64::INFINITY;
            let mut node = SINK;
            while node != SOURCE {
                bottleneck = bottleneck.min(*self.residual(parent[node], node));
                node = parent[node];
            }
            let mut node = SINK;
            while node != SOURCE {
                let from = parent[node];
                *self.residual(from, node) -= bottleneck;
                *self.residual(node, from) += bottleneck;
                node = from;
            }
        }
    }
}

/// A breadth-first search of the residual network from the source, until it reaches
/// the sink.
struct Search {
    parent: [usize; NODES],
    queue: [usize; NODES],
    head: usize,
    tail: usize,
    epsilon: f64,
}

impl Search {
    fn new(epsilon: f64) -> Self {
        let mut parent = [usize::MAX; NODES];
        parent[SOURCE] = SOURCE;
        Search { parent, queue: [SOURCE; NODES], head: 0, tail: 1, epsilon }
    }

    /// The next node to expand, while the sink is not reached.
    fn next(&mut self) -> Option<usize> {
        if self.head < self.tail && self.parent[SINK] == usize::MAX {
            self.head += 1;
            Some(self.queue[self.head - 1])
        } else {
            None
        }
    }

    /// Follows the edge `from → to` if it has room and `to` is new.
    fn reach(&mut self, from: usize, to: usize, residual: f64) {
        if self.parent[to] == usize::MAX && residual > self.epsilon {
            self.parent[to] = from;
            self.queue[self.tail] = to;
            self.tail += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CPU: ResourceType = ResourceType::Cpu;
    const GPU: ResourceType = ResourceType::Nvidia;
    const AMD: ResourceType = ResourceType::Amd;

    fn eligible(resources: &[ResourceType]) -> ResourceMap<bool> {
        ResourceMap::from_fn(|r| resources.contains(&r))
    }

    fn project(share: f64, resources: &[ResourceType]) -> FairShareProject {
        FairShareProject { share, eligible: eligible(resources) }
    }

    fn map(values: [f64; 4]) -> ResourceMap<f64> {
        ResourceMap(values)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
    }

    macro_rules! assert_close {
        ($a:expr, $b:expr) => {{
            let (a, b): (f64, f64) = ($a, $b);
            assert!(close(a, b), "{} = {a}, expected {b}", stringify!($a));
        }};
    }

    fn id(index: usize) -> ProjectId {
        ProjectId::from_index(index)
    }

    /// Seed 003's example: one CPU, one GPU twice as fast; A has only GPU jobs, B both.
    #[test]
    fn seed_003_example() {
        let target = TargetAllocation::compute(
            map([1.0, 1.0, 0.0, 0.0]),
            map([1.0, 2.0, 0.0, 0.0]),
            [project(1.0, &[GPU]), project(1.0, &[CPU, GPU])],
        );
        assert_close!(target.instances(id(0), GPU), 0.75);
        assert_close!(target.instances(id(0), CPU), 0.0);
        assert_close!(target.instances(id(1), CPU), 1.0);
        assert_close!(target.instances(id(1), GPU), 0.25);
        assert_close!(target.total(id(0)), 1.5);
        assert_close!(target.total(id(1)), 1.5);
        assert_close!(target.unallocated(CPU), 0.0);
        assert_close!(target.unallocated(GPU), 0.0);
    }

    /// The same projects listed the other way round get the same targets.
    #[test]
    fn seed_003_example_in_either_order() {
        let target = TargetAllocation::compute(
            map([1.0, 1.0, 0.0, 0.0]),
            map([1.0, 2.0, 0.0, 0.0]),
            [project(1.0, &[CPU, GPU]), project(1.0, &[GPU])],
        );
        assert_close!(target.instances(id(1), GPU), 0.75);
        assert_close!(target.instances(id(0), CPU), 1.0);
        assert_close!(target.instances(id(0), GPU), 0.25);
    }

    /// Only A can use the GPU: it gets the whole GPU however fast it is, B the CPU, and
    /// nothing is owed across (the unbounded-debt case seed 003 warns about).
    #[test]
    fn only_one_project_can_use_the_gpu() {
        let target = TargetAllocation::compute(
            map([4.0, 1.0, 0.0, 0.0]),
            map([1.0, 50.0, 0.0, 0.0]),
            [project(1.0, &[GPU]), project(1.0, &[CPU])],
        );
        assert_close!(target.instances(id(0), GPU), 1.0);
        assert_close!(target.instances(id(1), CPU), 4.0);
        assert_close!(target.total(id(0)), 50.0);
        assert_close!(target.total(id(1)), 4.0);
    }

    /// On a single resource the target is the plain division by share.
    #[test]
    fn unequal_shares_on_one_resource() {
        let target = TargetAllocation::compute(
            map([6.0, 0.0, 0.0, 0.0]),
            map([1.0, 1.0, 1.0, 1.0]),
            [project(3.0, &[CPU]), project(1.0, &[CPU]), project(2.0, &[CPU])],
        );
        assert_close!(target.instances(id(0), CPU), 3.0);
        assert_close!(target.instances(id(1), CPU), 1.0);
        assert_close!(target.instances(id(2), CPU), 2.0);
    }

    /// Shares 2:1, A on the GPU only, B on both: A's entitlement (2/3 of 3) fits on the
    /// GPU of 2, so A gets the GPU and B the CPU; with the GPU worth 4, A gets 10/3 of it.
    #[test]
    fn unequal_shares_across_resources() {
        let target = TargetAllocation::compute(
            map([1.0, 1.0, 0.0, 0.0]),
            map([1.0, 2.0, 0.0, 0.0]),
            [project(2.0, &[GPU]), project(1.0, &[CPU, GPU])],
        );
        assert_close!(target.instances(id(0), GPU), 1.0);
        assert_close!(target.instances(id(1), CPU), 1.0);
        assert_close!(target.instances(id(1), GPU), 0.0);

        let target = TargetAllocation::compute(
            map([1.0, 1.0, 0.0, 0.0]),
            map([1.0, 4.0, 0.0, 0.0]),
            [project(2.0, &[GPU]), project(1.0, &[CPU, GPU])],
        );
        assert_close!(target.total(id(0)), 10.0 / 3.0);
        assert_close!(target.total(id(1)), 5.0 / 3.0);
        assert_close!(target.instances(id(0), GPU), 10.0 / 12.0);
        assert_close!(target.instances(id(1), GPU), 2.0 / 12.0);
    }

    /// Zero-share projects get nothing where a project with a share is eligible, and
    /// split the rest equally.
    #[test]
    fn zero_share_projects_get_only_leftovers() {
        let target = TargetAllocation::compute(
            map([2.0, 1.0, 1.0, 0.0]),
            map([1.0, 3.0, 2.0, 1.0]),
            [
                project(1.0, &[CPU]),
                project(0.0, &[CPU, GPU]),
                project(0.0, &[GPU, AMD]),
                project(f64::NAN, &[AMD]),
            ],
        );
        assert_close!(target.instances(id(0), CPU), 2.0);
        assert_close!(target.instances(id(1), CPU), 0.0);
        // The GPU (3) and AMD (2) go to the three zero-share projects at equal totals
        // 5/3: project 1 on the GPU only, 2 and 3 share the rest.
        for p in 1..4 {
            assert_close!(target.total(id(p)), 5.0 / 3.0);
        }
        assert_close!(target.instances(id(1), GPU), 5.0 / 9.0);
        assert_close!(target.instances(id(2), GPU) + target.instances(id(1), GPU), 1.0);
        assert_close!(target.instances(id(2), AMD) + target.instances(id(3), AMD), 1.0);
        assert_close!(target.instances(id(3), AMD), 5.0 / 6.0);
    }

    /// A resource nobody can use stays unallocated; one without instances is ignored.
    #[test]
    fn resource_nobody_can_use_stays_unallocated() {
        let target = TargetAllocation::compute(
            map([2.0, 1.0, 0.0, 0.0]),
            map([1.0, 5.0, 1.0, 1.0]),
            [project(1.0, &[CPU, AMD]), project(2.0, &[CPU])],
        );
        assert_close!(target.unallocated(GPU), 1.0);
        assert_close!(target.unallocated(CPU), 0.0);
        assert_close!(target.instances(id(0), CPU), 2.0 / 3.0);
        assert_close!(target.instances(id(0), AMD), 0.0);
        assert_close!(target.instances(id(1), CPU), 4.0 / 3.0);
        assert_eq!(target.project(id(2)), None);
        assert_eq!(target.total(id(2)), 0.0);
    }

    /// Unknown speeds count as a CPU's; the targets are still instances.
    #[test]
    fn unknown_speed_counts_as_a_cpu() {
        let target = TargetAllocation::compute(
            map([1.0, 1.0, 0.0, 0.0]),
            map([1.0, 0.0, 0.0, 0.0]),
            [project(1.0, &[GPU]), project(1.0, &[CPU, GPU])],
        );
        assert_close!(target.instances(id(0), GPU), 1.0);
        assert_close!(target.instances(id(1), CPU), 1.0);
    }

    /// One NVIDIA GPU ten times as fast as a 1-GFLOPS CPU.
    fn fast_gpu() -> crate::model::Coprocessor {
        crate::model::Coprocessor {
            resource: GPU,
            name: "gpu".into(),
            count: 1,
            peak_flops: 1e10,
            available_ram: 0.0,
        }
    }

    #[test]
    fn for_state_uses_instances_speeds_and_shares() {
        use crate::model::Project;
        let mut state = ClientState::default();
        state.host.p_ncpus = 1;
        state.host.p_fpops = 1e9;
        state.host.coprocessors[GPU] = Some(fast_gpu());
        state.projects.push(Project::new("A", "http://a/", 1.0));
        state.projects.push(Project::new("B", "http://b/", 1.0));
        let target = TargetAllocation::for_state(&state, |p, r| p.index() == 1 || r == GPU);
        assert_close!(target.instances(id(0), GPU), 0.75);
        assert_close!(target.instances(id(1), CPU), 1.0);
        assert_close!(target.instances(id(1), GPU), 0.25);
        assert_eq!(target.projects().len(), 2);
    }

    #[test]
    fn the_cache_recomputes_when_a_share_an_eligibility_or_the_host_changes() {
        use crate::model::Project;
        let mut state = ClientState::default();
        state.host.p_ncpus = 2;
        state.host.p_fpops = 1e9;
        state.projects.push(Project::new("A", "http://a/", 1.0));
        state.projects.push(Project::new("B", "http://b/", 1.0));
        let mut cache = TargetCache::default();
        let mut check =
            |state: &ClientState, eligible: &dyn Fn(ProjectId, ResourceType) -> bool| {
                let fresh = TargetAllocation::for_state(state, eligible);
                assert_eq!(cache.for_state(state, eligible), &fresh);
                fresh
            };
        let everyone = |_: ProjectId, _: ResourceType| true;
        assert_close!(check(&state, &everyone).instances(id(0), CPU), 1.0);
        assert_close!(check(&state, &everyone).instances(id(0), CPU), 1.0);
        state.projects[1].resource_share = 3.0;
        assert_close!(check(&state, &everyone).instances(id(0), CPU), 0.5);
        assert_close!(check(&state, &|p, _| p.index() == 0).instances(id(0), CPU), 2.0);
        state.host.coprocessors[GPU] = Some(fast_gpu());
        let with_gpu = check(&state, &everyone);
        assert_close!(with_gpu.instances(id(0), GPU) + with_gpu.instances(id(1), GPU), 1.0);
        state.projects.push(Project::new("C", "http://c/", 1.0));
        assert_eq!(check(&state, &everyone).projects().len(), 3);
    }

    #[derive(Debug, Clone)]
    struct Case {
        instances: [f64; 4],
        speed: [f64; 4],
        projects: Vec<(f64, [bool; 4])>,
    }

    fn case() -> impl Strategy<Value = Case> {
        let instances = [0u32..6, 0u32..4, 0u32..3, 0u32..3];
        let speed = [0.5f64..2.0, 0.5f64..30.0, 0.5f64..30.0, 0.1f64..5.0];
        let share = prop_oneof![1 => Just(0.0), 4 => 0.01f64..1000.0];
        let projects = proptest::collection::vec((share, any::<[bool; 4]>()), 0..25);
        (instances, speed, projects).prop_map(|(instances, speed, projects)| Case {
            instances: instances.map(f64::from),
            speed,
            projects,
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Checks, besides feasibility (per-resource allocation ≤ instances, only eligible
        /// resources, totals = Σ instances × speed), the two conditions that make the
        /// allocation weighted max-min fair:
        /// - *saturation*: a resource with unallocated capacity has no eligible project;
        /// - *bottleneck*: if P is allotted part of R, every project with a share that is
        ///   eligible for R has a level at least P's (likewise among the zero-share
        ///   projects, which never hold a resource a project with a share may use).
        ///
        /// Together they rule out every way to raise a project by taking from one at a
        /// higher level, directly or along a chain of projects handing resources on
        /// (each hop of a chain would need a bottleneck violation).
        #[test]
        fn allocation_is_feasible_and_max_min_fair(case in case()) {
            let target = TargetAllocation::compute(
                ResourceMap(case.instances),
                ResourceMap(case.speed),
                case.projects.iter().map(|&(share, e)| FairShareProject {
                    share,
                    eligible: ResourceMap(e),
                }),
            );
            let targets = target.projects();
            prop_assert_eq!(targets.len(), case.projects.len());
            let scale = 1.0 + (0..4).map(|r| case.instances[r] * case.speed[r]).sum::<f64>();
            let tol = 1e-9 * scale;
            let max_level = targets.iter().fold(0.0f64, |m, t| m.max(t.level));
            let level_tol = 1e-9 * (1.0 + max_level);
            for (r, resource) in ResourceType::ALL.into_iter().enumerate() {
                let allocated: f64 = targets.iter().map(|t| t.instances[resource]).sum();
                prop_assert!(allocated <= case.instances[r] + 1e-9, "{resource}: {allocated}");
                let leftover = case.instances[r] - allocated;
                prop_assert!((target.unallocated(resource) - leftover.max(0.0)).abs() <= 1e-9);
                let anyone = case.projects.iter().any(|&(_, e)| e[r]);
                if anyone {
                    prop_assert!(leftover * case.speed[r] <= tol, "{resource} left {leftover}");
                }
            }
            for (p, (t, &(share, e))) in targets.iter().zip(&case.projects).enumerate() {
                let mut total = 0.0;
                for (r, resource) in ResourceType::ALL.into_iter().enumerate() {
                    let n = t.instances[resource];
                    prop_assert!(n >= 0.0 && n.is_finite());
                    if !e[r] || case.instances[r] == 0.0 {
                        prop_assert_eq!(n, 0.0, "project {} on {}", p, resource);
                    }
                    total += n * case.speed[r];
                }
                prop_assert!((total - t.total).abs() <= tol);
                for (r, resource) in ResourceType::ALL.into_iter().enumerate() {
                    if t.instances[resource] * case.speed[r] <= tol {
                        continue;
                    }
                    for (q, (u, &(other_share, f))) in
                        targets.iter().zip(&case.projects).enumerate()
                    {
                        if !f[r] {
                            continue;
                        }
                        if share > 0.0 && other_share > 0.0 || share == 0.0 && other_share == 0.0 {
                            prop_assert!(
                                u.level >= t.level - level_tol,
                                "{} at {} holds {} that {} at {} may use",
                                p, t.level, resource, q, u.level
                            );
                        } else {
                            prop_assert!(share > 0.0, "zero-share {} holds {}", p, resource);
                        }
                    }
                }
            }
        }
    }

    /// A representative size (4 resources, 100 projects of mixed eligibility) stays far
    /// below the decision budget.
    #[test]
    fn hundred_projects_fill_every_resource() {
        // Speed is measured by the decision bench; this checks the large case is right.
        let projects: Vec<FairShareProject> = (0..100)
            .map(|i| FairShareProject {
                share: f64::from(i % 7),
                eligible: ResourceMap::from_fn(|r| (i >> r.index()) & 1 == 1 || r == CPU),
            })
            .collect();
        let target = TargetAllocation::compute(
            map([64.0, 4.0, 2.0, 1.0]),
            map([1.0, 20.0, 15.0, 3.0]),
            projects.iter().copied(),
        );
        for r in ResourceType::ALL {
            assert!(target.unallocated(r) < 1e-9, "{r} left unallocated");
        }
        assert_eq!(target.projects().len(), 100);
    }
}
