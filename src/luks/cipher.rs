//! dm-crypt cipher specs mapped to sector ciphers: `aes-xts-plain64` ([`crate::crypto::xts`], the default of
//! cryptsetup and QEMU, and the only mode cryptadm writes for new volumes) and `aes-cbc-essiv:sha256`
//! ([`crate::crypto::cbc_essiv`], cryptsetup's CBC mode and the cipher of old LUKS1 volumes, so that their
//! keyslots rotate). Anything else is reported as unsupported (exit 3) rather than guessed at.

use super::{Error, Result};
use crate::crypto::cbc_essiv::CbcEssiv;
use crate::crypto::xts::XtsPlain64;

/// A keyed sector cipher.
pub struct SectorCipher {
    mode: Mode,
}

enum Mode {
    Xts(XtsPlain64),
    CbcEssiv(CbcEssiv),
}

/// The two families of spec.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Spec {
    XtsPlain64,
    CbcEssivSha256,
}

/// Checks that `spec` is one we implement, with a key of `key_bytes`.
///
/// `aes-xts-plain64:sha256` is accepted as plain64: QEMU writes that mode when given an IV-generator hash (Nova
/// always passes `ivgen-hash-alg=sha256`), and plain64 ignores the hash.
pub fn check_spec(spec: &str, key_bytes: usize) -> Result<()> {
    parse(spec, key_bytes).map(drop)
}

/// The family of `spec` with a key of `key_bytes`; unsupported specs and key sizes are errors.
pub(super) fn parse(spec: &str, key_bytes: usize) -> Result<Spec> {
    if spec.eq_ignore_ascii_case("aes-cbc-essiv:sha256") {
        if ![16, 24, 32].contains(&key_bytes) {
            return Err(Error::unsupported(format!("aes-cbc-essiv:sha256 with a {}-bit key", key_bytes * 8)));
        }
        return Ok(Spec::CbcEssivSha256);
    }
    let base = match spec.split_once(':') {
        Some((base, hash)) if !hash.is_empty() && hash.bytes().all(|b| b.is_ascii_alphanumeric()) => base,
        _ => spec,
    };
    if !base.eq_ignore_ascii_case("aes-xts-plain64") {
        return Err(Error::unsupported(format!(
            "cipher `{spec}` (only aes-xts-plain64 and aes-cbc-essiv:sha256 are implemented)"
        )));
    }
    if key_bytes != 32 && key_bytes != 64 {
        return Err(Error::unsupported(format!("aes-xts-plain64 with a {}-bit key", key_bytes * 8)));
    }
    Ok(Spec::XtsPlain64)
}

/// The keyed cipher of a volume's payload, streamed over threads. Only `aes-xts-plain64` is implemented for
/// payloads: CBC-ESSIV is implemented for keyslots (so that old volumes rotate), but no reference tool here can
/// write a CBC payload that cryptadm's reading of it could be checked against, so `disk decrypt` and `convert`
/// refuse it.
pub struct PayloadCipher(XtsPlain64);

impl PayloadCipher {
    /// Keys the payload cipher named by `spec`; CBC-ESSIV is refused (exit 3).
    pub fn new(spec: &str, key: &[u8]) -> Result<PayloadCipher> {
        match parse(spec, key.len())? {
            Spec::XtsPlain64 => {
                Ok(PayloadCipher(XtsPlain64::new(key).map_err(|e| Error::InvalidParameter(e.to_string()))?))
            }
            Spec::CbcEssivSha256 => Err(Error::unsupported(format!(
                "payload cipher `{spec}` (payloads are read and written with aes-xts-plain64 only; keyslots of \
                 this cipher rotate)"
            ))),
        }
    }

    /// Encrypts whole `unit`-byte units in place over `threads` threads; the first unit's IV is `first_iv`.
    pub fn encrypt_parallel(&self, data: &mut [u8], unit: usize, first_iv: u64, threads: usize) {
        self.0.encrypt_units_parallel(data, unit, first_iv, threads);
    }

    /// Decrypts whole units in place over `threads` threads.
    pub fn decrypt_parallel(&self, data: &mut [u8], unit: usize, first_iv: u64, threads: usize) {
        self.0.decrypt_units_parallel(data, unit, first_iv, threads);
    }
}

impl SectorCipher {
    /// Keys the cipher named by `spec`.
    pub fn new(spec: &str, key: &[u8]) -> Result<SectorCipher> {
        let mode = match parse(spec, key.len())? {
            Spec::XtsPlain64 => Mode::Xts(XtsPlain64::new(key).map_err(|e| Error::InvalidParameter(e.to_string()))?),
            Spec::CbcEssivSha256 => Mode::CbcEssiv(
                CbcEssiv::new(key).ok_or_else(|| Error::InvalidParameter("an AES key of 16, 24 or 32 bytes".into()))?,
            ),
        };
        Ok(SectorCipher { mode })
    }

    /// Encrypts whole `unit`-byte units in place; the first unit's IV is `first_iv` (512-byte sectors).
    pub fn encrypt(&self, data: &mut [u8], unit: usize, first_iv: u64) {
        match &self.mode {
            Mode::Xts(xts) => xts.encrypt_units(data, unit, first_iv),
            Mode::CbcEssiv(cbc) => cbc.encrypt_units(data, unit, first_iv),
        }
    }

    /// Decrypts whole units in place.
    pub fn decrypt(&self, data: &mut [u8], unit: usize, first_iv: u64) {
        match &self.mode {
            Mode::Xts(xts) => xts.decrypt_units(data, unit, first_iv),
            Mode::CbcEssiv(cbc) => cbc.decrypt_units(data, unit, first_iv),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The family is derived once from the spec: CBC-ESSIV keys keyslots and never a payload (whatever the case
    /// of its name); XTS keys both.
    #[test]
    fn cbc_essiv_keys_keyslots_and_never_payloads() {
        for spec in ["aes-cbc-essiv:sha256", "AES-CBC-ESSIV:SHA256"] {
            assert_eq!(parse(spec, 32).unwrap(), Spec::CbcEssivSha256);
            assert!(SectorCipher::new(spec, &[7; 32]).is_ok());
            let Err(refused) = PayloadCipher::new(spec, &[7; 32]) else { panic!("{spec} keyed a payload") };
            assert!(refused.to_string().contains("aes-xts-plain64 only"), "{refused}");
        }
        assert_eq!(parse("aes-xts-plain64:sha256", 64).unwrap(), Spec::XtsPlain64);
        let key: Vec<u8> = (0..64).collect();
        assert!(PayloadCipher::new("aes-xts-plain64", &key).is_ok());
        assert!(parse("aes-cbc-plain", 32).is_err());
    }

    /// The payload cipher's parallel path is XTS itself: the same bytes as the keyslot path's.
    #[test]
    fn the_payload_cipher_is_the_sector_ciphers_xts() {
        let key: Vec<u8> = (100..164).collect();
        let mut parallel = (0..4096u32).map(|i| i as u8).collect::<Vec<_>>();
        let mut single = parallel.clone();
        PayloadCipher::new("aes-xts-plain64", &key).unwrap().encrypt_parallel(&mut parallel, 512, 9, 3);
        SectorCipher::new("aes-xts-plain64", &key).unwrap().encrypt(&mut single, 512, 9);
        assert_eq!(parallel, single);
        PayloadCipher::new("aes-xts-plain64", &key).unwrap().decrypt_parallel(&mut parallel, 512, 9, 2);
        assert_eq!(parallel, (0..4096u32).map(|i| i as u8).collect::<Vec<_>>());
    }
}
