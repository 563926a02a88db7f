//! The model into client_state.xml (docs/design.md "State"; seed 000 "Concepts and terms",
//! seed 002's RPC timing, seed 003's per-resource state, seed 004's files): what the
//! client must not forget across a restart, in the format BOINC's own client writes
//! (fixtures/boinc-7.20.5/state, boinc-8.3.0), so the real client reads a boinc-rs data
//! directory and boinc-rs reads the real client's.
//!
//! Each project is followed by its apps, files, app versions, workunits and results, as
//! BOINC writes them and as [`parse_client_state`](super::parse_client_state) files them;
//! the active tasks follow in `<active_task_set>`, then the run modes.
//!
//! What BOINC's format has no element for is written inside a `<boinc_rs>` element of its
//! owner (a project, a file, an active task), which BOINC's reader skips as unknown:
//! a project's detachment, last failure time, latency limit, resource-debt averages,
//! app-failure count and per-resource long-term debt, accumulate-debt flag and "has an
//! app version"; a file's deferred transfer, download and last-use times; a task's
//! checkpoint wall time, run start, GPU instances, current figures, and its app's
//! crashes (the streak, the recent crashes' times, the planned restart). The emulator's
//! tags (`<available>`, an app's `<latency_bound>`, `<fpops>`, …, time statistics'
//! `*_lambda`) are written where the reader looks for them.
//!
//! Not written, by design (documented transient or kept elsewhere):
//! - `Project::rpc_in_flight`: no RPC survives a restart;
//! - `ClientState::prefs` and `config`: they live in global_prefs.xml (with its override)
//!   and cc_config.xml, which the user edits and the client reads;
//! - the ids: elements are written project by project, so a state whose vectors are not
//!   grouped by project reads back with its ids renumbered in that order;
//! - a job's `platform`, `version_num` and `plan_class` are those of its app version
//!   when it has one (the reader makes them so).

use super::app_description::AppVersionDescription;
use super::cuda_prop::write_cuda_properties;
use super::file_ref::FileReference;
use super::host_report::{GpuReport, HostInfo, TimeStatsReport, write_net_stats};
use super::job_description::WorkunitDescription;
use super::scheduler_request::ClientVersion;
use super::xml_write::XmlWriter;
use crate::model::{
    ActiveTask, App, AppVersion, ClientState, FileInfo, FileRef, FileStatus, Job, Project,
    ProjectId, ResourceType, RunMode, SchedulerState, Workunit,
};
use std::borrow::Cow;

/// The element, inside a project, file or active task, that holds what BOINC's format
/// has no element for. BOINC's reader skips it whole.
pub(crate) const OWN_FIELDS: &str = "boinc_rs";

/// BOINC's active-task state of a suspended process (`PROCESS_SUSPENDED`).
pub(crate) const PROCESS_SUSPENDED: i64 = 9;

/// Who writes the state file: the platform the client runs app versions for and the
/// version it reports. BOINC's reader notes a version change and drops app versions
/// and results for platforms it cannot run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateFileOrigin<'a> {
    /// The client's primary platform (`<platform_name>`), e.g. `x86_64-pc-linux-gnu`.
    pub platform: &'a str,
    /// The client's version (`<core_client_*_version>`, `<core_client_release>`).
    pub version: ClientVersion,
}

/// Writes the whole state as client_state.xml.
pub fn write_client_state(state: &ClientState, origin: &StateFileOrigin) -> String {
    let mut writer = XmlWriter::new();
    writer.open("client_state");
    write_host(state, &mut writer);
    write_time_stats(state, &mut writer);
    write_net_stats(&state.net_stats, &mut writer);
    for project in state.project_ids() {
        write_project(state.project(project), &mut writer);
        write_project_elements(state, project, &mut writer);
    }
    writer.open("active_task_set");
    for job in &state.jobs {
        if let Some(task) = &job.task {
            write_active_task(state, job, task, &mut writer);
        }
    }
    writer.close("active_task_set");
    writer.text("platform_name", origin.platform);
    writer.integer("core_client_major_version", origin.version.major);
    writer.integer("core_client_minor_version", origin.version.minor);
    writer.integer("core_client_release", origin.version.release);
    writer.integer("user_run_request", run_mode_code(state.run_mode));
    writer.integer("user_gpu_request", run_mode_code(state.gpu_mode));
    writer.integer("user_network_request", run_mode_code(state.network_mode));
    if let Some(mode) = state.run_mode_before_disk_suspension {
        writer.integer(DISK_SUSPENSION_ELEMENT, run_mode_code(mode));
    }
    writer.close("client_state");
    writer.finish()
}

