//! A download attempt (DESIGN.md "Protocol facts", Files): a GET of the file's URL into
//! its staging file, resumed with a `Range` request from the bytes already there (a
//! server that ignores the range sends the whole file, which then replaces them; one
//! that refuses it makes the next attempt start over), never past the file's size, with
//! its MD5 computed over everything the staging file holds, for the core to check.

use super::exchange::{ExchangeError, classify, send};
use super::settings::{HttpSettings, MAX_UNANNOUNCED_DOWNLOAD};
use super::watch::ExchangeWatch;
use crate::effects::{ProgressSink, TransferError, Transferred};
use boinc_core::transfer::TransferOrder;
use md5::{Digest, Md5};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_RANGE, RANGE};
use std::path::{Path, PathBuf};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Where a download's bytes go.
pub(crate) struct DownloadPaths {
    /// The staging file.
    pub(crate) staging: PathBuf,
    /// Where the file lives once checked.
    pub(crate) target: PathBuf,
}

fn disk_error(path: &Path, error: std::io::Error) -> TransferError {
    TransferError::Disk { path: path.to_owned(), reason: error.to_string() }
}

/// Downloads `order` into `paths.staging`.
pub(crate) async fn download(
    client: &reqwest::Client,
    settings: &HttpSettings,
    order: &TransferOrder,
    paths: &DownloadPaths,
    progress: ProgressSink,
) -> Result<Transferred, TransferError> {
    let staging = &paths.staging;
    if let Some(parent) = staging.parent() {
        tokio::fs::create_dir_all(parent).await.map_err(|e| disk_error(parent, e))?;
    }
    // A file already in place whose transfer the state does not know of (the client
    // stopped before it saved): it is checked again like a fresh download, out of the
    // project's directory meanwhile.
    if tokio::fs::try_exists(&paths.target).await.unwrap_or(false)
        && !tokio::fs::try_exists(staging).await.unwrap_or(false)
    {
        tokio::fs::rename(&paths.target, staging).await.map_err(|e| disk_error(staging, e))?;
    }
    let announced = (order.nbytes > 0.0).then_some(order.nbytes as u64);
    let limit =
        if order.max_nbytes > 0.0 { order.max_nbytes as u64 } else { MAX_UNANNOUNCED_DOWNLOAD };
    let mut held = tokio::fs::metadata(staging).await.map_or(0, |m| m.len());
    if held > limit {
        tokio::fs::remove_file(staging).await.map_err(|e| disk_error(staging, e))?;
        held = 0;
    }
    let mut hasher = Md5::new();
    if held > 0 {
        held = hash_prefix(staging, held, &mut hasher).await?;
    }
    if announced.is_some_and(|size| held >= size) {
        return Ok(Transferred::Downloaded { nbytes: held, md5: hex(hasher) });
    }
    let mut watch = ExchangeWatch::new(settings).reporting(progress, held, announced);
    let mut request = client.get(&order.url).header(ACCEPT, "*/*");
    if held > 0 {
        request = request.header(RANGE, format!("bytes={held}-"));
    }
    let url = order.url.clone();
    let response = match send(request, &mut watch).await {
        Ok(response) => response,
        Err(ExchangeError::Http(416)) => {
            tokio::fs::remove_file(staging).await.map_err(|e| disk_error(staging, e))?;
            return Err(TransferError::RangeRefused { url });
        }
        Err(error) => return Err(exchange_error(&url, held, error)),
    };
    let resumed = held > 0
        && response.status() == StatusCode::PARTIAL_CONTENT
        && range_start(&response).is_none_or(|start| start == held);
    if !resumed && held > 0 {
        // The whole file comes again: what was held goes.
        held = 0;
        hasher = Md5::new();
        watch.held_before(0);
    }
    let mut file = tokio::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(resumed)
        .truncate(!resumed)
        .open(staging)
        .await
        .map_err(|e| disk_error(staging, e))?;
    let mut response = response;
    let mut received = 0u64;
    loop {
        let chunk = match watch.watch(response.chunk()).await {
            Ok(Ok(Some(chunk))) => chunk,
            Ok(Ok(None)) => break,
            Ok(Err(error)) => {
                file.flush().await.map_err(|e| disk_error(staging, e))?;
                return Err(exchange_error(&url, held + received, classify(&error)));
            }
            Err(stalled) => {
                file.flush().await.map_err(|e| disk_error(staging, e))?;
                return Err(exchange_error(&url, held + received, stalled.into()));
            }
        };
        if held + received + chunk.len() as u64 > limit {
            return Err(TransferError::TooLarge { url, limit });
        }
        file.write_all(&chunk).await.map_err(|e| disk_error(staging, e))?;
        hasher.update(&chunk);
        received += chunk.len() as u64;
        watch.add(chunk.len() as u64);
    }
    file.flush().await.map_err(|e| disk_error(staging, e))?;
    file.sync_data().await.map_err(|e| disk_error(staging, e))?;
    watch.report(tokio::time::Instant::now());
    let nbytes = held + received;
    if announced.is_some_and(|size| nbytes < size) {
        // The answer ended early but cleanly: the rest comes with the next attempt.
        return Err(TransferError::Interrupted {
            url,
            bytes: nbytes,
            reason: "the answer ended before the whole file came".into(),
        });
    }
    Ok(Transferred::Downloaded { nbytes, md5: hex(hasher) })
}

