//! Fuzzes the OpenPGP inputs of the `pgp` key wrapper: keyrings (binary or armoured) and wrapped keys (the
//! annotation's message). Neither may panic; a message can never unwrap without a key.

use cryptadm::ocicrypt::pgp::{parse_keyring, unwrap};

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    let _ = parse_keyring(data, "fuzz");
    assert!(!matches!(unwrap(&[], &[], data), Ok(Some(_))), "unwrapped without a key");
}
