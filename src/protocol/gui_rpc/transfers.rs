//! `<file_transfers>` (GUI RPC `get_file_transfers`): the files waiting to come down
//! (inputs of jobs still downloading) or go up (outputs not yet uploaded), as BOINC
//! 7.20.5 lists its persistent transfers.

use super::view::ClientView;
use crate::model::{FileStatus, JobState};
use crate::protocol::xml_out::XmlOut;

/// Writes `<file_transfers>`.
pub(crate) fn write_file_transfers(out: &mut XmlOut, view: &ClientView) {
    let state = view.state;
    let mut downloading = vec![false; state.files.len()];
    for job in &state.jobs {
        if matches!(job.state, JobState::New | JobState::FilesDownloading) {
            for input in &state.workunit(job.workunit).input_files {
                if let Some(flag) = downloading.get_mut(input.file.index()) {
                    *flag = true;
                }
            }
        }
    }
    out.start("file_transfers");
    for (index, file) in state.files.iter().enumerate() {
        if !view.shown(file.project) {
            continue;
        }
        let download = downloading[index] && file.status == FileStatus::NotPresent;
        let upload =
            file.upload_when_present && !file.uploaded && file.status == FileStatus::Present;
        if !download && !upload {
            continue;
        }
        let project = state.project(file.project);
        out.start("file_transfer");
        out.text("project_url", &project.master_url);
        out.text("project_name", &project.name);
        out.text("name", &file.name);
        out.real("nbytes", file.nbytes);
        out.real("max_nbytes", file.max_nbytes);
        out.int("status", 0);
        out.start("persistent_file_xfer");
        out.bit("is_upload", upload);
        out.end("persistent_file_xfer");
        out.end("file_transfer");
    }
    out.end("file_transfers");
}
