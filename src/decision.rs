//! One complete scheduling decision for a snapshot of the client state: the seed 000
//! pipeline of round-robin simulation, CPU scheduling and enforcement, followed by the
//! outlook the seed 003 work-fetch choice is made from, all from the same simulation.

use crate::cpu_sched::{RunList, RunListScratch, make_run_list_with_scratch};
use crate::enforce::{EnforceScratch, Enforcement, enforce_with_scratch};
use crate::model::{ClientState, ProjectFacts, ResourceType};
use crate::rr_sim::{RrSimOutput, RrSimScratch, simulate_with_scratch};
use crate::work_fetch::{FetchOutlook, FetchScratch, fetch_outlook_with};
use crate::{Policy, Time};

/// Everything the core decides at one instant, and the intermediate results it was
/// decided from (so a caller can explain it).
#[derive(Debug, Clone)]
pub struct Decision {
    /// When the decision was made.
    pub now: Time,
    /// The policy family it was made with.
    pub policy: Policy,
    /// Per-project job facts the predicates were evaluated on.
    pub facts: Vec<ProjectFacts>,
    /// The round-robin simulation.
    pub rr_sim: RrSimOutput,
    /// The jobs that should run, in priority order, with why.
    pub run_list: RunList,
    /// What to do to the tasks to get there.
    pub enforcement: Enforcement,
    /// What the work-fetch choice reads ([`crate::work_fetch::select_work_fetch`] makes
    /// it: the fetch actor, or the core engine's RPC step).
    pub fetch: FetchOutlook,
}

/// Makes one decision. `last_schedule_time` is when the previous decision was enforced:
/// running jobs that have not checkpointed since then are left running (seed 000).
pub fn decide(
    state: &ClientState,
    policy: Policy,
    last_schedule_time: Time,
    now: Time,
) -> Decision {
    decide_with_facts(state, ProjectFacts::gather(state), policy, last_schedule_time, now)
}

/// [`decide`] with the project facts already gathered from this same state (a caller
/// that needed them first, for accounting, need not gather them twice).
pub fn decide_with_facts(
    state: &ClientState,
    facts: Vec<ProjectFacts>,
    policy: Policy,
    last_schedule_time: Time,
    now: Time,
) -> Decision {
    let scratch = &mut DecisionScratch::default();
    decide_with_scratch(state, facts, policy, last_schedule_time, now, scratch)
}

/// The buffers a decision works in, kept by a caller that decides again and again so
/// that a decision allocates little once they have grown.
#[derive(Debug, Default, Clone)]
pub struct DecisionScratch {
    /// The round-robin simulation's (see [`simulate_with_scratch`]).
    pub rr_sim: RrSimScratch,
    /// The run list's candidate lists (see [`make_run_list_with_scratch`]).
    pub run_list: RunListScratch,
    /// Enforcement's tables and lists (see [`enforce_with_scratch`]).
    enforce: EnforceScratch,
    /// The work-fetch outlook's lists.
    work_fetch: FetchScratch,
    /// The project facts' list of a decision no longer needed.
    spare_facts: Vec<ProjectFacts>,
    /// The project facts' working space (see [`ProjectFacts::gather_with`]).
    facts_versions: Vec<ResourceType>,
}

impl DecisionScratch {
    /// Keeps the buffers of a decision the caller is done with (its facts, simulation,
    /// run list, enforcement and work-fetch outlook) for the next decisions.
    pub fn recycle(&mut self, decision: Decision) {
        self.spare_facts = decision.facts;
        self.rr_sim.recycle_output(decision.rr_sim);
        self.run_list.recycle_list(decision.run_list);
        self.enforce.recycle(decision.enforcement);
        self.work_fetch.recycle(decision.fetch);
    }

    /// [`ProjectFacts::gather`], in the list of a recycled decision.
    pub fn gather_facts(&mut self, state: &ClientState) -> Vec<ProjectFacts> {
        let mut facts = std::mem::take(&mut self.spare_facts);
        ProjectFacts::gather_with(state, &mut facts, &mut self.facts_versions);
        facts
    }
}

/// [`decide_with_facts`] with the round-robin simulation, the run list and enforcement
/// working in `scratch`'s buffers.
pub fn decide_with_scratch(
    state: &ClientState,
    facts: Vec<ProjectFacts>,
    policy: Policy,
    last_schedule_time: Time,
    now: Time,
    scratch: &mut DecisionScratch,
) -> Decision {
    let rr_sim = simulate_with_scratch(state, &facts, now, &mut scratch.rr_sim);
    let run_list =
        make_run_list_with_scratch(state, &rr_sim, &facts, policy, now, &mut scratch.run_list);
    let enforcement = enforce_with_scratch(
        state,
        &run_list,
        &rr_sim,
        last_schedule_time,
        now,
        &mut scratch.enforce,
    );
    let fetch = fetch_outlook_with(state, &rr_sim, &facts, policy, now, &mut scratch.work_fetch);
    Decision { now, policy, facts, rr_sim, run_list, enforcement, fetch }
}
