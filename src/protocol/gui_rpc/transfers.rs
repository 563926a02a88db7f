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
        let transfer = &file.transfer;
        out.start("persistent_file_xfer");
        out.int("num_retries", transfer.retries);
        out.real("first_request_time", transfer.first_request_time);
        out.real("next_request_time", transfer.next_request_time);
        out.real("last_bytes_xferred", transfer.bytes_done);
        out.bit("is_upload", upload);
        out.end("persistent_file_xfer");
        // An attempt under way: the real tools call a transfer with a `<file_xfer>`
        // active ("Uploading"), one without it pending.
        if transfer.in_flight {
            let urls = if upload { &file.upload_urls } else { &file.download_urls };
            let url = urls.get(transfer.url_index as usize).or(urls.first());
            out.start("file_xfer");
            out.real("bytes_xferred", transfer.bytes_done);
            out.real("file_offset", transfer.bytes_done);
            out.text("url", url.map_or("", String::as_str));
            out.end("file_xfer");
        }
        out.end("file_transfer");
    }
    out.end("file_transfers");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FileInfo, ProjectId, SyntheticHost, synthetic_host};

    fn rendered(state: &crate::model::ClientState) -> String {
        let view = ClientView::plain(state, 10_000.0);
        let mut out = XmlOut::new();
        write_file_transfers(&mut out, &view);
        String::from_utf8(out.finish()).expect("utf-8")
    }

    /// An upload under way is shown as BOINC shows one (its `<file_xfer>`, which the
    /// real tools read as "active"); one waiting out its backoff has none, and is
    /// "pending".
    #[test]
    fn an_upload_under_way_is_active_and_a_waiting_one_pending() {
        let mut state = synthetic_host(SyntheticHost {
            ncpus: 1,
            njobs: 1,
            running_prefix: 0,
            seed: 3,
            now: 10_000.0,
        });
        let mut file = FileInfo::new(ProjectId::from_index(0), "out_0", 2048.0);
        file.status = FileStatus::Present;
        file.upload_when_present = true;
        file.upload_urls = vec!["http://a.example/upload".into(), "http://b.example/up".into()];
        file.transfer.retries = 2;
        file.transfer.first_request_time = 9_000.0;
        file.transfer.next_request_time = 9_500.0;
        file.transfer.url_index = 1;
        file.transfer.bytes_done = 1024.0;
        state.files.push(file);

        let waiting = rendered(&state);
        assert!(waiting.contains("<is_upload>1</is_upload>"), "{waiting}");
        assert!(waiting.contains("<num_retries>2</num_retries>"), "{waiting}");
        assert!(waiting.contains("<first_request_time>9000.000000</first_request_time>"));
        assert!(waiting.contains("<next_request_time>9500.000000</next_request_time>"));
        assert!(waiting.contains("<last_bytes_xferred>1024.000000</last_bytes_xferred>"));
        assert!(!waiting.contains("<file_xfer>"), "{waiting}");

        state.files.last_mut().expect("the file").transfer.in_flight = true;
        let active = rendered(&state);
        let xfer = &active[active.find("<file_xfer>").expect("an active transfer: {active}")..];
        assert!(xfer.contains("<bytes_xferred>1024.000000</bytes_xferred>"), "{xfer}");
        assert!(xfer.contains("<file_offset>1024.000000</file_offset>"), "{xfer}");
        assert!(xfer.contains("<url>http://b.example/up</url>"), "{xfer}");
        assert!(active.find("</persistent_file_xfer>") < active.find("<file_xfer>"));
    }
}
