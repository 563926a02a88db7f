#![no_main]
//! A data server's reply to an upload or a size query (DataServerReply::from_xml), and
//! its round trip through DataServerReply::to_xml (the local project server's reply).

use boinc_core::protocol::DataServerReply;
use boinc_fuzz::{assert_round_trip, text, written_unchanged};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = text(data);
    if let Ok(reply) = DataServerReply::from_xml(&text) {
        let exact = written_unchanged(&text);
        assert_round_trip(exact, &reply, DataServerReply::to_xml, DataServerReply::from_xml);
    }
});
