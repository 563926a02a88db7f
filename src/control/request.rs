//! The scheduler request the client makes from its state (docs/design.md "The boundary
//! between the core and the world": a `SchedulerRequest` goes out; seed 003 "Scheduler
//! request and reply message"; seed 004 "Scheduling Server Changes"): pure, a function
//! of the state, the RPC the control loop decided on, the client's identity and `now`.
//!
//! What goes in, and from where:
//! - the account (authenticator, host id, RPC sequence number, code-signing key, cross
//!   project id) and the duration correction factor: the project's record;
//! - the resource-share fractions: the project's share of all projects', of those with
//!   a runnable job (`rrs`), and of those that have one or can fetch (`prrs`);
//! - the work request: the RPC's per-resource `req_seconds`/`req_ninstances` (CPU at
//!   the top level, each usable GPU type in `<coprocs>`), `work_req_seconds`, and as
//!   `estimated_delay` the time until the resource would idle (the round-robin
//!   simulation's saturated time);
//! - the host, its statistics and preferences: the state's, with cc_config's `<ncpus>`
//!   reported as the CPU count as the real client reports it;
//! - disk usage: BOINC's three figures and seed 004's three free-space figures;
//! - the reported results (the RPC's), with their uploaded outputs; the project's other
//!   jobs; the project's app versions and sticky files;
//! - in-progress results: every job of any project that can still run on a resource
//!   the request asks work for (those are the queues a server's deadline check needs),
//!   with its deadline, remaining time (seed 000 notes 2–5, unscaled by availability:
//!   the server scales by the request's time statistics) and what it occupies.

use super::client_control::RpcCall;
use super::name_set::NameSet;
use crate::Time;
use crate::disk::free_space_report;
use crate::estimate::{project_dcf, remaining_after, unstarted_from, usable_flops};
use crate::model::{
    AppVersion, ClientState, FileStatus, Job, JobId, ProjectId, ResourceMap, ResourceType,
};
use crate::protocol::{
    AppVersionDescription, ClientVersion, DiskUsageReport, GpuReport, HostInfo, InProgressResult,
    OtherResult, OutputFile, ReportedResult, SchedulerRequest, StickyFile, TimeStatsReport,
};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The BOINC client version boinc-rs reports: the protocol version it speaks. Servers
/// choose reply formats by the client's version (message priorities, `<no_rsc_apps>`,
/// `<dont_use_dcf/>`), so boinc-rs reports the version whose formats it reads.
pub const PROTOCOL_VERSION: ClientVersion = ClientVersion { major: 8, minor: 3, release: 0 };

/// The platform a request names for a project run with the volunteer's own apps
/// (app_info.xml, BOINC's anonymous platform).
pub const ANONYMOUS_PLATFORM: &str = "anonymous";

/// How boinc-rs names itself to projects (`<client_brand>`), with its version.
pub const CLIENT_BRAND: &str = concat!("boinc-rs ", env!("CARGO_PKG_VERSION"));

/// What the client says about itself that is not in its state: its platform and
/// version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientIdentity {
    /// The platform its app versions are for (`<platform_name>`).
    pub platform: String,
    /// Other platforms it can run (`<alt_platform>`).
    pub alt_platforms: Vec<String>,
    /// The version it reports.
    pub version: ClientVersion,
    /// Its own name and version (`<client_brand>`), beside the protocol version.
    #[serde(default)]
    pub brand: Option<String>,
}

impl Default for ClientIdentity {
    /// A 64-bit Linux client speaking [`PROTOCOL_VERSION`].
    fn default() -> Self {
        ClientIdentity {
            platform: "x86_64-pc-linux-gnu".into(),
            alt_platforms: Vec::new(),
            version: PROTOCOL_VERSION,
            brand: Some(CLIENT_BRAND.to_owned()),
        }
    }
}

/// The request for `call` at `now` (see the module documentation). Its text is borrowed
/// from `state` and `identity`, not copied.
pub fn build_request<'s>(
    state: &'s ClientState,
    call: &RpcCall,
    identity: &'s ClientIdentity,
    now: Time,
) -> SchedulerRequest<'s> {
    build_request_with(state, call, identity, now, &mut RequestScratch::default())
}

