//! JOSE primitives shared by the JWE writers and readers of the crate (ocicrypt's JWE wrapper, clevis's compact
//! JWEs in `kms::clevis`): the ECDH-ES Concat KDF and A256GCM with detached tags.

use super::SecretBytes;
use aes_gcm::aead::{AeadInPlace, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce, Tag};
use sha2::{Digest, Sha256};
use zeroize::Zeroize;

/// NIST SP 800-56A Concat KDF as RFC 7518 §4.6.2 uses it: one SHA-256 round (every key here is at most 256
/// bits) over counter 1 ‖ Z ‖ AlgorithmID ‖ PartyUInfo ‖ PartyVInfo ‖ keydatalen, the three info fields each
/// prefixed with their 32-bit big-endian length. AlgorithmID is the `alg` for key wrapping, and the `enc` for
/// direct key agreement (`"alg":"ECDH-ES"`, as clevis's tang pin uses it).
pub fn concat_kdf_sha256(z: &[u8], algorithm_id: &[u8], key_len: usize, apu: &[u8], apv: &[u8]) -> SecretBytes {
    debug_assert!(key_len <= 32, "one SHA-256 round derives at most 256 bits");
    let mut hash = Sha256::new();
    hash.update(1u32.to_be_bytes());
    hash.update(z);
    for field in [algorithm_id, apu, apv] {
        hash.update(length_prefix(field));
        hash.update(field);
    }
    hash.update(((key_len * 8) as u32).to_be_bytes());
    let mut digest = hash.finalize();
    let key = SecretBytes::new(digest[..key_len].to_vec());
    digest.as_mut_slice().zeroize();
    key
}

fn length_prefix(field: &[u8]) -> [u8; 4] {
    // Header values are bounded by the 1 MiB input limit, so the length fits.
    u32::try_from(field.len()).unwrap_or(u32::MAX).to_be_bytes()
}

/// A256GCM encryption with associated data: (ciphertext, tag).
pub fn a256gcm_encrypt(cek: &[u8; 32], iv: &[u8; 12], aad: &[u8], plaintext: &[u8]) -> (Vec<u8>, [u8; 16]) {
    let cipher = Aes256Gcm::new(cek.into());
    let mut buffer = plaintext.to_vec();
    let tag = cipher
        .encrypt_in_place_detached(Nonce::from_slice(iv), aad, &mut buffer)
        .expect("AES-GCM encryption cannot fail below 64 GiB");
    (buffer, tag.into())
}

/// A256GCM decryption; `None` unless the key, IV and tag have A256GCM's lengths and the tag authenticates (the
/// plaintext is released only then, from a wiping buffer).
pub fn a256gcm_decrypt(cek: &[u8], iv: &[u8], aad: &[u8], ciphertext: &[u8], tag: &[u8]) -> Option<SecretBytes> {
    if iv.len() != 12 || tag.len() != 16 {
        return None;
    }
    let cipher = Aes256Gcm::new_from_slice(cek).ok()?;
    let mut buffer = SecretBytes::new(ciphertext.to_vec());
    cipher.decrypt_in_place_detached(Nonce::from_slice(iv), aad, &mut buffer, Tag::from_slice(tag)).ok()?;
    Some(buffer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a256gcm_round_trip_and_tamper() {
        let (ciphertext, tag) = a256gcm_encrypt(&[1; 32], &[2; 12], b"aad", b"plain");
        assert_eq!(&a256gcm_decrypt(&[1; 32], &[2; 12], b"aad", &ciphertext, &tag).unwrap()[..], b"plain");
        assert!(a256gcm_decrypt(&[1; 32], &[2; 12], b"aaD", &ciphertext, &tag).is_none());
        assert!(a256gcm_decrypt(&[1; 31], &[2; 12], b"aad", &ciphertext, &tag).is_none());
    }
}
