//! Attaching by e-mail address and password from the projects page: the browser sends
//! them here, and the dashboard starts GUI RPC's `lookup_account` with the hash BOINC's
//! web RPC takes (md5 of the password and the lower-case address), so the password
//! itself goes no further than this process. The page then polls
//! `lookup_account_poll` and attaches with the key it gives.

use boinc_core::protocol::gui_rpc::{AccountRequest, Operation};
use md5::{Digest, Md5};

/// The `lookup_account` operation for `url`, `email` and `password`.
pub(crate) fn lookup(url: &str, email: &str, password: &str) -> Operation {
    let digest = Md5::digest(format!("{password}{}", email.to_lowercase()).as_bytes());
    let passwd_hash = digest.iter().map(|b| format!("{b:02x}")).collect();
    Operation::LookupAccount(AccountRequest {
        url: url.trim().to_owned(),
        email_addr: email.trim().to_owned(),
        passwd_hash,
        ..AccountRequest::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_md5_of_the_password_and_the_lower_case_address() {
        let Operation::LookupAccount(request) = lookup(" http://p/ ", "Ada@Example.org", "pw")
        else {
            panic!("not a lookup");
        };
        assert_eq!(request.url, "http://p/");
        // md5("pwada@example.org"), worked out apart from this code.
        assert_eq!(request.passwd_hash, "4bd31d469128a21cd658dd4ab63807e0");
        assert_eq!(request.email_addr, "Ada@Example.org");
    }
}
