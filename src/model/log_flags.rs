//! BOINC's `<log_flags>` (cc_config.xml) and what each turns on in boinc-rs: the
//! tracing targets (module paths of the runtime and the service) whose messages the flag
//! is about. The flags BOINC keeps on by default (`task`, `file_xfer`, `sched_ops`) leave
//! their targets' informational messages to the log's base level, and set to 0 keep
//! only their warnings; a `*_debug` flag shows its targets' debug messages too. Pure
//! data and a directive list: the service builds its log filter from it.

/// One BOINC log flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogFlag {
    /// The flag's element name in `<log_flags>`.
    pub name: &'static str,
    /// On unless cc_config.xml sets it to 0 (BOINC's `task`, `file_xfer`, `sched_ops`).
    pub default_on: bool,
    /// The tracing targets whose messages it shows (empty: boinc-rs has none of its
    /// kind, and turning the flag on shows nothing more).
    pub targets: &'static [&'static str],
}

const TASK: &[&str] = &["boinc_runtime::runtime::task", "boinc_service::process"];
const FILE_XFER: &[&str] = &[
    "boinc_runtime::runtime::transfers",
    "boinc_service::http::download",
    "boinc_service::http::file_transfer",
];
const SCHED_OPS: &[&str] = &["boinc_runtime::runtime::project", "boinc_runtime::runtime::fetch"];
const CPU_SCHED: &[&str] =
    &["boinc_runtime::runtime::scheduler", "boinc_runtime::runtime::resource"];
const HOST: &[&str] = &["boinc_service::host_discovery"];
const HTTP: &[&str] = &["boinc_service::http", "reqwest", "hyper_util"];
const STATE: &[&str] = &["boinc_service::state_keeper", "boinc_service::state_store"];
const DISK: &[&str] = &["boinc_runtime::runtime::disk", "boinc_runtime::runtime::live_disk"];
const APP_MSG: &[&str] = &["boinc_service::process::app_channels"];

/// Every log flag of BOINC 7.20's cc_config.xml, in its documentation's order.
pub const LOG_FLAGS: &[LogFlag] = &[
    LogFlag { name: "file_xfer", default_on: true, targets: FILE_XFER },
    LogFlag { name: "sched_ops", default_on: true, targets: SCHED_OPS },
    LogFlag { name: "task", default_on: true, targets: TASK },
    LogFlag { name: "app_msg_receive", default_on: false, targets: APP_MSG },
    LogFlag { name: "app_msg_send", default_on: false, targets: APP_MSG },
    LogFlag { name: "async_file_debug", default_on: false, targets: &[] },
    LogFlag { name: "benchmark_debug", default_on: false, targets: HOST },
    LogFlag { name: "checkpoint_debug", default_on: false, targets: TASK },
    LogFlag { name: "coproc_debug", default_on: false, targets: HOST },
    LogFlag { name: "cpu_sched", default_on: false, targets: CPU_SCHED },
    LogFlag { name: "cpu_sched_debug", default_on: false, targets: CPU_SCHED },
    LogFlag { name: "cpu_sched_status", default_on: false, targets: CPU_SCHED },
    LogFlag { name: "dcf_debug", default_on: false, targets: &[] },
    LogFlag { name: "disk_usage_debug", default_on: false, targets: DISK },
    LogFlag { name: "file_xfer_debug", default_on: false, targets: FILE_XFER },
    LogFlag { name: "gui_rpc_debug", default_on: false, targets: &["boinc_gui_rpc"] },
    LogFlag { name: "heartbeat_debug", default_on: false, targets: APP_MSG },
    LogFlag { name: "http_debug", default_on: false, targets: HTTP },
    LogFlag { name: "http_xfer_debug", default_on: false, targets: HTTP },
    LogFlag { name: "idle_detection_debug", default_on: false, targets: HOST },
    LogFlag { name: "mem_usage_debug", default_on: false, targets: &["boinc_service::process"] },
    LogFlag { name: "network_status_debug", default_on: false, targets: HTTP },
    LogFlag { name: "notice_debug", default_on: false, targets: &["boinc_service::notices"] },
    LogFlag { name: "poll_debug", default_on: false, targets: &["boinc_runtime::client"] },
    LogFlag { name: "priority_debug", default_on: false, targets: CPU_SCHED },
    LogFlag { name: "proxy_debug", default_on: false, targets: HTTP },
    LogFlag { name: "rr_simulation", default_on: false, targets: CPU_SCHED },
    LogFlag { name: "rrsim_detail", default_on: false, targets: CPU_SCHED },
    LogFlag { name: "sched_op_debug", default_on: false, targets: SCHED_OPS },
    LogFlag { name: "scrsave_debug", default_on: false, targets: &[] },
    LogFlag { name: "slot_debug", default_on: false, targets: &["boinc_service::process::slot"] },
    LogFlag { name: "sporadic_debug", default_on: false, targets: &[] },
    LogFlag { name: "state_debug", default_on: false, targets: STATE },
    LogFlag { name: "statefile_debug", default_on: false, targets: STATE },
    LogFlag { name: "suspend_debug", default_on: false, targets: HOST },
    LogFlag { name: "task_debug", default_on: false, targets: TASK },
    LogFlag { name: "time_debug", default_on: false, targets: &[] },
    LogFlag { name: "trickle_debug", default_on: false, targets: &[] },
    LogFlag { name: "unparsed_xml", default_on: false, targets: &[] },
    LogFlag { name: "work_fetch_debug", default_on: false, targets: SCHED_OPS },
];

