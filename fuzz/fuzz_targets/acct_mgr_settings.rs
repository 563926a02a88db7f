#![no_main]
//! The account manager files a client keeps (acct_mgr_url.xml, and acct_mgr_login.xml
//! after a NUL byte when the input has one: AccountManagerSettings::parse), and their
//! round trip through url_file and login_file. Without credentials no login file is
//! written, so what only it holds is not expected back.

use boinc_core::protocol::acct_mgr::AccountManagerSettings;
use boinc_fuzz::{text, written_unchanged};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = text(data);
    let (url_file, login_file) = match text.split_once('\0') {
        Some((url_file, login_file)) => (url_file, Some(login_file)),
        None => (&*text, None),
    };
    let Ok(settings) = AccountManagerSettings::parse(url_file, login_file) else { return };
    let url_again = settings.url_file();
    let login_again = settings.login_file();
    let read = match AccountManagerSettings::parse(&url_again, login_again.as_deref()) {
        Ok(read) => read,
        Err(error) => panic!("what was written does not read back: {error}\n{url_again}"),
    };
    if !written_unchanged(url_file) || !login_file.is_none_or(written_unchanged) {
        // Characters the writer replaced: what it wrote must be settled.
        assert_eq!(read.url_file(), url_again);
        assert_eq!(read.login_file(), login_again);
        return;
    }
    let mut expected = settings.clone();
    if !expected.have_credentials() {
        expected.login_name.clear();
        expected.password_hash.clear();
        expected.next_rpc_time = 0.0;
        expected.opaque.clear();
    }
    assert_eq!(read, expected);
});
