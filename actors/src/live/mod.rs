//! The real world: what the client does to it (DESIGN.md "The boundary between the core
//! and the world"), and the wall-clock driver.
//!
//! - [`account_files`]: the projects' account files (attach, detach);
//! - [`process`]: the process host that runs tasks' apps in slot directories;
//! - [`task_driver`]: one task actor driven in wall-clock time (app-test, tests);
//! - [`standalone_task`]: a task outside any client state, for those;
//! - [`state_store`]: client_state.xml written atomically and read back with its
//!   fallbacks, under the data directory's lock ([`data_dir_lock`]), through
//!   [`atomic_file`];
//! - `driver`: the wall-clock driver of a whole client.

pub mod account_files;
pub mod atomic_file;
pub mod data_dir_lock;
pub(crate) mod driver;
pub mod process;
pub mod standalone_task;
pub mod state_store;
pub mod task_driver;

pub use standalone_task::StandaloneTask;
pub use task_driver::TaskDriver;
