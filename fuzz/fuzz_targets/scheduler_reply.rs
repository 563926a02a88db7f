#![no_main]
//! A scheduler reply, as a project server sends it (SchedulerReply::from_xml), and its
//! round trip through SchedulerReply::to_xml (the emulated and local project servers
//! write replies).

use boinc_core::protocol::SchedulerReply;
use boinc_fuzz::{assert_round_trip, text, written_unchanged};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = text(data);
    if let Ok(reply) = SchedulerReply::from_xml(&text) {
        let exact = written_unchanged(&text);
        assert_round_trip(exact, &reply, SchedulerReply::to_xml, SchedulerReply::from_xml);
    }
});
