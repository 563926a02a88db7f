#![no_main]
//! A data server's reply to an upload or a size query (DataServerReply::from_xml), and
//! its round trip through DataServerReply::to_xml (the local project server's reply).

use boinc_core::protocol::DataServerReply;
use boinc_fuzz::check_text_format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    check_text_format(data, DataServerReply::from_xml, DataServerReply::to_xml);
});
