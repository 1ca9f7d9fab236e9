//! JWE key management (RFC 7518 §4): RSA-OAEP (SHA-1, as go-jose's `RSA-OAEP`), RSA-OAEP-256, and ECDH-ES with
//! AES key wrap (Concat KDF with SHA-256, RFC 3394 wrap).

use crate::crypto::SecretBytes;
use crate::crypto::keys::{Curve, PrivateKey, PublicKey};
use p256::elliptic_curve::rand_core::OsRng;
use rsa::Oaep;
use sha2::Sha256;

/// A key-management algorithm (`alg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum KeyAlgorithm {
    RsaOaep,
    RsaOaep256,
    EcdhEsA128Kw,
    EcdhEsA192Kw,
    EcdhEsA256Kw,
}

impl KeyAlgorithm {
    const ALL: [Self; 5] =
        [Self::RsaOaep, Self::RsaOaep256, Self::EcdhEsA128Kw, Self::EcdhEsA192Kw, Self::EcdhEsA256Kw];

    /// The `alg` header value; for ECDH-ES it is also the Concat KDF's AlgorithmID.
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::RsaOaep => "RSA-OAEP",
            Self::RsaOaep256 => "RSA-OAEP-256",
            Self::EcdhEsA128Kw => "ECDH-ES+A128KW",
            Self::EcdhEsA192Kw => "ECDH-ES+A192KW",
            Self::EcdhEsA256Kw => "ECDH-ES+A256KW",
        }
    }

    pub(super) fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|alg| alg.name() == name)
    }

    /// What ocicrypt uses for a key without a JWK `alg`: RSA-OAEP for RSA, ECDH-ES+A256KW for EC (docs/formats.md).
    pub(super) fn default_for(key: &PublicKey) -> Self {
        if matches!(key, PublicKey::Rsa(_)) { Self::RsaOaep } else { Self::EcdhEsA256Kw }
    }

    /// Whether the algorithm works with this kind of key.
    pub(super) fn suits(self, key: &PublicKey) -> bool {
        self.is_rsa() == matches!(key, PublicKey::Rsa(_))
    }

    /// Whether the algorithm uses an ephemeral key (`epk`).
    pub(super) fn is_ecdh(self) -> bool {
        !self.is_rsa()
    }

    fn is_rsa(self) -> bool {
        matches!(self, Self::RsaOaep | Self::RsaOaep256)
    }

    fn padding(self) -> Oaep {
        // RSA-OAEP is OAEP with SHA-1 for both the hash and MGF1 (RFC 7518 §4.3); RSA-OAEP-256 uses SHA-256.
        if self == Self::RsaOaep { Oaep::new::<sha1::Sha1>() } else { Oaep::new::<Sha256>() }
    }

    /// Length of the AES key-wrapping key for ECDH-ES+AxxxKW.
    fn kek_len(self) -> usize {
        match self {
            Self::EcdhEsA128Kw => 16,
            Self::EcdhEsA192Kw => 24,
            _ => 32,
        }
    }
}

/// The content-encryption key wrapped for one recipient.
pub(super) struct WrappedKey {
    /// The `encrypted_key` member.
    pub encrypted_key: Vec<u8>,
    /// The ephemeral public key (`epk`) of ECDH-ES.
    pub epk: Option<PublicKey>,
}

/// Wraps `cek` for `key` (the caller has checked that `alg` suits it). Errors are messages for `Error::Wrap`.
pub(super) fn wrap(alg: KeyAlgorithm, key: &PublicKey, cek: &[u8]) -> Result<WrappedKey, String> {
    if let PublicKey::Rsa(rsa) = key {
        let encrypted_key = rsa.encrypt(&mut OsRng, alg.padding(), cek).map_err(|e| format!("RSA-OAEP: {e}"))?;
        return Ok(WrappedKey { encrypted_key, epk: None });
    }
    let (ephemeral, epk) = ephemeral_key(key.curve().ok_or("not an EC key")?);
    let z = shared_secret(&ephemeral, key).ok_or("the ephemeral key is on another curve")?;
    let kek = concat_kdf(&z, alg, &[], &[]);
    let encrypted_key = aes_key_wrap(&kek, cek).ok_or("AES key wrap failed")?;
    Ok(WrappedKey { encrypted_key, epk: Some(epk) })
}

/// Whether `key` could unwrap for a recipient using `alg` (and `epk` for ECDH-ES): same key type, same curve.
pub(super) fn applies(alg: KeyAlgorithm, key: &PrivateKey, epk: Option<&PublicKey>) -> bool {
    match key {
        PrivateKey::Rsa(_) => alg.is_rsa(),
        _ => alg.is_ecdh() && epk.and_then(PublicKey::curve) == key.curve(),
    }
}

/// Recovers the content-encryption key; `None` when `key` is not the recipient's (or the data was altered).
/// Which step failed is deliberately not told.
pub(super) fn unwrap(
    alg: KeyAlgorithm,
    key: &PrivateKey,
    encrypted_key: &[u8],
    epk: Option<&PublicKey>,
    apu: &[u8],
    apv: &[u8],
) -> Option<SecretBytes> {
    if let PrivateKey::Rsa(rsa) = key {
        // Blinded decryption: the RSA private operation's timing does not depend on the ciphertext.
        return rsa.decrypt_blinded(&mut OsRng, alg.padding(), encrypted_key).ok().map(SecretBytes::new);
    }
    let z = shared_secret(key, epk?)?;
    let kek = concat_kdf(&z, alg, apu, apv);
    aes_key_unwrap(&kek, encrypted_key)
}

