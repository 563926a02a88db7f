//! Embedding (the library's front door): start the client, watch its events, act on it
//! as a user would.

mod builder;
mod error;
mod handle;

pub use builder::{Client, ClientBuilder, RunSetup};
pub use error::ClientError;
pub use handle::ClientHandle;
