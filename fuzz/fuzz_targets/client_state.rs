#![no_main]
//! client_state.xml (parse_client_state_with_warnings, the state file a client starts
//! from, written by BOINC or boinc-rs, possibly damaged), and its round trip through
//! write_client_state.

use boinc_core::model::ClientState;
use boinc_core::protocol::{
    ClientVersion, StateFileOrigin, parse_client_state, parse_client_state_with_warnings,
    write_client_state,
};
use boinc_fuzz::{assert_round_trip, text, written_unchanged};
use libfuzzer_sys::fuzz_target;

const ORIGIN: StateFileOrigin = StateFileOrigin {
    platform: "x86_64-pc-linux-gnu",
    version: ClientVersion { major: 8, minor: 0, release: 0 },
};

fuzz_target!(|data: &[u8]| {
    let text = text(data);
    let exact = written_unchanged(&text);
    let write = |state: &ClientState| write_client_state(state, &ORIGIN);
    let parse = |text: &str| parse_client_state(text, "client_state.xml");
    if let Ok((state, _warnings)) = parse_client_state_with_warnings(&text, "client_state.xml") {
        assert_round_trip(exact, &state, write, parse);
    }
});
