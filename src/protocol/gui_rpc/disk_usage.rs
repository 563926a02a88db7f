//! `<disk_usage_summary>` (GUI RPC `get_disk_usage`): each project's files on disk and
//! the host's disk, with what BOINC may use under seed 004's total limit.

use super::view::ClientView;
use crate::disk::limits::{project_usage, total_limit};
use crate::protocol::xml_out::XmlOut;

/// Writes `<disk_usage_summary>`. The client's own files outside the projects are not
/// measured here: `d_boinc` is 0 and the limit counts the projects' files only.
pub(crate) fn write_disk_usage(out: &mut XmlOut, view: &ClientView) {
    let state = view.state;
    let usage = project_usage(state);
    out.start("disk_usage_summary");
    let mut total = 0.0;
    for project in state.project_ids().filter(|&p| view.shown(p)) {
        let bytes = usage.get(project.index()).copied().unwrap_or(0.0);
        total += bytes;
        out.start("project");
        out.text("master_url", &state.project(project).master_url);
        out.real("disk_usage", bytes);
        out.end("project");
    }
    out.real("d_total", state.host.d_total);
    out.real("d_free", state.host.d_free);
    out.real("d_boinc", 0.0);
    let allowed = total_limit(&state.prefs, &state.host, total);
    out.real("d_allowed", if allowed.is_finite() { allowed.max(0.0) } else { state.host.d_free });
    out.end("disk_usage_summary");
}
