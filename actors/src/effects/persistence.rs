//! Where a live client keeps its state between lives (docs/design.md "State"; the host
//! service writes client_state.xml): the driver hands over the state after every step
//! of the control loop and when the client stops; the implementation decides, by the
//! core's save policy ([`boinc_core::control::SaveSchedule`]), whether to write.

use boinc_core::Time;
use boinc_core::model::ClientState;

/// Keeps the client's state on disk.
pub trait StatePersistence: Send + Sync {
    /// The state after a step at `now`: written if something that matters changed, or
    /// progress is due. A failure is the implementation's to log and retry.
    fn stepped(&self, state: &ClientState, now: Time);
    /// The client is stopping: the state is written now, whatever the schedule says.
    fn stopping(&self, state: &ClientState, now: Time);
}