/// A fresh ephemeral key pair on `curve`.
fn ephemeral_key(curve: Curve) -> (PrivateKey, PublicKey) {
    let secret = match curve {
        Curve::P256 => PrivateKey::P256(p256::SecretKey::random(&mut OsRng)),
        Curve::P384 => PrivateKey::P384(p384::SecretKey::random(&mut OsRng)),
        Curve::P521 => PrivateKey::P521(p521::SecretKey::random(&mut OsRng)),
    };
    let public = secret.public_key();
    (secret, public)
}

/// The ECDH shared secret Z: the x coordinate of the shared point, the curve's field size in bytes (the fixed
/// size matters: go-jose pads it, and a short Z would derive a different key). `None` if the curves differ.
fn shared_secret(secret: &PrivateKey, peer: &PublicKey) -> Option<SecretBytes> {
    let z = match (secret, peer) {
        (PrivateKey::P256(s), PublicKey::P256(p)) => {
            p256::ecdh::diffie_hellman(s.to_nonzero_scalar(), p.as_affine()).raw_secret_bytes().to_vec()
        }
        (PrivateKey::P384(s), PublicKey::P384(p)) => {
            p384::ecdh::diffie_hellman(s.to_nonzero_scalar(), p.as_affine()).raw_secret_bytes().to_vec()
        }
        (PrivateKey::P521(s), PublicKey::P521(p)) => {
            p521::ecdh::diffie_hellman(s.to_nonzero_scalar(), p.as_affine()).raw_secret_bytes().to_vec()
        }
        _ => return None,
    };
    Some(SecretBytes::new(z))
}

/// NIST SP 800-56A Concat KDF for ECDH-ES+AxxxKW: the algorithm's name is the AlgorithmID.
fn concat_kdf(z: &[u8], alg: KeyAlgorithm, apu: &[u8], apv: &[u8]) -> SecretBytes {
    crate::crypto::jose::concat_kdf_sha256(z, alg.name().as_bytes(), alg.kek_len(), apu, apv)
}

fn aes_key_wrap(kek: &[u8], cek: &[u8]) -> Option<Vec<u8>> {
    match kek.len() {
        16 => aes_kw::KekAes128::try_from(kek).ok()?.wrap_vec(cek).ok(),
        24 => aes_kw::KekAes192::try_from(kek).ok()?.wrap_vec(cek).ok(),
        32 => aes_kw::KekAes256::try_from(kek).ok()?.wrap_vec(cek).ok(),
        _ => None,
    }
}

fn aes_key_unwrap(kek: &[u8], wrapped: &[u8]) -> Option<SecretBytes> {
    let cek = match kek.len() {
        16 => aes_kw::KekAes128::try_from(kek).ok()?.unwrap_vec(wrapped).ok()?,
        24 => aes_kw::KekAes192::try_from(kek).ok()?.unwrap_vec(wrapped).ok()?,
        32 => aes_kw::KekAes256::try_from(kek).ok()?.unwrap_vec(wrapped).ok()?,
        _ => return None,
    };
    Some(SecretBytes::new(cek))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Digest;

    /// RFC 3394 §4.1: 128-bit key data wrapped with a 128-bit KEK.
    #[test]
    fn aes_key_wrap_matches_rfc_3394() {
        let kek = hex::decode("000102030405060708090A0B0C0D0E0F").unwrap();
        let data = hex::decode("00112233445566778899AABBCCDDEEFF").unwrap();
        let wrapped = aes_key_wrap(&kek, &data).unwrap();
        assert_eq!(hex::encode_upper(&wrapped), "1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5");
        assert_eq!(&aes_key_unwrap(&kek, &wrapped).unwrap()[..], &data[..]);
        let mut altered = wrapped.clone();
        altered[3] ^= 1;
        assert!(aes_key_unwrap(&kek, &altered).is_none());
    }

    /// The Concat KDF input layout of RFC 7518 §4.6.2, computed independently here for a fixed Z.
    #[test]
    fn concat_kdf_layout() {
        let z = [7u8; 32];
        let mut expected_input = vec![0, 0, 0, 1];
        expected_input.extend_from_slice(&z);
        expected_input.extend_from_slice(&[0, 0, 0, 14]);
        expected_input.extend_from_slice(b"ECDH-ES+A256KW");
        expected_input.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
        expected_input.extend_from_slice(&[0, 0, 1, 0]);
        let expected = Sha256::digest(&expected_input);
        assert_eq!(&concat_kdf(&z, KeyAlgorithm::EcdhEsA256Kw, &[], &[])[..], &expected[..]);
        assert_eq!(concat_kdf(&z, KeyAlgorithm::EcdhEsA128Kw, &[], &[]).len(), 16);
        assert_eq!(concat_kdf(&z, KeyAlgorithm::EcdhEsA192Kw, b"u", b"v").len(), 24);
    }

    #[test]
    fn names_round_trip() {
        for alg in KeyAlgorithm::ALL {
            assert_eq!(KeyAlgorithm::from_name(alg.name()), Some(alg));
        }
        assert_eq!(KeyAlgorithm::from_name("RSA1_5"), None);
    }
}
