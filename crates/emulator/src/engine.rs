//! The emulator's event loop (docs/design.md "Emulator"; the triggers of seed 000 "CPU
//! scheduling policy": job completion, end of a scheduling period, new runnable jobs;
//! seed 002's fetch polling and backoff expiry; availability changes).
//!
//! Virtual time jumps from one event to the next: nothing happens between a job's
//! completion, a time slice's end, a checkpoint a preemption waits for, a moment the
//! work buffer falls below its low-water mark, a backoff's expiry or an availability
//! change, so a simulated year costs what its events cost, not what its seconds cost.
//! Every decision is the core's own [`decide`](boinc_core::decision::decide): the emulator
//! runs exactly the policies the live client runs.
//!
//! The emulated world: a running job progresses at its app version's flops while its
//! resource may compute; it checkpoints every `checkpoint_period` seconds of running (an
//! app without one checkpoints continuously); a finished job uploads at once and is
//! reported by the RPC policy; project servers answer with generated jobs.

use super::disk_world::DiskWorld;
use super::world::World;
use crate::figures::FiguresOfMerit;
use crate::trace::TraceEvent;
use boinc_core::control::{
    ClientControl, RpcGate, apply_master_fetch, apply_rpc_outcome, client_rng,
};
use boinc_core::model::{ClientState, JobId};
use boinc_core::{Policy, Time};
use rand_chacha::ChaCha8Rng;
use thiserror::Error;

pub use boinc_core::control::client_control::FETCH_POLL_INTERVAL;

/// How an emulator run is set up.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Scenario name, for the trace.
    pub scenario: String,
    /// Policy family.
    pub policy: Policy,
    /// Seed of every random choice (servers, availability).
    pub seed: u64,
    /// Simulated seconds.
    pub duration: f64,
    /// Reproduce BOINC's emulator's modelling choices (REFERENCE.md): CPU jobs keep
    /// running while the host is off or computing is suspended and CPU capacity counts
    /// the whole time; servers never say "no app for this resource"; `max_concurrent`
    /// in client_state.xml is ignored; a server's up/down process advances only when
    /// the client contacts it, by at most one change.
    pub boinc_compat: bool,
    /// Never contact the servers: run only the jobs the scenario already holds.
    pub existing_jobs_only: bool,
    /// Keep the trace events.
    pub trace: bool,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct SimResult {
    /// BOINC's figures of merit (wall_seconds left for the caller, which has a clock).
    pub figures: FiguresOfMerit,
    /// The trace, if asked for.
    pub trace: Vec<TraceEvent>,
    /// Decisions made.
    pub decisions: u64,
    /// Scheduler RPCs attempted.
    pub rpcs: u64,
}

/// Steps (instants at which the client looks at its state) a run may take per simulated
/// day, for each processing instance of the host (and ten more): one a minute each. Real
/// scenarios take far fewer (big_host, 68 instances: about 1,100 a day); a scenario
/// whose jobs last no time would otherwise run for ever.
pub const MAX_STEPS_PER_INSTANCE_DAY: u64 = 1440;

/// The most steps a run of `state` may take per simulated day (see
/// [`MAX_STEPS_PER_INSTANCE_DAY`]).
pub fn max_steps_per_day(state: &ClientState) -> u64 {
    let instances: u64 = state.instance_counts().0.iter().map(|&n| u64::from(n)).sum();
    MAX_STEPS_PER_INSTANCE_DAY * (instances + 10)
}

/// Why a run stopped before its end.
#[derive(Debug, Clone, Error)]
pub enum SimError {
    /// The run took more steps than [`max_steps_per_day`] allows.
    #[error(
        "the scenario made the client act {steps} times in its first {days:.3} simulated days, \
         more than {per_day} a day: it was stopped there. Check the scenario's job sizes \
         (fpops, fpops_est), app versions (avg_ncpus, flops) and host speeds for values near \
         zero"
    )]
    Runaway {
        /// Steps taken.
        steps: u64,
        /// The cap per day the run went past.
        per_day: u64,
        /// Simulated days done when it stopped.
        days: f64,
        /// The run up to where it stopped (figures over the whole horizon, the rest idle).
        partial: Box<SimResult>,
    },
}

