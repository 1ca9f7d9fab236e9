//! Fuzzes key loading: `parse_public_key` and `parse_private_key` never panic on arbitrary bytes, and a private
//! key they accept has a public key that describes itself; key-file recognition (`keyfiles::kind_of`, what
//! `secret generate-k8s` checks, and a sealed key's clevis JWE, read without contacting anything) never panics
//! either.

use cryptadm::crypto::keys::{parse_private_key, parse_public_key};

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    if let Ok(recipient) = parse_public_key(data, "fuzz") {
        let _ = recipient.key.description();
    }
    if let Ok(key) = parse_private_key(data, Some(b"password"), "fuzz") {
        let _ = format!("{key:?}");
    }
    use cryptadm::ocicrypt::{keyfiles, sealed};
    if sealed::looks_sealed(data) {
        let _ = sealed::describe(data, "fuzz");
    }
    let file = keyfiles::KeyFileRef { source: "fuzz", bytes: data };
    for destination in [keyfiles::Destination::NodeKeysDirectory, keyfiles::Destination::WithPassword] {
        let _ = keyfiles::kind_of(&file, destination, None);
    }
}
