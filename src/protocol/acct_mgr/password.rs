//! The password hash an account manager is sent (BOINC's account manager RPC): never the
//! password itself.

use md5::{Digest, Md5};

/// The password hash an account manager request carries: md5(password + the name in
/// lowercase), hex; a password given as `hash:HASH` is that hash already.
pub fn account_manager_password_hash(name: &str, password: &str) -> String {
    if let Some(hash) = password.strip_prefix("hash:") {
        return hash.to_string();
    }
    let mut hasher = Md5::new();
    hasher.update(password.as_bytes());
    hasher.update(name.to_lowercase().as_bytes());
    format!("{:x}", hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_manager_hashes() {
        assert_eq!(
            account_manager_password_hash("John", "secret"),
            "8d48c2638665d03375572818023cbb3a"
        );
        assert_eq!(account_manager_password_hash("John", "hash:abc"), "abc");
    }
}
