//! The scheduler request the client makes from its state (DESIGN.md "The boundary
//! between the core and the world": a `SchedulerRequest` goes out; seed 003 "Scheduler
//! request and reply message"; seed 004 "Scheduling Server Changes"): pure, a function
//! of the state, the RPC the control loop decided on, the client's identity and `now`.
//!
//! What goes in, and from where:
//! - the account (authenticator, host id, RPC sequence number, code-signing key, cross
//!   project id) and the duration correction factor: the project's record;
//! - the resource-share fractions: the project's share of all projects', of those with
//!   jobs that can run (`rrs`), and of those that can run or fetch (`prrs`);
//! - the work request: the RPC's per-resource `req_seconds`/`req_ninstances` (CPU at
//!   the top level, each usable GPU type in `<coprocs>`), `work_req_seconds`, and as
//!   `estimated_delay` the time until the resource would idle (the round-robin
//!   simulation's saturated time);
//! - the host, its statistics and preferences: the state's, with cc_config's `<ncpus>`
//!   reported as the CPU count as the real client reports it;
//! - disk usage: BOINC's three figures and seed 004's three free-space figures;
//! - the reported results (the RPC's), with their uploaded outputs; the project's other
//!   jobs; the project's app versions and sticky files;
//! - in-progress results: every job of any project that can still run, with its
//!   deadline, remaining time (seed 000 notes 2–5, unscaled by availability: the server
//!   scales by the request's time statistics) and what it occupies.

use super::client_control::RpcCall;
use crate::Time;
use crate::disk::{DiskUsage, free_space_figures};
use crate::estimate::{project_dcf, remaining_after, unstarted_from, usable_flops};
use crate::model::{AppVersion, ClientState, FileStatus, Job, JobId, ProjectId, ResourceType};
use crate::protocol::{
    AppVersionDescription, ClientVersion, CoprocessorUsage, DiskUsageReport, GpuReport, HostInfo,
    InProgressResult, OtherResult, OutputFile, ReportedResult, SchedulerRequest, StickyFile,
    TimeStatsReport,
};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// The BOINC client version boinc-rs reports: the protocol version it speaks. Servers
/// choose reply formats by the client's version (message priorities, `<no_rsc_apps>`,
/// `<dont_use_dcf/>`), so boinc-rs reports the version whose formats it reads.
pub const PROTOCOL_VERSION: ClientVersion = ClientVersion { major: 8, minor: 3, release: 0 };

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
}

impl Default for ClientIdentity {
    /// A 64-bit Linux client speaking [`PROTOCOL_VERSION`].
    fn default() -> Self {
        ClientIdentity {
            platform: "x86_64-pc-linux-gnu".into(),
            alt_platforms: Vec::new(),
            version: PROTOCOL_VERSION,
        }
    }
}

