//! The scheduler actor's decision latency: one control-loop step ([`Tick`]: poll every
//! task actor, decide, send the commands) on a host with 1,000 CPUs, 1,000 active task
//! actors and 10,000 queued jobs, simulated effects, no server contact.
//!
//! Criterion reports the median; the bench also prints the median and p99 of 300
//! consecutive steps (a step every simulated minute).
//!
//! Run: `cargo bench -p boinc-runtime --bench actor_decision`.

use actix::Addr;
use boinc_core::Policy;
use boinc_core::control::ClientControl;
use boinc_core::model::{SyntheticHost, synthetic_host};
use boinc_emulator::engine::SimConfig;
use boinc_emulator::world::World;
use boinc_runtime::journal::Journal;
use boinc_runtime::runtime::SchedulerActor;
use boinc_runtime::runtime::context::ActorContext;
use boinc_runtime::runtime::events::EventBus;
use boinc_runtime::runtime::messages::{Startup, Tick};
use boinc_runtime::runtime::scheduler::SchedulerSetup;
use boinc_runtime::sim::effects::{Faults, SimWorld, VirtualClock};
use boinc_runtime::sim::paused_system;
use criterion::{Criterion, criterion_group, criterion_main};
use std::time::{Duration, Instant};

const NOW: f64 = 1.8e9;

struct Bench {
    scheduler: Addr<SchedulerActor>,
    sim: SimWorld,
    clock: VirtualClock,
    now: f64,
}

impl Bench {
    async fn new() -> Bench {
        let state = synthetic_host(SyntheticHost {
            ncpus: 1000,
            njobs: 11_000,
            running_prefix: 1_430,
            seed: 7,
            now: NOW,
        });
        let running = state.jobs.iter().filter(|j| j.is_running()).count();
        assert!((990..=1010).contains(&running), "{running} running tasks");
        let config = SimConfig {
            scenario: "synthetic".into(),
            policy: Policy::Seed,
            seed: 1,
            duration: 1e9,
            boinc_compat: false,
            existing_jobs_only: true,
            trace: false,
        };
        let client = ClientControl::new(state, Policy::Seed, false, true, NOW);
        let mut world = World::new(client.state(), &config, NOW);
        world.adopt_jobs(client.state());
        let sim = SimWorld::new(world, client.state(), Faults::default(), 1);
        let clock = VirtualClock::new(NOW);
        let context = ActorContext {
            clock: std::sync::Arc::new(clock.clone()),
            journal: Journal::off(),
            events: EventBus::default(),
            faults: Default::default(),
        };
        let (scheduler, _link) = SchedulerActor::launch(SchedulerSetup {
            client,
            context,
            process_host: std::sync::Arc::new(sim.clone()),
            transport: std::sync::Arc::new(sim.clone()),
            seed: 1,
            boinc_compat: false,
            app_restart_policy: boinc_core::supervise::RestartPolicy::APP,
            actor_restart_policy: boinc_core::supervise::RestartPolicy::ACTOR,
            disk: None,
            file_transfer: None,
            persistence: None,
        });
        scheduler.send(Startup { now: NOW }).await.expect("startup");
        Bench { scheduler, sim, clock, now: NOW }
    }

    /// One step a simulated minute after the previous one; its wall time.
    async fn step(&mut self) -> Duration {
        self.now += 60.0;
        boinc_runtime::sim::effects::lock(self.sim.world()).advance_to(self.now);
        self.clock.set(self.now);
        let started = Instant::now();
        self.scheduler.send(Tick { now: self.now }).await.expect("tick");
        started.elapsed()
    }
}

fn bench_actor_decision(c: &mut Criterion) {
    let system = paused_system().expect("runtime");
    let mut bench = system.block_on(Bench::new());
    let mut samples: Vec<Duration> = system.block_on(async {
        let mut samples = Vec::with_capacity(300);
        for _ in 0..300 {
            samples.push(bench.step().await);
        }
        samples
    });
    samples.sort();
    let at =
        |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e3;
    println!(
        "scheduler actor step, 1,000 task actors, 10,000 queued jobs: median {:.3} ms, p99 {:.3} ms ({} steps)",
        at(0.5),
        at(0.99),
        samples.len()
    );
    c.bench_function("scheduler_actor_tick_1000_tasks_10000_jobs", |b| {
        b.iter_custom(|iters| {
            system.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += bench.step().await;
                }
                total
            })
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench_actor_decision
}
criterion_main!(benches);
