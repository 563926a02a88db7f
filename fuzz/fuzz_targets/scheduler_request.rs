#![no_main]
//! A scheduler request, as a client sends it to the project server
//! (SchedulerRequest::from_xml), and its round trip through SchedulerRequest::to_xml.

use boinc_core::protocol::SchedulerRequest;
use boinc_fuzz::{assert_round_trip, text, written_unchanged};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = text(data);
    if let Ok(request) = SchedulerRequest::from_xml(&text) {
        let exact = written_unchanged(&text);
        assert_round_trip(exact, &request, SchedulerRequest::to_xml, SchedulerRequest::from_xml);
    }
});
