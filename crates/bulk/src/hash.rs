//! The hash functions LUKS headers name (`sha1`, `sha256`, `sha512`): one-shot digests and PBKDF2-HMAC.

use sha2::Digest;

/// A hash function LUKS (and machineadm's KDF) uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hash {
    /// SHA-1 (old LUKS1 images).
    Sha1,
    /// SHA-256.
    Sha256,
    /// SHA-512.
    Sha512,
}

/// A hash name none of [`Hash`]'s variants has (`Hash::from_name`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unsupported hash `{name}`")]
pub struct UnknownHash {
    /// The name as given.
    pub name: String,
}

impl Hash {
    /// Parses a hash name as cryptsetup writes it in LUKS headers, clevis in its tpm2 pin and systemd in its
    /// token (case-insensitive, as libgcrypt's and OpenSSL's backends accept it).
    pub fn from_name(name: &str) -> Result<Hash, UnknownHash> {
        match name.to_ascii_lowercase().as_str() {
            "sha1" => Ok(Hash::Sha1),
            "sha256" => Ok(Hash::Sha256),
            "sha512" => Ok(Hash::Sha512),
            _ => Err(UnknownHash { name: name.to_owned() }),
        }
    }

    /// The name written in headers.
    pub fn name(self) -> &'static str {
        match self {
            Hash::Sha1 => "sha1",
            Hash::Sha256 => "sha256",
            Hash::Sha512 => "sha512",
        }
    }

    /// The digest's length in bytes.
    pub fn output_len(self) -> usize {
        match self {
            Hash::Sha1 => 20,
            Hash::Sha256 => 32,
            Hash::Sha512 => 64,
        }
    }

    /// `H(parts[0] || parts[1] || …)`.
    pub fn digest(self, parts: &[&[u8]]) -> Vec<u8> {
        let mut out = vec![0u8; self.output_len()];
        self.digest_into(parts, &mut out);
        out
    }

    /// `H(parts[0] || parts[1] || …)` into `out`, which is [`Self::output_len`] bytes.
    ///
    /// # Panics
    /// When `out` has another length.
    pub fn digest_into(self, parts: &[&[u8]], out: &mut [u8]) {
        fn run<D: Digest>(parts: &[&[u8]], out: &mut [u8]) {
            let mut hasher = D::new();
            for part in parts {
                hasher.update(part);
            }
            out.copy_from_slice(&hasher.finalize());
        }
        match self {
            Hash::Sha1 => run::<sha1::Sha1>(parts, out),
            Hash::Sha256 => run::<sha2::Sha256>(parts, out),
            Hash::Sha512 => run::<sha2::Sha512>(parts, out),
        }
    }

    /// PBKDF2 with HMAC over this hash as its PRF, filling `out`.
    pub fn pbkdf2(self, password: &[u8], salt: &[u8], iterations: u32, out: &mut [u8]) {
        match self {
            Hash::Sha1 => pbkdf2::pbkdf2_hmac::<sha1::Sha1>(password, salt, iterations, out),
            Hash::Sha256 => pbkdf2::pbkdf2_hmac::<sha2::Sha256>(password, salt, iterations, out),
            Hash::Sha512 => pbkdf2::pbkdf2_hmac::<sha2::Sha512>(password, salt, iterations, out),
        }
    }
}
