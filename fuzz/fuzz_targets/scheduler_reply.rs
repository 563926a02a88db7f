#![no_main]
//! A scheduler reply, as a project server sends it (SchedulerReply::from_xml), and its
//! round trip through SchedulerReply::to_xml (the emulated and local project servers
//! write replies).

use boinc_core::protocol::SchedulerReply;
use boinc_fuzz::check_text_format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    check_text_format(data, SchedulerReply::from_xml, SchedulerReply::to_xml);
});