/// Buffers for the lists of a request, kept between requests by a caller that makes
/// many (as the emulator does at every RPC), so that making one allocates nothing once
/// they have grown: [`build_request_with`] fills them, [`RequestScratch::recycle`] takes
/// them back from the request once it has been sent.
#[derive(Debug, Default)]
pub struct RequestScratch {
    reported: Vec<ReportedResult<'static>>,
    app_versions: Vec<AppVersionDescription<'static>>,
    coprocs: Vec<GpuReport<'static>>,
    other: Vec<OtherResult<'static>>,
    in_progress: Vec<InProgressResult<'static>>,
    /// By app version index: its place in the request's `<app_versions>` (-1: not
    /// listed).
    listed: Vec<i32>,
    /// By project index: it has a job that can run.
    runnable_projects: Vec<bool>,
    /// By app version index: the speed its jobs are estimated at ([`usable_flops`]).
    version_flops: Vec<f64>,
    /// By project index: its duration correction factor as estimates use it
    /// ([`project_dcf`]).
    project_dcfs: Vec<f64>,
}

impl Clone for RequestScratch {
    /// Fresh buffers: what a scratch holds is never needed again.
    fn clone(&self) -> Self {
        RequestScratch::default()
    }
}

impl RequestScratch {
    /// Takes back the lists of `request` (sent, no longer needed) for the next one.
    pub fn recycle(&mut self, request: SchedulerRequest<'_>) {
        self.reported = emptied(request.results);
        self.app_versions = emptied(request.app_versions);
        self.coprocs = emptied(request.coprocs);
        self.other = emptied(request.other_results);
        if let Some(list) = request.in_progress_results {
            self.in_progress = emptied(list);
        }
    }
}

/// `list` emptied, its buffer kept for elements that borrow from elsewhere: an empty list
/// borrows nothing, and collecting a vector's own iterator into elements of the same
/// size reuses its buffer.
fn emptied<T, U>(mut list: Vec<T>) -> Vec<U> {
    list.clear();
    list.into_iter().map(|_| unreachable!("the list is empty")).collect()
}

/// [`build_request`] with the lists in `scratch`'s buffers.
pub fn build_request_with<'s>(
    state: &'s ClientState,
    call: &RpcCall,
    identity: &'s ClientIdentity,
    now: Time,
    scratch: &mut RequestScratch,
) -> SchedulerRequest<'s> {
    let project_id = call.request.project;
    let project = state.project(project_id);
    let jobs = JobLists::gather(state, call, identity, scratch);
    let share = project.resource_share.max(0.0);
    let fraction = |total: f64| if total > 0.0 { share / total } else { 1.0 };
    let runnable = &scratch.runnable_projects;
    let runnable_share = state.total_share(|p| runnable[p.index()]);
    let potential_share = state.total_share(|p| {
        let record = state.project(p);
        runnable[p.index()] || !(record.suspended || record.dont_request_more_work)
    });
    let work = &call.request.resources;
    SchedulerRequest {
        authenticator: Cow::Borrowed(&project.authenticator),
        hostid: project.hostid,
        // A project that never gave a host id counts no requests.
        rpc_seqno: if project.hostid == 0 { 0 } else { project.rpc_seqno },
        client_version: identity.version,
        resource_share_fraction: fraction(state.total_share(|_| true)),
        rrs_fraction: fraction(runnable_share),
        prrs_fraction: fraction(potential_share),
        // A project that asked for no correction is told the factor it asked for.
        duration_correction_factor: if project.dont_use_dcf {
            1.0
        } else {
            project.duration_correction_factor
        },
        allow_multiple_clients: false,
        sandbox: false,
        dont_send_work: project.dont_request_more_work,
        work_req_seconds: call.request.work_req_seconds,
        cpu_req_secs: work[ResourceType::Cpu].req_seconds,
        cpu_req_instances: work[ResourceType::Cpu].req_ninstances,
        estimated_delay: call.estimated_delay[ResourceType::Cpu],
        client_cap_plan_class: true,
        // The volunteer's own apps (app_info.xml): the project is told no platform, only
        // the versions listed below, as BOINC's client tells it.
        platform_name: match project.anonymous_platform {
            true => Cow::Borrowed(ANONYMOUS_PLATFORM),
            false => Cow::Borrowed(&identity.platform),
        },
        alt_platforms: match project.anonymous_platform {
            true => Cow::Borrowed(&[]),
            false => Cow::Borrowed(&identity.alt_platforms),
        },
        code_sign_key: project.code_sign_key.as_deref().map(Cow::Borrowed),
        working_global_preferences: Some(state.prefs.clone()),
        // Sent even when empty, as BOINC 7.20's client sends it.
        cross_project_id: Some(Cow::Borrowed(project.cross_project_id.as_str())),
        time_stats: time_stats(state, now),
        net_stats: state.net_stats,
        host_info: host_info(state),
        disk_usage: disk_usage(state, project_id, now),
        coprocs: gpu_reports(state, call, emptied(std::mem::take(&mut scratch.coprocs))),
        results: jobs.reported,
        sticky_files: sticky_files(state, project_id),
        app_versions: jobs.app_versions,
        other_results: jobs.other,
        in_progress_results: Some(jobs.in_progress),
        client_brand: identity.brand.as_deref().map(Cow::Borrowed),
    }
}

