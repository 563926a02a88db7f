//! The effects the runtime has on the world, behind traits (DESIGN.md "The boundary
//! between the core and the world"): a clock, a process host, a scheduler-RPC transport,
//! file transfer, a file system, and host and GPU discovery. Every effect is fallible
//! with a typed error, and every implementation (real, simulated, replayed) is
//! `Send + Sync`, so a host program can hand its own to a client running on any thread.

mod clock;
mod file_system;
mod host_discovery;
mod process;
mod transfer;
mod transport;

pub use clock::{Clock, SystemClock};
pub use file_system::FileSystem;
pub use host_discovery::HostDiscovery;
pub use process::{ProcessError, ProcessHost, ProcessReport};
pub use transfer::{FileTransfer, Transfer};
pub use transport::{EffectFuture, RpcError, SchedulerTransport};