/// The request for `call` at `now` (see the module documentation).
pub fn build_request(
    state: &ClientState,
    call: &RpcCall,
    identity: &ClientIdentity,
    now: Time,
) -> SchedulerRequest {
    let project_id = call.request.project;
    let project = state.project(project_id);
    let jobs = JobLists::gather(state, call, identity);
    let share = project.resource_share.max(0.0);
    let fraction = |total: f64| if total > 0.0 { share / total } else { 1.0 };
    let runnable_share = state.total_share(|p| jobs.runnable_projects[p.index()]);
    let potential_share = state.total_share(|p| {
        let record = state.project(p);
        jobs.runnable_projects[p.index()] || !(record.suspended || record.dont_request_more_work)
    });
    let work = &call.request.resources;
    SchedulerRequest {
        authenticator: project.authenticator.clone(),
        hostid: project.hostid,
        // A project that never gave a host id counts no requests.
        rpc_seqno: if project.hostid == 0 { 0 } else { project.rpc_seqno },
        client_version: identity.version,
        resource_share_fraction: fraction(state.total_share(|_| true)),
        rrs_fraction: fraction(runnable_share),
        prrs_fraction: fraction(potential_share),
        duration_correction_factor: project.duration_correction_factor,
        allow_multiple_clients: false,
        sandbox: false,
        dont_send_work: project.dont_request_more_work,
        work_req_seconds: call.request.work_req_seconds,
        cpu_req_secs: work[ResourceType::Cpu].req_seconds,
        cpu_req_instances: work[ResourceType::Cpu].req_ninstances,
        estimated_delay: call.estimated_delay[ResourceType::Cpu],
        client_cap_plan_class: true,
        platform_name: identity.platform.clone(),
        alt_platforms: identity.alt_platforms.clone(),
        code_sign_key: project.code_sign_key.clone(),
        working_global_preferences: Some(state.prefs.clone()),
        cross_project_id: Some(project.cross_project_id.clone()).filter(|cpid| !cpid.is_empty()),
        time_stats: time_stats(state, now),
        net_stats: state.net_stats,
        host_info: host_info(state),
        disk_usage: disk_usage(state, project_id, now),
        coprocs: gpu_reports(state, call),
        results: jobs.reported,
        sticky_files: sticky_files(state, project_id),
        app_versions: jobs.app_versions,
        other_results: jobs.other,
        in_progress_results: Some(jobs.in_progress),
    }
}

/// The request's lists that come from the jobs, gathered in one pass over them.
struct JobLists {
    reported: Vec<ReportedResult>,
    other: Vec<OtherResult>,
    in_progress: Vec<InProgressResult>,
    app_versions: Vec<AppVersionDescription>,
    /// By project index: it has a job that can run.
    runnable_projects: Vec<bool>,
}

