//! The real world: what the client does to it (DESIGN.md "The boundary between the core
//! and the world"), and the wall-clock driver.
//!
//! - [`http`]: scheduler RPCs, master pages, downloads and uploads over HTTP;
//! - [`process`]: the process host that runs tasks' apps in slot directories;
//! - [`task_driver`]: one task actor driven in wall-clock time (app-test, tests);
//! - [`standalone_task`]: a task outside any client state, for those;
//! - `driver`: the wall-clock driver of a whole client.

pub(crate) mod driver;
pub mod http;
pub mod process;
pub mod standalone_task;
pub mod task_driver;

pub use standalone_task::StandaloneTask;
pub use task_driver::TaskDriver;
