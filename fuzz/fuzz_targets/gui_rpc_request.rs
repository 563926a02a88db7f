#![no_main]
//! One GUI RPC request as a local or remote client sends it (parse_request, on the
//! bytes before the terminator), and the round trip of an operation through
//! write_request (boinc-rs's own GUI RPC client).

use boinc_core::protocol::gui_rpc::{Operation, Request, parse_request, write_request};
use boinc_fuzz::{assert_round_trip, text, written_unchanged};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Request::Operation { operation: Ok(operation), .. } = parse_request(data) {
        let write = |operation: &Operation| {
            let body = write_request(operation);
            format!("<boinc_gui_rpc_request>\n{body}\n</boinc_gui_rpc_request>\n")
        };
        let parse = |text: &str| match parse_request(text.as_bytes()) {
            Request::Operation { operation: Ok(again), .. } => Ok(again),
            other => Err(format!("{other:?}")),
        };
        assert_round_trip(written_unchanged(&text(data)), &operation, write, parse);
    }
});
