//! The volume-key digest (docs/formats.md): PBKDF2(hash, volume key, salt, iterations), compared over the
//! stored digest's length so both 32-byte (LUKS2) and 20-byte (LUKS1, converted LUKS1) digests work.

use super::hash::Hash;
use super::kdf::PBKDF2_MAX_ITERATIONS;
use super::{Error, Result};
use subtle::ConstantTimeEq;

/// Whether `key` matches `expected`. Iterations above [`PBKDF2_MAX_ITERATIONS`] are refused before computing,
/// as for keyslots.
pub fn matches(hash: Hash, iterations: u32, salt: &[u8], expected: &[u8], key: &[u8]) -> Result<bool> {
    if iterations > PBKDF2_MAX_ITERATIONS {
        return Err(Error::InvalidParameter(format!(
            "digest pbkdf2 iterations {iterations} above the ceiling {PBKDF2_MAX_ITERATIONS}"
        )));
    }
    if expected.is_empty() {
        return Ok(false);
    }
    let mut out = vec![0u8; expected.len()];
    hash.pbkdf2(key, salt, iterations, &mut out);
    Ok(out.ct_eq(expected).into())
}

/// Computes a digest of `len` bytes with a fresh 32-byte salt; returns (salt, digest).
pub fn create(hash: Hash, iterations: u32, key: &[u8], len: usize) -> Result<([u8; 32], Vec<u8>)> {
    let salt = crate::crypto::random::bytes::<32>();
    let mut out = vec![0u8; len];
    hash.pbkdf2(key, &salt, iterations, &mut out);
    Ok((salt, out))
}
