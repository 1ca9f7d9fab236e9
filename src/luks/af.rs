//! The anti-forensic splitter of LUKS (cryptsetup lib/luks1/af.c, identical for LUKS1 and LUKS2): the loop lives
//! in the `cryptadm-bulk` crate (crates/bulk/src/af.rs), compiled optimised in every profile; the random stripes
//! come from the OS CSPRNG.

use super::hash::Hash;
use zeroize::Zeroizing;

/// The only stripe count cryptsetup and QEMU write.
pub const STRIPES: u32 = 4000;

/// Splits `key` into `stripes` blocks (`key.len() × stripes` bytes), the first `stripes − 1` of them random.
pub fn split(key: &[u8], stripes: u32, hash: Hash) -> Zeroizing<Vec<u8>> {
    cryptadm_bulk::af::split(key, stripes, hash, crate::crypto::random::fill)
}

/// Recovers a key of `key_len` bytes from `material` (at least `key_len × stripes` bytes).
pub fn merge(material: &[u8], key_len: usize, stripes: u32, hash: Hash) -> Zeroizing<Vec<u8>> {
    cryptadm_bulk::af::merge(material, key_len, stripes, hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_then_merge_gives_the_key_for_every_hash_and_size() {
        for hash in [Hash::Sha1, Hash::Sha256, Hash::Sha512] {
            for len in [16usize, 32, 64, 65] {
                let key: Vec<u8> = (0..len as u8).collect();
                let material = split(&key, STRIPES, hash);
                assert_eq!(material.len(), len * STRIPES as usize);
                assert_eq!(&merge(&material, len, STRIPES, hash)[..], &key[..]);
            }
        }
    }

    #[test]
    fn every_stripe_matters() {
        let key = [7u8; 32];
        let mut material = split(&key, 10, Hash::Sha256);
        material[0] ^= 1;
        assert_ne!(&merge(&material, 32, 10, Hash::Sha256)[..], &key[..]);
    }

    /// Two stripes by hand: d = diffuse(s0); key = s1 ^ d; diffuse of a 32-byte block with sha256 is one chunk.
    #[test]
    fn merge_matches_the_definition() {
        let s0 = [1u8; 32];
        let s1 = [2u8; 32];
        let mut material = s0.to_vec();
        material.extend_from_slice(&s1);
        let d = Hash::Sha256.digest(&[&0u32.to_be_bytes(), &s0]);
        let expected: Vec<u8> = d.iter().zip(s1).map(|(a, b)| a ^ b).collect();
        assert_eq!(&merge(&material, 32, 2, Hash::Sha256)[..], &expected[..]);
    }
}
