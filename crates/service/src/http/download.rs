//! A download attempt (docs/design.md "Protocol facts", Files): a GET of the file's URL into
//! its staging file, resumed with a `Range` request from the bytes already there (a
//! server that ignores the range sends the whole file, which then replaces them; one
//! that refuses it makes the next attempt start over), never past the file's size, with
//! its MD5 computed over everything the staging file holds, for the core to check.
//!
//! The project directory is writable by the project's apps, so anything found at the
//! file's place may be a link an app planted: the client never follows one. A link
//! (or anything but a regular file) at the target or staging path is removed, not
//! written through, and the staging file is opened with `O_NOFOLLOW`.

use super::exchange::{ExchangeError, classify, send};
use super::settings::{HttpSettings, MAX_UNANNOUNCED_DOWNLOAD};
use super::throttle::Pace;
use super::watch::ExchangeWatch;
use boinc_core::transfer::TransferOrder;
use boinc_runtime::effects::{ProgressSink, TransferError, Transferred};
use md5::{Digest, Md5};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_RANGE, RANGE};
use std::path::{Path, PathBuf};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Opening flags that refuse to follow a link at the path itself.
const NO_FOLLOW: i32 = nix::libc::O_NOFOLLOW;

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
    pace: Pace,
) -> Result<Transferred, TransferError> {
    let staging = &paths.staging;
    if let Some(parent) = staging.parent() {
        tokio::fs::create_dir_all(parent).await.map_err(|e| disk_error(parent, e))?;
    }
    remove_unless_regular(&paths.target).await?;
    remove_unless_regular(staging).await?;
    // A file already in place whose transfer the state does not know of (the client
    // stopped before it saved): it is checked again like a fresh download, out of the
    // project's directory meanwhile.
    if is_regular(&paths.target).await && !is_regular(staging).await {
        tokio::fs::rename(&paths.target, staging).await.map_err(|e| disk_error(staging, e))?;
    }
    let announced = (order.nbytes > 0.0).then_some(order.nbytes as u64);
    let limit = download_limit(order);
    let mut held = tokio::fs::symlink_metadata(staging).await.map_or(0, |m| m.len());
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
        .custom_flags(NO_FOLLOW)
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
        pace.after(chunk.len()).await;
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

/// The most bytes a download may bring: its announced size when there is one (a file
/// is exactly that long, so a server sending more is cut off there, not read to its
/// end), never more than its `max_nbytes`, and [`MAX_UNANNOUNCED_DOWNLOAD`] when the
/// project gave neither.
pub(crate) fn download_limit(order: &TransferOrder) -> u64 {
    let bound = |value: f64| (value > 0.0).then_some(value as u64);
    match (bound(order.nbytes), bound(order.max_nbytes)) {
        (Some(nbytes), Some(max_nbytes)) => nbytes.min(max_nbytes),
        (Some(limit), None) | (None, Some(limit)) => limit,
        (None, None) => MAX_UNANNOUNCED_DOWNLOAD,
    }
}

/// Whether `path` is a regular file itself (a link to one is not).
async fn is_regular(path: &Path) -> bool {
    tokio::fs::symlink_metadata(path).await.is_ok_and(|meta| meta.file_type().is_file())
}

/// Removes whatever is at `path` unless it is a regular file: a link is removed, never
/// followed; a directory an app made there goes with its content.
async fn remove_unless_regular(path: &Path) -> Result<(), TransferError> {
    let meta = match tokio::fs::symlink_metadata(path).await {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(disk_error(path, e)),
    };
    let removed = if meta.file_type().is_file() {
        return Ok(());
    } else if meta.is_dir() {
        tokio::fs::remove_dir_all(path).await
    } else {
        tokio::fs::remove_file(path).await
    };
    tracing::warn!(path = %path.display(), "not a regular file where a download goes: removed, not followed");
    removed.map_err(|e| disk_error(path, e))
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
    let file = open_regular(path).await?;
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

/// Opens the regular file at `path` for reading, never through a link: a link, a pipe
/// or a device where a project file belongs is refused ([`TransferError::NotAFile`]).
pub(crate) async fn open_regular(path: &Path) -> Result<tokio::fs::File, TransferError> {
    let file = tokio::fs::OpenOptions::new()
        .read(true)
        .custom_flags(NO_FOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .await
        .map_err(|e| match e.raw_os_error() {
            Some(nix::libc::ELOOP) => TransferError::NotAFile { path: path.to_owned() },
            _ => disk_error(path, e),
        })?;
    let meta = file.metadata().await.map_err(|e| disk_error(path, e))?;
    if !meta.file_type().is_file() {
        return Err(TransferError::NotAFile { path: path.to_owned() });
    }
    Ok(file)
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