impl JobLists {
    fn gather(state: &ClientState, call: &RpcCall, identity: &ClientIdentity) -> JobLists {
        let project = call.request.project;
        // The project's versions, as listed, and each version's place in the list.
        let mut listed = vec![-1i32; state.app_versions.len()];
        let mut app_versions = Vec::new();
        for (index, version) in state.app_versions.iter().enumerate() {
            if version.project == project {
                listed[index] = app_versions.len() as i32;
                app_versions.push(version_description(state, version, identity));
            }
        }
        // What the estimate needs per version and per project, looked up once.
        let flops: Vec<f64> =
            state.app_versions.iter().map(|v| usable_flops(v.flops, state.host.p_fpops)).collect();
        let dcfs: Vec<f64> = state.projects.iter().map(project_dcf).collect();
        let reported_names: HashSet<&str> = call.reported.iter().map(String::as_str).collect();
        let mut lists = JobLists {
            reported: Vec::with_capacity(call.reported.len()),
            other: Vec::new(),
            in_progress: Vec::new(),
            app_versions,
            runnable_projects: vec![false; state.projects.len()],
        };
        for (index, job) in state.jobs.iter().enumerate() {
            if job.project == project {
                if job.ready_to_report {
                    if !job.got_server_ack && reported_names.contains(job.name.as_str()) {
                        lists.reported.push(reported_result(state, job, identity));
                    }
                } else {
                    let version = job.app_version.map_or(-1, |v| listed[v.index()]);
                    let plan_class =
                        job.app_version.map(|v| state.app_version(v).plan_class.clone());
                    lists.other.push(OtherResult {
                        name: job.name.clone(),
                        app_version: version,
                        plan_class: plan_class.unwrap_or_default(),
                    });
                }
            }
            let Some(version) = job.app_version else { continue };
            if !state.job_nearly_runnable(JobId::from_index(index)) {
                continue;
            }
            lists.runnable_projects[job.project.index()] = true;
            let fpops_est = state.workunit(job.workunit).rsc_fpops_est;
            let unstarted =
                unstarted_from(fpops_est, flops[version.index()], dcfs[job.project.index()]);
            let remaining = remaining_after(unstarted, job);
            if remaining > 0.0 {
                let usage = state.app_version(version).usage;
                lists.in_progress.push(InProgressResult {
                    name: job.name.clone(),
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

/// An app version as a request lists it.
fn version_description(
    state: &ClientState,
    version: &AppVersion,
    identity: &ClientIdentity,
) -> AppVersionDescription {
    AppVersionDescription {
        app_name: state.app(version.app).name.clone(),
        version_num: version.version_num,
        platform: platform_or(&version.platform, identity),
        plan_class: version.plan_class.clone(),
        api_version: version.api_version.clone(),
        avg_ncpus: Some(version.usage.avg_ncpus),
        max_ncpus: None,
        flops: Some(version.flops),
        cmdline: version.cmdline.clone(),
        coprocessor: version.usage.coprocessor.map(|(resource, count)| CoprocessorUsage {
            kind: resource.boinc_name().to_owned(),
            count,
        }),
        file_refs: Vec::new(),
    }
}

/// A platform as reported: the record's, or the client's own where the record has none.
fn platform_or(platform: &str, identity: &ClientIdentity) -> String {
    if platform.is_empty() { identity.platform.clone() } else { platform.to_owned() }
}

/// A finished job as reported, with its uploaded outputs.
fn reported_result(state: &ClientState, job: &Job, identity: &ClientIdentity) -> ReportedResult {
    let output_files = job
        .output_files
        .iter()
        .filter_map(|reference| state.files.get(reference.file.index()))
        .filter(|file| file.uploaded)
        .map(|file| OutputFile {
            name: file.name.clone(),
            nbytes: file.nbytes,
            max_nbytes: file.max_nbytes,
            md5_cksum: file.md5_cksum.clone(),
            upload_urls: file.upload_urls.clone(),
        })
        .collect();
    ReportedResult {
        name: job.name.clone(),
        final_cpu_time: job.final_cpu_time,
        final_elapsed_time: job.final_elapsed_time,
        exit_status: job.exit_status,
        state: job.state.code(),
        platform: platform_or(&job.platform, identity),
        version_num: job.version_num,
        plan_class: job.plan_class.clone(),
        final_peak_working_set_size: None,
        final_peak_disk_usage: None,
        app_version_num: Some(job.version_num),
        stderr_out: job.stderr_out.clone(),
        output_files,
    }
}

fn time_stats(state: &ClientState, now: Time) -> TimeStatsReport {
    let stats = &state.time_stats;
    TimeStatsReport {
        on_frac: stats.on_frac,
        connected_frac: stats.connected_frac,
        cpu_and_network_available_frac: stats.cpu_and_network_available_frac,
        active_frac: stats.active_frac,
        gpu_active_frac: stats.gpu_active_frac,
        now: Some(now),
        ..TimeStatsReport::default()
    }
}

fn host_info(state: &ClientState) -> HostInfo {
    let host = &state.host;
    HostInfo {
        description: host.description.clone(),
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
    let usage = DiskUsage::measure(state, 0.0);
    DiskUsageReport {
        d_boinc_used_total: usage.all_projects_usage(),
        d_boinc_used_project: usage.project_usage.get(project.index()).copied().unwrap_or(0.0),
        d_project_share: usage.limits.project_limit(project).max(0.0),
        free_space: Some(free_space_figures(state, project, 0.0, now)),
    }
}

/// Each GPU type the client may use, with the work asked of it.
fn gpu_reports(state: &ClientState, call: &RpcCall) -> Vec<GpuReport> {
    ResourceType::GPUS
        .into_iter()
        .filter_map(|resource| {
            let count = state.instances(resource);
            let coprocessor = state.host.coprocessors[resource].as_ref().filter(|_| count > 0)?;
            let work = call.request.resources[resource];
            Some(GpuReport {
                resource,
                count,
                name: coprocessor.name.clone(),
                available_ram: coprocessor.available_ram,
                peak_flops: coprocessor.peak_flops,
                req_secs: work.req_seconds,
                req_instances: work.req_ninstances,
                estimated_delay: call.estimated_delay[resource],
            })
        })
        .collect()
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
