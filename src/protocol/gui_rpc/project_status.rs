//! `<project>` (GUI RPC `get_project_status`, `get_state`, `get_simple_gui_info`): a
//! project as BOINC 7.20.5 writes it (fixture gui_rpc_get_state_with_projects.txt),
//! with the fields the model keeps; the flags (`<suspended_via_gui/>`,
//! `<dont_request_more_work/>`, ...) only when set, as BOINC writes them.

use super::view::ClientView;
use crate::accounting::rec::rec_credit_per_day;
use crate::control::task_program::PROJECTS_DIR;
use crate::disk::limits::{DiskLimits, project_usage};
use crate::model::{ProjectId, ResourceType};
use crate::protocol::data_dir::escape_project_url;
use crate::protocol::xml_out::XmlOut;

/// BOINC's name for a resource in `<rsc_backoff_time><name>`.
pub(crate) fn resource_name(resource: ResourceType) -> &'static str {
    match resource {
        ResourceType::Cpu => "CPU",
        ResourceType::Nvidia => "NVIDIA",
        ResourceType::Amd => "ATI",
        ResourceType::Intel => "intel_gpu",
    }
}

/// Writes one `<project>`; `disk_usage` is each project's usage, bytes, by id.
pub(crate) fn write_project(
    out: &mut XmlOut,
    view: &ClientView,
    id: ProjectId,
    disk_usage: &[f64],
) {
    let state = view.state;
    let project = state.project(id);
    let account = &project.account;
    out.start("project");
    out.text("master_url", &project.master_url);
    out.text("project_name", &project.name);
    // Fields a GUI RPC client library reads, whatever it shows: BOINC writes each, so
    // boinc-rs does too, with BOINC's value where the model keeps nothing behind it.
    out.text("symstore", "");
    out.text("user_name", &project.user_name);
    out.text("team_name", &project.team_name);
    out.text("host_venue", "");
    out.text("email_hash", "");
    out.text("cross_project_id", &project.cross_project_id);
    out.text("external_cpid", "");
    out.real("cpid_time", 0.0);
    out.real("user_total_credit", account.user_total_credit);
    out.real("user_expavg_credit", account.user_expavg_credit);
    out.real("user_create_time", 0.0);
    out.int("rpc_seqno", saturating_i64(project.rpc_seqno));
    out.int("userid", saturating_i64(project.userid));
    out.int("teamid", saturating_i64(project.teamid));
    out.int("hostid", saturating_i64(project.hostid));
    out.real("host_total_credit", account.host_total_credit);
    out.real("host_expavg_credit", account.host_expavg_credit);
    out.real("host_create_time", 0.0);
    out.int("nrpc_failures", project.nrpc_failures);
    out.int("master_fetch_failures", project.master_fetch_failures);
    out.real("min_rpc_time", project.min_rpc_time);
    out.real("next_rpc_time", 0.0);
    out.real("rec", rec_credit_per_day(project.rec));
    out.real("rec_time", project.rec_time);
    out.real("resource_share", project.resource_share);
    out.real("disk_usage", disk_usage.get(id.index()).copied().unwrap_or(0.0));
    out.real("disk_share", DiskLimits::new(state, 0.0, disk_usage).project_limit(id));
    out.real("desired_disk_usage", 0.0);
    out.real("duration_correction_factor", project.duration_correction_factor);
    out.bit("sched_rpc_pending", project.sched_rpc_pending);
    out.bit("send_time_stats_log", false);
    out.bit("send_job_log", false);
    out.int("njobs_success", saturating_i64(project.njobs_success));
    out.int("njobs_error", saturating_i64(project.njobs_error));
    out.real("elapsed_time", project.elapsed_time);
    out.real("last_rpc_time", project.last_rpc_time);
    // The volunteer's own apps (app_info.xml): the Manager says so in the project's
    // properties, as BOINC 7.20.5 has it here.
    out.flag("anonymous_platform", project.anonymous_platform);
    out.flag("master_url_fetch_pending", project.master_fetch_pending);
    out.flag("suspended_via_gui", project.suspended);
    out.flag("dont_request_more_work", project.dont_request_more_work);
    out.flag("detach_when_done", project.detach_when_done);
    out.flag("scheduler_rpc_in_progress", view.in_flight.contains(&id));
    out.flag("attached_via_acct_mgr", account.attached_via_acct_mgr);
    out.flag("non_cpu_intensive", project.non_cpu_intensive);
    for resource in state.usable_resources() {
        let backoff = &project.resources[resource];
        for (element, value) in [
            ("rsc_backoff_time", backoff.backoff_time),
            ("rsc_backoff_interval", backoff.backoff_interval),
        ] {
            out.start(element);
            out.text("name", resource_name(resource));
            out.real("value", value);
            out.end(element);
        }
    }
    out.real("sched_priority", sched_priority(view, id));
    out.real("project_files_downloaded_time", 0.0);
    let project_dir =
        view.data_dir.join(PROJECTS_DIR).join(escape_project_url(&project.master_url));
    out.text("project_dir", &project_dir.to_string_lossy());
    out.end("project");
}

