#![no_main]
//! A slot's init_data.xml (InitData::parse: what an app, or boinc-rs's own app side,
//! reads), and its round trip through InitData::to_xml.

use boinc_core::protocol::app_api::InitData;
use boinc_fuzz::{assert_round_trip, text, written_unchanged};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = text(data);
    if let Ok(init_data) = InitData::parse(&text) {
        assert_round_trip(written_unchanged(&text), &init_data, InitData::to_xml, InitData::parse);
    }
});
