#![no_main]
//! A project's master page (MasterPage::parse: the scheduler URLs in its HTML), and the
//! round trip through MasterPage::to_html (the local project server's page).

use boinc_core::protocol::MasterPage;
use boinc_fuzz::{always, assert_round_trip, text, written_unchanged};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = text(data);
    let page = MasterPage::parse(&text);
    let write = |page: &MasterPage| page.to_html("fuzz <project> & co");
    let parse = |html: &str| always(MasterPage::parse(html));
    assert_round_trip(written_unchanged(&text), &page, write, parse);
});