/// boinc-rs's own element: the user's run mode while the disk manager suspends
/// computing (BOINC's client ignores it).
pub(crate) const DISK_SUSPENSION_ELEMENT: &str = "run_request_before_disk_suspension";

/// BOINC's number for a run mode.
fn run_mode_code(mode: RunMode) -> i64 {
    match mode {
        RunMode::Always => 1,
        RunMode::Auto => 2,
        RunMode::Never => 3,
    }
}

fn write_host(state: &ClientState, writer: &mut XmlWriter) {
    let host = &state.host;
    writer.open("host_info");
    let info = HostInfo {
        description: Cow::Borrowed(&host.description),
        p_ncpus: host.p_ncpus,
        p_fpops: host.p_fpops,
        m_nbytes: host.m_nbytes,
        m_swap: host.m_swap,
        d_total: host.d_total,
        d_free: host.d_free,
        n_usable_coprocs: ResourceType::GPUS.iter().map(|&r| host.hardware_instances(r)).sum(),
    };
    info.write_fields(writer);
    writer.open("coprocs");
    for coprocessor in host.coprocessors.0.iter().flatten() {
        let Some(element) = GpuReport::element_name(coprocessor.resource) else { continue };
        writer.open(element);
        writer.integer("count", coprocessor.count);
        writer.text("name", &coprocessor.name);
        writer.number("available_ram", coprocessor.available_ram);
        writer.number("peak_flops", coprocessor.peak_flops);
        if coprocessor.resource == ResourceType::Nvidia {
            let description = &host.description;
            write_cuda_properties(
                writer,
                description.cuda_version,
                description.nvidia_driver_version,
                description.nvidia_compute_capability,
                description.nvidia_properties.as_ref(),
            );
        }
        writer.close(element);
    }
    writer.close("coprocs");
    writer.close("host_info");
}

fn write_time_stats(state: &ClientState, writer: &mut XmlWriter) {
    let stats = &state.time_stats;
    writer.open("time_stats");
    TimeStatsReport::from_fractions(stats).write_fields(writer);
    // The totals as BOINC's state file keeps them; the session's figures too, as BOINC
    // writes them (the next session starts them again from 0).
    let totals = &stats.totals;
    if totals.recorded() {
        writer.number("client_start_time", totals.client_start_time);
        writer.number("total_start_time", totals.total_start_time);
        writer.number("total_duration", totals.total_duration);
        writer.number("total_active_duration", totals.total_active_duration);
        writer.number("total_gpu_active_duration", totals.total_gpu_active_duration);
        writer.number("previous_uptime", totals.previous_uptime);
        writer.number("session_active_duration", totals.session_active_duration);
        writer.number("session_gpu_active_duration", totals.session_gpu_active_duration);
        writer.number("last_update", totals.last_update);
    }
    writer.number_if_any("on_lambda", stats.on_lambda);
    writer.number_if_any("connected_lambda", stats.connected_lambda);
    writer.number_if_any("active_lambda", stats.active_lambda);
    writer.number_if_any("gpu_active_lambda", stats.gpu_active_lambda);
    writer.close("time_stats");
}