/// The request's lists that come from the jobs, gathered in one pass over them.
struct JobLists<'s> {
    reported: Vec<ReportedResult<'s>>,
    other: Vec<OtherResult<'s>>,
    in_progress: Vec<InProgressResult<'s>>,
    app_versions: Vec<AppVersionDescription<'s>>,
}

/// Up to this many reported names are looked for in a list; more go in a [`NameSet`].
const FEW_REPORTED: usize = 8;

impl<'s> JobLists<'s> {
    /// The lists, in `scratch`'s buffers; `scratch.runnable_projects` says, by project
    /// index, which projects have a job that can run.
    fn gather(
        state: &'s ClientState,
        call: &RpcCall,
        identity: &'s ClientIdentity,
        scratch: &mut RequestScratch,
    ) -> Self {
        let project = call.request.project;
        // The project's versions, as listed, and each version's place in the list.
        let listed = &mut scratch.listed;
        listed.clear();
        listed.resize(state.app_versions.len(), -1);
        let mut app_versions = emptied(std::mem::take(&mut scratch.app_versions));
        let anonymous = state.projects.get(project.index()).is_some_and(|p| p.anonymous_platform);
        for (index, version) in state.app_versions.iter().enumerate() {
            if version.project == project && (!anonymous || declared(state, version)) {
                listed[index] = app_versions.len() as i32;
                app_versions.push(version_description(state, version, identity));
            }
        }
        let requested = ResourceMap::from_fn(|r| call.request.requests(r));
        let any_requested = requested.0.contains(&true);
        // The names reported are few: a list is looked through rather than a set built.
        let reported_set = (call.reported.len() > FEW_REPORTED)
            .then(|| NameSet::new(call.reported.iter().map(String::as_str), || ()));
        let is_reported = |name: &str| match &reported_set {
            Some(set) => set.contains(name),
            None => call.reported.iter().any(|reported| reported == name),
        };
        let runnable_projects = &mut scratch.runnable_projects;
        runnable_projects.clear();
        runnable_projects.resize(state.projects.len(), false);
        let mut lists = JobLists {
            reported: emptied(std::mem::take(&mut scratch.reported)),
            other: emptied(std::mem::take(&mut scratch.other)),
            in_progress: emptied(std::mem::take(&mut scratch.in_progress)),
            app_versions,
        };
        // The in-progress jobs' estimates read their versions' speeds and their projects'
        // factors: each is worked out once per request rather than once per job.
        let version_flops = &mut scratch.version_flops;
        let project_dcfs = &mut scratch.project_dcfs;
        version_flops.clear();
        project_dcfs.clear();
        if any_requested {
            // At most every job: one allocation rather than a growing list.
            lists.in_progress.reserve(state.jobs.len());
            let host_flops = state.host.p_fpops;
            version_flops
                .extend(state.app_versions.iter().map(|v| usable_flops(v.flops, host_flops)));
            project_dcfs.extend(state.projects.iter().map(project_dcf));
        }
        for (index, job) in state.jobs.iter().enumerate() {
            if job.project == project {
                if job.ready_to_report {
                    if !job.got_server_ack && !call.reported.is_empty() && is_reported(&job.name) {
                        lists.reported.push(reported_result(state, job, identity));
                    }
                } else {
                    let version = job.app_version.map_or(-1, |v| listed[v.index()]);
                    let plan_class =
                        job.app_version.map_or("", |v| state.app_version(v).plan_class.as_str());
                    lists.other.push(OtherResult {
                        name: Cow::Borrowed(&job.name),
                        app_version: version,
                        plan_class: Cow::Borrowed(plan_class),
                    });
                }
            }
            let Some(version) = job.app_version else { continue };
            let id = JobId::from_index(index);
            let runnable = &mut runnable_projects[job.project.index()];
            if !*runnable && state.job_runnable(id) {
                *runnable = true;
            }
            // Most jobs held are done computing and awaiting report: they leave here,
            // before the version and the job's other records are looked up.
            if !any_requested || job.state.computing_done() {
                continue;
            }
            let usage = state.app_version(version).usage;
            if !requested[usage.main_resource()] || !state.job_nearly_runnable(id) {
                continue;
            }
            let fpops_est = state.workunit(job.workunit).rsc_fpops_est;
            let flops = version_flops[version.index()];
            let dcf = project_dcfs[job.project.index()];
            let unstarted = unstarted_from(fpops_est, flops, dcf);
            let remaining = remaining_after(unstarted, job);
            if remaining > 0.0 {
                lists.in_progress.push(InProgressResult {
                    name: Cow::Borrowed(&job.name),
                    report_deadline: job.report_deadline,
                    time_remaining: remaining,
                    avg_ncpus: usage.avg_ncpus,
                    gpu: usage.coprocessor,
                });
            }
        }
        lists
    }
}

