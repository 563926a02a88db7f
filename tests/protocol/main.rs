//! BOINC's formats against boinc-core's readers and writers: the real client's captures and state files, round trips, hostile inputs, code-signature verification, GUI RPC replies and the scheduler protocol beside the real client's requests.

#[path = "../support/strategies.rs"]
mod strategies;
#[path = "../support/mod.rs"]
mod support;

mod client_state_round_trip;
mod code_signing;
mod gui_rpc_replies;
mod protocol_errors;
mod protocol_fixtures;
mod protocol_round_trip;
mod protocol_snapshots;
mod request_elements;
mod scheduler_protocol;
