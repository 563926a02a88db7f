#![no_main]
//! An account file (account_URL.xml, as BOINC or an account manager left it:
//! parse_account), and its round trip through write_account.

use boinc_core::protocol::{parse_account, write_account};
use boinc_fuzz::{assert_round_trip, text, written_unchanged};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = text(data);
    if let Ok(mut account) = parse_account(&text, "account.xml") {
        // An account without project preferences is written with an empty element, as
        // the real client writes it, and reads back with those (protocol/account.rs).
        account.project_preferences.get_or_insert_with(|| "\n".to_owned());
        let parse = |text: &str| parse_account(text, "account.xml");
        assert_round_trip(written_unchanged(&text), &account, write_account, parse);
    }
});
