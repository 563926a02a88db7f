//! The live process host (issue "Running real apps"): real processes in slot
//! directories, BOINC's app API over the shared-memory file, wrapper mode for apps
//! without it, measurement and limits.
//!
//! - `host.rs`: [`LiveProcessHost`], the [`boinc_runtime::effects::ProcessHost`] the TaskActor uses;
//! - `task_process.rs`: one run of an app (control, measurement, limits, how it ended);
//! - `app_channels.rs` and `shared_memory.rs`: the app API's channels, client side;
//! - `slot.rs`: slot directories; `spawn.rs`: starting the process;
//!   `containment.rs`: confining its writes; `measure.rs`: CPU time and memory;
//!   `leftover.rs`: apps a previous run of the client left behind;
//! - `app_user.rs`: the dedicated user apps run as (`--app-user`);
//! - `cpu_throttler.rs`: the CPU usage limit, by stopping and continuing the apps.

mod app_channels;
mod app_user;
mod config;
mod containment;
mod cpu_throttler;
mod host;
mod leftover;
mod measure;
mod shared_memory;
mod slot;
mod spawn;
mod task_process;

pub use app_user::{AppUser, AppUserError};
pub use config::ProcessHostConfig;
pub use containment::write_containment_available;
pub use cpu_throttler::CpuThrottler;
pub use host::LiveProcessHost;
pub(crate) use measure::{TreeMeter, clock_ticks_per_second};
