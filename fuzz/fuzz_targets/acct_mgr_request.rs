#![no_main]
//! An account manager request as a client sends it to a manager
//! (parse_acct_mgr_request), and its round trip through write_acct_mgr_request.

use boinc_core::protocol::acct_mgr::{parse_acct_mgr_request, write_acct_mgr_request};
use boinc_fuzz::{assert_round_trip, text, written_unchanged};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = text(data);
    if let Ok(request) = parse_acct_mgr_request(&text) {
        assert_round_trip(
            written_unchanged(&text),
            &request,
            write_acct_mgr_request,
            parse_acct_mgr_request,
        );
    }
});
