//! boinc-service: the live client's effects on the real world (docs/design.md "The
//! boundary between the core and the world") and the host service (`boinc-rs run`) that
//! puts them together with the runtime's actors and the GUI RPC server.
//!
//! - [`account_files`]: the projects' account files (attach, detach);
//! - `account_manager`: the service's account manager client;
//! - [`data_dir_modes`]: the data directory's owners and modes (private files, the app
//!   user's group on `projects/` and `slots/`);
//! - [`data_directory`]: the data directory as the disk manager acts on it;
//! - [`http`]: scheduler RPCs, master pages, downloads and uploads over HTTP;
//! - [`host_discovery`]: the machine's CPUs, memory, disk, OS and NVIDIA GPUs, the CPU
//!   benchmarks, and whether the user and power let it compute;
//! - [`process`]: the process host that runs tasks' apps in slot directories;
//! - [`task_driver`]: one task actor driven in wall-clock time (app-test, tests);
//! - [`service`]: the host service (`boinc-rs run`) over all of these;
//! - [`standalone_task`]: a task outside any client state, for those;
//! - [`state_store`]: client_state.xml written atomically and read back with its
//!   fallbacks, under the data directory's lock ([`data_dir_lock`]), through
//!   [`atomic_file`];
//! - [`state_keeper`]: the state written when the save policy says so.

#![warn(missing_docs)]

pub mod account_files;
mod account_manager;
mod app_info_file;
pub mod atomic_file;
pub mod data_dir_lock;
pub mod data_dir_modes;
pub mod data_directory;
pub mod host_discovery;
pub mod http;
mod job_log;
pub mod log_filter;
mod notices;
mod preferences_follower;
pub mod process;
mod project_files;
pub mod service;
pub mod standalone_task;
pub mod state_keeper;
pub mod state_store;
pub mod task_driver;

pub use standalone_task::StandaloneTask;
pub use task_driver::TaskDriver;
