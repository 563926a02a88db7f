//! Signing against the shared test material (tests/fixtures/code_signing: throwaway keys
//! in BOINC's text formats, a file and OpenSSL's signature of it). The core's tests
//! verify pre-made signatures from there, since the core cannot sign; the test
//! [`the_fixtures_are_what_the_signer_makes`] checks that those signatures are exactly
//! what this module makes, and writes them afresh when `BOINC_RS_WRITE_SIGNING_FIXTURES`
//! is set (after the keys in the fixtures changed).

use super::*;
use boinc_core::protocol::code_signing::{
    CodeSignKey, CodeSigningError, KeyUpdate, Signature, check_key_update, md5_hex,
    verify_file_signature, verify_text_signature,
};
use proptest::prelude::*;
use std::path::PathBuf;
use std::sync::LazyLock;

/// The fixtures' directory.
fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/code_signing")
}

fn read(name: &str) -> String {
    let path = fixtures().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

static KEY_A: LazyLock<CodeSignPrivateKey> =
    LazyLock::new(|| CodeSignPrivateKey::parse(&read("project_key_a_private.txt")).expect("key a"));
static KEY_B: LazyLock<CodeSignPrivateKey> =
    LazyLock::new(|| CodeSignPrivateKey::parse(&read("project_key_b_private.txt")).expect("key b"));

/// The pre-made signatures the core's tests verify: file name and what it must hold.
fn premade_signatures() -> Vec<(&'static str, Signature)> {
    let sign_update = |old: &CodeSignPrivateKey, new: &CodeSignPrivateKey| {
        sign_key_update(old, new.public_key()).expect("signs")
    };
    vec![
        ("key_b_signed_by_key_a.txt", sign_update(&KEY_A, &KEY_B)),
        ("key_b_signed_by_key_b.txt", sign_update(&KEY_B, &KEY_B)),
    ]
}

#[test]
fn the_fixtures_are_what_the_signer_makes() {
    let write = std::env::var_os("BOINC_RS_WRITE_SIGNING_FIXTURES").is_some();
    for (name, signature) in premade_signatures() {
        if write {
            std::fs::write(fixtures().join(name), signature.to_text()).expect("written");
        }
        // A missing file reads as empty, so the message says how to make it.
        let premade = std::fs::read_to_string(fixtures().join(name)).unwrap_or_default();
        assert_eq!(
            premade,
            signature.to_text(),
            "{name} is not what the signer makes: run this test with \
             BOINC_RS_WRITE_SIGNING_FIXTURES=1 to write it afresh"
        );
    }
    // A key change's signature is the signature of the new key's text.
    let by_a = sign_key_update(&KEY_A, KEY_B.public_key()).expect("signs");
    assert_eq!(sign_text(&KEY_A, &KEY_B.public_key().to_text()), Ok(by_a));
    // The file the core checks flipped bytes of: OpenSSL's signature is ours.
    let file = read("signed_file.txt");
    assert_eq!(
        sign(&KEY_A, &md5_hex(file.as_bytes())).map(|s| s.to_text()),
        Ok(read("signed_file.txt.signature_by_openssl"))
    );
}

#[test]
fn our_signature_is_the_one_openssl_makes() {
    let file = read("signed_file.txt");
    let openssl = read("signed_file.txt.signature_by_openssl");
    let ours = sign(&KEY_A, &md5_hex(file.as_bytes())).expect("signs");
    assert_eq!(ours.to_text(), openssl);
    assert_eq!(Signature::parse(&openssl), Ok(ours));
}

#[test]
fn keys_are_written_as_boinc_writes_them() {
    for name in ["a", "b"] {
        let private = read(&format!("project_key_{name}_private.txt"));
        let public = read(&format!("project_key_{name}_public.txt"));
        let key = CodeSignPrivateKey::parse(&private).expect("private key");
        assert_eq!(key.to_text(), private);
        assert_eq!(key.public_key().to_text(), public);
        assert_eq!(CodeSignKey::parse(&public).as_ref(), Ok(key.public_key()));
    }
}

#[test]
fn a_generated_key_reads_back_and_signs_what_verifies() {
    let key = CodeSignPrivateKey::generate().expect("a key");
    assert_eq!(key.public_key().bits(), 1024);
    assert_eq!(CodeSignPrivateKey::parse(&key.to_text()), Ok(key.clone()));
    let signature = sign_text(&key, "http://example.org/").expect("signs");
    assert_eq!(verify_text_signature(key.public_key(), &signature, "http://example.org/"), Ok(()));
    assert!(matches!(
        sign(&key, "not a checksum"),
        Err(SigningError::Key(CodeSigningError::BadMd5 { .. }))
    ));
}

#[test]
fn a_new_key_is_taken_only_when_the_old_one_signed_it() {
    let (old, new) = (KEY_A.public_key().clone(), KEY_B.public_key().clone());
    let by_old = sign_key_update(&KEY_A, &new).expect("signs");
    assert_eq!(
        check_key_update(Some(&old), new.clone(), Some(&by_old)),
        Ok(KeyUpdate::Replace(new.clone()))
    );
    let by_new = sign_key_update(&KEY_B, &new).expect("signs");
    assert_eq!(
        check_key_update(Some(&old), new.clone(), Some(&by_new)),
        Err(CodeSigningError::BadKeySignature)
    );
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
        let _ = CodeSignPrivateKey::parse(&text);
        let _ = CodeSignPrivateKey::parse(&format!("1024\n{text}"));
    }
}