/// The transfer error of an exchange with `url` that failed with `error` when `bytes`
/// of the file were held.
pub(crate) fn exchange_error(url: &str, bytes: u64, error: ExchangeError) -> TransferError {
    let url = url.to_owned();
    match error {
        ExchangeError::Connect(reason) => TransferError::Connect { url, reason },
        ExchangeError::Stalled(reason) => TransferError::Stalled { url, reason },
        ExchangeError::Redirects => TransferError::Interrupted {
            url,
            bytes,
            reason: format!("more than {} redirects", super::settings::MAX_REDIRECTS),
        },
        ExchangeError::Interrupted(reason) => TransferError::Interrupted { url, bytes, reason },
        ExchangeError::Http(status) => TransferError::Http { url, status },
        ExchangeError::TooLarge(limit) => TransferError::TooLarge { url, limit },
    }
}

/// Where a partial answer starts (`Content-Range: bytes START-END/TOTAL`).
fn range_start(response: &reqwest::Response) -> Option<u64> {
    let value = response.headers().get(CONTENT_RANGE)?.to_str().ok()?;
    value.trim().strip_prefix("bytes")?.trim().split('-').next()?.trim().parse().ok()
}

/// Adds the first `length` bytes of `path` to `hasher`; returns how many there were.
async fn hash_prefix(path: &Path, length: u64, hasher: &mut Md5) -> Result<u64, TransferError> {
    let file = tokio::fs::File::open(path).await.map_err(|e| disk_error(path, e))?;
    let mut reader = tokio::io::BufReader::with_capacity(1 << 16, file).take(length);
    let mut buffer = vec![0u8; 1 << 16];
    let mut total = 0u64;
    loop {
        let n = reader.read(&mut buffer).await.map_err(|e| disk_error(path, e))?;
        if n == 0 {
            return Ok(total);
        }
        hasher.update(&buffer[..n]);
        total += n as u64;
    }
}

/// The MD5 of `path`'s content and its size.
pub(crate) async fn hash_file(path: &Path) -> Result<(u64, String), TransferError> {
    let mut hasher = Md5::new();
    let length = hash_prefix(path, u64::MAX, &mut hasher).await?;
    Ok((length, hex(hasher)))
}

/// A finished MD5 in lower-case hex, as BOINC writes checksums.
fn hex(hasher: Md5) -> String {
    hasher.finalize().iter().map(|byte| format!("{byte:02x}")).collect()
}
