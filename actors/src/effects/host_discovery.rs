//! What the host is and whether it may work.

use boinc_core::control::HostView;

/// What the host is and whether it may work.
pub trait HostDiscovery: Send + Sync {
    /// The host's availability now.
    fn availability(&self) -> HostView;
}
