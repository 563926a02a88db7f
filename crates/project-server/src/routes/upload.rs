//! `POST /file_upload_handler`: BOINC's data server protocol
//! ([`boinc_core::protocol::DataServerRequest`]). A size query answers the bytes held of
//! a file; an upload appends its bytes at the offset it names (a resumed upload starts
//! where the held bytes end). Only outputs of the project's jobs are taken, no larger
//! than the job allows, under plain names; a complete file must match the size and MD5
//! its header announced. Errors are answered as BOINC's handler answers them: status 1
//! (try again later) or -1 (give up).

use super::super::faults::{Fault, FaultTarget};
use super::super::records::UploadRecord;
use super::super::server::ServerState;
use super::super::uploads::{checksum, is_safe_file_name, size_held, upload_path};
use super::fault_response::{fault_response, take_transport_fault};
use actix_web::web::{Bytes, BytesMut};
use actix_web::{HttpRequest, HttpResponse, web};
use boinc_core::protocol::{
    DataServerError, DataServerReply, DataServerRequest, MAX_DATA_SERVER_HEADER,
};
use futures_util::StreamExt;
use std::sync::atomic::Ordering;
use tokio::io::AsyncWriteExt;

fn reply(reply: DataServerReply) -> HttpResponse {
    HttpResponse::Ok().content_type("text/plain").body(reply.to_xml())
}

/// Whether `head` holds a whole header: the `<data>` tag and the line end after it.
fn header_complete(head: &[u8]) -> bool {
    head.windows(7).any(|w| w == b"<data>\n") || head.windows(8).any(|w| w == b"<data>\r\n")
}

pub(crate) async fn upload(
    state: web::Data<ServerState>,
    request: HttpRequest,
    mut payload: web::Payload,
) -> HttpResponse {
    state.metrics.upload_requests.fetch_add(1, Ordering::Relaxed);
    let mut head = BytesMut::new();
    let mut ended = false;
    while !header_complete(&head) && head.len() <= MAX_DATA_SERVER_HEADER {
        match payload.next().await {
            Some(Ok(chunk)) => head.extend_from_slice(&chunk),
            Some(Err(error)) => {
                tracing::warn!(%error, "an upload's connection failed before its header");
                return reply(DataServerReply::transient("the request was cut short"));
            }
            None => {
                ended = true;
                break;
            }
        }
    }
    let (data_request, data_start) = match DataServerRequest::parse(&head) {
        Ok(parsed) => parsed,
        Err(error @ DataServerError::HeaderTooLong) | Err(error) => {
            tracing::warn!(%error, "unreadable upload request");
            return reply(DataServerReply::permanent(error.to_string()));
        }
    };
    let name = match &data_request {
        DataServerRequest::FileSize { name, .. } => name.clone(),
        DataServerRequest::Upload { upload, .. } => upload.name.clone(),
    };
    let fault = take_transport_fault(&state, FaultTarget::Upload, Some(&name));
    match fault {
        // A slow server still takes the file: its real answer comes slowly.
        Some(fault @ Fault::Slow { .. }) => {
            let answer = take_upload(&state, data_request, name, head, data_start, ended, payload);
            fault_response(fault, &request, Bytes::from(answer.await.to_xml())).await
        }
        // The others fail the request before anything is stored.
        Some(fault) => {
            let normal = DataServerReply::success().to_xml();
            fault_response(fault, &request, Bytes::from(normal)).await
        }
        None => {
            reply(take_upload(&state, data_request, name, head, data_start, ended, payload).await)
        }
    }
}

