//! Code signing against real material: the signed reply the real BOINC client 7.20.5
//! accepted (fixtures/boinc-7.20.5/sched_reply_work_signed_example.xml), a signature
//! made by OpenSSL as BOINC's signing tool makes it, and throwaway keys in BOINC's text
//! formats (tests/fixtures/code_signing). Any flipped byte of the file, the key or the
//! signature fails; keys, signatures and key changes round-trip.

use boinc_core::protocol::SchedulerReply;
use boinc_core::protocol::code_signing::{
    CodeSignKey, CodeSignPrivateKey, CodeSigningError, KeyUpdate, Signature, check_key_update,
    md5_hex, sign, sign_key_update, sign_text, verify_file_signature, verify_text_signature,
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

static KEY_A: LazyLock<CodeSignPrivateKey> = LazyLock::new(|| {
    CodeSignPrivateKey::parse(&read(&format!("{KEYS}/project_key_a_private.txt"))).expect("key a")
});
static KEY_B: LazyLock<CodeSignPrivateKey> = LazyLock::new(|| {
    CodeSignPrivateKey::parse(&read(&format!("{KEYS}/project_key_b_private.txt"))).expect("key b")
});

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
    let signature = sign(&KEY_A, &md5_hex(&file)).expect("signs");
    let key = KEY_A.public_key();
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
fn our_signature_is_the_one_openssl_makes() {
    let file = read(&format!("{KEYS}/signed_file.txt"));
    let openssl = read(&format!("{KEYS}/signed_file.txt.signature_by_openssl"));
    let ours = sign(&KEY_A, &md5_hex(file.as_bytes())).expect("signs");
    assert_eq!(ours.to_text(), openssl);
    assert_eq!(Signature::parse(&openssl), Ok(ours));
}

#[test]
fn keys_are_written_as_boinc_writes_them() {
    let (key_text, _, _) = fixture();
    let key = CodeSignKey::parse(&key_text).expect("key");
    assert_eq!(key.to_text(), format!("{}\n", key_text.trim()));
    for name in ["a", "b"] {
        let private = read(&format!("{KEYS}/project_key_{name}_private.txt"));
        let public = read(&format!("{KEYS}/project_key_{name}_public.txt"));
        let key = CodeSignPrivateKey::parse(&private).expect("private key");
        assert_eq!(key.to_text(), private);
        assert_eq!(key.public_key().to_text(), public);
        assert_eq!(CodeSignKey::parse(&public).as_ref(), Ok(key.public_key()));
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
    let (old, new) = (KEY_A.public_key().clone(), KEY_B.public_key().clone());
    assert_eq!(check_key_update(None, old.clone(), None), Ok(KeyUpdate::Pin(old.clone())));
    assert_eq!(check_key_update(Some(&old), old.clone(), None), Ok(KeyUpdate::Unchanged));
    assert_eq!(
        check_key_update(Some(&old), new.clone(), None),
        Err(CodeSigningError::MissingKeySignature)
    );
    let by_old = sign_key_update(&KEY_A, &new).expect("signs");
    assert_eq!(
        check_key_update(Some(&old), new.clone(), Some(&by_old)),
        Ok(KeyUpdate::Replace(new.clone()))
    );
    // The new key signing itself proves nothing.
    let by_new = sign_key_update(&KEY_B, &new).expect("signs");
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
    assert_eq!(sign_text(&KEY_A, &new.to_text()), Ok(by_old));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn signatures_round_trip_and_verify_only_their_checksum(
        file in prop::collection::vec(any::<u8>(), 0..2000),
        other in prop::collection::vec(any::<u8>(), 0..2000),
        use_b in any::<bool>(),
    ) {
        let private = if use_b { &*KEY_B } else { &*KEY_A };
        let md5 = md5_hex(&file);
        let signature = sign(private, &md5).expect("signs");
        prop_assert_eq!(sign(private, &md5), Ok(signature.clone()), "deterministic");
        let read_back = Signature::parse(&signature.to_text()).expect("reads back");
        prop_assert_eq!(&read_back, &signature);
        prop_assert_eq!(verify_file_signature(private.public_key(), &read_back, &md5), Ok(()));
        if other != file {
            prop_assert_eq!(
                verify_file_signature(private.public_key(), &read_back, &md5_hex(&other)),
                Err(CodeSigningError::BadSignature)
            );
        }
        let wrong_key = if use_b { &*KEY_A } else { &*KEY_B };
        prop_assert_eq!(
            verify_file_signature(wrong_key.public_key(), &read_back, &md5),
            Err(CodeSigningError::BadSignature)
        );
    }

    #[test]
    fn any_text_is_a_key_or_an_error(text in "[0-9a-f.\n ]{0,700}") {
        let _ = CodeSignKey::parse(&text);
        let _ = CodeSignKey::parse(&format!("1024\n{text}"));
        let _ = CodeSignPrivateKey::parse(&format!("1024\n{text}"));
        let _ = Signature::parse(&text);
    }
}
