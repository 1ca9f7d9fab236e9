//! Fuzzes the JWE reader: on arbitrary bytes `ocicrypt::jwe::unwrap` never panics, and with the fixture keys it
//! opens only what was encrypted for them: the known-answer vectors of `tests/fixtures/jwe/` (the seed corpus) and
//! variants of them that keep every authenticated byte, which must decrypt to the vectors' plaintext (every
//! content tag is checked, so nothing else can open).

use cryptadm::crypto::keys::parse_private_key;
use cryptadm::ocicrypt::jwe;
use std::sync::OnceLock;

fn keys() -> &'static [cryptadm::crypto::keys::PrivateKey] {
    static KEYS: OnceLock<Vec<cryptadm::crypto::keys::PrivateKey>> = OnceLock::new();
    KEYS.get_or_init(|| {
        [
            &include_bytes!("../../tests/fixtures/keys/rsa2048.pkcs8.pem")[..],
            &include_bytes!("../../tests/fixtures/keys/p256.pkcs8.pem")[..],
            &include_bytes!("../../tests/fixtures/keys/p521.sec1.pem")[..],
        ]
        .into_iter()
        .map(|pem| parse_private_key(pem, None, "fixture").expect("fixture keys parse"))
        .collect()
    })
}

/// The plaintext of every vector in tests/fixtures/jwe/ (see generate.py there).
const KNOWN_PLAINTEXT: &[u8] =
    br#"{"symkey":"known-answer vector","cipheroptions":{"nonce":"AAAAAAAAAAAAAAAAAAAAAA=="}}"#;

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    if let Ok(Some(plaintext)) = jwe::unwrap(keys(), data) {
        assert_eq!(&plaintext[..], KNOWN_PLAINTEXT, "a JWE not made for the fixture keys opened with them");
    }
}
