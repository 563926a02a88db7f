//! The live file transfer (issue "Talking to real project servers", item 2): a download
//! interrupted half-way resumes with a Range request from the bytes it holds, against
//! the real `boinc-rs project-server`, and arrives whole with the project's MD5; an
//! upload first asks the data server how much of the file it holds, then sends the
//! rest from there under a header that says so. Neither goes past the file's size or
//! through a link an app planted.

use crate::support;

use boinc_core::control::ClientIdentity;
use boinc_core::model::{CcConfig, FileId, ProjectId};
use boinc_core::protocol::DataServerRequest;
use boinc_core::protocol::code_signing::md5_hex;
use boinc_core::transfer::{Direction, TransferOrder};
use boinc_runtime::effects::{FileTransfer, TransferError, TransferProgress, Transferred};
use boinc_service::http::{HttpSettings, LiveFileTransfer, MAX_DATA_SERVER_REPLY};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Instant;
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
        max_bytes_sec: 0.0,
    }
}

/// Where an output of the project `p` lives in `data`, its directory made.
fn output_path(data: &std::path::Path) -> std::path::PathBuf {
    let path = data.join("projects/p/result_out");
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("the project directory");
    path
}

/// A progress sink keeping every report.
fn recorder() -> (Arc<Mutex<Vec<TransferProgress>>>, boinc_runtime::effects::ProgressSink) {
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
    std::fs::write(server.dir.join("download").join(name), &served).expect("served");
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

/// Uploads `content` as `result_out` to a data server holding its first
/// [`UPLOAD_HELD`] bytes; checks the upload is done with the file's size and MD5.
/// Returns the MD5 and the requests the server saw.
fn upload_to_test_server(content: &[u8]) -> (String, Vec<support::http::Recorded>) {
    let server = TestServer::start();
    let data = tempfile::tempdir().expect("a data directory");
    std::fs::write(output_path(data.path()), content).expect("the output");
    let order = order(Direction::Upload, "result_out", server.url("/file_upload_handler"), 0.0, "");
    let (_, progress) = recorder();
    let done = block_on(transfer(data.path()).upload(&order, progress)).expect("uploaded");
    let md5 = md5_hex(content);
    assert_eq!(done, Transferred::Uploaded { nbytes: content.len() as u64, md5: md5.clone() });
    (md5, server.requests())
}

#[test]
fn an_upload_asks_how_much_the_server_holds_and_sends_the_rest() {
    let content: Vec<u8> = (0..50_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let (md5, requests) = upload_to_test_server(&content);
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

/// An upload goes with its length, as BOINC's client sends it, never chunked: a file
/// upload handler behind a CGI server may see an empty body in a chunked request.
#[test]
fn an_upload_is_sent_with_its_length_not_chunked() {
    let content: Vec<u8> = (0..50_000u32).map(|i| (i * 11 % 251) as u8).collect();
    let (_, requests) = upload_to_test_server(&content);
    let upload = requests.last().expect("the upload");
    let header =
        |name: &str| upload.headers.iter().find(|(n, _)| n == name).map(|(_, value)| value.clone());
    assert_eq!(header("transfer-encoding"), None, "{:?}", upload.headers);
    assert_eq!(header("content-length"), Some(upload.body.len().to_string()));
}

/// The server holds the whole file already (the answer to an earlier attempt was lost):
/// the upload is not taken as done on the size alone; the request still goes, with no
/// bytes and the whole file's MD5, so the server checks what it holds and says so.
#[test]
fn an_upload_the_server_holds_whole_is_confirmed_not_assumed() {
    let content: Vec<u8> = (0..UPLOAD_HELD).map(|i| (i * 13 % 251) as u8).collect();
    let (md5, requests) = upload_to_test_server(&content);
    assert_eq!(requests.len(), 2, "the size query, then the confirming upload: {requests:?}");
    match DataServerRequest::parse(&requests[1].body) {
        Ok((DataServerRequest::Upload { upload, .. }, data_start)) => {
            assert_eq!((upload.offset, upload.nbytes), (UPLOAD_HELD, UPLOAD_HELD as f64));
            assert_eq!(upload.md5_cksum, md5);
            assert!(requests[1].body[data_start..].is_empty(), "no bytes sent again");
        }
        other => panic!("then the upload: {other:?}"),
    }
}

/// A server that keeps sending past the file's announced size: the download stops at
/// the size, refused as too large, without reading the rest (100 MB here).
#[test]
fn a_download_stops_at_its_announced_size() {
    let server = TestServer::start();
    let data = tempfile::tempdir().expect("a data directory");
    let url = server.url("/huge_streamed");
    let mut order = order(Direction::Download, "small_input", url.clone(), 1000.0, "");
    order.max_nbytes = 0.0;
    let (_, progress) = recorder();
    let refused = block_on(transfer(data.path()).download(&order, progress));
    assert_eq!(refused, Err(TransferError::TooLarge { url, limit: 1000 }));
    let staged = std::fs::metadata(data.path().join(&order.staging_path)).map_or(0, |m| m.len());
    assert!(staged <= 1000, "{staged} bytes staged");
    assert!(server.bytes_sent() < 20_000_000, "read on: {} bytes", server.bytes_sent());
}

/// An app can write in its project directory and so could put a link where a file the
/// client is about to download goes (or in the staging directory): the client removes
/// the link and never writes through it.
#[test]
fn a_link_planted_where_a_download_goes_is_not_followed() {
    let server = TestServer::start();
    let data = tempfile::tempdir().expect("a data directory");
    let outside = data.path().join("users_file");
    std::fs::write(&outside, "keep").expect("the user's file");
    for planted_at in ["projects/p/master_copy", "downloads/p/master_copy"] {
        let order = order(Direction::Download, "master_copy", server.url("/master"), 0.0, "");
        let link = data.path().join(planted_at);
        std::fs::create_dir_all(link.parent().expect("a parent")).expect("a directory");
        std::os::unix::fs::symlink(&outside, &link).expect("the planted link");
        let (_, progress) = recorder();
        match block_on(transfer(data.path()).download(&order, progress)) {
            Ok(Transferred::Downloaded { nbytes, .. }) => assert!(nbytes > 4, "{nbytes}"),
            other => panic!("the download: {other:?}"),
        }
        assert_eq!(std::fs::read_to_string(&outside).expect("still there"), "keep");
        let staged = std::fs::symlink_metadata(data.path().join(&order.staging_path))
            .expect("the staging file");
        assert!(staged.file_type().is_file(), "{planted_at}: a regular file of its own");
        std::fs::remove_file(data.path().join(&order.staging_path)).expect("cleared");
    }
}

/// An output an app replaced by a link to a file of the user's is never sent.
#[test]
fn an_upload_of_a_planted_link_is_refused_unsent() {
    let server = TestServer::start();
    let data = tempfile::tempdir().expect("a data directory");
    let secret = data.path().join("secret");
    std::fs::write(&secret, "the user's secret").expect("the user's file");
    let path = output_path(data.path());
    std::os::unix::fs::symlink(&secret, &path).expect("the planted link");
    let order = order(Direction::Upload, "result_out", server.url("/file_upload_handler"), 0.0, "");
    let refused = refused_before_sending(&server, data.path(), &order);
    assert_eq!(refused, TransferError::NotAFile { path });
}

/// An output larger than the project's `max_nbytes` for it is not sent at all: the
/// upload is given up before any byte goes.
#[test]
fn an_output_over_its_max_nbytes_is_never_sent() {
    let server = TestServer::start();
    let data = tempfile::tempdir().expect("a data directory");
    let path = output_path(data.path());
    std::fs::write(&path, vec![b'o'; 5000]).expect("the output");
    let mut order =
        order(Direction::Upload, "result_out", server.url("/file_upload_handler"), 0.0, "");
    order.max_nbytes = 4000.0;
    let refused = refused_before_sending(&server, data.path(), &order);
    assert_eq!(refused, TransferError::FileTooBig { path, nbytes: 5000, limit: 4000 });
}

/// Uploads `order` from `data`: it must be refused for good before anything is sent.
fn refused_before_sending(
    server: &TestServer,
    data: &std::path::Path,
    order: &TransferOrder,
) -> TransferError {
    let (_, progress) = recorder();
    let refused = block_on(transfer(data).upload(order, progress)).expect_err("refused");
    assert_eq!(refused.kind(), boinc_core::transfer::FailureKind::Permanent, "{refused}");
    assert!(server.requests().is_empty(), "nothing was sent");
    refused
}

/// A data server answering an upload with 100 MB: read no further than its bound.
#[test]
fn a_data_server_reply_of_100_mb_is_refused() {
    let server = TestServer::start();
    let data = tempfile::tempdir().expect("a data directory");
    let path = output_path(data.path());
    std::fs::write(&path, b"a small output").expect("the output");
    let url = server.url("/huge_streamed");
    let order = order(Direction::Upload, "result_out", url.clone(), 0.0, "");
    let (_, progress) = recorder();
    let refused = block_on(transfer(data.path()).upload(&order, progress));
    assert_eq!(refused, Err(TransferError::TooLarge { url, limit: MAX_DATA_SERVER_REPLY }));
    assert!(server.bytes_sent() < 30_000_000, "read on: {} bytes", server.bytes_sent());
}

/// The preferences' download limit: 2 MB at 200 KB/s takes about 10 s, measured on
/// the real project server; with no limit the same file takes a fraction of that.
#[test]
fn a_download_keeps_to_the_rate_limit() {
    const SIZE: u64 = 2_000_000;
    const RATE: f64 = 200_000.0;
    let server = ProjectServerProcess::start(&["--jobs", "0"]);
    let name = "paced_input";
    let served: Vec<u8> = (0..SIZE).map(|i| (i * 17 % 251) as u8).collect();
    std::fs::write(server.dir.join("download").join(name), &served).expect("served");
    let md5 = md5_hex(&served);
    let data = tempfile::tempdir().expect("a data directory");
    let paced = transfer(data.path());
    let mut order =
        order(Direction::Download, name, server.at(&format!("download/{name}")), SIZE as f64, &md5);
    order.max_bytes_sec = RATE;
    let (_, progress) = recorder();
    let started = Instant::now();
    let done = block_on(paced.download(&order, progress)).expect("the paced download");
    let paced = started.elapsed().as_secs_f64();
    assert_eq!(done, Transferred::Downloaded { nbytes: SIZE, md5: md5.clone() });
    eprintln!("2 MB at 200 KB/s: {paced:.2} s");
    assert!((9.0..=12.0).contains(&paced), "{paced:.2} s, not about 10 s");

    let unpaced_data = tempfile::tempdir().expect("a data directory");
    order.max_bytes_sec = 0.0;
    let (_, progress) = recorder();
    let started = Instant::now();
    block_on(transfer(unpaced_data.path()).download(&order, progress)).expect("downloaded");
    let free = started.elapsed().as_secs_f64();
    eprintln!("2 MB with no limit: {free:.2} s");
    assert!(free < 5.0, "{free:.2} s without a limit");
}

/// The preferences' upload limit: 1 MB at 200 KB/s takes about 5 s.
#[test]
fn an_upload_keeps_to_the_rate_limit() {
    let content: Vec<u8> = (0..1_000_000u32).map(|i| (i % 249) as u8).collect();
    let server = TestServer::start();
    let data = tempfile::tempdir().expect("a data directory");
    std::fs::write(output_path(data.path()), &content).expect("the output");
    let mut order =
        order(Direction::Upload, "result_out", server.url("/file_upload_handler"), 0.0, "");
    order.max_bytes_sec = 200_000.0;
    let (_, progress) = recorder();
    let started = Instant::now();
    block_on(transfer(data.path()).upload(&order, progress)).expect("uploaded");
    let paced = started.elapsed().as_secs_f64();
    eprintln!("1 MB up at 200 KB/s: {paced:.2} s");
    assert!((4.0..=7.0).contains(&paced), "{paced:.2} s, not about 5 s");
}