/// Whether `version` is one of the volunteer's own (app_info.xml): all its files are
/// theirs. A project on the anonymous platform is told of those alone, not of versions
/// it sent before the volunteer declared their own.
fn declared(state: &ClientState, version: &AppVersion) -> bool {
    version
        .files
        .iter()
        .all(|r| state.files.get(r.file.index()).is_some_and(|f| f.anonymous_platform))
}

/// An app version as a request lists it.
fn version_description<'s>(
    state: &'s ClientState,
    version: &'s AppVersion,
    identity: &'s ClientIdentity,
) -> AppVersionDescription<'s> {
    // The client's own duration correction is kept in its state file, not told to
    // projects.
    AppVersionDescription::of_version(
        &state.app(version.app).name,
        version,
        platform_or(&version.platform, identity),
    )
}

/// A platform as reported: the record's, or the client's own where the record has none.
fn platform_or<'s>(platform: &'s str, identity: &'s ClientIdentity) -> &'s str {
    if platform.is_empty() { &identity.platform } else { platform }
}

/// A figure as reported: BOINC leaves out one that is 0.
fn positive(value: f64) -> Option<f64> {
    (value > 0.0).then_some(value)
}

/// A finished job as reported, with its uploaded outputs.
fn reported_result<'s>(
    state: &'s ClientState,
    job: &'s Job,
    identity: &'s ClientIdentity,
) -> ReportedResult<'s> {
    let output_files = job
        .output_files
        .iter()
        .filter_map(|reference| state.files.get(reference.file.index()))
        .filter(|file| file.uploaded)
        .map(|file| OutputFile {
            name: Cow::Borrowed(&file.name),
            nbytes: file.nbytes,
            max_nbytes: file.max_nbytes,
            md5_cksum: Cow::Borrowed(&file.md5_cksum),
            upload_urls: Cow::Borrowed(&file.upload_urls),
        })
        .collect();
    ReportedResult {
        name: Cow::Borrowed(&job.name),
        final_cpu_time: job.final_cpu_time,
        final_elapsed_time: job.final_elapsed_time,
        exit_status: job.exit_status,
        state: job.state.code(),
        platform: Cow::Borrowed(platform_or(&job.platform, identity)),
        version_num: job.version_num,
        plan_class: Cow::Borrowed(&job.plan_class),
        // BOINC leaves out a peak it never measured.
        final_peak_working_set_size: positive(job.final_peaks.working_set_size),
        final_peak_swap_size: positive(job.final_peaks.swap_size),
        final_peak_disk_usage: positive(job.final_peaks.disk_usage),
        app_version_num: Some(job.version_num),
        stderr_out: Cow::Borrowed(&job.stderr_out),
        output_files,
    }
}

fn time_stats(state: &ClientState, now: Time) -> TimeStatsReport {
    TimeStatsReport::of(&state.time_stats, now)
}

