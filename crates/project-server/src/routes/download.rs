//! `GET /download/NAME`: the project's files (executables and job inputs), with one
//! byte range (`Range: bytes=N-` or `N-M`) for a client resuming an interrupted
//! download (docs/design.md "Protocol facts", "Files"). Only plain names in the download
//! directory are served.

use super::super::faults::FaultTarget;
use super::super::server::ServerState;
use super::super::uploads::is_safe_file_name;
use super::fault_response::{fault_response, take_transport_fault};
use actix_web::body::SizedStream;
use actix_web::http::header::{self, ByteRangeSpec, ContentRange, ContentRangeSpec, Range};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, web};
use futures_util::stream;
use std::io::SeekFrom;
use std::str::FromStr;
use std::sync::atomic::Ordering;
use tokio::io::{AsyncReadExt, AsyncSeekExt};

/// Bytes read and sent at a time.
const CHUNK: u64 = 256 * 1024;

pub(crate) async fn download(
    state: web::Data<ServerState>,
    request: HttpRequest,
    name: web::Path<String>,
) -> HttpResponse {
    let name = name.into_inner();
    if !is_safe_file_name(&name) {
        return HttpResponse::NotFound().body("no such file\n");
    }
    let path = state.download_dir.join(&name);
    let Ok(metadata) = tokio::fs::metadata(&path).await else {
        return HttpResponse::NotFound().body("no such file\n");
    };
    if !metadata.is_file() {
        return HttpResponse::NotFound().body("no such file\n");
    }
    let length = metadata.len();
    state.metrics.downloads.fetch_add(1, Ordering::Relaxed);
    if let Some(fault) = take_transport_fault(&state, FaultTarget::Download, Some(&name)) {
        return match tokio::fs::read(&path).await {
            Ok(content) => fault_response(fault, &request, Bytes::from(content)).await,
            Err(error) => HttpResponse::InternalServerError().body(format!("{error}\n")),
        };
    }
    let range = request
        .headers()
        .get(header::RANGE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| Range::from_str(value).ok());
    let (start, end, partial) = match range {
        Some(Range::Bytes(specs)) if specs.len() == 1 => {
            match ByteRangeSpec::to_satisfiable_range(&specs[0], length) {
                Some((start, end)) => (start, end + 1, true),
                None => {
                    return HttpResponse::RangeNotSatisfiable()
                        .insert_header(ContentRange(ContentRangeSpec::Bytes {
                            range: None,
                            instance_length: Some(length),
                        }))
                        .finish();
                }
            }
        }
        // Several ranges, or another unit: the whole file.
        _ => (0, length, false),
    };
    let mut file = match tokio::fs::File::open(&path).await {
        Ok(file) => file,
        Err(error) => return HttpResponse::InternalServerError().body(format!("{error}\n")),
    };
    if start > 0
        && let Err(error) = file.seek(SeekFrom::Start(start)).await
    {
        return HttpResponse::InternalServerError().body(format!("{error}\n"));
    }
    let count = end - start;
    state.metrics.download_bytes.fetch_add(count, Ordering::Relaxed);
    let chunks = stream::unfold((file, count), |(mut file, left)| async move {
        if left == 0 {
            return None;
        }
        let mut buffer = vec![0u8; left.min(CHUNK) as usize];
        match file.read(&mut buffer).await {
            Ok(0) => Some((
                Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "file shrank")),
                (file, 0),
            )),
            Ok(n) => {
                buffer.truncate(n);
                Some((Ok(Bytes::from(buffer)), (file, left - n as u64)))
            }
            Err(error) => Some((Err(error), (file, 0))),
        }
    });
    let mut response = if partial { HttpResponse::PartialContent() } else { HttpResponse::Ok() };
    if partial {
        response.insert_header(ContentRange(ContentRangeSpec::Bytes {
            range: Some((start, end - 1)),
            instance_length: Some(length),
        }));
    }
    response
        .insert_header((header::ACCEPT_RANGES, "bytes"))
        .content_type("application/octet-stream")
        .body(SizedStream::new(count, Box::pin(chunks)))
}
