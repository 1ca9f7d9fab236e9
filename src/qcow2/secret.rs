//! How OpenStack turns a key-manager secret into a LUKS passphrase, so that an image's passphrase is the one the
//! consuming service will derive (docs/formats.md, "LUKS and qcow2"):
//!
//! - `passphrase` secrets are used verbatim: Nova's ephemeral encryption (`nova/crypto.py`), and os-brick from
//!   6.9.0 (`os_brick/utils.py` `get_passphrase_from_secret`);
//! - every other secret type (`symmetric`, what Cinder creates) becomes `binascii.hexlify(key).decode()`: the
//!   lowercase hex of the raw key bytes, two digits per byte (same function; Cinder's RBD and NFS drivers do the
//!   same). os-brick's old "mangled" form (dropping leading zeros) was removed in 5.0.0 and is never written.
//!
//! New secrets follow the services' own generators: Nova's passphrase is the base64 text of 64 random bytes;
//! Cinder's symmetric key is 256 random bits.

use zeroize::Zeroizing;

/// How the key manager secret becomes the LUKS passphrase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretType {
    /// Barbican `passphrase`: used verbatim (Nova's ephemeral encryption; os-brick ≥ 6.9.0).
    Passphrase,
    /// Barbican `symmetric`: the passphrase is the lowercase hex of the key bytes (os-brick, Cinder).
    Symmetric,
}

impl SecretType {
    /// Barbican's name.
    pub fn name(self) -> &'static str {
        match self {
            SecretType::Passphrase => "passphrase",
            SecretType::Symmetric => "symmetric",
        }
    }

    /// The LUKS passphrase the consuming service derives from the secret's bytes.
    pub fn passphrase(self, secret: &[u8]) -> Zeroizing<Vec<u8>> {
        match self {
            SecretType::Passphrase => Zeroizing::new(secret.to_vec()),
            SecretType::Symmetric => Zeroizing::new(hex::encode(secret).into_bytes()),
        }
    }

    /// A new secret as the service would make it: base64 text of 64 random bytes (Nova), or 32 random key
    /// bytes (Cinder's default AES-256 key).
    pub fn generate(self) -> Zeroizing<Vec<u8>> {
        use base64::Engine;
        match self {
            SecretType::Passphrase => {
                let raw = Zeroizing::new(crate::crypto::random::bytes::<64>());
                Zeroizing::new(base64::engine::general_purpose::STANDARD.encode(&raw[..]).into_bytes())
            }
            SecretType::Symmetric => Zeroizing::new(crate::crypto::random::bytes::<32>().to_vec()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_is_lowercase_hex_with_leading_zeros() {
        assert_eq!(&SecretType::Symmetric.passphrase(&[0x0a, 0xff, 0x00])[..], b"0aff00");
        assert_eq!(&SecretType::Passphrase.passphrase(b"abc")[..], b"abc");
        assert_eq!(SecretType::Passphrase.generate().len(), 88);
        assert_eq!(SecretType::Symmetric.generate().len(), 32);
    }
}
