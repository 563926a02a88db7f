#![no_main]
//! Global preferences: global_prefs.xml, global_prefs_override.xml and the preferences a
//! scheduler reply or account file carries (read_global_prefs, parse_global_prefs). No
//! writer: no round trip.

use boinc_core::model::Prefs;
use boinc_core::protocol::{parse_global_prefs, read_global_prefs};
use boinc_fuzz::text;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = text(data);
    let mut prefs = Prefs::default();
    let _ = read_global_prefs(&text, "global_prefs.xml", &mut prefs);
    let before = Prefs::default();
    let mut strict = before.clone();
    if parse_global_prefs(&text, "global_prefs_override.xml", &mut strict).is_err() {
        assert_eq!(strict, before, "a rejected preferences file changed the preferences");
    }
});
