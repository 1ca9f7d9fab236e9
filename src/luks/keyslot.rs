//! Keyslot material (docs/formats.md): KDF(passphrase) keys the area cipher, which encrypts the AF-split
//! volume key in 512-byte units with IVs counted from 0 at the start of the area.

use super::af;
use super::cipher::SectorCipher;
use super::hash::Hash;
use super::{Error, Kdf, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use zeroize::Zeroizing;

/// Where and how one keyslot's material is stored.
pub struct Material<'a> {
    /// Cipher spec of the material (`aes-xts-plain64`).
    pub cipher: &'a str,
    /// Bytes of the KDF output that keys it.
    pub cipher_key_len: usize,
    /// Bytes of the stored volume key.
    pub key_len: usize,
    /// AF stripes.
    pub stripes: u32,
    /// AF diffuse hash.
    pub af_hash: Hash,
    /// Absolute byte offset on the device.
    pub offset: u64,
}

impl Material<'_> {
    /// Bytes stored: the split key rounded up to whole 512-byte sectors.
    pub fn stored_len(&self) -> usize {
        (self.key_len * self.stripes as usize).div_ceil(512) * 512
    }

    fn cipher(&self, kdf: &Kdf, salt: &[u8], passphrase: &[u8]) -> Result<SectorCipher> {
        let mut key = Zeroizing::new(vec![0u8; self.cipher_key_len]);
        kdf.derive(passphrase, salt, &mut key)?;
        SectorCipher::new(self.cipher, &key)
    }

    /// Decrypts the material with `passphrase` and merges it: a candidate volume key, to be checked against the
    /// digest (a wrong passphrase gives garbage, not an error).
    pub fn recover(&self, file: &File, kdf: &Kdf, salt: &[u8], passphrase: &[u8]) -> Result<Zeroizing<Vec<u8>>> {
        super::cipher::check_spec(self.cipher, self.cipher_key_len)?;
        let mut data = Zeroizing::new(vec![0u8; self.stored_len()]);
        file.read_exact_at(&mut data, self.offset).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => Error::Truncated("keyslot material lies past the end".into()),
            _ => Error::Io { context: "reading keyslot material".into(), source: e },
        })?;
        let cipher = self.cipher(kdf, salt, passphrase)?;
        cipher.decrypt(&mut data, 512, 0);
        Ok(af::merge(&data, self.key_len, self.stripes, self.af_hash))
    }

    /// Splits, encrypts and writes `key` as this keyslot's material, then flushes it to the device.
    pub fn store(&self, file: &File, kdf: &Kdf, salt: &[u8], passphrase: &[u8], key: &[u8]) -> Result<()> {
        let split = af::split(key, self.stripes, self.af_hash);
        let mut data = Zeroizing::new(vec![0u8; self.stored_len()]);
        data[..split.len()].copy_from_slice(&split);
        // The tail of the last sector is random, as cryptsetup leaves it, rather than zero (no known plaintext).
        crate::crypto::random::fill(&mut data[split.len()..]);
        let cipher = self.cipher(kdf, salt, passphrase)?;
        cipher.encrypt(&mut data, 512, 0);
        file.write_all_at(&data, self.offset).map_err(Error::io("writing keyslot material"))?;
        file.sync_data().map_err(Error::io("flushing keyslot material"))
    }
}

/// Overwrites `len` bytes at `offset` with zeros and flushes.
pub fn zero(file: &File, offset: u64, len: u64) -> Result<()> {
    let zeros = vec![0u8; len as usize];
    file.write_all_at(&zeros, offset).map_err(Error::io("wiping keyslot material"))?;
    file.sync_data().map_err(Error::io("flushing the wiped keyslot"))
}

/// Overwrites `len` bytes at `offset` with random data and flushes (cryptsetup's wipe on non-rotational devices).
pub fn wipe(file: &File, offset: u64, len: u64) -> Result<()> {
    const CHUNK: u64 = 1 << 20;
    let mut buf = vec![0u8; CHUNK.min(len) as usize];
    let mut done = 0;
    while done < len {
        let n = CHUNK.min(len - done) as usize;
        crate::crypto::random::fill(&mut buf[..n]);
        file.write_all_at(&buf[..n], offset + done).map_err(Error::io("wiping keyslot material"))?;
        done += n as u64;
    }
    file.sync_data().map_err(Error::io("flushing the wiped keyslot"))
}
