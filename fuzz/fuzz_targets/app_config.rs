#![no_main]
//! A project's app_config.xml (read_app_config). No writer: no round trip.

use boinc_core::protocol::read_app_config;
use boinc_fuzz::text;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = read_app_config(&text(data), "app_config.xml");
});
