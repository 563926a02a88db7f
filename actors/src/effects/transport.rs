//! Scheduler RPCs and master-page fetches (seed 002 "RPC sessions"; docs/design.md "Protocol
//! facts"). A transport sends a [`SchedulerRequest`] to a scheduler URL and brings back
//! the [`SchedulerReply`], or fetches a project's master page; every way it can fail is
//! an [`RpcError`], which seed 002's backoff acts on.

use boinc_core::protocol::{MasterPage, SchedulerReply, SchedulerRequest};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;

/// A future an effect returns. The actors run on one arbiter, so it need not be `Send`.
pub type EffectFuture<T> = Pin<Box<dyn Future<Output = T>>>;

/// Why a scheduler RPC or master-page fetch failed. Every kind counts as a failed RPC
/// for the backoff; the kind tells the user what went wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
pub enum RpcError {
    /// No connection could be made (refused, reset, unreachable, name not found).
    #[error("cannot reach {url}: {reason}; the client retries after a backoff")]
    Connect {
        /// Where.
        url: String,
        /// What the network said.
        reason: String,
    },
    /// The server took too long.
    #[error("{url} did not answer in time ({reason}); the client retries after a backoff")]
    Timeout {
        /// Where.
        url: String,
        /// Which limit was hit.
        reason: String,
    },
    /// The server answered with an HTTP error.
    #[error("{url} answered HTTP {status}; the client retries after a backoff")]
    Http {
        /// Where.
        url: String,
        /// The status code.
        status: u16,
    },
    /// The answer is not what the protocol says it should be.
    #[error("the answer from {url} is not a valid {what}: {problem}")]
    Malformed {
        /// Where.
        url: String,
        /// What was expected (a scheduler reply, a master page).
        what: String,
        /// What is wrong, with line and element where known.
        problem: String,
    },
    /// The answer is larger than the client accepts.
    #[error("the answer from {url} is over {limit} bytes: refused")]
    TooLarge {
        /// Where.
        url: String,
        /// The limit, bytes.
        limit: u64,
    },
    /// The project's server is down (what an emulated server says).
    #[error("{url} is down; the client retries after a backoff")]
    ServerDown {
        /// Where.
        url: String,
    },
    /// The project's master page names no scheduler.
    #[error("the master page of {url} names no scheduler; the client reads it again later")]
    NoScheduler {
        /// The master URL.
        url: String,
    },
    /// The exchange broke off (connection reset, answer cut short).
    #[error("the exchange with {url} broke off ({reason}); the client retries after a backoff")]
    Interrupted {
        /// Where.
        url: String,
        /// What happened.
        reason: String,
    },
    /// The server sent the client from redirect to redirect.
    #[error("{url} redirected more than {limit} times; the client retries after a backoff")]
    TooManyRedirects {
        /// Where.
        url: String,
        /// The most redirects followed.
        limit: usize,
    },
    /// The reply was read but cannot be taken (a code-signing key change the pinned
    /// key did not sign, a file name that is not a plain name): nothing of it is taken.
    #[error("the reply from {url} is refused: {reason}")]
    Refused {
        /// Where.
        url: String,
        /// Why.
        reason: String,
    },
}

/// Scheduler RPCs and master-page fetches.
pub trait SchedulerTransport: Send + Sync {
    /// Sends `request` to the scheduler at `url`.
    fn scheduler_rpc(
        &self,
        url: &str,
        request: &SchedulerRequest<'static>,
    ) -> EffectFuture<Result<SchedulerReply, RpcError>>;
    /// Fetches the master page at `url` (a project's master URL).
    fn master_page(&self, url: &str) -> EffectFuture<Result<MasterPage, RpcError>>;
}
