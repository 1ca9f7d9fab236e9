//! Fuzzes the JWE reader: on arbitrary bytes `ocicrypt::jwe::unwrap` never panics, and with keys that belong to no
//! recipient it never claims success (it cannot: every content tag is checked).
#![no_main]

use cryptadm::crypto::keys::parse_private_key;
use cryptadm::ocicrypt::jwe;
use libfuzzer_sys::fuzz_target;
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

fuzz_target!(|data: &[u8]| {
    if let Ok(Some(_)) = jwe::unwrap(keys(), data) {
        panic!("a JWE built without the fixture keys opened with them");
    }
});
