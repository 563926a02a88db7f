#![no_main]
//! The small files an app leaves in its slot: boinc_finish_called (FinishFile),
//! boinc_temporary_exit (TemporaryExit) and link files (parse_soft_link), with the round
//! trips through their writers.

use boinc_core::protocol::app_api::{FinishFile, TemporaryExit, parse_soft_link, soft_link};
use boinc_fuzz::{always, assert_round_trip, text, written_unchanged};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = text(data);
    // The exit files' messages are one line: a carriage return in one is written as a
    // space, as a line end is.
    let one_line = !text.contains('\r');
    // A notice flag without a message is not written: there is nothing to show.
    if let Ok(mut finish) = FinishFile::parse(&text) {
        finish.is_notice &= finish.message.is_some();
        assert_round_trip(one_line, &finish, FinishFile::to_text, FinishFile::parse);
    }
    let mut exit = TemporaryExit::parse(&text);
    exit.is_notice &= !exit.reason.is_empty();
    let parse = |text: &str| always(TemporaryExit::parse(text));
    assert_round_trip(one_line, &exit, TemporaryExit::to_text, parse);
    if let Some(target) = parse_soft_link(&text) {
        let write = |target: &Option<String>| soft_link(target.as_deref().unwrap_or_default());
        let parse = |text: &str| always(parse_soft_link(text));
        assert_round_trip(written_unchanged(&text), &Some(target), write, parse);
    }
});
