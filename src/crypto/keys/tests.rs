//! Every accepted encoding of the fixture keys (tests/fixtures/keys, made by its generate.sh with openssl and
//! jwcrypto) parses to the same key, and every wrong kind of key is refused with a message that says so.

use super::*;

macro_rules! fixture {
    ($name:literal) => {
        &include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/keys/", $name))[..]
    };
}

const PASSWORD: &[u8] = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/keys/password.txt"));

fn private(bytes: &[u8]) -> PrivateKey {
    parse_private_key(bytes, Some(PASSWORD), "test key").unwrap_or_else(|e| panic!("{e}"))
}

fn public(bytes: &[u8]) -> RecipientKey {
    parse_public_key(bytes, "test key").unwrap_or_else(|e| panic!("{e}"))
}

fn public_error(bytes: &[u8]) -> String {
    parse_public_key(bytes, "k.pem").expect_err("must be refused as a public key").to_string()
}

fn private_error(bytes: &[u8], password: Option<&[u8]>) -> String {
    parse_private_key(bytes, password, "k.pem").expect_err("must be refused as a private key").to_string()
}

fn assert_contains(message: &str, expected: &str) {
    assert!(message.contains(expected), "`{message}` does not say `{expected}`");
    assert!(message.starts_with("k.pem: "), "`{message}` does not name the key first");
}

#[test]
fn every_rsa_private_encoding_is_the_same_key() {
    let reference = private(fixture!("rsa2048.pkcs8.pem")).public_key();
    for bytes in [
        fixture!("rsa2048.pkcs8.der"),
        fixture!("rsa2048.pkcs1.pem"),
        fixture!("rsa2048.pkcs1.der"),
        fixture!("rsa2048.enc.pem"),
        fixture!("rsa2048.enc.der"),
        fixture!("rsa2048.enc-scrypt.pem"),
        fixture!("rsa2048.priv.jwk"),
    ] {
        assert_eq!(private(bytes).public_key(), reference);
    }
    assert_eq!(reference.description(), "RSA-2048");
}

#[test]
fn every_ec_private_encoding_is_the_same_key() {
    let curves = [
        (
            Curve::P256,
            fixture!("p256.sec1.pem"),
            [
                fixture!("p256.sec1.der"),
                fixture!("p256.pkcs8.pem"),
                fixture!("p256.pkcs8.der"),
                fixture!("p256.enc.pem"),
                fixture!("p256.priv.jwk"),
            ],
        ),
        (
            Curve::P384,
            fixture!("p384.sec1.pem"),
            [
                fixture!("p384.sec1.der"),
                fixture!("p384.pkcs8.pem"),
                fixture!("p384.pkcs8.der"),
                fixture!("p384.enc.pem"),
                fixture!("p384.priv.jwk"),
            ],
        ),
        (
            Curve::P521,
            fixture!("p521.sec1.pem"),
            [
                fixture!("p521.sec1.der"),
                fixture!("p521.pkcs8.pem"),
                fixture!("p521.pkcs8.der"),
                fixture!("p521.enc.pem"),
                fixture!("p521.priv.jwk"),
            ],
        ),
    ];
    for (curve, reference, others) in curves {
        let reference = private(reference);
        assert_eq!(reference.curve(), Some(curve));
        for bytes in others {
            assert_eq!(private(bytes).public_key(), reference.public_key(), "{curve}");
        }
    }
}

#[test]
fn every_public_encoding_matches_its_private_key() {
    let cases: [(&[u8], &[&[u8]]); 4] = [
        (
            fixture!("rsa2048.pkcs8.pem"),
            &[
                fixture!("rsa2048.pub.pem"),
                fixture!("rsa2048.pub.der"),
                fixture!("rsa2048.pkcs1.pub.pem"),
                fixture!("rsa2048.pkcs1.pub.der"),
                fixture!("rsa2048.pub.jwk"),
            ],
        ),
        (fixture!("p256.pkcs8.pem"), &[fixture!("p256.pub.pem"), fixture!("p256.pub.der"), fixture!("p256.pub.jwk")]),
        (fixture!("p384.pkcs8.pem"), &[fixture!("p384.pub.pem"), fixture!("p384.pub.der"), fixture!("p384.pub.jwk")]),
        (fixture!("p521.pkcs8.pem"), &[fixture!("p521.pub.pem"), fixture!("p521.pub.der"), fixture!("p521.pub.jwk")]),
    ];
    for (secret, publics) in cases {
        let expected = private(secret).public_key();
        for bytes in publics {
            assert_eq!(public(bytes), RecipientKey::from(expected.clone()));
        }
    }
}

