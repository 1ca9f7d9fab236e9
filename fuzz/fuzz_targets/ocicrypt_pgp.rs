//! Fuzzes the OpenPGP inputs of the `pgp` key wrapper: keyrings (binary or armoured) and wrapped keys (the
//! annotation's message). Neither may panic; a message can never unwrap without a key.
#![no_main]

use cryptadm::ocicrypt::pgp::{parse_keyring, unwrap};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = parse_keyring(data, "fuzz");
    assert!(!matches!(unwrap(&[], &[], data), Ok(Some(_))), "unwrapped without a key");
});
