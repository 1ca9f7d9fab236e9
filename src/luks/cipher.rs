//! dm-crypt cipher specs (`aes-xts-plain64`) mapped to the sector cipher in [`crate::crypto::xts`].
//!
//! Only AES-XTS with the plain64 IV is implemented: it is the default of cryptsetup and QEMU, and the only mode
//! cryptadm writes. Anything else is reported as unsupported (exit 3) rather than guessed at.

use super::{Error, Result};
use crate::crypto::xts::XtsPlain64;

/// A keyed sector cipher.
pub struct SectorCipher {
    xts: XtsPlain64,
}

/// Checks that `spec` is one we implement, with a key of `key_bytes`.
///
/// `aes-xts-plain64:sha256` is accepted as plain64: QEMU writes that mode when given an IV-generator hash (Nova
/// always passes `ivgen-hash-alg=sha256`), and plain64 ignores the hash.
pub fn check_spec(spec: &str, key_bytes: usize) -> Result<()> {
    let base = match spec.split_once(':') {
        Some((base, hash)) if !hash.is_empty() && hash.bytes().all(|b| b.is_ascii_alphanumeric()) => base,
        _ => spec,
    };
    if !base.eq_ignore_ascii_case("aes-xts-plain64") {
        return Err(Error::unsupported(format!("cipher `{spec}` (only aes-xts-plain64 is implemented)")));
    }
    if key_bytes != 32 && key_bytes != 64 {
        return Err(Error::unsupported(format!("aes-xts-plain64 with a {}-bit key", key_bytes * 8)));
    }
    Ok(())
}

impl SectorCipher {
    /// Keys the cipher named by `spec`.
    pub fn new(spec: &str, key: &[u8]) -> Result<SectorCipher> {
        check_spec(spec, key.len())?;
        let xts = XtsPlain64::new(key).map_err(|e| Error::InvalidParameter(e.to_string()))?;
        Ok(SectorCipher { xts })
    }

    /// Encrypts whole `unit`-byte units in place; the first unit's IV is `first_iv` (512-byte sectors).
    pub fn encrypt(&self, data: &mut [u8], unit: usize, first_iv: u64) {
        self.xts.encrypt_units(data, unit, first_iv);
    }

    /// Decrypts whole units in place.
    pub fn decrypt(&self, data: &mut [u8], unit: usize, first_iv: u64) {
        self.xts.decrypt_units(data, unit, first_iv);
    }

    /// [`Self::encrypt`] spread over `threads` threads (payload streaming).
    pub fn encrypt_parallel(&self, data: &mut [u8], unit: usize, first_iv: u64, threads: usize) {
        self.xts.encrypt_units_parallel(data, unit, first_iv, threads);
    }

    /// [`Self::decrypt`] spread over `threads` threads.
    pub fn decrypt_parallel(&self, data: &mut [u8], unit: usize, first_iv: u64, threads: usize) {
        self.xts.decrypt_units_parallel(data, unit, first_iv, threads);
    }
}