fn host_info(state: &ClientState) -> HostInfo<'_> {
    let host = &state.host;
    HostInfo {
        description: Cow::Borrowed(&host.description),
        p_ncpus: state.reported_ncpus(),
        p_fpops: host.p_fpops,
        m_nbytes: host.m_nbytes,
        m_swap: host.m_swap,
        d_total: host.d_total,
        d_free: host.d_free,
        n_usable_coprocs: ResourceType::GPUS.iter().map(|&r| state.instances(r)).sum(),
    }
}

/// BOINC's disk figures and seed 004's free-space figures for a request to `project`.
fn disk_usage(state: &ClientState, project: ProjectId, now: Time) -> DiskUsageReport {
    let (usage, figures) = free_space_report(state, project, 0.0, now);
    DiskUsageReport {
        d_boinc_used_total: usage.all_projects_usage(),
        d_boinc_used_project: usage.project_usage.get(project.index()).copied().unwrap_or(0.0),
        d_project_share: usage.limits.project_limit(project).max(0.0),
        free_space: Some(figures),
    }
}

/// Each GPU type the client may use, with the work asked of it, in `list`.
fn gpu_reports<'s>(
    state: &'s ClientState,
    call: &RpcCall,
    mut list: Vec<GpuReport<'s>>,
) -> Vec<GpuReport<'s>> {
    let description = &state.host.description;
    // The driver's figures describe its NVIDIA GPUs only.
    let nvidia_figure =
        |resource, figure| if resource == ResourceType::Nvidia { figure } else { 0 };
    list.extend(ResourceType::GPUS.into_iter().filter_map(|resource| {
        let count = state.instances(resource);
        let coprocessor = state.host.coprocessors[resource].as_ref().filter(|_| count > 0)?;
        let work = call.request.resources[resource];
        Some(GpuReport {
            resource,
            count,
            name: Cow::Borrowed(&coprocessor.name),
            available_ram: coprocessor.available_ram,
            peak_flops: coprocessor.peak_flops,
            req_secs: work.req_seconds,
            req_instances: work.req_ninstances,
            estimated_delay: call.estimated_delay[resource],
            cuda_version: nvidia_figure(resource, description.cuda_version),
            driver_version: nvidia_figure(resource, description.nvidia_driver_version),
            compute_capability: if resource == ResourceType::Nvidia {
                description.nvidia_compute_capability
            } else {
                (0, 0)
            },
            cuda_properties: description
                .nvidia_properties
                .filter(|_| resource == ResourceType::Nvidia),
            opencl: description.opencl_gpus.iter().find(|d| d.resource == resource).cloned(),
        })
    }));
    list
}

