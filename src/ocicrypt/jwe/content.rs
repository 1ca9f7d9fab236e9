//! JWE content encryption (RFC 7518 §5): AES-GCM, and AES-CBC with HMAC-SHA-2 for decryption only (go-jose reads
//! it, so an ocicrypt image may carry it, but ocicrypt always writes A256GCM).

use crate::crypto::SecretBytes;
use aes::{Aes128, Aes192, Aes256};
use aes_gcm::aead::consts::U12;
use aes_gcm::aead::{AeadInPlace, KeyInit};
use aes_gcm::{AesGcm, Nonce, Tag};
use cbc::cipher::block_padding::Pkcs7;
use cbc::cipher::{BlockCipher, BlockDecryptMut, KeyIvInit};
use hmac::SimpleHmac;
use hmac::digest::core_api::BlockSizeUser;
use hmac::digest::{Digest, Mac};
use sha2::{Sha256, Sha384, Sha512};

/// Length of an A*GCM initialization vector.
const GCM_IV_LEN: usize = 12;
/// Length of an A*GCM tag.
const GCM_TAG_LEN: usize = 16;
/// Length of an A*CBC-HS* initialization vector (one AES block).
const CBC_IV_LEN: usize = 16;

/// A content-encryption algorithm (`enc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ContentAlgorithm {
    A128Gcm,
    A192Gcm,
    A256Gcm,
    A128CbcHs256,
    A192CbcHs384,
    A256CbcHs512,
}

impl ContentAlgorithm {
    const ALL: [Self; 6] =
        [Self::A128Gcm, Self::A192Gcm, Self::A256Gcm, Self::A128CbcHs256, Self::A192CbcHs384, Self::A256CbcHs512];

    /// The `enc` header value.
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::A128Gcm => "A128GCM",
            Self::A192Gcm => "A192GCM",
            Self::A256Gcm => "A256GCM",
            Self::A128CbcHs256 => "A128CBC-HS256",
            Self::A192CbcHs384 => "A192CBC-HS384",
            Self::A256CbcHs512 => "A256CBC-HS512",
        }
    }

    pub(super) fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|alg| alg.name() == name)
    }

    /// Length of the content-encryption key; for CBC-HS it is the MAC key and the AES key concatenated.
    pub(super) fn key_len(self) -> usize {
        match self {
            Self::A128Gcm => 16,
            Self::A192Gcm => 24,
            Self::A256Gcm | Self::A128CbcHs256 => 32,
            Self::A192CbcHs384 => 48,
            Self::A256CbcHs512 => 64,
        }
    }

    pub(super) fn iv_len(self) -> usize {
        if self.is_gcm() { GCM_IV_LEN } else { CBC_IV_LEN }
    }

    /// Length of the authentication tag: 16 for GCM, half the HMAC output for CBC-HS.
    pub(super) fn tag_len(self) -> usize {
        if self.is_gcm() { GCM_TAG_LEN } else { self.key_len() / 2 }
    }

    /// Whether a ciphertext of `len` bytes is possible at all (CBC produces whole, non-empty blocks).
    pub(super) fn ciphertext_len_ok(self, len: usize) -> bool {
        self.is_gcm() || (len > 0 && len.is_multiple_of(CBC_IV_LEN))
    }

    fn is_gcm(self) -> bool {
        matches!(self, Self::A128Gcm | Self::A192Gcm | Self::A256Gcm)
    }
}

/// Encrypts with A256GCM, the only content algorithm ocicrypt writes. Returns (ciphertext, tag).
pub(super) fn encrypt_a256gcm(
    cek: &[u8; 32],
    iv: &[u8; GCM_IV_LEN],
    aad: &[u8],
    plaintext: &[u8],
) -> (Vec<u8>, [u8; GCM_TAG_LEN]) {
    crate::crypto::jose::a256gcm_encrypt(cek, iv, aad, plaintext)
}

