//! The live file transfer (issue "Talking to real project servers", item 2): a download
//! interrupted half-way resumes with a Range request from the bytes it holds, against
//! the real `boinc-rs project-server`, and arrives whole with the project's MD5; an
//! upload first asks the data server how much of the file it holds, then sends the
//! rest from there under a header that says so.

mod support;

use boinc_actors::effects::{FileTransfer, TransferError, TransferProgress, Transferred};
use boinc_actors::live::http::{HttpSettings, LiveFileTransfer};
use boinc_core::control::ClientIdentity;
use boinc_core::model::{CcConfig, FileId, ProjectId};
use boinc_core::protocol::DataServerRequest;
use boinc_core::protocol::code_signing::md5_hex;
use boinc_core::transfer::{Direction, TransferOrder};
use serde_json::json;
use std::sync::{Arc, Mutex};
use support::http::{TestServer, UPLOAD_HELD, block_on};
use support::project_server::ProjectServerProcess;

fn transfer(dir: &std::path::Path) -> LiveFileTransfer {
    let settings = HttpSettings::new(&CcConfig::default(), &ClientIdentity::default());
    LiveFileTransfer::new(settings, dir).expect("a file transfer")
}

fn order(direction: Direction, name: &str, url: String, nbytes: f64, md5: &str) -> TransferOrder {
    TransferOrder {
        file: FileId(0),
        project: ProjectId(0),
        direction,
        name: name.to_owned(),
        url,
        path: format!("projects/p/{name}"),
        staging_path: match direction {
            Direction::Download => format!("downloads/p/{name}"),
            Direction::Upload => String::new(),
        },
        nbytes,
        max_nbytes: nbytes.max(1e6),
        md5_cksum: md5.to_owned(),
        executable: false,
        started: 0.0,
    }
}

/// A progress sink keeping every report.
fn recorder() -> (Arc<Mutex<Vec<TransferProgress>>>, boinc_actors::effects::ProgressSink) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    (seen, Box::new(move |p| sink.lock().unwrap().push(p)))
}

#[test]
fn an_interrupted_download_resumes_with_a_range_request() {
    const SIZE: u64 = 4_000_000;
    let server = ProjectServerProcess::start(&["--jobs", "0"]);
    // A file of the project's, served from its download directory.
    let name = "large_input";
    let served: Vec<u8> = (0..SIZE).map(|i| (i * 31 % 253) as u8).collect();
    std::fs::write(server.project_dir().join("download").join(name), &served).expect("served");
    let md5 = md5_hex(&served);
    let data = tempfile::tempdir().expect("a data directory");
    let transfer = transfer(data.path());
    let order =
        order(Direction::Download, name, server.at(&format!("download/{name}")), SIZE as f64, &md5);
    server
        .add_faults(json!({"target": "download", "fault": "truncated", "file": name, "count": 1}));
    let (_, progress) = recorder();
    let held = match block_on(transfer.download(&order, progress)) {
        Err(TransferError::Interrupted { bytes, .. }) => bytes,
        other => panic!("the cut-off download: {other:?}"),
    };
    assert!(held > 0 && held < SIZE, "{held}");
    let staged = std::fs::metadata(data.path().join(&order.staging_path)).expect("kept").len();
    assert_eq!(staged, held, "the bytes received are kept for the next attempt");
    let served_before = server.counter("download_bytes");
    let (seen, progress) = recorder();
    let done = block_on(transfer.download(&order, progress)).expect("the resumed download");
    assert_eq!(done, Transferred::Downloaded { nbytes: SIZE, md5: md5.clone() });
    // Only the rest came again.
    let served_again = server.counter("download_bytes") - served_before;
    assert_eq!(served_again, SIZE - held, "the second attempt asked for the rest only");
    let seen = seen.lock().unwrap();
    assert!(seen.iter().all(|p| p.bytes >= held && p.total == Some(SIZE)), "{seen:?}");
    transfer.install(&order).expect("installed");
    assert_eq!(std::fs::read(data.path().join(&order.path)).expect("in place"), served);
}

#[test]
fn an_upload_asks_how_much_the_server_holds_and_sends_the_rest() {
    let server = TestServer::start();
    let data = tempfile::tempdir().expect("a data directory");
    let content: Vec<u8> = (0..50_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let path = data.path().join("projects/p/result_out");
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("the project directory");
    std::fs::write(&path, &content).expect("the output");
    let order = order(Direction::Upload, "result_out", server.url("/file_upload_handler"), 0.0, "");
    let (_, progress) = recorder();
    let done = block_on(transfer(data.path()).upload(&order, progress)).expect("uploaded");
    let md5 = md5_hex(&content);
    assert_eq!(done, Transferred::Uploaded { nbytes: content.len() as u64, md5: md5.clone() });
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    match DataServerRequest::parse(&requests[0].body) {
        Ok((DataServerRequest::FileSize { name, .. }, _)) => assert_eq!(name, "result_out"),
        other => panic!("first the size query: {other:?}"),
    }
    match DataServerRequest::parse(&requests[1].body) {
        Ok((DataServerRequest::Upload { upload, .. }, data_start)) => {
            assert_eq!(upload.name, "result_out");
            assert_eq!(upload.offset, UPLOAD_HELD);
            assert_eq!(upload.nbytes, content.len() as f64);
            assert_eq!(upload.md5_cksum, md5);
            assert_eq!(&requests[1].body[data_start..], &content[UPLOAD_HELD as usize..]);
        }
        other => panic!("then the upload: {other:?}"),
    }
}
