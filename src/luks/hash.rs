//! The hash functions LUKS names in headers (`hashSpec`, `af.hash`, `digest.hash`, `kdf.hash`), as one enum so
//! the AF splitter, PBKDF2 and the volume-key digest all dispatch the same way.

use super::Error;

/// A hash function by its cryptsetup name: `cryptadm-bulk`'s, where the loops over it (PBKDF2, the AF splitter)
/// are compiled optimised.
pub use cryptadm_bulk::Hash;

/// A header naming a hash this library does not implement.
impl From<cryptadm_bulk::UnknownHash> for Error {
    fn from(unknown: cryptadm_bulk::UnknownHash) -> Self {
        Error::unsupported(format!("hash `{}`", unknown.name))
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
        assert_eq!(
            Error::from(Hash::from_name("whirlpool").unwrap_err()).to_string(),
            "unsupported LUKS feature: hash `whirlpool`"
        );
    }
}