/// Authenticates and decrypts; `None` for any failure (wrong key, altered data). The caller has checked the IV
/// and tag lengths against `alg`. The plaintext is released only once authenticated.
pub(super) fn decrypt(
    alg: ContentAlgorithm,
    cek: &[u8],
    iv: &[u8],
    aad: &[u8],
    ciphertext: &[u8],
    tag: &[u8],
) -> Option<SecretBytes> {
    if cek.len() != alg.key_len() || iv.len() != alg.iv_len() || tag.len() != alg.tag_len() {
        return None;
    }
    match alg {
        ContentAlgorithm::A128Gcm => gcm_decrypt::<Aes128>(cek, iv, aad, ciphertext, tag),
        ContentAlgorithm::A192Gcm => gcm_decrypt::<Aes192>(cek, iv, aad, ciphertext, tag),
        ContentAlgorithm::A256Gcm => gcm_decrypt::<Aes256>(cek, iv, aad, ciphertext, tag),
        ContentAlgorithm::A128CbcHs256 => cbc_hs_decrypt::<Aes128, Sha256>(cek, iv, aad, ciphertext, tag),
        ContentAlgorithm::A192CbcHs384 => cbc_hs_decrypt::<Aes192, Sha384>(cek, iv, aad, ciphertext, tag),
        ContentAlgorithm::A256CbcHs512 => cbc_hs_decrypt::<Aes256, Sha512>(cek, iv, aad, ciphertext, tag),
    }
}

fn gcm_decrypt<C>(cek: &[u8], iv: &[u8], aad: &[u8], ciphertext: &[u8], tag: &[u8]) -> Option<SecretBytes>
where
    AesGcm<C, U12>: KeyInit + AeadInPlace,
{
    let cipher = AesGcm::<C, U12>::new_from_slice(cek).ok()?;
    let mut buffer = SecretBytes::new(ciphertext.to_vec());
    cipher.decrypt_in_place_detached(Nonce::from_slice(iv), aad, &mut buffer, Tag::from_slice(tag)).ok()?;
    Some(buffer)
}

/// RFC 7518 §5.2.2.2: the tag is the first half of HMAC(MAC_KEY, AAD ‖ IV ‖ ciphertext ‖ AL), checked in
/// constant time before anything is decrypted, so the CBC padding is never an oracle.
fn cbc_hs_decrypt<C, D>(cek: &[u8], iv: &[u8], aad: &[u8], ciphertext: &[u8], tag: &[u8]) -> Option<SecretBytes>
where
    C: BlockCipher + BlockDecryptMut + KeyInit,
    D: Digest + BlockSizeUser,
{
    let (mac_key, enc_key) = cek.split_at(cek.len() / 2);
    let mut mac = <SimpleHmac<D> as Mac>::new_from_slice(mac_key).ok()?;
    let aad_bits = (aad.len() as u64).checked_mul(8)?;
    for part in [aad, iv, ciphertext, &aad_bits.to_be_bytes()[..]] {
        mac.update(part);
    }
    mac.verify_truncated_left(tag).ok()?;
    let mut buffer = SecretBytes::new(ciphertext.to_vec());
    let decryptor = cbc::Decryptor::<C>::new_from_slices(enc_key, iv).ok()?;
    let len = decryptor.decrypt_padded_mut::<Pkcs7>(&mut buffer).ok()?.len();
    // The padding bytes left in the capacity are wiped with the rest when the buffer drops.
    buffer.truncate(len);
    Some(buffer)
}

/// A random key of `len` bytes, used in place of a key that failed to unwrap so that a wrong key costs the same
/// work as a right one (no timing difference between "unwrap failed" and "content did not authenticate").
pub(super) fn decoy_key(len: usize) -> SecretBytes {
    let mut key = SecretBytes::new(vec![0u8; len]);
    crate::crypto::random::fill(&mut key);
    key
}