/// Runs a scenario. `progress` is called with the fraction of simulated time done, often
/// enough for a progress bar and cheaply. A run that runs away (see [`SimError`]) gives
/// what it did up to where it stopped; [`try_run_simulation`] says so.
pub fn run_simulation(
    state: ClientState,
    config: &SimConfig,
    progress: &mut dyn FnMut(f64),
) -> SimResult {
    match try_run_simulation(state, config, progress) {
        Ok(result) => result,
        Err(SimError::Runaway { partial, .. }) => *partial,
    }
}

/// [`run_simulation`], with a run that runs away an error.
pub fn try_run_simulation(
    state: ClientState,
    config: &SimConfig,
    progress: &mut dyn FnMut(f64),
) -> Result<SimResult, SimError> {
    let mut sim = Simulator::new(state, config);
    let stopped = sim.run(progress);
    let days = (sim.now - sim.start) / boinc_core::model::SECONDS_PER_DAY;
    let result = sim.finish();
    match stopped {
        None => Ok(result),
        Some((steps, per_day)) => {
            Err(SimError::Runaway { steps, per_day, days, partial: Box::new(result) })
        }
    }
}

/// Where a run stood when it stopped: the client's state and the time, as a state file
/// saved then would hold them (what `boinc-rs explain` looks at in the middle of a run).
#[derive(Debug, Clone)]
pub struct SimSnapshot {
    /// The client's state at the end of the run.
    pub state: ClientState,
    /// The end of the run, virtual seconds.
    pub now: Time,
    /// When the client last scheduled (its last decision).
    pub last_schedule: Time,
}

/// Runs a scenario for `config.duration` and returns where the client stands then.
pub fn run_to_snapshot(state: ClientState, config: &SimConfig) -> SimSnapshot {
    let mut sim = Simulator::new(state, config);
    // A run that ran away stops early: its snapshot is where it stopped.
    let _ = sim.run(&mut |_| {});
    let last_schedule = sim.client.last_decision().map_or(sim.now, |d| d.now);
    SimSnapshot { state: sim.client.state().clone(), now: sim.now, last_schedule }
}

/// The run's starting point: the scenario's state, adjusted for BOINC-compatible mode.
pub fn prepare_state(mut state: ClientState, config: &SimConfig) -> (ClientState, Time) {
    let start = boinc_core::explain::state_time(&state);
    if config.boinc_compat {
        for app in &mut state.apps {
            app.max_concurrent = None;
        }
    }
    (state, start)
}

/// Where the next step happens: the earliest change of the world or wish of the client,
/// at most a scheduling period away (the real client reschedules at least that often)
/// and strictly later than now.
pub fn next_step_time(world_change: Time, client_wakeup: Time, now: Time, period: f64) -> Time {
    world_change.min(client_wakeup).min(now + period).max(now + 1e-6)
}

struct Simulator {
    client: ClientControl,
    world: World,
    /// Each project's random source for its RPC policy.
    project_rngs: Vec<ChaCha8Rng>,
    disk: DiskWorld,
    /// The jobs that finished at the current step, with their slots, kept from one step
    /// to the next so that a step allocates nothing for them.
    finished: Vec<(JobId, u32)>,
    now: Time,
    start: Time,
    end: Time,
}

impl Simulator {
    fn new(state: ClientState, config: &SimConfig) -> Self {
        let (state, start) = prepare_state(state, config);
        let mut world = World::new(&state, config, start);
        let mut client = ClientControl::new(
            state,
            config.policy,
            config.boinc_compat,
            config.existing_jobs_only,
            start,
        );
        world.adopt_jobs(client.state());
        for command in client.startup_commands() {
            world.apply(command);
        }
        let project_rngs =
            client.state().project_ids().map(|p| client_rng(config.seed, p)).collect();
        let end = world.end();
        let disk = DiskWorld::new(client.state_mut(), start, &mut world.disk_sink());
        Simulator {
            client,
            world,
            project_rngs,
            disk,
            finished: Vec::new(),
            now: start,
            start,
            end,
        }
    }

