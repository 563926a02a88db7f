//! Code signing against real material: the signed reply the real BOINC client 7.20.5
//! accepted (fixtures/boinc-7.20.5/sched_reply_work_signed_example.xml), a signature
//! made by OpenSSL as BOINC's signing tool makes it, and throwaway keys in BOINC's text
//! formats with signatures made by them (tests/fixtures/code_signing). Any flipped byte
//! of the file, the key or the signature fails; keys, signatures and key changes
//! round-trip.
//!
//! The core only verifies: the signatures here were made once by the project server's
//! signer (`boinc-project-server`'s `signing` module), whose test
//! `the_fixtures_are_what_the_signer_makes` checks they are what it makes; signing itself
//! is tested there.

use boinc_core::protocol::SchedulerReply;
use boinc_core::protocol::code_signing::{
    CodeSignKey, CodeSigningError, KeyUpdate, Signature, check_key_update, md5_hex,
    verify_file_signature, verify_text_signature,
};
use proptest::prelude::*;
use std::path::Path;
use std::sync::LazyLock;

const SIGNED_REPLY: &str = "tests/fixtures/boinc-7.20.5/sched_reply_work_signed_example.xml";
const KEYS: &str = "tests/fixtures/code_signing";

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The fixture reply's key, and its executable's signature and MD5.
fn fixture() -> (String, String, String) {
    let reply = SchedulerReply::from_xml(&read(SIGNED_REPLY)).expect("the fixture parses");
    let key = reply.code_sign_key.expect("the fixture has a key");
    let executable = reply.file_infos.iter().find(|f| f.executable).expect("an executable");
    let signature = executable.file_signature.clone().expect("signed");
    (key, signature, executable.md5_cksum.clone())
}

static KEY_A: LazyLock<CodeSignKey> = LazyLock::new(|| {
    CodeSignKey::parse(&read(&format!("{KEYS}/project_key_a_public.txt"))).expect("key a")
});
static KEY_B: LazyLock<CodeSignKey> = LazyLock::new(|| {
    CodeSignKey::parse(&read(&format!("{KEYS}/project_key_b_public.txt"))).expect("key b")
});

/// A pre-made signature from the fixtures.
fn signature(name: &str) -> Signature {
    Signature::parse(&read(&format!("{KEYS}/{name}"))).expect("a signature")
}

/// OpenSSL's signature of signed_file.txt with key a.
fn openssl_signature() -> Signature {
    signature("signed_file.txt.signature_by_openssl")
}

/// `text` with the hex digit at `at` changed to another one.
fn flip_hex_digit(text: &str, at: usize) -> String {
    let mut bytes = text.as_bytes().to_vec();
    bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
    String::from_utf8(bytes).expect("ASCII")
}

fn hex_digit_positions(text: &str) -> impl Iterator<Item = usize> + '_ {
    text.bytes().enumerate().filter(|(_, b)| b.is_ascii_hexdigit()).map(|(at, _)| at)
}

#[test]
fn the_signature_the_real_client_accepted_verifies() {
    let (key, signature, md5) = fixture();
    let key = CodeSignKey::parse(&key).expect("the fixture key reads");
    assert_eq!(key.bits(), 1024);
    let signature = Signature::parse(&signature).expect("the fixture signature reads");
    assert_eq!(signature.as_bytes().len(), 128);
    assert_eq!(verify_file_signature(&key, &signature, &md5), Ok(()));
    // Upper-case checksums are the same checksum.
    assert_eq!(verify_file_signature(&key, &signature, &md5.to_uppercase()), Ok(()));
}

