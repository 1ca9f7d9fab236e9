//! Keyslot KDFs (spec luks.md §4.4): PBKDF2 with a named hash, Argon2i and Argon2id from
//! [`crate::crypto::argon2`], and their limits (§5.1).

use super::hash::Hash;
use super::{Error, Kdf, Result};
use crate::crypto::argon2::{self, Argon2Variant};

/// cryptsetup's minimum PBKDF2 iterations.
pub const PBKDF2_MIN_ITERATIONS: u32 = 1000;
/// cryptsetup's minimum Argon2 time cost.
pub const ARGON2_MIN_TIME: u32 = 4;
/// cryptsetup's minimum Argon2 memory (KiB).
pub const ARGON2_MIN_MEMORY_KIB: u32 = 32;
/// cryptsetup's maximum Argon2 memory (KiB): 4 GiB.
pub const ARGON2_MAX_MEMORY_KIB: u32 = 4 * 1024 * 1024;
/// cryptsetup's maximum Argon2 lanes.
pub const ARGON2_MAX_PARALLEL: u32 = 4;

impl Kdf {
    /// The cryptsetup name (`pbkdf2`, `argon2i`, `argon2id`).
    pub fn name(&self) -> &'static str {
        match self {
            Kdf::Pbkdf2 { .. } => "pbkdf2",
            Kdf::Argon2i { .. } => "argon2i",
            Kdf::Argon2id { .. } => "argon2id",
        }
    }

    /// Refuses parameters cryptsetup would refuse for a new keyslot.
    pub fn check_limits(&self) -> Result<()> {
        match self {
            Kdf::Pbkdf2 { hash, iterations } => {
                Hash::from_name(hash)?;
                if *iterations < PBKDF2_MIN_ITERATIONS {
                    return Err(Error::InvalidParameter(format!(
                        "pbkdf2 iterations {iterations} below the minimum {PBKDF2_MIN_ITERATIONS}"
                    )));
                }
            }
            Kdf::Argon2i { time, memory_kib, parallel } | Kdf::Argon2id { time, memory_kib, parallel } => {
                if *time < ARGON2_MIN_TIME {
                    return Err(Error::InvalidParameter(format!(
                        "argon2 time {time} below the minimum {ARGON2_MIN_TIME}"
                    )));
                }
                if *parallel == 0 || *parallel > ARGON2_MAX_PARALLEL {
                    return Err(Error::InvalidParameter(format!("argon2 parallel {parallel} outside 1–4")));
                }
                let min = ARGON2_MIN_MEMORY_KIB.max(8 * parallel);
                if *memory_kib < min || *memory_kib > ARGON2_MAX_MEMORY_KIB {
                    return Err(Error::InvalidParameter(format!(
                        "argon2 memory {memory_kib} KiB outside {min}–{ARGON2_MAX_MEMORY_KIB}"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Derives `out.len()` bytes from `passphrase` and `salt`.
    pub fn derive(&self, passphrase: &[u8], salt: &[u8], out: &mut [u8]) -> Result<()> {
        let (variant, time, memory, parallel) = match self {
            Kdf::Pbkdf2 { hash, iterations } => {
                Hash::from_name(hash)?.pbkdf2(passphrase, salt, *iterations, out);
                return Ok(());
            }
            Kdf::Argon2i { time, memory_kib, parallel } => (Argon2Variant::Argon2i, time, memory_kib, parallel),
            Kdf::Argon2id { time, memory_kib, parallel } => (Argon2Variant::Argon2id, time, memory_kib, parallel),
        };
        argon2::derive(variant, passphrase, salt, *time, *memory, *parallel, out).map_err(|e| match e {
            argon2::Argon2Error::OutOfMemory(kib) => {
                Error::InvalidParameter(format!("cannot allocate {kib} KiB for argon2"))
            }
            other => Error::InvalidParameter(other.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_follow_cryptsetup() {
        assert!(Kdf::Pbkdf2 { hash: "sha256".into(), iterations: 999 }.check_limits().is_err());
        assert!(Kdf::Pbkdf2 { hash: "sha256".into(), iterations: 1000 }.check_limits().is_ok());
        assert!(Kdf::Pbkdf2 { hash: "md5".into(), iterations: 1000 }.check_limits().is_err());
        assert!(Kdf::Argon2id { time: 3, memory_kib: 32, parallel: 1 }.check_limits().is_err());
        assert!(Kdf::Argon2id { time: 4, memory_kib: 32, parallel: 4 }.check_limits().is_ok());
        assert!(Kdf::Argon2i { time: 4, memory_kib: 32, parallel: 5 }.check_limits().is_err());
    }
}
