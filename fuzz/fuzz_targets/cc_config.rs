#![no_main]
//! cc_config.xml, the user's client configuration (read_cc_config, parse_cc_config). No
//! writer: no round trip.

use boinc_core::protocol::{parse_cc_config, read_cc_config};
use boinc_fuzz::text;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = text(data);
    let _ = read_cc_config(&text, "cc_config.xml");
    let _ = parse_cc_config(&text, "cc_config.xml");
});
