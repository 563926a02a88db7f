#![no_main]
//! A scheduler request, as a client sends it to the project server
//! (SchedulerRequest::from_xml), and its round trip through SchedulerRequest::to_xml.

use boinc_core::protocol::SchedulerRequest;
use boinc_fuzz::check_text_format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    check_text_format(data, SchedulerRequest::from_xml, SchedulerRequest::to_xml);
});
