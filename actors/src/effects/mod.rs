//! The effects the runtime has on the world, behind traits (docs/design.md "The boundary
//! between the core and the world"): a clock, a process host, a scheduler-RPC transport,
//! file transfer, a file system, and host and GPU discovery. Every effect is fallible
//! with a typed error, and every implementation (real, simulated, replayed) is
//! `Send + Sync`, so a host program can hand its own to a client running on any thread.

mod clock;
mod disk_manager;
mod file_system;
mod host_discovery;
mod persistence;
mod process;
mod transfer;
mod transport;

pub use clock::{Clock, SystemClock};
pub use disk_manager::DiskManager;
pub use file_system::{DiskSpace, FileSystem, FileSystemError};
pub use host_discovery::{HostDiscovery, HostDiscoveryError};
pub use persistence::StatePersistence;
pub use process::{ProcessError, ProcessHost, ProcessReport};
pub use transfer::{FileTransfer, ProgressSink, TransferError, TransferProgress, Transferred};
pub use transport::{EffectFuture, RpcError, SchedulerTransport};