#[test]
fn jwk_kid_and_alg_are_kept() {
    let recipient = public(fixture!("p384.pub-kid.jwk"));
    assert_eq!((recipient.kid.as_deref(), recipient.jwk_alg.as_deref()), (Some("p384-test-kid"), None));
    let recipient = public(fixture!("rsa2048.pub-oaep256.jwk"));
    assert_eq!((recipient.kid.as_deref(), recipient.jwk_alg.as_deref()), (Some("rsa-oaep-256"), Some("RSA-OAEP-256")));
    let recipient = public(fixture!("p256.pub-a128kw.jwk"));
    assert_eq!(recipient.jwk_alg.as_deref(), Some("ECDH-ES+A128KW"));
}

#[test]
fn jwk_alg_must_suit_the_key() {
    assert_contains(&public_error(fixture!("rsa2048.pub-rs256.jwk")), "`alg` is `RS256`");
    assert_contains(&public_error(fixture!("p256.pub-rsaoaep.jwk")), "cannot wrap a key for a EC key");
}

#[test]
fn private_keys_are_refused_as_recipients() {
    for bytes in [
        fixture!("rsa2048.pkcs8.pem"),
        fixture!("rsa2048.pkcs8.der"),
        fixture!("rsa2048.pkcs1.pem"),
        fixture!("rsa2048.pkcs1.der"),
        fixture!("rsa2048.enc.pem"),
        fixture!("rsa2048.enc.der"),
        fixture!("rsa2048.legacy-enc.pem"),
        fixture!("rsa2048.priv.jwk"),
        fixture!("p256.sec1.pem"),
        fixture!("p256.sec1.der"),
        fixture!("p521.pkcs8.der"),
        fixture!("p384.priv.jwk"),
    ] {
        assert_contains(&public_error(bytes), "this is a private key, but a public key is needed");
    }
}

#[test]
fn public_keys_are_refused_for_decryption() {
    for bytes in [
        fixture!("rsa2048.pub.pem"),
        fixture!("rsa2048.pub.der"),
        fixture!("rsa2048.pkcs1.pub.pem"),
        fixture!("rsa2048.pkcs1.pub.der"),
        fixture!("rsa2048.pub.jwk"),
        fixture!("p256.pub.pem"),
        fixture!("p521.pub.der"),
        fixture!("p384.pub-kid.jwk"),
    ] {
        assert_contains(&private_error(bytes, Some(PASSWORD)), "this is a public key, but decryption needs");
    }
}

#[test]
fn certificates_are_recognised() {
    let pem = fixture!("rsa2048.crt.pem");
    assert_contains(&public_error(pem), "X.509 certificate");
    assert_contains(&private_error(pem, None), "X.509 certificate");
    let der = &pem::blocks(std::str::from_utf8(pem).unwrap()).unwrap()[0].der;
    assert_contains(&public_error(der), "X.509 certificate");
    assert_contains(&private_error(der, None), "X.509 certificate");
}

#[test]
fn encrypted_keys_need_the_right_password() {
    for bytes in [fixture!("rsa2048.enc.pem"), fixture!("rsa2048.enc.der"), fixture!("p256.enc.pem")] {
        assert_contains(&private_error(bytes, None), "this private key is encrypted; give its password");
        assert_contains(&private_error(bytes, Some(b"wrong")), "wrong password");
        assert_contains(&private_error(bytes, Some(b"")), "wrong password");
    }
    // A password given for a key that is not encrypted is ignored.
    parse_private_key(fixture!("p256.pkcs8.pem"), Some(b"unused"), "k").unwrap();
}

#[test]
fn costly_password_derivations_are_refused_before_running() {
    let started = std::time::Instant::now();
    assert_contains(&private_error(fixture!("rsa2048.enc-costly.pem"), Some(PASSWORD)), "cost more than any real");
    assert!(started.elapsed() < std::time::Duration::from_secs(2), "the 20 million rounds must not run");
}

#[test]
fn legacy_pem_encryption_is_refused_with_a_conversion_hint() {
    let message = private_error(fixture!("rsa2048.legacy-enc.pem"), Some(PASSWORD));
    assert_contains(&message, "legacy PEM encryption");
    assert_contains(&message, "openssl pkcs8 -topk8");
}

#[test]
fn unsupported_algorithms_and_curves_are_named() {
    assert_contains(&public_error(fixture!("secp256k1.pub.pem")), "unsupported curve secp256k1");
    assert_contains(&private_error(fixture!("secp256k1.pkcs8.pem"), None), "unsupported curve secp256k1");
    assert_contains(&public_error(fixture!("ed25519.pub.pem")), "unsupported key type Ed25519");
    assert_contains(&private_error(fixture!("ed25519.pkcs8.pem"), None), "unsupported key type Ed25519");
}