fn write_project(project: &Project, writer: &mut XmlWriter) {
    writer.open("project");
    writer.text("master_url", &project.master_url);
    writer.text("project_name", &project.name);
    writer.text_if_any("authenticator", &project.authenticator);
    writer.text("user_name", &project.user_name);
    writer.text("team_name", &project.team_name);
    writer.text_if_any("host_venue", &project.host_venue);
    writer.text("cross_project_id", &project.cross_project_id);
    let account = &project.account;
    writer.number("user_total_credit", account.user_total_credit);
    writer.number("user_expavg_credit", account.user_expavg_credit);
    writer.integer("rpc_seqno", project.rpc_seqno);
    writer.integer("userid", project.userid);
    writer.integer("teamid", project.teamid);
    writer.integer("hostid", project.hostid);
    writer.number("host_total_credit", account.host_total_credit);
    writer.number("host_expavg_credit", account.host_expavg_credit);
    writer.integer("nrpc_failures", project.nrpc_failures);
    writer.integer("master_fetch_failures", project.master_fetch_failures);
    writer.integer("njobs_success", project.njobs_success);
    writer.integer("njobs_error", project.njobs_error);
    writer.number("elapsed_time", project.elapsed_time);
    writer.number("min_rpc_time", project.min_rpc_time);
    writer.number("rec", project.rec);
    writer.number("rec_time", project.rec_time);
    writer.number("resource_share", project.resource_share);
    writer.number("duration_correction_factor", project.duration_correction_factor);
    // BOINC writes the reason an RPC is pending; 1 is "the user asked".
    writer.integer("sched_rpc_pending", i32::from(project.sched_rpc_pending));
    writer.number("last_rpc_time", project.last_rpc_time);
    // Older clients' debt element: today's clients skip it, ours reads it back.
    writer.number("short_term_debt", project.short_term_debt);
    for (resource, state) in project.resources.iter() {
        if resource == ResourceType::Cpu || state.backoff_time != 0.0 {
            write_resource_value(writer, "rsc_backoff_time", resource, state.backoff_time);
        }
        if resource == ResourceType::Cpu || state.backoff_interval != 0.0 {
            write_resource_value(writer, "rsc_backoff_interval", resource, state.backoff_interval);
        }
    }
    for (resource, state) in project.resources.iter() {
        if state.no_apps {
            writer.text("no_rsc_apps", resource.boinc_name());
        }
    }
    for url in &project.scheduler_urls {
        writer.text("scheduler_url", url);
    }
    writer.empty_if("master_url_fetch_pending", project.master_fetch_pending);
    writer.empty_if("suspended_via_gui", project.suspended);
    writer.empty_if("dont_request_more_work", project.dont_request_more_work);
    writer.empty_if("detach_when_done", project.detach_when_done);
    writer.empty_if("non_cpu_intensive", project.non_cpu_intensive);
    writer.empty_if("dont_use_dcf", project.dont_use_dcf);
    writer.empty_if("attached_via_acct_mgr", account.attached_via_acct_mgr);
    let policy = project.deletion_policy;
    writer.empty_if("deletion_policy_priority", policy.priority);
    writer.empty_if("deletion_policy_expire", policy.expire);
    writer.empty_if("delete_from_self", policy.delete_from_self);
    if let Some(availability) = project.availability {
        writer.open("available");
        writer.number("frac", availability.frac);
        writer.number("lambda", availability.lambda);
        writer.close("available");
    }
    if let Some(key) = &project.code_sign_key {
        writer.block("code_sign_key", key);
    }
    write_project_own_fields(project, writer);
    writer.close("project");
}

fn write_resource_value(writer: &mut XmlWriter, name: &str, resource: ResourceType, value: f64) {
    writer.open(name);
    writer.text("name", resource.boinc_name());
    writer.number("value", value);
    writer.close(name);
}

/// A project's fields BOINC has no element for (see the module documentation).
fn write_project_own_fields(project: &Project, writer: &mut XmlWriter) {
    writer.open(OWN_FIELDS);
    writer.flag("detached", project.detached);
    writer.number_if_any("last_rpc_failure", project.last_rpc_failure);
    writer.number_if_any("latency_limited_until", project.latency_limited_until);
    writer.number("exp_avg_cpu", project.exp_avg_cpu);
    writer.number("exp_avg_time", project.exp_avg_time);
    writer.integer("app_failures", project.app_failures);
    for (resource, state) in project.resources.iter() {
        writer.open("resource");
        writer.text("name", resource.boinc_name());
        writer.number("long_term_debt", state.long_term_debt);
        writer.flag("accumulate_debt", state.accumulate_debt);
        writer.flag("has_app_version", state.has_app_version);
        writer.close("resource");
    }
    writer.close(OWN_FIELDS);
}

/// The apps, files, app versions, workunits and results of one project, in that order.
fn write_project_elements(state: &ClientState, project: ProjectId, writer: &mut XmlWriter) {
    for app in state.apps.iter().filter(|a| a.project == project) {
        write_app(app, writer);
    }
    for file in state.files.iter().filter(|f| f.project == project) {
        write_file(file, writer);
    }
    for version in state.app_versions.iter().filter(|v| v.project == project) {
        write_app_version(state, version, writer);
    }
    for workunit in state.workunits.iter().filter(|w| w.project == project) {
        write_workunit(state, workunit, writer);
    }
    for job in state.jobs.iter().filter(|j| j.project == project) {
        write_result(state, job, writer);
    }
}

