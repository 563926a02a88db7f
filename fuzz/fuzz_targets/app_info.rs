#![no_main]
//! A project's app_info.xml (read_app_info: the anonymous platform). No writer: no round
//! trip.

use boinc_core::protocol::read_app_info;
use boinc_fuzz::text;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = read_app_info(&text(data), "app_info.xml");
});