/// The project's sticky files.
fn sticky_files(state: &ClientState, project: ProjectId) -> Vec<StickyFile> {
    state
        .files
        .iter()
        .filter(|f| f.project == project && f.sticky)
        .map(|f| StickyFile {
            name: f.name.clone(),
            nbytes: f.nbytes,
            status: match f.status {
                FileStatus::NotPresent => 0,
                FileStatus::Present => 1,
                FileStatus::Error(code) => i64::from(code),
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        App, AppId, AppVersionId, Coprocessor, FileInfo, FileRef, JobState, Project, ResourceUsage,
        Workunit, WorkunitId,
    };
    use crate::work_fetch::{ResourceRequest, WorkRequest};

    const CPU: ResourceUsage = ResourceUsage { avg_ncpus: 1.0, coprocessor: None };
    const GPU: ResourceUsage =
        ResourceUsage { avg_ncpus: 0.2, coprocessor: Some((ResourceType::Nvidia, 1.0)) };

    /// Projects a (share 3) and b (share 1), a CPU and a GPU version for a, a CPU
    /// version for b; two GPUs; four CPUs limited by cc_config to three.
    fn state() -> ClientState {
        let mut state = ClientState::default();
        state.host.p_ncpus = 4;
        state.config.ncpus = Some(3);
        state.host.coprocessors[ResourceType::Nvidia] = Some(Coprocessor {
            resource: ResourceType::Nvidia,
            name: "gpu".into(),
            count: 2,
            peak_flops: 1e12,
            available_ram: 4e9,
        });
        state.projects.push(Project::new("a", "http://a/", 3.0));
        state.projects.push(Project::new("b", "http://b/", 1.0));
        for (project, app) in [(0, "x"), (1, "y")] {
            state.apps.push(App::new(ProjectId(project), app));
        }
        state.app_versions.push(AppVersion::new(ProjectId(0), AppId(0), 1, "", CPU, 1e9));
        state.app_versions.push(AppVersion::new(ProjectId(0), AppId(0), 2, "cuda", GPU, 1e11));
        state.app_versions.push(AppVersion::new(ProjectId(1), AppId(1), 1, "", CPU, 1e9));
        state
    }

    fn add_job(state: &mut ClientState, name: &str, version: usize, deadline: f64) -> JobId {
        let record = &state.app_versions[version];
        let (project, app) = (record.project, record.app);
        state.workunits.push(Workunit {
            project,
            name: name.into(),
            app,
            rsc_fpops_est: 3.6e12,
            rsc_fpops_bound: 3.6e13,
            rsc_memory_bound: 0.0,
            rsc_disk_bound: 0.0,
            command_line: String::new(),
            input_files: Vec::new(),
        });
        let workunit = WorkunitId::from_index(state.workunits.len() - 1);
        let version = AppVersionId::from_index(version);
        state.jobs.push(Job::downloaded(project, name, workunit, version, 0.0, deadline));
        JobId::from_index(state.jobs.len() - 1)
    }

    fn call(resources: &[(ResourceType, f64)], reported: &[&str]) -> RpcCall {
        let mut map = ResourceMap::<ResourceRequest>::default();
        for &(resource, seconds) in resources {
            map[resource] = ResourceRequest { req_seconds: seconds, req_ninstances: 0.0 };
        }
        RpcCall {
            request: WorkRequest { project: ProjectId(0), resources: map, work_req_seconds: 0.0 },
            reported: reported.iter().map(|r| r.to_string()).collect(),
            estimated_delay: ResourceMap::from_fn(|r| if r.is_gpu() { 60.0 } else { 30.0 }),
        }
    }

    #[test]
    fn shares_host_and_work_asked() {
        let mut state = state();
        add_job(&mut state, "b1", 2, 1e6);
        state.projects[0].hostid = 9;
        state.projects[0].rpc_seqno = 4;
        let identity = ClientIdentity::default();
        let request = build_request(
            &state,
            &call(&[(ResourceType::Cpu, 100.0), (ResourceType::Nvidia, 50.0)], &[]),
            &identity,
            10.0,
        );
        assert_eq!((request.hostid, request.rpc_seqno), (9, 4));
        assert_eq!(request.resource_share_fraction, 0.75);
        assert_eq!(request.rrs_fraction, 3.0, "only b has a job that can run");
        assert_eq!(request.prrs_fraction, 0.75);
        assert_eq!(request.host_info.p_ncpus, 3, "cc_config's count, as the real client reports");
        assert_eq!(request.host_info.n_usable_coprocs, 2);
        assert_eq!((request.cpu_req_secs, request.estimated_delay), (100.0, 30.0));
        let gpu = request.gpu(ResourceType::Nvidia).expect("the GPU is listed");
        assert_eq!((gpu.count, gpu.req_secs, gpu.estimated_delay), (2, 50.0, 60.0));
        assert_eq!(gpu.cuda_properties, None, "none known, none sent");
        assert_eq!(request.usable_instances(ResourceType::Cpu), 3);
        assert_eq!(request.time_stats.now, Some(10.0));
        let listed: Vec<(u32, &str)> =
            request.app_versions.iter().map(|v| (v.version_num, v.plan_class.as_ref())).collect();
        assert_eq!(listed, [(1, ""), (2, "cuda")], "the project's own versions");
        assert_eq!(
            request.app_versions[1].coprocessor.as_ref().map(|c| c.kind.as_ref()),
            Some("NVIDIA")
        );
        // The driver's description of the GPU goes with it, and in the text servers read.
        let properties = crate::model::CudaProperties {
            total_global_mem: 4e9,
            multiprocessor_count: 68,
            ..Default::default()
        };
        state.host.description.nvidia_properties = Some(properties);
        state.host.description.nvidia_compute_capability = (8, 6);
        let request = build_request(&state, &call(&[], &[]), &identity, 10.0);
        let gpu = request.gpu(ResourceType::Nvidia).expect("the GPU is listed");
        assert_eq!(gpu.cuda_properties, Some(properties));
        let text = request.to_xml();
        for element in ["<totalGlobalMem>4000000000", "<multiProcessorCount>68<", "<major>8<"] {
            assert!(text.contains(element), "{element} in {text}");
        }
        state.config.no_gpus = true;
        let request = build_request(&state, &call(&[], &[]), &identity, 10.0);
        assert!(request.coprocs.is_empty() && request.host_info.n_usable_coprocs == 0);
        // No host id yet: no requests are counted.
        state.projects[0].hostid = 0;
        let request = build_request(&state, &call(&[], &[]), &identity, 10.0);
        assert_eq!(request.rpc_seqno, 0);
    }

    /// On the anonymous platform the request names no platform and lists only the
    /// volunteer's versions: not one the project sent before app_info.xml was there.
    #[test]
    fn an_anonymous_project_is_told_of_the_volunteers_versions_alone() {
        let mut state = state();
        let identity = ClientIdentity {
            alt_platforms: vec!["i686-pc-linux-gnu".into()],
            ..Default::default()
        };
        let mut own = FileInfo::new(ProjectId(0), "own_build", 10.0);
        own.anonymous_platform = true;
        state.files.push(FileInfo::new(ProjectId(0), "sent_build", 10.0));
        state.files.push(own);
        state.app_versions[0].files = vec![FileRef::new(crate::model::FileId(0))];
        state.app_versions[1].files = vec![FileRef::new(crate::model::FileId(1))];
        let request = build_request(&state, &call(&[], &[]), &identity, 10.0);
        assert_eq!(
            (request.platform_name.as_ref(), request.app_versions.len()),
            (identity.platform.as_str(), 2)
        );
        assert_eq!(request.alt_platforms.len(), 1);
        state.projects[0].anonymous_platform = true;
        let request = build_request(&state, &call(&[], &[]), &identity, 10.0);
        assert_eq!(request.platform_name, ANONYMOUS_PLATFORM);
        assert!(request.alt_platforms.is_empty());
        let listed: Vec<u32> = request.app_versions.iter().map(|v| v.version_num).collect();
        assert_eq!(listed, [2], "the volunteer's version alone");
    }

    #[test]
    fn jobs_reported_held_and_in_progress() {
        let mut state = state();
        let done = add_job(&mut state, "done", 0, 1e6);
        let queued = add_job(&mut state, "queued", 1, 2e6);
        let cpu_queued = add_job(&mut state, "cpu", 0, 3e6);
        let other = add_job(&mut state, "other", 2, 4e6);
        state.files.push(FileInfo::new(ProjectId(0), "done_out", 5.0));
        state.files[0].uploaded = true;
        state.files[0].upload_urls.push("http://a/upload".into());
        let job = &mut state.jobs[done.index()];
        job.state = JobState::FilesUploaded;
        job.ready_to_report = true;
        job.exit_status = 0;
        job.stderr_out = "fine".into();
        job.output_files.push(FileRef::new(crate::model::FileId(0)));
        let identity = ClientIdentity::default();
        let request = build_request(
            &state,
            &call(&[(ResourceType::Nvidia, 10.0)], &["done"]),
            &identity,
            0.0,
        );
        let reported = &request.results[0];
        assert_eq!((reported.name.as_ref(), reported.state), ("done", 5));
        assert_eq!(reported.platform, identity.platform, "the client's own platform");
        assert_eq!(reported.output_files[0].upload_urls.as_ref(), ["http://a/upload"]);
        let others: Vec<(&str, i32, &str)> = request
            .other_results
            .iter()
            .map(|o| (o.name.as_ref(), o.app_version, o.plan_class.as_ref()))
            .collect();
        assert_eq!(others, [("queued", 1, "cuda"), ("cpu", 0, "")]);
        // Only the GPU is asked for: its queue, of any project, is what the server checks.
        let in_progress = request.in_progress_results.as_ref().expect("always sent");
        let names: Vec<&str> = in_progress.iter().map(|r| r.name.as_ref()).collect();
        assert_eq!(names, ["queued"]);
        assert_eq!(in_progress[0].gpu, Some((ResourceType::Nvidia, 1.0)));
        assert_eq!(in_progress[0].time_remaining, 36.0, "3.6e12 flops at 1e11");
        let request =
            build_request(&state, &call(&[(ResourceType::Cpu, 10.0)], &[]), &identity, 0.0);
        let names: Vec<&str> =
            request.in_progress_results.iter().flatten().map(|r| r.name.as_ref()).collect();
        assert_eq!(names, ["cpu", "other"]);
        assert!(request.results.is_empty(), "reported only when the call reports it");
        let _ = (queued, cpu_queued, other);
    }
}
