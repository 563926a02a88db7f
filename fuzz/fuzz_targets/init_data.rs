#![no_main]
//! A slot's init_data.xml (InitData::parse: what an app, or boinc-rs's own app side,
//! reads), and its round trip through InitData::to_xml.

use boinc_core::protocol::app_api::InitData;
use boinc_fuzz::check_text_format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    check_text_format(data, InitData::parse, InitData::to_xml);
});
