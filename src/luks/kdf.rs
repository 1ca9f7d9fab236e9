//! Keyslot KDFs (docs/formats.md): PBKDF2 with a named hash, Argon2i and Argon2id from
//! [`crate::crypto::argon2`], and their limits .

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
/// cryptadm's ceiling on PBKDF2 iterations when a header is *read* (keyslots and digests): INT_MAX, above which
/// cryptsetup's OpenSSL backend fails ("PBKDF2 iteration value overflow"). cryptsetup's own 2-second benchmark
/// writes a few million.
pub const PBKDF2_MAX_ITERATIONS: u32 = i32::MAX as u32;
/// cryptadm's ceiling on Argon2 work when a header is read: time × memory in KiB, i.e. 256 passes over 4 GiB
/// (2^30 KiB). cryptsetup's benchmark writes time 4 at up to 4 GiB (2^24), so legitimate headers stay far below;
/// cryptsetup has no ceiling and runs a header asking time 2^32 for hours, ignoring SIGTERM.
pub const ARGON2_MAX_WORK_KIB: u64 = 1 << 30;

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

    /// Refuses parameters no legitimate header carries, before anything is allocated: cryptsetup's set-time
    /// maxima (Argon2 memory ≤ 4 GiB, 1–4 lanes) and cryptadm's ceilings on work ([`PBKDF2_MAX_ITERATIONS`],
    /// [`ARGON2_MAX_WORK_KIB`]). cryptsetup checks these only when it writes a keyslot and runs whatever a header
    /// asks when unlocking; cryptadm checks them every time a KDF runs, so an edited header cannot make it
    /// allocate 8 GiB or compute for hours. Minima are not checked here: old headers may be below today's.
    pub fn check_run_limits(&self) -> Result<()> {
        match self {
            Kdf::Pbkdf2 { iterations, .. } => {
                if *iterations > PBKDF2_MAX_ITERATIONS {
                    return Err(Error::InvalidParameter(format!(
                        "pbkdf2 iterations {iterations} above the ceiling {PBKDF2_MAX_ITERATIONS}"
                    )));
                }
            }
            Kdf::Argon2i { time, memory_kib, parallel } | Kdf::Argon2id { time, memory_kib, parallel } => {
                if *memory_kib > ARGON2_MAX_MEMORY_KIB {
                    return Err(Error::InvalidParameter(format!(
                        "argon2 memory {memory_kib} KiB above cryptsetup's maximum {ARGON2_MAX_MEMORY_KIB} KiB (4 GiB)"
                    )));
                }
                if *parallel == 0 || *parallel > ARGON2_MAX_PARALLEL {
                    return Err(Error::InvalidParameter(format!(
                        "argon2 parallel {parallel} outside cryptsetup's 1–{ARGON2_MAX_PARALLEL}"
                    )));
                }
                let work = u64::from(*time) * u64::from(*memory_kib);
                if work > ARGON2_MAX_WORK_KIB {
                    return Err(Error::InvalidParameter(format!(
                        "argon2 time {time} × memory {memory_kib} KiB above the ceiling of {ARGON2_MAX_WORK_KIB} KiB \
                         (256 passes over 4 GiB)"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Derives `out.len()` bytes from `passphrase` and `salt`, after [`Kdf::check_run_limits`].
    pub fn derive(&self, passphrase: &[u8], salt: &[u8], out: &mut [u8]) -> Result<()> {
        self.check_run_limits()?;
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

    #[test]
    fn absurd_headers_are_refused_before_the_kdf_runs() {
        let mut out = [0u8; 32];
        let huge = Kdf::Argon2id { time: 4, memory_kib: 8 * 1024 * 1024, parallel: 1 };
        assert!(matches!(huge.derive(b"p", &[0; 32], &mut out), Err(Error::InvalidParameter(_))));
        let long = Kdf::Argon2id { time: u32::MAX, memory_kib: 32 * 1024, parallel: 1 };
        assert!(matches!(long.derive(b"p", &[0; 32], &mut out), Err(Error::InvalidParameter(_))));
        let lanes = Kdf::Argon2i { time: 4, memory_kib: 1024, parallel: 8 };
        assert!(lanes.check_run_limits().is_err());
        let pbkdf2 = Kdf::Pbkdf2 { hash: "sha256".into(), iterations: u32::MAX };
        assert!(matches!(pbkdf2.derive(b"p", &[0; 32], &mut out), Err(Error::InvalidParameter(_))));
        assert!(Kdf::Argon2id { time: 4, memory_kib: 4 * 1024 * 1024, parallel: 4 }.check_run_limits().is_ok());
        assert!(Kdf::Pbkdf2 { hash: "sha256".into(), iterations: 5_000_000 }.check_run_limits().is_ok());
    }
}
