//! Embedding (the library's front door): start the client, watch its events, act on it
//! as a user would.

mod builder;
mod error;
pub(crate) mod handle;
pub(crate) mod wall_clock_driver;

pub use builder::{Client, ClientBuilder, Effects, RunSetup};
pub use error::ClientError;
pub use handle::{ClientHandle, RunReport};
