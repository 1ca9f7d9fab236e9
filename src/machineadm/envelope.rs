//! The envelope itself: PBKDF2-HMAC-SHA-512 stretches the passphrase into an AES-256-GCM key.

use super::Error;
use super::document::{EncryptedConfig, RECOMMENDED_ITERATIONS};
use crate::crypto::aead::{GCM_NONCE_LEN, open_aes256gcm, seal_aes256gcm};
use crate::crypto::kdf::pbkdf2_sha512;
use crate::crypto::{Passphrase, SecretBytes, random};

/// Where the salt and nonce of a seal come from.
#[derive(Debug, Clone)]
pub enum Nonces {
    /// Fresh from the OS CSPRNG: 16-byte salt, 12-byte IV. Always, outside fixtures.
    Fresh,
    /// Fixed values for reproducible test fixtures. Reusing them with one passphrase breaks GCM.
    Fixed {
        /// PBKDF2 salt.
        salt: Vec<u8>,
        /// GCM nonce.
        iv: [u8; GCM_NONCE_LEN],
    },
}

/// Seals `plaintext` into an `EncryptedConfig` with the proposal's parameters (50,000 iterations).
pub fn seal_bytes(
    plaintext: &[u8],
    passphrase: &Passphrase,
    provider: &str,
    passphrase_uri: &str,
    nonces: &Nonces,
) -> EncryptedConfig {
    let (salt, iv) = match nonces {
        Nonces::Fresh => (random::bytes::<16>().to_vec(), random::bytes::<GCM_NONCE_LEN>()),
        Nonces::Fixed { salt, iv } => (salt.clone(), *iv),
    };
    let key = pbkdf2_sha512(passphrase, &salt, RECOMMENDED_ITERATIONS);
    EncryptedConfig {
        provider: provider.to_owned(),
        passphrase_uri: passphrase_uri.to_owned(),
        ciphertext: seal_aes256gcm(&key, &iv, plaintext),
        salt,
        iv,
        iterations: RECOMMENDED_ITERATIONS,
    }
}

impl EncryptedConfig {
    /// Decrypts and authenticates; `index` names the document in the error.
    pub fn decrypt(&self, index: usize, passphrase: &Passphrase) -> Result<SecretBytes, Error> {
        let key = pbkdf2_sha512(passphrase, &self.salt, self.iterations);
        open_aes256gcm(&key, &self.iv, &self.ciphertext)
            .map_err(|_| Error::Unauthenticated { index, provider: self.provider.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector_passphrase() -> Passphrase {
        Passphrase::new(b"correct horse battery staple".to_vec())
    }

    fn vector_nonces() -> Nonces {
        let iv: Vec<u8> = (0xa0u8..=0xab).collect();
        Nonces::Fixed { salt: (0u8..16).collect(), iv: iv.try_into().unwrap() }
    }

    /// docs/formats.md#machineadm-encryptedconfig, sealing direction.
    #[test]
    fn known_answer_seal() {
        let doc = seal_bytes(
            b"apiVersion: v1\nkind: ConfigMap\n",
            &vector_passphrase(),
            "file",
            "file:///x",
            &vector_nonces(),
        );
        assert_eq!(
            crate::crypto::encoding::b64_encode(&doc.ciphertext),
            "P25Mwy3yorzjCaQwrR1xg0dYOcynBv53r8TYe0n36xUzCGEv4xpSfUSqbIk/yTw="
        );
        assert_eq!(hex::encode(&doc.ciphertext[31..]), "153308612fe31a527d44aa6c893fc93c");
    }

    #[test]
    fn wrong_passphrase_is_unauthenticated() {
        let doc = seal_bytes(b"x", &vector_passphrase(), "file", "file:///x", &Nonces::Fresh);
        let err = doc.decrypt(3, &Passphrase::new(b"correct horse battery staple\n".to_vec())).unwrap_err();
        assert!(matches!(err, Error::Unauthenticated { index: 3, .. }));
    }
}
