//! `<cc_status>` (GUI RPC `get_cc_status`): the run modes and why computing or the
//! network is suspended, in BOINC 7.20.5's numbers (fixture gui_rpc_samples.txt,
//! pair 1): modes 1 always, 2 according to preferences, 3 never; suspend reason 4 is
//! "user request"; network status 2 is "no connection needed".

use super::view::{ClientView, ModeStatus};
use crate::model::RunMode;
use crate::protocol::xml_out::XmlOut;

/// BOINC's `SUSPEND_REASON_USER_REQ`.
const SUSPEND_REASON_USER_REQUEST: i64 = 4;
/// BOINC's `NETWORK_STATUS_ONLINE`: reported while a scheduler RPC is under way.
const NETWORK_STATUS_ONLINE: i64 = 0;
/// BOINC's `NETWORK_STATUS_WANT_DISCONNECT` ("don't need connection"): nothing waits on
/// the network.
const NETWORK_STATUS_NO_CONNECTION_NEEDED: i64 = 2;

/// BOINC's number for a run mode.
pub(crate) fn mode_code(mode: RunMode) -> i64 {
    match mode {
        RunMode::Always => 1,
        RunMode::Auto => 2,
        RunMode::Never => 3,
    }
}

/// Why computing (or the network) is suspended under a mode: 4 (the user asked) or 0.
pub(crate) fn suspend_reason(mode: RunMode) -> i64 {
    if mode == RunMode::Never { SUSPEND_REASON_USER_REQUEST } else { 0 }
}

fn write_mode(out: &mut XmlOut, prefix: &str, mode: &ModeStatus) {
    out.int(&format!("{prefix}_suspend_reason"), suspend_reason(mode.current));
    out.int(&format!("{prefix}_mode"), mode_code(mode.current));
    out.int(&format!("{prefix}_mode_perm"), mode_code(mode.permanent));
    out.real(&format!("{prefix}_mode_delay"), mode.delay.max(0.0));
}

/// Writes `<cc_status>`; `max_event_log_lines` is how many messages the log keeps.
pub(crate) fn write_cc_status(out: &mut XmlOut, view: &ClientView, max_event_log_lines: usize) {
    let network_status = if view.in_flight.is_empty() {
        NETWORK_STATUS_NO_CONNECTION_NEEDED
    } else {
        NETWORK_STATUS_ONLINE
    };
    out.start("cc_status");
    out.int("network_status", network_status);
    out.bit("ams_password_error", false);
    write_mode(out, "task", &view.modes.task);
    write_mode(out, "gpu", &view.modes.gpu);
    write_mode(out, "network", &view.modes.network);
    out.bit("disallow_attach", false);
    out.bit("simple_gui_only", false);
    out.int("max_event_log_lines", i64::try_from(max_event_log_lines).unwrap_or(i64::MAX));
    out.end("cc_status");
}
