//! `<client_state>` (GUI RPC `get_state`): the host, the availability statistics, then
//! each project followed by its apps, app versions, workunits and tasks, as BOINC
//! 7.20.5 writes it (fixture gui_rpc_get_state_with_projects.txt). The order matters:
//! the real tools file each app, workunit and task under the project before it.

use super::host_info::write_host_info;
use super::project_status::write_project;
use super::results::write_result;
use super::view::{ClientView, PROTOCOL_VERSION};
use crate::disk::limits::project_usage;
use crate::model::Prefs;
use crate::protocol::xml_out::XmlOut;

/// Writes `<client_state>`.
pub(crate) fn write_client_state(out: &mut XmlOut, view: &ClientView) {
    let state = view.state;
    out.start("client_state");
    write_host_info(out, &state.host);
    write_time_stats(out, view);
    let disk_usage = project_usage(state);
    for project in state.project_ids().filter(|&p| view.shown(p)) {
        write_project(out, view, project, &disk_usage);
        for app in state.apps.iter().filter(|a| a.project == project) {
            out.start("app");
            out.text("name", &app.name);
            let shown_name =
                if app.user_friendly_name.is_empty() { &app.name } else { &app.user_friendly_name };
            out.text("user_friendly_name", shown_name);
            out.bit("non_cpu_intensive", app.non_cpu_intensive);
            out.end("app");
        }
        for version in state.app_versions.iter().filter(|v| v.project == project) {
            out.start("app_version");
            out.text("app_name", &state.app(version.app).name);
            out.int("version_num", version.version_num);
            out.text("platform", view.platform);
            out.real("avg_ncpus", version.usage.avg_ncpus);
            out.real("flops", version.flops);
            out.text("plan_class", &version.plan_class);
            if !version.api_version.is_empty() {
                out.text("api_version", &version.api_version);
            }
            if let Some((resource, count)) = version.usage.coprocessor {
                out.start("coproc");
                out.text("type", super::project_status::resource_name(resource));
                out.real("count", count);
                out.end("coproc");
            }
            // The Manager shows the main program's file name as the task's executable.
            for file_ref in &version.files {
                out.start("file_ref");
                out.text("file_name", &state.file(file_ref.file).name);
                if !file_ref.open_name.is_empty() {
                    out.text("open_name", &file_ref.open_name);
                }
                out.flag("main_program", file_ref.main_program);
                out.flag("copy_file", file_ref.copy_file);
                out.end("file_ref");
            }
            out.end("app_version");
        }
        for workunit in state.workunits.iter().filter(|w| w.project == project) {
            out.start("workunit");
            out.text("name", &workunit.name);
            out.text("app_name", &state.app(workunit.app).name);
            out.real("rsc_fpops_est", workunit.rsc_fpops_est);
            out.real("rsc_fpops_bound", workunit.rsc_fpops_bound);
            out.real("rsc_memory_bound", workunit.rsc_memory_bound);
            out.real("rsc_disk_bound", workunit.rsc_disk_bound);
            out.end("workunit");
        }
        for job in state.job_ids().filter(|&j| state.job(j).project == project) {
            write_result(out, view, job);
        }
    }
    out.text("platform_name", view.platform);
    out.int("core_client_major_version", PROTOCOL_VERSION.major);
    out.int("core_client_minor_version", PROTOCOL_VERSION.minor);
    out.int("core_client_release", PROTOCOL_VERSION.release);
    out.bit("executing_as_daemon", false);
    out.text("platform", view.platform);
    write_global_preferences(out, &state.prefs);
    out.end("client_state");
}

fn write_time_stats(out: &mut XmlOut, view: &ClientView) {
    let stats = &view.state.time_stats;
    out.start("time_stats");
    out.real("on_frac", stats.on_frac);
    out.real("connected_frac", stats.connected_frac);
    out.real("active_frac", stats.active_frac);
    out.real("gpu_active_frac", stats.gpu_active_frac);
    out.real("client_start_time", view.client_start_time);
    out.real("now", view.now);
    out.end("time_stats");
}

/// The preferences in force, in `global_prefs.xml`'s element names.
fn write_global_preferences(out: &mut XmlOut, prefs: &Prefs) {
    out.start("global_preferences");
    out.bit("run_if_user_active", prefs.run_if_user_active);
    out.bit("run_gpu_if_user_active", prefs.run_gpu_if_user_active);
    out.bit("leave_apps_in_memory", prefs.leave_apps_in_memory);
    out.real("work_buf_min_days", prefs.work_buf_min_days);
    out.real("work_buf_additional_days", prefs.work_buf_additional_days);
    out.real("max_ncpus_pct", prefs.max_ncpus_pct);
    out.int("max_ncpus", prefs.max_ncpus);
    out.real("cpu_scheduling_period_minutes", prefs.cpu_scheduling_period_minutes);
    out.real("disk_max_used_gb", prefs.disk_max_used_gb);
    out.real("disk_max_used_pct", prefs.disk_max_used_pct);
    out.real("disk_min_free_gb", prefs.disk_min_free_gb);
    out.real("ram_max_used_busy_pct", prefs.ram_max_used_busy_pct);
    out.real("ram_max_used_idle_pct", prefs.ram_max_used_idle_pct);
    out.real("cpu_usage_limit", prefs.cpu_usage_limit);
    out.end("global_preferences");
}
