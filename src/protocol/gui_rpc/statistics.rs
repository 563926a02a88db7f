//! `<statistics>` (GUI RPC `get_statistics`): each project's daily credit history. The
//! client keeps no history yet, so each project is listed without daily entries, as
//! BOINC 7.20.5 lists a project attached today.

use super::view::ClientView;
use crate::protocol::xml_out::XmlOut;

/// Writes `<statistics>`.
pub(crate) fn write_statistics(out: &mut XmlOut, view: &ClientView) {
    out.start("statistics");
    for project in view.state.project_ids().filter(|&p| view.shown(p)) {
        out.start("project_statistics");
        out.text("master_url", &view.state.project(project).master_url);
        out.end("project_statistics");
    }
    out.end("statistics");
}
