//! Why the dashboard could not start.

/// The dashboard's errors.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// The port could not be bound.
    #[error(
        "cannot listen for the web dashboard on {address}: {source}; choose another port \
         with --web-port, or turn the dashboard off with --no-web"
    )]
    Bind {
        /// The address asked for.
        address: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
}
