//! Fuzzes what `ocicrypt::key_manager` reads from others: the key-manager blob under an image's
//! `…enc.keys.provider.cryptadm` annotation (written by whoever built the image) and the key-provider request
//! containerd, skopeo or podman send on standard input. Neither may panic, and every key a blob names parses
//! back from its own reference to the same key.

use cryptadm::ocicrypt::key_manager::{self, ManagedKey};

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    if let Ok(keys) = key_manager::recipients(data) {
        for key in keys {
            let again = ManagedKey::parse(&key.reference()).expect("a key read from a blob parses from its reference");
            assert_eq!(again, key);
        }
    }
    let _ = key_manager::parse_request(data);
}
