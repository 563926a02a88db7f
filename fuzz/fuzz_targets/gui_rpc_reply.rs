#![no_main]
//! A GUI RPC reply as boinc-rs's own commands (status, tasks, project) read it from a
//! client they connect to (the reply readers). No writer of these views: no round trip.

use boinc_core::protocol::gui_rpc::{
    read_cc_status, read_client_time, read_nonce, read_outcome, read_projects, read_tasks,
};
use boinc_fuzz::text;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let reply = text(data);
    let _ = read_outcome(&reply);
    let _ = read_nonce(&reply);
    let _ = read_tasks(&reply);
    let _ = read_projects(&reply);
    let _ = read_client_time(&reply);
    let _ = read_cc_status(&reply);
});