/// Takes a size query or an upload (its header parsed, `head[data_start..]` its first
/// bytes) and says how it went.
async fn take_upload(
    state: &web::Data<ServerState>,
    data_request: DataServerRequest,
    name: String,
    head: BytesMut,
    data_start: usize,
    ended: bool,
    mut payload: web::Payload,
) -> DataServerReply {
    if !is_safe_file_name(&name) {
        return DataServerReply::permanent(format!(
            "{name:?} is not a file name this project uses"
        ));
    }
    let Some(max_bytes) =
        state.store.read(|r| r.job_with_output(&name).map(|j| j.max_output_bytes))
    else {
        return DataServerReply::permanent(format!(
            "{name} is not an output of this project's jobs"
        ));
    };
    let path = upload_path(&state.upload_dir, &name);
    let upload = match data_request {
        DataServerRequest::FileSize { .. } => {
            return DataServerReply::file_size(size_held(&path));
        }
        DataServerRequest::Upload { upload, .. } => upload,
    };
    if upload.nbytes > max_bytes as f64 {
        return DataServerReply::permanent(format!(
            "file size ({:.0} bytes) exceeds the limit ({max_bytes} bytes)",
            upload.nbytes
        ));
    }
    let nbytes = upload.nbytes as u64;
    if state.store.read(|r| {
        r.uploads.get(&name).is_some_and(|u| u.nbytes == nbytes && u.md5 == upload.md5_cksum)
    }) {
        // Already complete: a client that missed the answer asks again.
        return DataServerReply::success();
    }
    let held = size_held(&path);
    if upload.offset > held {
        return DataServerReply::transient(format!(
            "the upload resumes at {} but only {held} bytes are held; ask for the file size",
            upload.offset
        ));
    }
    let mut file = match tokio::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .open(&path)
        .await
    {
        Ok(file) => file,
        Err(error) => {
            tracing::error!(path = %path.display(), %error, "cannot open an upload");
            return DataServerReply::transient("the server cannot store the file now");
        }
    };
    if let Err(error) = file.set_len(upload.offset).await {
        tracing::error!(path = %path.display(), %error, "cannot resume an upload");
        return DataServerReply::transient("the server cannot store the file now");
    }
    let mut written = upload.offset;
    let mut pending = Some(head.freeze().slice(data_start..));
    loop {
        let chunk = match pending.take() {
            Some(first) => first,
            None if ended => break,
            None => match payload.next().await {
                Some(Ok(chunk)) => chunk,
                Some(Err(error)) => {
                    tracing::warn!(file = %name, %error, written, "an upload was cut short; it can resume");
                    let _ = file.flush().await;
                    return DataServerReply::transient("the upload was cut short");
                }
                None => break,
            },
        };
        if written + chunk.len() as u64 > nbytes {
            let _ = file.set_len(upload.offset).await;
            return DataServerReply::permanent("more bytes than the header announced");
        }
        if let Err(error) = file.write_all(&chunk).await {
            tracing::error!(path = %path.display(), %error, "cannot write an upload");
            return DataServerReply::transient("the server cannot store the file now");
        }
        written += chunk.len() as u64;
    }
    if let Err(error) = file.sync_all().await {
        tracing::error!(path = %path.display(), %error, "cannot save an upload");
        return DataServerReply::transient("the server cannot store the file now");
    }
    drop(file);
    if written < nbytes {
        return DataServerReply::transient(format!(
            "{written} of {nbytes} bytes arrived; the upload can resume"
        ));
    }
    // Every byte is on disk: the check and the record are made even if the client goes
    // away now (a request whose client is gone is dropped at its next wait), or the
    // complete file would be held with no record of it.
    let expected_md5 = upload.md5_cksum.clone();
    let finished =
        actix_web::rt::spawn(finish_upload(state.clone(), path, name, nbytes, expected_md5));
    finished
        .await
        .unwrap_or_else(|_| DataServerReply::transient("the server cannot record the file now"))
}

/// Checks a complete upload against the MD5 its header announced and records it.
async fn finish_upload(
    state: web::Data<ServerState>,
    path: std::path::PathBuf,
    name: String,
    nbytes: u64,
    expected_md5: String,
) -> DataServerReply {
    let checked = web::block({
        let path = path.clone();
        move || checksum(&path)
    })
    .await;
    let md5 = match checked {
        Ok(Ok((_, md5))) => md5,
        _ => return DataServerReply::transient("the server cannot read the file back now"),
    };
    if !expected_md5.is_empty() && !md5.eq_ignore_ascii_case(expected_md5.trim()) {
        let _ = std::fs::remove_file(&path);
        tracing::warn!(file = %name, "an upload arrived damaged (MD5 differs); it must be sent again");
        return DataServerReply::transient("the file arrived damaged (MD5 differs); send it again");
    }
    let ((), change) = state.store.update(|records| {
        records.uploads.insert(name.clone(), UploadRecord { nbytes, md5 });
        records.counters.uploads_completed += 1;
        ((), true)
    });
    if let Err(error) = state.store.saved(change).await {
        tracing::error!(%error, "an upload's record is not saved");
        return DataServerReply::transient("the server cannot record the file now");
    }
    tracing::info!(file = %name, bytes = nbytes, "output received");
    DataServerReply::success()
}