#[test]
fn any_changed_digit_of_checksum_key_or_signature_fails() {
    let (key_text, signature_text, md5) = fixture();
    let key = CodeSignKey::parse(&key_text).expect("key");
    let signature = Signature::parse(&signature_text).expect("signature");
    // A changed file is a changed checksum.
    for at in 0..md5.len() {
        let changed = flip_hex_digit(&md5, at);
        assert_eq!(
            verify_file_signature(&key, &signature, &changed),
            Err(CodeSigningError::BadSignature),
            "checksum digit {at}"
        );
    }
    for at in hex_digit_positions(&signature_text) {
        let changed = Signature::parse(&flip_hex_digit(&signature_text, at)).expect("still hex");
        assert_eq!(
            verify_file_signature(&key, &changed, &md5),
            Err(CodeSigningError::BadSignature),
            "signature digit {at}"
        );
    }
    // Skips the bit-count line: a changed size is refused when the key is read.
    let data_start = key_text.find('\n').expect("two lines");
    for at in hex_digit_positions(&key_text).filter(|&at| at > data_start) {
        match CodeSignKey::parse(&flip_hex_digit(&key_text, at)) {
            Ok(changed) => assert_eq!(
                verify_file_signature(&changed, &signature, &md5),
                Err(CodeSigningError::BadSignature),
                "key digit {at}"
            ),
            Err(CodeSigningError::InvalidKey { .. } | CodeSigningError::ModulusSize { .. }) => {}
            Err(other) => panic!("key digit {at}: unexpected {other}"),
        }
    }
}

#[test]
fn any_flipped_byte_of_a_signed_file_fails() {
    let file = read(&format!("{KEYS}/signed_file.txt")).into_bytes();
    let signature = openssl_signature();
    let key = &*KEY_A;
    assert_eq!(verify_file_signature(key, &signature, &md5_hex(&file)), Ok(()));
    for at in 0..file.len() {
        for bit in 0..8 {
            let mut changed = file.clone();
            changed[at] ^= 1 << bit;
            assert_eq!(
                verify_file_signature(key, &signature, &md5_hex(&changed)),
                Err(CodeSigningError::BadSignature)
            );
        }
    }
}

#[test]
fn the_openssl_signature_verifies_only_with_its_key() {
    let file = read(&format!("{KEYS}/signed_file.txt"));
    let md5 = md5_hex(file.as_bytes());
    let openssl = read(&format!("{KEYS}/signed_file.txt.signature_by_openssl"));
    let signature = Signature::parse(&openssl).expect("reads");
    assert_eq!(signature.to_text(), openssl, "written back as OpenSSL wrote it");
    assert_eq!(verify_file_signature(&KEY_A, &signature, &md5), Ok(()));
    assert_eq!(
        verify_file_signature(&KEY_B, &signature, &md5),
        Err(CodeSigningError::BadSignature)
    );
}

#[test]
fn keys_are_written_as_boinc_writes_them() {
    let (key_text, _, _) = fixture();
    let key = CodeSignKey::parse(&key_text).expect("key");
    assert_eq!(key.to_text(), format!("{}\n", key_text.trim()));
    // Private keys are the project server's: its tests check those.
    for name in ["a", "b"] {
        let public = read(&format!("{KEYS}/project_key_{name}_public.txt"));
        let key = CodeSignKey::parse(&public).expect("public key");
        assert_eq!(key.to_text(), public);
    }
}

#[test]
fn hostile_keys_and_signatures_are_errors() {
    let (key_text, signature_text, md5) = fixture();
    let key = CodeSignKey::parse(&key_text).expect("key");
    type Expected = fn(&CodeSigningError) -> bool;
    let cases: Vec<(String, Expected)> = vec![
        (String::new(), |e| matches!(e, CodeSigningError::Empty { .. })),
        ("abc\n00\n.".into(), |e| matches!(e, CodeSigningError::BadKeySize { .. })),
        ("-1024\n00\n.".into(), |e| matches!(e, CodeSigningError::BadKeySize { .. })),
        ("99999999999\n00\n.".into(), |e| matches!(e, CodeSigningError::BadKeySize { .. })),
        ("512\n00\n.".into(), |e| matches!(e, CodeSigningError::KeySizeOutOfRange { .. })),
        ("8192\n00\n.".into(), |e| matches!(e, CodeSigningError::KeySizeOutOfRange { .. })),
        (key_text.replace("\n.", ""), |e| matches!(e, CodeSigningError::Unterminated { .. })),
        (key_text.replacen("0000\n", "00\n", 1), |e| {
            matches!(e, CodeSigningError::WrongLength { .. })
        }),
        (format!("{key_text}\n{}", "00".repeat(10)), |e| {
            matches!(e, CodeSigningError::TrailingText { .. })
        }),
        (key_text.replacen('c', "g", 1), |e| matches!(e, CodeSigningError::NotHex { .. })),
        (format!("1024\n{}\n.", "00".repeat(256)), |e| {
            matches!(e, CodeSigningError::ModulusSize { .. })
        }),
        (format!("1024\n{}\n.", "ff".repeat(256)), |e| {
            matches!(e, CodeSigningError::InvalidKey { .. })
        }),
    ];
    for (text, expected) in cases {
        let error = CodeSignKey::parse(&text).expect_err(&text);
        assert!(expected(&error), "{text:?}: {error}");
    }
    let long = format!("{}\n.", "00".repeat(100_000));
    assert!(matches!(Signature::parse(&long), Err(CodeSigningError::TooLong { .. })));
    // A signature of the wrong length, or the right length over the modulus, fails.
    let signature = Signature::parse(&signature_text).expect("signature");
    let short = Signature::parse(&format!("{}\n.", "01".repeat(64))).expect("hex");
    assert_eq!(verify_file_signature(&key, &short, &md5), Err(CodeSigningError::BadSignature));
    let over = Signature::parse(&format!("{}\n.", "ff".repeat(128))).expect("hex");
    assert_eq!(verify_file_signature(&key, &over, &md5), Err(CodeSigningError::BadSignature));
    for bad_md5 in ["", "xyz", &md5[..31], &format!("{md5}0")] {
        assert!(matches!(
            verify_file_signature(&key, &signature, bad_md5),
            Err(CodeSigningError::BadMd5 { .. })
        ));
    }
}

