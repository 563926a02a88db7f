#![no_main]
//! An account manager's reply (parse_acct_mgr_reply), and its round trip through
//! write_acct_mgr_reply (the local project server's account manager).

use boinc_core::protocol::acct_mgr::{parse_acct_mgr_reply, write_acct_mgr_reply};
use boinc_fuzz::check_text_format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    check_text_format(data, parse_acct_mgr_reply, write_acct_mgr_reply);
});