fn write_app(app: &App, writer: &mut XmlWriter) {
    writer.open("app");
    writer.text("name", &app.name);
    writer.text("user_friendly_name", &app.user_friendly_name);
    writer.flag("non_cpu_intensive", app.non_cpu_intensive);
    if let Some(limit) = app.max_concurrent {
        writer.integer("max_concurrent", limit);
    }
    if let Some(emulation) = &app.emulation {
        writer.number("latency_bound", emulation.latency_bound);
        writer.number("fpops_est", emulation.fpops_est);
        writer.open("fpops");
        writer.number("mean", emulation.fpops_mean);
        writer.number("std_dev", emulation.fpops_std_dev);
        writer.close("fpops");
        writer.number("weight", emulation.weight);
        writer.number("checkpoint_period", emulation.checkpoint_period);
        let files = &emulation.files;
        writer.number("input_nbytes", files.input_nbytes);
        writer.number("sticky_nbytes", files.sticky_nbytes);
        writer.number("output_nbytes", files.output_nbytes);
        if let Some(priority) = files.priority {
            writer.integer("file_priority", priority);
        }
        writer.number_if_any("file_exp_days", files.exp_days);
    }
    writer.close("app");
}

/// BOINC's number for a file's status.
fn file_status_code(status: FileStatus) -> i32 {
    match status {
        FileStatus::NotPresent => 0,
        FileStatus::Present => 1,
        FileStatus::Error(code) => code,
    }
}

fn write_file(file: &FileInfo, writer: &mut XmlWriter) {
    writer.open("file");
    writer.text("name", &file.name);
    writer.number("nbytes", file.nbytes);
    writer.number("max_nbytes", file.max_nbytes);
    writer.text_if_any("md5_cksum", &file.md5_cksum);
    writer.integer("status", file_status_code(file.status));
    writer.empty_if("executable", file.executable);
    writer.empty_if("uploaded", file.uploaded);
    writer.empty_if("upload_when_present", file.upload_when_present);
    writer.empty_if("sticky", file.sticky);
    if let Some(priority) = file.priority {
        writer.integer("priority", priority);
    }
    writer.number_if_any("exp_days", file.exp_days);
    if let Some(signature) = &file.file_signature {
        writer.empty_if("signature_required", true);
        writer.block("file_signature", signature);
    }
    for url in &file.download_urls {
        writer.text("download_url", url);
    }
    for url in &file.upload_urls {
        writer.text("upload_url", url);
    }
    writer.open(OWN_FIELDS);
    writer.flag("transfer_deferred", file.transfer_deferred);
    writer.number("download_time", file.download_time);
    writer.number("time_last_used", file.time_last_used);
    writer.close(OWN_FIELDS);
    writer.close("file");
}

/// A reference as written: by the name of the file it refers to.
fn file_reference(state: &ClientState, reference: &FileRef) -> FileReference {
    FileReference {
        file_name: state.file(reference.file).name.clone(),
        open_name: reference.open_name.clone(),
        main_program: reference.main_program,
        copy_file: reference.copy_file,
    }
}

fn write_app_version(state: &ClientState, version: &AppVersion, writer: &mut XmlWriter) {
    let description = AppVersionDescription {
        file_refs: version.files.iter().map(|r| file_reference(state, r)).collect(),
        duration_correction_factor: version.duration_correction_factor,
        ..AppVersionDescription::of_version(
            &state.app(version.app).name,
            version,
            &version.platform,
        )
    };
    description.write(writer, true);
}

fn write_workunit(state: &ClientState, workunit: &Workunit, writer: &mut XmlWriter) {
    let description = WorkunitDescription {
        name: workunit.name.clone(),
        app_name: state.app(workunit.app).name.clone(),
        version_num: None,
        command_line: workunit.command_line.clone(),
        rsc_fpops_est: workunit.rsc_fpops_est,
        rsc_fpops_bound: workunit.rsc_fpops_bound,
        rsc_memory_bound: workunit.rsc_memory_bound,
        rsc_disk_bound: workunit.rsc_disk_bound,
        file_refs: workunit.input_files.iter().map(|r| file_reference(state, r)).collect(),
    };
    description.write(writer);
}