    /// Runs to the end; returns the steps taken and the cap per day if it had to stop
    /// early (see [`max_steps_per_day`]).
    fn run(&mut self, progress: &mut dyn FnMut(f64)) -> Option<(u64, u64)> {
        let span = (self.end - self.start).max(1.0);
        let mut next_progress = 0.0;
        let mut steps: u64 = 1;
        let per_day = max_steps_per_day(self.client.state());
        self.step();
        loop {
            let days = (self.now - self.start) / boinc_core::model::SECONDS_PER_DAY;
            if steps as f64 > per_day as f64 * (days + 1.0) {
                progress(1.0);
                return Some((steps, per_day));
            }
            steps += 1;
            let period = self.client.state().prefs.scheduling_period();
            let next = next_step_time(
                self.world.next_change(),
                self.client.next_wakeup(self.now),
                self.now,
                period,
            );
            if next >= self.end {
                self.advance_to(self.end);
                break;
            }
            self.advance_to(next);
            self.step();
            let done = (self.now - self.start) / span;
            if done >= next_progress {
                progress(done.min(1.0));
                next_progress = done + 0.01;
            }
        }
        progress(1.0);
        None
    }

    fn advance_to(&mut self, to: Time) {
        self.client.accumulate_usage(to - self.now);
        self.world.advance_to(to);
        self.now = to;
    }

    /// Everything that happens at the current instant, in the control loop's order.
    fn step(&mut self) {
        let now = self.now;
        if self.world.pop_availability_changes() {
            self.client.set_host(self.world.host_view());
        }
        let mut finished = std::mem::take(&mut self.finished);
        finished.clear();
        let world = &self.world;
        self.client.apply_statuses(|slot| world.status(slot), &mut finished);
        // Reaping a process changes no other's status: the finished ones go after all
        // were heard, in the same order.
        for &(_, slot) in &finished {
            self.world.reap(slot);
        }
        for &(id, _) in &finished {
            self.client.complete(id, now);
        }
        for &(id, _) in &finished {
            self.disk.job_finished(self.client.state_mut(), id, now, &mut self.world.disk_sink());
        }
        self.finished = finished;
        self.disk.poll(self.client.state_mut(), now, &mut self.world.disk_sink());
        self.schedule();
        if self.rpc_step() {
            self.schedule();
        }
        self.client.compact();
    }

    fn schedule(&mut self) {
        for command in self.client.schedule(self.now) {
            self.world.apply(command);
        }
    }

    /// One scheduler RPC if the policies want one now; returns whether it brought jobs.
    fn rpc_step(&mut self) -> bool {
        let now = self.now;
        if self.client.rpc_gate(now) != RpcGate::Open {
            return false;
        }
        let mut read = false;
        for project in self.client.master_fetches_due(now) {
            let page = self.world.master_page(project);
            let rng = &mut self.project_rngs[project.index()];
            let p = &mut self.client.state_mut().projects[project.index()];
            read |= apply_master_fetch(p, page, now, rng);
        }
        if read {
            // Master pages read: look again with those projects askable.
            self.schedule();
        }
        let Some(call) = self.client.rpc_call(now) else { return false };
        let project = call.request.project;
        let world = &mut self.world;
        let reply = self
            .client
            .send_request(&call, now, |request| world.scheduler_rpc(project, request, now));
        let outcome = self.client.finish_rpc(&call, reply, now);
        // The session settles the project's RPC state (backoff, next RPC time) in the
        // project's record itself: the emulator has no session running beside the loop.
        apply_rpc_outcome(
            &mut self.client.state_mut().projects[project.index()],
            &call.request,
            outcome.as_ref().map(|o| (&o.work, o.work.request_delay)),
            now,
            &mut self.project_rngs[project.index()],
        );
        let new_jobs = outcome.map(|o| o.new_jobs).unwrap_or_default();
        self.disk.after_reply(self.client.state_mut(), &new_jobs, now, &mut self.world.disk_sink());
        !new_jobs.is_empty()
    }

    fn finish(mut self) -> SimResult {
        let decisions = self.client.decisions();
        let rpcs = self.client.rpcs();
        let (figures, trace) = self.world.finish();
        SimResult { figures, trace, decisions, rpcs }
    }
}
