//! A deterministic synthetic host with many projects and jobs, for benchmarks and load
//! tests of the decision path and the actor runtime (no seed section: a test fixture of
//! realistic shape, kept in the library so every bench builds the same host).

use crate::Time;
use crate::model::{
    ActiveTask, App, AppId, AppVersion, AppVersionId, ClientState, Coprocessor, Host, Job, Project,
    ProjectId, ResourceMap, ResourceType, ResourceUsage, SchedulerState, TaskPeaks, Workunit,
    WorkunitId,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The shape of a synthetic host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SyntheticHost {
    /// CPUs.
    pub ncpus: u32,
    /// Queued jobs.
    pub njobs: usize,
    /// CPU-only jobs among the first this many are running.
    pub running_prefix: usize,
    /// Seed of the random sizes and deadlines.
    pub seed: u64,
    /// The time the state is taken at.
    pub now: Time,
}

/// A large host: 2 NVIDIA and 2 AMD GPUs and 20 projects; project k has a CPU app,
/// every fourth project also an NVIDIA app, every fifth an AMD app, every seventh an
/// 8-thread app; jobs are spread over projects and apps with random sizes and
/// deadlines, and the CPU-only ones among the first `running_prefix` are running, so
/// enforcement has real work to do.
pub fn synthetic_host(shape: SyntheticHost) -> ClientState {
    let SyntheticHost { ncpus, njobs, running_prefix, seed, now } = shape;

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
            p_ncpus: ncpus,
            p_fpops: 4e9,
            m_nbytes: 256e9,
            m_swap: 0.0,
            d_total: 2e12,
            d_free: 1e12,
            coprocessors,
            ..Host::default()
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
            state.apps.push(App::new(project, format!("app{}", state.apps.len())));
            let flops = match usage.coprocessor {
                Some((r, _)) => state.host.instance_flops(r),
                None => 4e9 * usage.avg_ncpus,
            };
            versions.push(AppVersionId::from_index(state.app_versions.len()));
            state.app_versions.push(AppVersion::new(project, app, 100, "", usage, flops));
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
            command_line: String::new(),
            input_files: Vec::new(),
        });
        let received = now - rng.random_range(0.0..5.0 * 86400.0);
        let running = i < running_prefix && cpu_only;
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
            checkpoint_wall_time: now - 300.0,
            run_start_time: now - 1800.0,
            working_set_size: 3e8,
            process: Default::default(),
            peaks: TaskPeaks { working_set_size: 3e8, ..TaskPeaks::default() },
            once_ran_edf: false,
            slot: i as u32,
            gpu_instances: Vec::new(),
            crashes: Default::default(),
            restart_at: None,
            too_large: false,
        });
        state.jobs.push(job);
    }
    state
}
