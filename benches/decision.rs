//! One full scheduling decision (rr_sim + CPU schedule + enforcement + work fetch) on a
//! large host: 64 CPUs, 4 GPUs (2 NVIDIA, 2 AMD), 20 projects, 1,000 to 10,000 queued
//! jobs. Target: median under 2 ms at 10,000 jobs, growth at most ~12× from 1,000.
//!
//! Run: `cargo bench -p boinc-core --bench decision`.

use boinc_core::Policy;
use boinc_core::cpu_sched::make_run_list;
use boinc_core::decision::decide;
use boinc_core::enforce::enforce;
use boinc_core::model::{
    ActiveTask, App, AppId, AppVersion, AppVersionId, ClientState, Coprocessor, Host, Job, Project,
    ProjectFacts, ProjectId, ResourceMap, ResourceType, ResourceUsage, SchedulerState, Workunit,
    WorkunitId,
};
use boinc_core::rr_sim::simulate;
use boinc_core::work_fetch::choose_work_fetch;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;

const NOW: f64 = 1.8e9;

/// A deterministic large host: project k has a CPU app, every fourth project also an
/// NVIDIA app, every fifth an AMD app, every seventh a 8-thread app; jobs are spread over
/// projects and apps with random sizes and deadlines, and the first jobs of each kind are
/// running so enforcement has real work to do.
fn big_host(njobs: usize, seed: u64) -> ClientState {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut coprocessors: ResourceMap<Option<Coprocessor>> = ResourceMap::default();
    coprocessors[ResourceType::Nvidia] = Some(Coprocessor {
        resource: ResourceType::Nvidia,
        name: "bench NVIDIA".into(),
        count: 2,
        peak_flops: 1e13,
        available_ram: 8e9,
    });
    coprocessors[ResourceType::Amd] = Some(Coprocessor {
        resource: ResourceType::Amd,
        name: "bench AMD".into(),
        count: 2,
        peak_flops: 6e12,
        available_ram: 8e9,
    });
    let mut state = ClientState {
        host: Host {
            p_ncpus: 64,
            p_fpops: 4e9,
            m_nbytes: 256e9,
            m_swap: 0.0,
            d_total: 2e12,
            d_free: 1e12,
            coprocessors,
        },
        ..ClientState::default()
    };
    let mut versions: Vec<AppVersionId> = Vec::new();
    for k in 0..20u32 {
        let project = ProjectId(k);
        let mut p = Project::new(
            format!("p{k:02}"),
            format!("https://p{k:02}.example.org/"),
            50.0 + f64::from(k % 4) * 25.0,
        );
        p.short_term_debt = f64::from(k) * 100.0;
        let mut kinds = vec![ResourceUsage { avg_ncpus: 1.0, coprocessor: None }];
        if k % 4 == 0 {
            kinds.push(ResourceUsage {
                avg_ncpus: 0.2,
                coprocessor: Some((ResourceType::Nvidia, 1.0)),
            });
        }
        if k % 5 == 0 {
            kinds.push(ResourceUsage {
                avg_ncpus: 0.5,
                coprocessor: Some((ResourceType::Amd, 0.5)),
            });
        }
        if k % 7 == 0 {
            kinds.push(ResourceUsage { avg_ncpus: 8.0, coprocessor: None });
        }
        for usage in kinds {
            p.resources[usage.main_resource()].has_app_version = true;
            p.resources[usage.main_resource()].accumulate_debt = true;
            let app = AppId::from_index(state.apps.len());
            state.apps.push(App {
                project,
                name: format!("app{}", state.apps.len()),
                max_concurrent: None,
                non_cpu_intensive: false,
                emulation: None,
            });
            let flops = match usage.coprocessor {
                Some((r, _)) => state.host.instance_flops(r),
                None => 4e9 * usage.avg_ncpus,
            };
            versions.push(AppVersionId::from_index(state.app_versions.len()));
            state.app_versions.push(AppVersion {
                project,
                app,
                version_num: 100,
                plan_class: String::new(),
                usage,
                flops,
            });
        }
        state.projects.push(p);
    }
    for i in 0..njobs {
        let av = versions[rng.random_range(0..versions.len())];
        let version = &state.app_versions[av.index()];
        let (project, app, flops) = (version.project, version.app, version.flops);
        let cpu_only = version.usage.coprocessor.is_none();
        let hours: f64 = rng.random_range(0.5..12.0);
        let workunit = WorkunitId::from_index(state.workunits.len());
        state.workunits.push(Workunit {
            project,
            name: format!("wu{i}"),
            app,
            rsc_fpops_est: hours * 3600.0 * flops,
            rsc_fpops_bound: hours * 36000.0 * flops,
            rsc_memory_bound: 5e8,
            rsc_disk_bound: 1e9,
            input_files: Vec::new(),
        });
        let received = NOW - rng.random_range(0.0..5.0 * 86400.0);
        // Enough running CPU tasks to fill most of the 64 CPUs, so enforcement has work.
        let running = i < 90 && cpu_only;
        let deadline = received + rng.random_range(1.0..14.0) * 86400.0;
        let mut job =
            Job::downloaded(project, format!("wu{i}_0"), workunit, av, received, deadline);
        job.task = running.then(|| ActiveTask {
            scheduler_state: SchedulerState::Running,
            elapsed_time: 1800.0,
            current_cpu_time: 1700.0,
            fraction_done: 0.1,
            checkpoint_elapsed_time: 1500.0,
            checkpoint_cpu_time: 1400.0,
            checkpoint_wall_time: NOW - 300.0,
            run_start_time: NOW - 1800.0,
            working_set_size: 3e8,
            once_ran_edf: false,
            slot: i as u32,
            gpu_instances: Vec::new(),
        });
        state.jobs.push(job);
    }
    state
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
