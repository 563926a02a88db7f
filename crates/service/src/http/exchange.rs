//! One HTTP exchange's failures, told apart the way the client acts on them (no
//! connection, a stall, too many redirects, a break-off, an HTTP error, an answer too
//! large), and an answer read into memory under a bound, as it streams in: an answer
//! announcing more than the bound is refused before its body is read, and one that
//! grows past it is cut off there.

use super::watch::{ExchangeWatch, Stalled};
use boinc_runtime::effects::TransferProgress;
use std::error::Error as _;

/// How an exchange failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ExchangeError {
    /// No connection (refused, unreachable, name unknown, connect timeout).
    Connect(String),
    /// Too few bytes for too long.
    Stalled(String),
    /// More redirects than allowed.
    Redirects,
    /// The exchange broke off (reset, closed early, a malformed HTTP answer).
    Interrupted(String),
    /// The server answered with an HTTP error status.
    Http(u16),
    /// The answer is larger than the bound.
    TooLarge(u64),
}

impl From<Stalled> for ExchangeError {
    fn from(stalled: Stalled) -> Self {
        ExchangeError::Stalled(stalled.reason)
    }
}

/// What went wrong in a reqwest call, in the client's terms.
pub(crate) fn classify(error: &reqwest::Error) -> ExchangeError {
    let reason = describe(error);
    if error.is_redirect() {
        ExchangeError::Redirects
    } else if error.is_connect() {
        ExchangeError::Connect(reason)
    } else if error.is_timeout() {
        ExchangeError::Stalled(reason)
    } else {
        ExchangeError::Interrupted(reason)
    }
}

/// The error and its causes on one line ("error sending request: connection refused").
pub(crate) fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    // A URL in reqwest's text repeats what the caller reports anyway.
    text
}

/// Sends `request` under `watch` and checks the answer's status.
pub(crate) async fn send<S: FnMut(TransferProgress)>(
    request: reqwest::RequestBuilder,
    watch: &mut ExchangeWatch<S>,
) -> Result<reqwest::Response, ExchangeError> {
    let response = watch.watch(request.send()).await?.map_err(|e| classify(&e))?;
    let status = response.status();
    if status.is_success() { Ok(response) } else { Err(ExchangeError::Http(status.as_u16())) }
}

/// Reads `response`'s body into memory, at most `limit` bytes, under `watch`.
pub(crate) async fn read_bounded<S: FnMut(TransferProgress)>(
    mut response: reqwest::Response,
    limit: u64,
    watch: &mut ExchangeWatch<S>,
) -> Result<Vec<u8>, ExchangeError> {
    if response.content_length().is_some_and(|length| length > limit) {
        return Err(ExchangeError::TooLarge(limit));
    }
    let announced = response.content_length().unwrap_or(0).min(limit);
    let mut body = Vec::with_capacity(usize::try_from(announced).unwrap_or(0).min(1 << 20));
    while let Some(chunk) = watch.watch(response.chunk()).await?.map_err(|e| classify(&e))? {
        if body.len() as u64 + chunk.len() as u64 > limit {
            return Err(ExchangeError::TooLarge(limit));
        }
        body.extend_from_slice(&chunk);
        watch.add(chunk.len() as u64);
    }
    Ok(body)
}
