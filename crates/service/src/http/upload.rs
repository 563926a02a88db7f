//! An upload attempt by BOINC's data server protocol (docs/design.md "Protocol facts",
//! Files; the texts are the core's [`boinc_core::protocol::DataServerRequest`]): for a file
//! of at least [`FILE_SIZE_QUERY_THRESHOLD`] bytes the server is first asked how much of
//! it it holds, then one POST carries the header and the file's bytes from there,
//! streamed from the disk (none when it holds them all); the server's `<status>` says
//! whether it took them: an upload is done only when the server said so. Only a
//! regular file is sent: an output an app replaced by a link (to a file of the user's)
//! is refused, never followed.

use super::download::{exchange_error, hash_file, open_regular};
use super::exchange::read_bounded;
use super::exchange::send;
use super::settings::{HttpSettings, MAX_DATA_SERVER_REPLY};
use super::throttle::Pace;
use super::watch::ExchangeWatch;
use boinc_core::protocol::{
    DataServerReply, DataServerRequest, FILE_SIZE_QUERY_THRESHOLD, FileUpload,
};
use boinc_core::transfer::TransferOrder;
use boinc_runtime::effects::{ProgressSink, TransferError, Transferred};
use futures_util::StreamExt;
use std::path::Path;
use std::sync::atomic::Ordering;
use tokio::io::{AsyncReadExt, AsyncSeekExt};

/// Uploads the file at `path` as `order` says.
pub(crate) async fn upload(
    client: &reqwest::Client,
    settings: &HttpSettings,
    order: &TransferOrder,
    path: &Path,
    progress: ProgressSink,
    pace: Pace,
) -> Result<Transferred, TransferError> {
    let (nbytes, md5) = hash_file(path).await?;
    if order.max_nbytes > 0.0 && nbytes as f64 > order.max_nbytes {
        return Err(TransferError::FileTooBig {
            path: path.to_owned(),
            nbytes,
            limit: order.max_nbytes as u64,
        });
    }
    let mut offset = 0;
    if nbytes >= FILE_SIZE_QUERY_THRESHOLD {
        let query = DataServerRequest::FileSize {
            client_version: settings.client_version,
            name: order.name.clone(),
        }
        .to_text();
        let reply = exchange(client, settings, order, query.into_bytes().into()).await?;
        // Held whole already (an earlier attempt's answer was lost, or the output was
        // made again since): the request still goes, with no bytes, so that the server
        // checks what it holds against this file's MD5 and says it took it.
        offset = reply.file_size.unwrap_or(0).min(nbytes);
    }
    let header = DataServerRequest::Upload {
        client_version: settings.client_version,
        upload: FileUpload {
            name: order.name.clone(),
            max_nbytes: order.max_nbytes,
            nbytes: nbytes as f64,
            md5_cksum: md5.clone(),
            offset,
        },
    }
    .to_text();
    let mut watch = ExchangeWatch::new(settings).reporting(progress, offset, Some(nbytes));
    // The length goes with the request, as BOINC's client sends it: a file upload
    // handler behind a CGI server may see no body in a chunked request.
    let length = header.len() as u64 + (nbytes - offset);
    let body = body_from(path, header, offset, nbytes - offset, watch.counter(), pace).await?;
    let request =
        client.post(&order.url).header(reqwest::header::CONTENT_LENGTH, length).body(body);
    let response = send(request, &mut watch)
        .await
        .map_err(|e| exchange_error(&order.url, offset + watch.moved(), e))?;
    let bytes = read_bounded(response, MAX_DATA_SERVER_REPLY, &mut watch)
        .await
        .map_err(|e| exchange_error(&order.url, offset, e))?;
    taken(order, &bytes)?;
    Ok(Transferred::Uploaded { nbytes, md5 })
}

/// One small exchange with the data server (the size query), its answer read.
async fn exchange(
    client: &reqwest::Client,
    settings: &HttpSettings,
    order: &TransferOrder,
    body: reqwest::Body,
) -> Result<DataServerReply, TransferError> {
    let mut watch = ExchangeWatch::new(settings);
    let response = send(client.post(&order.url).body(body), &mut watch)
        .await
        .map_err(|e| exchange_error(&order.url, 0, e))?;
    let bytes = read_bounded(response, MAX_DATA_SERVER_REPLY, &mut watch)
        .await
        .map_err(|e| exchange_error(&order.url, 0, e))?;
    taken(order, &bytes)
}

/// The server's answer, if it took the request.
fn taken(order: &TransferOrder, bytes: &[u8]) -> Result<DataServerReply, TransferError> {
    let url = order.url.clone();
    let text = String::from_utf8_lossy(bytes);
    let reply = DataServerReply::from_xml(&text).map_err(|error| TransferError::NotTaken {
        url: url.clone(),
        message: format!("the answer is not a data server reply: {error}"),
    })?;
    let message = reply.message.clone().unwrap_or_default();
    // 0: taken; -1: refused for good; anything else: try again later.
    match reply.status {
        0 => Ok(reply),
        -1 => Err(TransferError::Refused { url, message }),
        _ => Err(TransferError::NotTaken {
            url,
            message: if message.is_empty() {
                "it asked to try again later".into()
            } else {
                message
            },
        }),
    }
}

/// The request body: `header`, then `length` bytes of the file from `offset` (what was
/// hashed; a file that grew since is not read past it), read as they are sent; the
/// bytes sent are added to `sent`.
async fn body_from(
    path: &Path,
    header: String,
    offset: u64,
    length: u64,
    sent: std::sync::Arc<std::sync::atomic::AtomicU64>,
    pace: Pace,
) -> Result<reqwest::Body, TransferError> {
    let disk =
        |e: std::io::Error| TransferError::Disk { path: path.to_owned(), reason: e.to_string() };
    let mut file = open_regular(path).await?;
    file.seek(std::io::SeekFrom::Start(offset)).await.map_err(disk)?;
    let file = file.take(length);
    let head =
        futures_util::stream::once(async move { Ok::<_, std::io::Error>(header.into_bytes()) });
    let rest = futures_util::stream::unfold(file, move |mut file| {
        let sent = sent.clone();
        let pace = pace.clone();
        async move {
            let mut buffer = vec![0u8; 1 << 16];
            match file.read(&mut buffer).await {
                Ok(0) => None,
                Ok(n) => {
                    buffer.truncate(n);
                    pace.after(n).await;
                    sent.fetch_add(n as u64, Ordering::Relaxed);
                    Some((Ok(buffer), file))
                }
                // The request fails with the error; nothing is read after it.
                Err(error) => Some((Err(error), file)),
            }
        }
    });
    Ok(reqwest::Body::wrap_stream(head.chain(rest)))
}
