//! The hash functions LUKS names in headers (`hashSpec`, `af.hash`, `digest.hash`, `kdf.hash`), as one enum so
//! the AF splitter, PBKDF2 and the volume-key digest all dispatch the same way.

use super::{Error, Result};

/// A hash function by its cryptsetup name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hash {
    /// `sha1` (old LUKS1 images).
    Sha1,
    /// `sha256`, the default everywhere.
    Sha256,
    /// `sha512`.
    Sha512,
}

impl Hash {
    /// Parses a cryptsetup hash name (case-insensitive, as libgcrypt/OpenSSL backends accept it).
    pub fn from_name(name: &str) -> Result<Hash> {
        match name.to_ascii_lowercase().as_str() {
            "sha1" => Ok(Hash::Sha1),
            "sha256" => Ok(Hash::Sha256),
            "sha512" => Ok(Hash::Sha512),
            _ => Err(Error::unsupported(format!("hash `{name}`"))),
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

    /// Output length in bytes.
    pub fn output_len(self) -> usize {
        match self {
            Hash::Sha1 => 20,
            Hash::Sha256 => 32,
            Hash::Sha512 => 64,
        }
    }

    /// `H(parts[0] || parts[1] || …)`.
    pub fn digest(self, parts: &[&[u8]]) -> Vec<u8> {
        self.bulk().digest(parts)
    }

    /// PBKDF2-HMAC with this hash, filling `out`.
    pub fn pbkdf2(self, password: &[u8], salt: &[u8], iterations: u32, out: &mut [u8]) {
        self.bulk().pbkdf2(password, salt, iterations, out);
    }

    /// The same function in `cryptadm-bulk`, where the loops over it are compiled optimised.
    pub(crate) fn bulk(self) -> cryptadm_bulk::Hash {
        match self {
            Hash::Sha1 => cryptadm_bulk::Hash::Sha1,
            Hash::Sha256 => cryptadm_bulk::Hash::Sha256,
            Hash::Sha512 => cryptadm_bulk::Hash::Sha512,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7914 §11 PBKDF2-HMAC-SHA256 vector ("passwd", "salt", c = 1).
    #[test]
    fn pbkdf2_sha256_known_answer() {
        let mut out = [0u8; 64];
        Hash::Sha256.pbkdf2(b"passwd", b"salt", 1, &mut out);
        assert_eq!(
            hex::encode(out),
            "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc\
             49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"
        );
    }

    #[test]
    fn names_round_trip() {
        for h in [Hash::Sha1, Hash::Sha256, Hash::Sha512] {
            assert_eq!(Hash::from_name(h.name()).unwrap(), h);
            assert_eq!(h.digest(&[b"x"]).len(), h.output_len());
        }
        assert!(Hash::from_name("whirlpool").is_err());
    }
}
