//! Scheduler RPCs and master-page fetches (seed 002 "RPC sessions").

use boinc_core::Time;
use boinc_core::control::RpcCall;
use boinc_core::emulator::project_server::ServerReply;
use boinc_core::model::{ClientState, ProjectId};
use std::future::Future;
use std::pin::Pin;

/// A future an effect returns. The actors run on one arbiter, so it need not be `Send`.
pub type EffectFuture<T> = Pin<Box<dyn Future<Output = T>>>;

/// Scheduler RPCs and master-page fetches.
pub trait SchedulerTransport: Send + Sync {
    /// Sends `call` to its project's scheduler; `state` is the client's state that the
    /// request describes (queue, host, estimates). `None`: the RPC failed.
    fn scheduler_rpc(
        &self,
        state: &ClientState,
        call: &RpcCall,
        now: Time,
    ) -> EffectFuture<Option<ServerReply>>;
    /// Fetches `project`'s master page; whether it came.
    fn master_page(&self, project: ProjectId) -> EffectFuture<bool>;
}
