//! The live effects: what the client does to the real world (DESIGN.md "The boundary
//! between the core and the world").
//!
//! - [`process`]: the process host that runs tasks' apps in slot directories;
//! - [`task_driver`]: one task actor driven in wall-clock time (app-test, tests).

pub mod process;
pub mod task_driver;

pub use task_driver::TaskDriver;