#[test]
fn small_rsa_keys_decrypt_but_are_not_wrapped_for() {
    assert_contains(&public_error(fixture!("rsa1024.pub.pem")), "1024 bits, too few");
    assert_eq!(private(fixture!("rsa1024.pkcs8.pem")).public_key().description(), "RSA-1024");
}

#[test]
fn malformed_jwks_are_explained() {
    let p256: serde_json::Value = serde_json::from_slice(fixture!("p256.priv.jwk")).unwrap();
    let with = |member: &str, value: serde_json::Value| {
        let mut jwk = p256.clone();
        jwk[member] = value;
        serde_json::to_vec(&jwk).unwrap()
    };
    let x = p256["x"].as_str().unwrap();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (br#"{"kty":"oct","k":"AAAA"}"#.to_vec(), "symmetric (`oct`) JWK"),
        (br#"{"kty":"OKP","crv":"Ed25519","x":"AAAA"}"#.to_vec(), "unsupported key type OKP"),
        (br#"{"keys":[]}"#.to_vec(), "JWK Set"),
        (br#"{"kty":"EC"#.to_vec(), "malformed JWK"),
        (br#"{"crv":"P-256"}"#.to_vec(), "no `kty`"),
        (with("crv", "secp256k1".into()), "unsupported curve secp256k1"),
        (with("x", x[..x.len() - 3].into()), "must have 32 bytes"),
        (with("d", "!!".into()), "`d` is not base64url"),
        (with("d", "AQ".into()), "`d` must have 32 bytes"),
        (with("y", p256["x"].clone()), "not a point"),
        (br#"{"kty":"RSA","e":"AQAB","d":"AQAB"}"#.to_vec(), "no `n` member"),
    ];
    for (bytes, expected) in cases {
        assert_contains(&private_error(&bytes, None), expected);
    }
    // A private key whose `x`/`y` belong to another key: d = 1, whose public key is the generator.
    let mut one = [0u8; 32];
    one[31] = 1;
    use base64::Engine;
    let d = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(one);
    assert_contains(&private_error(&with("d", d.into()), None), "not the public key of its `d`");
}

#[test]
fn garbage_is_not_a_key() {
    assert_contains(&public_error(b"\x30\x03\x02\x01\x01"), "not a key");
    assert_contains(&private_error(b"hello world", None), "not a key");
    assert_contains(&public_error(b" \n"), "empty");
    assert_contains(&private_error(&vec![b'x'; MAX_KEY_FILE_LEN + 1], None), "larger than 1 MiB");
    assert_contains(
        &public_error(b"-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n"),
        "unsupported PEM block",
    );
    assert_contains(
        &public_error(b"-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n"),
        "holds no key",
    );
}

#[test]
fn debug_never_shows_private_material() {
    let key = private(fixture!("rsa2048.pkcs8.pem"));
    assert_eq!(format!("{key:?}"), "PrivateKey(RSA-2048, [REDACTED])");
    assert_eq!(format!("{:?}", private(fixture!("p521.sec1.pem"))), "PrivateKey(EC P-521, [REDACTED])");
}

#[test]
fn coordinates_round_trip() {
    for name in [fixture!("p256.pub.pem"), fixture!("p384.pub.pem"), fixture!("p521.pub.pem")] {
        let key = public(name).key;
        let (curve, x, y) = key.coordinates().unwrap();
        assert_eq!((x.len(), y.len()), (curve.field_len(), curve.field_len()));
        assert_eq!(PublicKey::from_coordinates(curve, &x, &y), Some(key));
        assert_eq!(PublicKey::from_coordinates(curve, &y, &x), None, "swapped coordinates are not on the curve");
    }
    assert_eq!(public(fixture!("rsa2048.pub.pem")).key.coordinates(), None);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Key parsing never panics, whatever the bytes, and any key it returns describes itself.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..1024)) {
            if let Ok(recipient) = parse_public_key(&bytes, "k") {
                let _ = recipient.key.description();
            }
            let _ = parse_private_key(&bytes, Some(b"p"), "k");
        }

        /// One changed byte in a real key file: an error or a key, never a panic.
        #[test]
        fn a_changed_byte_never_panics(file in 0usize..6, at in any::<prop::sample::Index>(), byte in any::<u8>()) {
            let files = [
                fixture!("rsa2048.pkcs1.der"),
                fixture!("p256.sec1.pem"),
                fixture!("p521.pkcs8.der"),
                fixture!("p384.priv.jwk"),
                fixture!("rsa2048.pub.der"),
                fixture!("p256.enc.pem"),
            ];
            let mut bytes = files[file].to_vec();
            let at = at.index(bytes.len());
            bytes[at] = byte;
            let _ = parse_public_key(&bytes, "k");
            let _ = parse_private_key(&bytes, Some(PASSWORD), "k");
        }
    }
}
