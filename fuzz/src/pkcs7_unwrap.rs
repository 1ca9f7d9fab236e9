//! Fuzzes the PKCS#7 envelope reader (the `keys.pkcs7` annotation of an image, untrusted input): on arbitrary
//! bytes it must never panic, and without keys nothing can fit.

use cryptadm::ocicrypt::pkcs7;

/// One fuzz input: panics (or fails an assertion) on a bug, returns otherwise.
pub fn run(data: &[u8]) {
    // With no keys the whole envelope is still parsed: parsing comes before any key is tried.
    if let Ok(unwrapped) = pkcs7::unwrap(&[], data) {
        assert!(unwrapped.is_none(), "an envelope unwrapped without a key");
    }
}
