//! AES-CBC with the ESSIV IV generator (`aes-cbc-essiv:sha256`), the cipher of cryptsetup's CBC keyslots and of
//! old LUKS1 volumes: each unit is CBC-encrypted on its own, with IV = AES-256 under SHA-256(key) of the unit's
//! sector number (64-bit little-endian, zero-padded to 16 bytes). Unit `i` has sector number
//! `first_iv + i * (unit / 512)`, as dm-crypt counts.

use aes::cipher::{BlockDecrypt, BlockEncrypt, KeyInit, generic_array::GenericArray};
use aes::{Aes128, Aes192, Aes256};
use sha2::Digest;

enum Key {
    Aes128(Aes128),
    Aes192(Aes192),
    Aes256(Aes256),
}

/// A keyed AES-CBC-ESSIV(SHA-256) sector cipher.
pub struct CbcEssiv {
    key: Key,
    essiv: Aes256,
}

impl CbcEssiv {
    /// A 16-, 24- or 32-byte AES key; `None` for another length.
    pub fn new(key: &[u8]) -> Option<Self> {
        let cipher = match key.len() {
            16 => Key::Aes128(Aes128::new(GenericArray::from_slice(key))),
            24 => Key::Aes192(Aes192::new(GenericArray::from_slice(key))),
            32 => Key::Aes256(Aes256::new(GenericArray::from_slice(key))),
            _ => return None,
        };
        let mut salt = sha2::Sha256::digest(key);
        let essiv = Aes256::new(&salt);
        zeroize::Zeroize::zeroize(salt.as_mut_slice());
        Some(Self { key: cipher, essiv })
    }

    fn iv(&self, sector: u64) -> [u8; 16] {
        let mut block = GenericArray::from([0u8; 16]);
        block[..8].copy_from_slice(&sector.to_le_bytes());
        self.essiv.encrypt_block(&mut block);
        block.into()
    }

    fn encrypt_block(&self, block: &mut [u8]) {
        let block = GenericArray::from_mut_slice(block);
        match &self.key {
            Key::Aes128(k) => k.encrypt_block(block),
            Key::Aes192(k) => k.encrypt_block(block),
            Key::Aes256(k) => k.encrypt_block(block),
        }
    }

    fn decrypt_block(&self, block: &mut [u8]) {
        let block = GenericArray::from_mut_slice(block);
        match &self.key {
            Key::Aes128(k) => k.decrypt_block(block),
            Key::Aes192(k) => k.decrypt_block(block),
            Key::Aes256(k) => k.decrypt_block(block),
        }
    }

    /// Encrypts whole `unit`-byte units in place (`data.len()` a multiple of `unit`, itself a multiple of 512).
    pub fn encrypt_units(&self, data: &mut [u8], unit: usize, first_iv: u64) {
        assert!(unit.is_multiple_of(512) && data.len().is_multiple_of(unit), "whole units of whole sectors");
        for (index, chunk) in data.chunks_exact_mut(unit).enumerate() {
            let mut previous = self.iv(first_iv + (index * unit / 512) as u64);
            for block in chunk.chunks_exact_mut(16) {
                block.iter_mut().zip(previous).for_each(|(b, p)| *b ^= p);
                self.encrypt_block(block);
                previous.copy_from_slice(block);
            }
        }
    }

    /// Decrypts whole units in place; the inverse of [`Self::encrypt_units`].
    pub fn decrypt_units(&self, data: &mut [u8], unit: usize, first_iv: u64) {
        assert!(unit.is_multiple_of(512) && data.len().is_multiple_of(unit), "whole units of whole sectors");
        for (index, chunk) in data.chunks_exact_mut(unit).enumerate() {
            let mut previous = self.iv(first_iv + (index * unit / 512) as u64);
            for block in chunk.chunks_exact_mut(16) {
                let mut ciphertext = [0u8; 16];
                ciphertext.copy_from_slice(block);
                self.decrypt_block(block);
                block.iter_mut().zip(previous).for_each(|(b, p)| *b ^= p);
                previous = ciphertext;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_follows_the_sector_number() {
        let cipher = CbcEssiv::new(&[7u8; 32]).unwrap();
        let plain: Vec<u8> = (0..2048u32).map(|i| i as u8).collect();
        let mut data = plain.clone();
        cipher.encrypt_units(&mut data, 512, 9);
        assert_ne!(data, plain);
        // Sector 10 alone encrypts like the second sector of a run from 9.
        let mut second = plain[512..1024].to_vec();
        cipher.encrypt_units(&mut second, 512, 10);
        assert_eq!(second, data[512..1024]);
        cipher.decrypt_units(&mut data, 512, 9);
        assert_eq!(data, plain);
        assert!(CbcEssiv::new(&[0u8; 64]).is_none());
    }
}