/// The flag named `name`, if BOINC has one.
pub fn log_flag(name: &str) -> Option<&'static LogFlag> {
    LOG_FLAGS.iter().find(|flag| flag.name == name)
}

/// The log filter's directives (`target=level`) for the flags set to 1 (`on`) and to 0
/// (`off`), to add to the log's base level: a default flag turned off keeps only its
/// targets' warnings (one left on adds nothing: a base that shows more, a user's
/// `RUST_LOG`, stays in force); a debug flag turned on shows its targets at `debug`.
/// Unknown names are left out (the reader warned about them). Debug comes last, so a
/// target both flags name is shown.
pub fn log_filter_directives(on: &[String], off: &[String]) -> Vec<String> {
    let mut directives = Vec::new();
    for flag in LOG_FLAGS.iter().filter(|f| f.default_on) {
        if off.iter().any(|name| name == flag.name) {
            directives.extend(flag.targets.iter().map(|target| format!("{target}=warn")));
        }
    }
    for flag in on.iter().filter_map(|name| log_flag(name)).filter(|f| !f.default_on) {
        directives.extend(flag.targets.iter().map(|target| format!("{target}=debug")));
    }
    directives
}

/// The flags set to 1 that show nothing in boinc-rs (no messages of their kind), to
/// tell the user so.
pub fn silent_flags(on: &[String]) -> Vec<&str> {
    on.iter()
        .filter(|name| log_flag(name).is_some_and(|flag| flag.targets.is_empty()))
        .map(String::as_str)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn default_flags_turned_off_keep_warnings_and_debug_flags_show_debug() {
        assert!(log_filter_directives(&[], &[]).is_empty(), "the base level governs");
        assert!(log_filter_directives(&names(&["task"]), &[]).is_empty());
        let directives =
            log_filter_directives(&names(&["sched_op_debug", "nonsense"]), &names(&["task"]));
        assert!(directives.contains(&"boinc_runtime::runtime::task=warn".to_string()));
        assert_eq!(
            directives.last().map(String::as_str),
            Some("boinc_runtime::runtime::fetch=debug")
        );
        assert!(directives.contains(&"boinc_runtime::runtime::project=debug".to_string()));
    }

    #[test]
    fn every_flag_is_named_once_and_the_silent_ones_are_told() {
        for (i, flag) in LOG_FLAGS.iter().enumerate() {
            assert!(LOG_FLAGS[i + 1..].iter().all(|f| f.name != flag.name), "{}", flag.name);
        }
        assert_eq!(silent_flags(&names(&["task", "dcf_debug", "nonsense"])), vec!["dcf_debug"]);
    }
}
