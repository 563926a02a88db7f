//! What a GUI RPC reply is rendered from: the client's state at one instant and the
//! few facts about the running client that are not part of the state (its platform,
//! when it started, which projects have an RPC under way, the run modes' permanent
//! values while a temporary one is in force).

use crate::Time;
use crate::control::SuspendReasons;
use crate::model::{ClientState, ProjectId, RunMode};

/// The protocol version boinc-rs speaks: BOINC 7.20.5's, the version whose traffic
/// the fixtures record. The real tools read it to know which operations exist.
pub const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion { major: 7, minor: 20, release: 5 };

/// A BOINC client version, as `exchange_versions` and `get_state` report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtocolVersion {
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
    /// Release number.
    pub release: u32,
}

/// A run mode as `get_cc_status` reports it: the mode in force, the permanent one it
/// returns to, and in how many seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModeStatus {
    /// The mode in force.
    pub current: RunMode,
    /// The permanent mode.
    pub permanent: RunMode,
    /// Seconds until the permanent mode returns (0: the current mode is permanent).
    pub delay: f64,
}

impl ModeStatus {
    /// A mode with no temporary change.
    pub fn permanent(mode: RunMode) -> Self {
        ModeStatus { current: mode, permanent: mode, delay: 0.0 }
    }
}

/// The three run modes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Modes {
    /// Computation.
    pub task: ModeStatus,
    /// GPU computation.
    pub gpu: ModeStatus,
    /// Network.
    pub network: ModeStatus,
    /// What the host's conditions suspend, and why (under the modes "according to
    /// preferences").
    pub suspended: SuspendReasons,
}

impl Modes {
    /// Why computing, the GPUs and the network are suspended, under the current modes.
    pub fn reasons(&self) -> SuspendReasons {
        self.suspended.under_modes(self.task.current, self.gpu.current, self.network.current)
    }

    /// The state's modes, all permanent.
    pub fn of(state: &ClientState) -> Self {
        Modes {
            task: ModeStatus::permanent(state.run_mode),
            gpu: ModeStatus::permanent(state.gpu_mode),
            network: ModeStatus::permanent(state.network_mode),
            suspended: SuspendReasons::NONE,
        }
    }
}

/// Everything a reply is rendered from.
#[derive(Debug, Clone, Copy)]
pub struct ClientView<'a> {
    /// When the state was taken.
    pub now: Time,
    /// The state.
    pub state: &'a ClientState,
    /// Projects with a scheduler RPC under way.
    pub in_flight: &'a [ProjectId],
    /// The platform the client runs on, e.g. `x86_64-pc-linux-gnu`.
    pub platform: &'a str,
    /// When the client started.
    pub client_start_time: Time,
    /// The run modes.
    pub modes: Modes,
    /// The client's data directory, under which BOINC shows each project's directory
    /// (`<project_dir>`).
    pub data_dir: &'a std::path::Path,
}

#[cfg(test)]
impl<'a> ClientView<'a> {
    /// The view of `state` at `now` on a plain Linux host with nothing in flight, as the
    /// writers' tests render it.
    pub(crate) fn plain(state: &'a ClientState, now: Time) -> Self {
        ClientView {
            now,
            state,
            in_flight: &[],
            platform: "x86_64-pc-linux-gnu",
            client_start_time: 0.0,
            modes: Modes::of(state),
            data_dir: std::path::Path::new("/var/lib/boinc-client"),
        }
    }
}

impl ClientView<'_> {
    /// Whether a project is shown at all: BOINC forgets a project it detaches from.
    pub(crate) fn shown(&self, project: ProjectId) -> bool {
        !self.state.project(project).detached
    }
}
