//! `<statistics>` (GUI RPC `get_statistics`): each project's daily credit history, in
//! the elements of BOINC's `statistics_<project>.xml` (`protocol::statistics_file`).

use super::view::ClientView;
use crate::protocol::statistics_file::write_project_statistics;
use crate::protocol::xml_out::XmlOut;

/// Writes `<statistics>`.
pub(crate) fn write_statistics(out: &mut XmlOut, view: &ClientView) {
    out.start("statistics");
    for project in view.state.project_ids().filter(|&p| view.shown(p)) {
        let project = view.state.project(project);
        write_project_statistics(out, &project.master_url, &project.account.statistics);
    }
    out.end("statistics");
}
