//! AES-256-GCM with a 96-bit nonce, the 16-byte tag appended to the ciphertext (Go's `cipher.AEAD.Seal` layout).

use super::SecretBytes;
use super::kdf::Key256;
use aes_gcm::aead::{AeadInPlace, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce};

/// Length of the GCM nonce in bytes.
pub const GCM_NONCE_LEN: usize = 12;
/// Length of the GCM tag in bytes.
pub const GCM_TAG_LEN: usize = 16;

/// The tag did not verify: wrong key, or the ciphertext, nonce or tag was altered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TagMismatch;

/// Encrypts `plaintext` with empty associated data; returns `ciphertext ‖ tag`.
pub fn seal_aes256gcm(key: &Key256, nonce: &[u8; GCM_NONCE_LEN], plaintext: &[u8]) -> Vec<u8> {
    let cipher = Aes256Gcm::new((&**key).into());
    let mut buffer = Vec::with_capacity(plaintext.len() + GCM_TAG_LEN);
    buffer.extend_from_slice(plaintext);
    cipher
        .encrypt_in_place(Nonce::from_slice(nonce), b"", &mut buffer)
        .expect("AES-GCM encryption cannot fail below 64 GiB");
    buffer
}

/// Decrypts `ciphertext ‖ tag` with empty associated data. The plaintext never exists unverified outside this
/// function: it is decrypted in a wiping buffer and released only once the tag checks.
pub fn open_aes256gcm(key: &Key256, nonce: &[u8; GCM_NONCE_LEN], sealed: &[u8]) -> Result<SecretBytes, TagMismatch> {
    if sealed.len() < GCM_TAG_LEN {
        return Err(TagMismatch);
    }
    let cipher = Aes256Gcm::new((&**key).into());
    let mut buffer = SecretBytes::new(sealed.to_vec());
    cipher.decrypt_in_place(Nonce::from_slice(nonce), b"", &mut *buffer).map_err(|_| TagMismatch)?;
    Ok(buffer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use zeroize::Zeroizing;

    fn key() -> Key256 {
        Zeroizing::new([7u8; 32])
    }

    #[test]
    fn round_trip_and_tamper() {
        let nonce = [1u8; 12];
        let sealed = seal_aes256gcm(&key(), &nonce, b"hello");
        assert_eq!(sealed.len(), 5 + GCM_TAG_LEN);
        assert_eq!(&open_aes256gcm(&key(), &nonce, &sealed).unwrap()[..], b"hello");
        for i in 0..sealed.len() {
            let mut bad = sealed.clone();
            bad[i] ^= 1;
            assert_eq!(open_aes256gcm(&key(), &nonce, &bad), Err(TagMismatch));
        }
        assert_eq!(open_aes256gcm(&key(), &nonce, &sealed[..10]), Err(TagMismatch));
    }
}
