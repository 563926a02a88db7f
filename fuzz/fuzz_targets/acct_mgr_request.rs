#![no_main]
//! An account manager request as a client sends it to a manager
//! (parse_acct_mgr_request), and its round trip through write_acct_mgr_request.

use boinc_core::protocol::acct_mgr::{parse_acct_mgr_request, write_acct_mgr_request};
use boinc_fuzz::check_text_format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    check_text_format(data, parse_acct_mgr_request, write_acct_mgr_request);
});