/// BOINC's scheduling priority of a project: its share of the resources less its share
/// of the recent estimated credit, among the projects shown (0 for a project that has
/// had exactly its share; negative for one that has had more).
fn sched_priority(view: &ClientView, id: ProjectId) -> f64 {
    let state = view.state;
    let shown = || state.project_ids().filter(|&p| view.shown(p)).map(|p| state.project(p));
    let total_share: f64 = shown().map(|p| p.resource_share).sum();
    let total_rec: f64 = shown().map(|p| p.rec).sum();
    let project = state.project(id);
    let share = if total_share > 0.0 { project.resource_share / total_share } else { 0.0 };
    let rec = if total_rec > 0.0 { project.rec / total_rec } else { 0.0 };
    share - rec
}

/// Every project still attached, in the state's order.
pub(crate) fn write_each_project(out: &mut XmlOut, view: &ClientView) {
    let disk_usage = project_usage(view.state);
    for id in view.state.project_ids().filter(|&p| view.shown(p)) {
        write_project(out, view, id, &disk_usage);
    }
}

/// The `<projects>` of `get_project_status`.
pub(crate) fn write_projects(out: &mut XmlOut, view: &ClientView) {
    out.start("projects");
    write_each_project(out, view);
    out.end("projects");
}

/// An id as GUI RPC writes it (a signed number); ids past its range are written as its
/// largest.
fn saturating_i64(id: u64) -> i64 {
    i64::try_from(id).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::rec::update_rec;
    use crate::cpu_sched::test_support::StateBuilder;
    use crate::model::ResourceMap;

    /// BOINC shows REC as credit a day: a project that has had one 1-GFLOPS CPU all to
    /// itself for long enough earns BOINC's 200 credits a day (a cobblestone's
    /// definition), and shows about 200.
    #[test]
    fn rec_is_shown_as_credit_a_day() {
        let mut builder = StateBuilder::new(1);
        let project = builder.project("a", 100.0);
        let mut state = builder.build();
        assert_eq!(state.host.p_fpops, 1e9);
        let mut used = ResourceMap::default();
        used[ResourceType::Cpu] = 3600.0;
        let start = 1_000_000.0;
        update_rec(&mut state, &[], start);
        for hour in 1..=24 * 100 {
            update_rec(&mut state, std::slice::from_ref(&used), start + f64::from(hour) * 3600.0);
        }
        let view = ClientView {
            client_start_time: start,
            ..ClientView::plain(&state, start + 100.0 * 86_400.0)
        };
        let mut out = XmlOut::new();
        write_project(&mut out, &view, project, &[0.0]);
        let text = String::from_utf8(out.finish()).expect("utf-8");
        let rec: f64 = text
            .split("<rec>")
            .nth(1)
            .and_then(|rest| rest.split("</rec>").next())
            .and_then(|value| value.parse().ok())
            .expect("a <rec>");
        assert!((rec - 200.0).abs() < 2.0, "REC shown as {rec}, not about 200 credits a day");
    }
}
