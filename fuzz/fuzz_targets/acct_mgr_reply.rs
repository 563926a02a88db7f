#![no_main]
//! An account manager's reply (parse_acct_mgr_reply), and its round trip through
//! write_acct_mgr_reply (the local project server's account manager).

use boinc_core::protocol::acct_mgr::{parse_acct_mgr_reply, write_acct_mgr_reply};
use boinc_fuzz::{assert_round_trip, text, written_unchanged};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = text(data);
    if let Ok(reply) = parse_acct_mgr_reply(&text) {
        assert_round_trip(
            written_unchanged(&text),
            &reply,
            write_acct_mgr_reply,
            parse_acct_mgr_reply,
        );
    }
});
