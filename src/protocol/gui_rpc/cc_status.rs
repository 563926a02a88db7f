//! `<cc_status>` (GUI RPC `get_cc_status`): the run modes and why computing or the
//! network is suspended, in BOINC 7.20.5's numbers (fixture gui_rpc_samples.txt,
//! pair 1): modes 1 always, 2 according to preferences, 3 never; suspend reason 4 is
//! "user request", the others the host's (`control::SuspendReason`: batteries 1, user
//! active 2, time of day 8, ...); network status 2 is "no connection needed".

use super::view::{ClientView, ModeStatus};
use crate::control::{SuspendReason, reason_code};
use crate::model::RunMode;
use crate::protocol::xml_out::XmlOut;

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

fn write_mode(out: &mut XmlOut, prefix: &str, mode: &ModeStatus, reason: Option<SuspendReason>) {
    out.int(&format!("{prefix}_suspend_reason"), reason_code(reason));
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
    let reasons = view.modes.reasons();
    // BOINC reports no GPU suspension on a host whose GPUs it does not use (measured
    // beside 7.20.5 without GPUs: 0 under GPU mode "never" too).
    let uses_gpus = view.state.uses_gpus();
    write_mode(out, "task", &view.modes.task, reasons.cpu);
    write_mode(out, "gpu", &view.modes.gpu, reasons.gpu.filter(|_| uses_gpus));
    write_mode(out, "network", &view.modes.network, reasons.network);
    out.bit("disallow_attach", false);
    out.bit("simple_gui_only", false);
    out.int("max_event_log_lines", i64::try_from(max_event_log_lines).unwrap_or(i64::MAX));
    out.end("cc_status");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::SuspendReasons;
    use crate::model::{ClientState, Coprocessor, ResourceType};
    use crate::protocol::gui_rpc::view::Modes;

    fn cc_status(state: &ClientState, suspended: SuspendReasons) -> String {
        let view = ClientView {
            modes: Modes { suspended, ..Modes::of(state) },
            ..ClientView::plain(state, 0.0)
        };
        let mut out = XmlOut::new();
        write_cc_status(&mut out, &view, 2000);
        String::from_utf8(out.finish()).expect("utf-8")
    }

    #[test]
    fn the_hosts_reasons_in_boincs_codes() {
        let mut state = ClientState::default();
        let reasons = SuspendReasons {
            cpu: Some(SuspendReason::TimeOfDay),
            gpu: Some(SuspendReason::UserActive),
            network: Some(SuspendReason::TimeOfDay),
        };
        let text = cc_status(&state, reasons);
        assert!(text.contains("<task_suspend_reason>8</task_suspend_reason>"), "{text}");
        assert!(text.contains("<gpu_suspend_reason>0</gpu_suspend_reason>"), "{text}");
        assert!(text.contains("<network_suspend_reason>8</network_suspend_reason>"), "{text}");
        let gpu_only = SuspendReasons { cpu: None, ..reasons };
        // As BOINC 7.20.5 (measured beside it): a host without a GPU has no GPU
        // suspension to report.
        let text = cc_status(&state, gpu_only);
        assert!(text.contains("<gpu_suspend_reason>0</gpu_suspend_reason>"), "{text}");
        state.gpu_mode = RunMode::Never;
        let text = cc_status(&state, SuspendReasons::NONE);
        assert!(text.contains("<gpu_suspend_reason>0</gpu_suspend_reason>"), "{text}");
        state.gpu_mode = RunMode::Auto;
        state.host.coprocessors[ResourceType::Nvidia] = Some(Coprocessor {
            resource: ResourceType::Nvidia,
            name: "a GPU".into(),
            count: 1,
            peak_flops: 1e12,
            available_ram: 4e9,
        });
        let text = cc_status(&state, gpu_only);
        assert!(text.contains("<gpu_suspend_reason>2</gpu_suspend_reason>"), "{text}");
        state.config.no_gpus = true;
        let text = cc_status(&state, gpu_only);
        assert!(text.contains("<gpu_suspend_reason>0</gpu_suspend_reason>"), "{text}");
        state.run_mode = RunMode::Never;
        let text = cc_status(&state, reasons);
        assert!(text.contains("<task_suspend_reason>4</task_suspend_reason>"), "{text}");
    }
}
