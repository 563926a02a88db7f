//! One full scheduling decision (rr_sim + CPU schedule + enforcement + work fetch) on a
//! large host: 64 CPUs, 4 GPUs (2 NVIDIA, 2 AMD), 20 projects, 1,000 to 10,000 queued
//! jobs. Target: median under 2 ms at 10,000 jobs, growth at most ~12× from 1,000.
//!
//! Run: `cargo bench -p boinc-core --bench decision`.

use boinc_core::Policy;
use boinc_core::cpu_sched::make_run_list;
use boinc_core::decision::decide;
use boinc_core::enforce::enforce;
use boinc_core::model::{ClientState, ProjectFacts, SyntheticHost, synthetic_host};
use boinc_core::rr_sim::simulate;
use boinc_core::work_fetch::choose_work_fetch;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;

const NOW: f64 = 1.8e9;

fn big_host(njobs: usize, seed: u64) -> ClientState {
    // Enough running CPU tasks to fill most of the 64 CPUs, so enforcement has work.
    synthetic_host(SyntheticHost { ncpus: 64, njobs, running_prefix: 90, seed, now: NOW })
}

fn bench_decision(c: &mut Criterion) {
    let mut group = c.benchmark_group("full_decision_64cpu_4gpu_20projects");
    for njobs in [1_000usize, 10_000] {
        let state = big_host(njobs, 7);
        for policy in Policy::ALL {
            group.bench_with_input(BenchmarkId::new(policy.name(), njobs), &state, |b, state| {
                b.iter(|| decide(black_box(state), policy, NOW - 60.0, NOW))
            });
        }
    }
    group.finish();
}

/// Each stage of the decision alone at 10,000 jobs, to show where the time goes.
fn bench_stages(c: &mut Criterion) {
    let state = big_host(10_000, 7);
    let facts = ProjectFacts::gather(&state);
    let rr = simulate(&state, &facts, NOW);
    let run_list = make_run_list(&state, &rr, &facts, Policy::Seed, NOW);
    let mut group = c.benchmark_group("stages_10000_jobs");
    group.bench_function("project_facts", |b| b.iter(|| ProjectFacts::gather(black_box(&state))));
    group.bench_function("rr_sim", |b| b.iter(|| simulate(black_box(&state), &facts, NOW)));
    group.bench_function("cpu_sched", |b| {
        b.iter(|| make_run_list(black_box(&state), &rr, &facts, Policy::Seed, NOW))
    });
    group.bench_function("enforce", |b| {
        b.iter(|| enforce(black_box(&state), &run_list, &rr, NOW - 60.0, NOW))
    });
    group.bench_function("work_fetch", |b| {
        b.iter(|| choose_work_fetch(black_box(&state), &rr, &facts, Policy::Seed, NOW))
    });
    group.finish();
}

criterion_group!(benches, bench_decision, bench_stages);
criterion_main!(benches);
