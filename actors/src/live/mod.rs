//! The live effects: what the client does to the real world (DESIGN.md "The boundary
//! between the core and the world").
//!
//! - [`process`]: the process host that runs tasks' apps in slot directories;
//! - [`task_driver`]: one task actor driven in wall-clock time (app-test, tests);
//! - [`standalone_task`]: a task outside any client state, for those.

pub mod process;
pub mod standalone_task;
pub mod task_driver;

pub use standalone_task::StandaloneTask;
pub use task_driver::TaskDriver;
