//! Fuzzes key loading: `parse_public_key` and `parse_private_key` never panic on arbitrary bytes, and a private
//! key they accept has a public key that describes itself.

use cryptadm::crypto::keys::{parse_private_key, parse_public_key};

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    if let Ok(recipient) = parse_public_key(data, "fuzz") {
        let _ = recipient.key.description();
    }
    if let Ok(key) = parse_private_key(data, Some(b"password"), "fuzz") {
        let _ = format!("{key:?}");
    }
}