/// A figure BOINC writes only when it is not 0.
pub(crate) fn positive(value: f64) -> Option<f64> {
    (value > 0.0).then_some(value)
}

fn write_result(state: &ClientState, job: &Job, writer: &mut XmlWriter) {
    writer.open("result");
    writer.text("name", &job.name);
    writer.text("wu_name", &state.workunit(job.workunit).name);
    writer.number("final_cpu_time", job.final_cpu_time);
    writer.number("final_elapsed_time", job.final_elapsed_time);
    writer.integer("exit_status", job.exit_status);
    writer.integer("state", job.state.code());
    writer.text_if_any("platform", &job.platform);
    writer.integer("version_num", job.version_num);
    // Written even when empty: it tells a plain version from a plan class's of the same
    // number.
    writer.text("plan_class", &job.plan_class);
    for (name, value) in [
        ("final_peak_working_set_size", job.final_peaks.working_set_size),
        ("final_peak_swap_size", job.final_peaks.swap_size),
        ("final_peak_disk_usage", job.final_peaks.disk_usage),
    ] {
        // Whole bytes, written when measured, as BOINC writes them.
        if let Some(bytes) = positive(value) {
            writer.text(name, &format!("{bytes:.0}"));
        }
    }
    if !job.stderr_out.is_empty() {
        writer.cdata("stderr_out", |_| {}, &job.stderr_out);
    }
    writer.empty_if("ready_to_report", job.ready_to_report);
    writer.empty_if("got_server_ack", job.got_server_ack);
    writer.empty_if("suspended_via_gui", job.suspended);
    writer.number("completed_time", job.completed_time);
    writer.number("report_deadline", job.report_deadline);
    writer.number("received_time", job.received_time);
    for reference in &job.output_files {
        file_reference(state, reference).write(writer);
    }
    writer.close("result");
}

fn write_active_task(state: &ClientState, job: &Job, task: &ActiveTask, writer: &mut XmlWriter) {
    writer.open("active_task");
    writer.text("project_master_url", &state.project(job.project).master_url);
    writer.text("result_name", &job.name);
    let code = match task.scheduler_state {
        SchedulerState::Uninitialized => 0,
        SchedulerState::Running => 1,
        SchedulerState::Preempted => PROCESS_SUSPENDED,
    };
    writer.integer("active_task_state", code);
    writer.integer("app_version_num", job.version_num);
    writer.integer("slot", task.slot);
    writer.number("checkpoint_cpu_time", task.checkpoint_cpu_time);
    writer.number("checkpoint_elapsed_time", task.checkpoint_elapsed_time);
    writer.number("checkpoint_fraction_done", checkpoint_fraction_done(task));
    writer.number("current_cpu_time", task.current_cpu_time);
    writer.flag("once_ran_edf", task.once_ran_edf);
    writer.number("fraction_done", task.fraction_done);
    writer.number("elapsed_time", task.elapsed_time);
    writer.number("working_set_size_smoothed", task.working_set_size);
    writer.number_if_any("peak_working_set_size", positive(task.peaks.working_set_size));
    writer.number_if_any("peak_swap_size", positive(task.peaks.swap_size));
    writer.number_if_any("peak_disk_usage", positive(task.peaks.disk_usage));
    writer.open(OWN_FIELDS);
    writer.number("checkpoint_wall_time", task.checkpoint_wall_time);
    writer.number("run_start_time", task.run_start_time);
    for instance in &task.gpu_instances {
        writer.integer("gpu_instance", *instance);
    }
    if task.crashes.streak() > 0 {
        writer.integer("crash_streak", task.crashes.streak());
    }
    for time in task.crashes.failure_times() {
        writer.number("crash_time", time);
    }
    if let Some(at) = task.restart_at {
        writer.number("restart_at", at);
    }
    writer.close(OWN_FIELDS);
    writer.close("active_task");
}

/// The fraction done at the last checkpoint, which is where BOINC restarts a task from:
/// the progress scaled back as [`ActiveTask::quit`] scales it.
fn checkpoint_fraction_done(task: &ActiveTask) -> f64 {
    if task.elapsed_time > 0.0 {
        (task.fraction_done * task.checkpoint_elapsed_time / task.elapsed_time).clamp(0.0, 1.0)
    } else {
        task.fraction_done
    }
}