#[test]
fn a_new_key_is_taken_only_when_the_old_one_signed_it() {
    let (old, new) = (KEY_A.clone(), KEY_B.clone());
    assert_eq!(check_key_update(None, old.clone(), None), Ok(KeyUpdate::Pin(old.clone())));
    assert_eq!(check_key_update(Some(&old), old.clone(), None), Ok(KeyUpdate::Unchanged));
    assert_eq!(
        check_key_update(Some(&old), new.clone(), None),
        Err(CodeSigningError::MissingKeySignature)
    );
    let by_old = signature("key_b_signed_by_key_a.txt");
    assert_eq!(
        check_key_update(Some(&old), new.clone(), Some(&by_old)),
        Ok(KeyUpdate::Replace(new.clone()))
    );
    // The new key signing itself proves nothing.
    let by_new = signature("key_b_signed_by_key_b.txt");
    assert_eq!(
        check_key_update(Some(&old), new.clone(), Some(&by_new)),
        Err(CodeSigningError::BadKeySignature)
    );
    // The signature covers the key's text as BOINC writes it, with its last newline.
    assert_eq!(verify_text_signature(&old, &by_old, &new.to_text()), Ok(()));
    assert_eq!(
        verify_text_signature(&old, &by_old, new.to_text().trim_end()),
        Err(CodeSigningError::BadSignature)
    );
    assert_eq!(verify_text_signature(&new, &by_new, &new.to_text()), Ok(()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn signatures_round_trip_and_verify_only_their_checksum(
        other in prop::collection::vec(any::<u8>(), 0..2000),
        use_b in any::<bool>(),
    ) {
        // Signing random files is the project server's test; here the pre-made
        // signatures: each verifies with its key over its own text only.
        let file = read(&format!("{KEYS}/signed_file.txt")).into_bytes();
        let cases = [
            (&*KEY_A, openssl_signature(), md5_hex(&file)),
            (&*KEY_B, signature("key_b_signed_by_key_b.txt"), md5_hex(KEY_B.to_text().as_bytes())),
        ];
        let (key, signed, md5) = &cases[usize::from(use_b)];
        let read_back = Signature::parse(&signed.to_text()).expect("reads back");
        prop_assert_eq!(&read_back, signed);
        prop_assert_eq!(verify_file_signature(key, &read_back, md5), Ok(()));
        if md5_hex(&other) != *md5 {
            prop_assert_eq!(
                verify_file_signature(key, &read_back, &md5_hex(&other)),
                Err(CodeSigningError::BadSignature)
            );
        }
        let wrong_key = if use_b { &*KEY_A } else { &*KEY_B };
        prop_assert_eq!(
            verify_file_signature(wrong_key, &read_back, md5),
            Err(CodeSigningError::BadSignature)
        );
    }

    #[test]
    fn any_text_is_a_key_or_an_error(text in "[0-9a-f.\n ]{0,700}") {
        let _ = CodeSignKey::parse(&text);
        let _ = CodeSignKey::parse(&format!("1024\n{text}"));
        let _ = Signature::parse(&text);
    }
}
