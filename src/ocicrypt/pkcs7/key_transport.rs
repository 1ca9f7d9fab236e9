//! RSA key transport: how a RecipientInfo's encryptedKey yields the content key.

use super::unsupported;
use crate::crypto::SecretBytes;
use crate::ocicrypt::Error;
use der::asn1::ObjectIdentifier;
use der::{Decode, Encode};
use rsa::pkcs1::RsaOaepParams;
use rsa::rand_core::OsRng;
use rsa::{Oaep, Pkcs1v15Encrypt, RsaPrivateKey};
use subtle::{Choice, ConditionallySelectable, ConstantTimeEq};
use x509_cert::spki::AlgorithmIdentifierOwned;

/// rsaEncryption (PKCS#1 v1.5), what ocicrypt and OpenSSL write by default.
pub(super) const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
/// id-RSAES-OAEP (RFC 4055), what `openssl cms -keyopt rsa_padding_mode:oaep` writes.
const RSAES_OAEP: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.7");
/// id-mgf1, the only mask generation function there is.
const MGF1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.8");
/// id-pSpecified: the OAEP label given explicitly.
const P_SPECIFIED: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.9");

/// SHA-1 and the SHA-2 family (NIST, RFC 5754).
const SHA1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.14.3.2.26");
const SHA224: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.4");
const SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.1");
const SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.2");
const SHA512: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.3");

/// The OAEP hash functions Go's reader knows, plus SHA-224, which Go's writer offers and costs nothing here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OaepHash {
    Sha1,
    Sha224,
    Sha256,
    Sha384,
    Sha512,
}

impl OaepHash {
    fn from_oid(oid: ObjectIdentifier) -> Option<Self> {
        Some(match oid {
            SHA1 => Self::Sha1,
            SHA224 => Self::Sha224,
            SHA256 => Self::Sha256,
            SHA384 => Self::Sha384,
            SHA512 => Self::Sha512,
            _ => return None,
        })
    }

    fn padding(self) -> Oaep {
        match self {
            Self::Sha1 => Oaep::new::<sha1::Sha1>(),
            Self::Sha224 => Oaep::new::<sha2::Sha224>(),
            Self::Sha256 => Oaep::new::<sha2::Sha256>(),
            Self::Sha384 => Oaep::new::<sha2::Sha384>(),
            Self::Sha512 => Oaep::new::<sha2::Sha512>(),
        }
    }
}

/// A supported keyEncryptionAlgorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum KeyTransport {
    /// RSAES-PKCS1-v1_5.
    Pkcs1v15,
    /// RSAES-OAEP with MGF1 over the same hash and an empty label.
    Oaep(OaepHash),
}

impl KeyTransport {
    /// Interprets a RecipientInfo's keyEncryptionAlgorithm.
    pub(super) fn parse(algorithm: &AlgorithmIdentifierOwned) -> Result<Self, Error> {
        match algorithm.oid {
            // Go omits the parameters, OpenSSL writes NULL; neither carries anything.
            RSA_ENCRYPTION => Ok(Self::Pkcs1v15),
            RSAES_OAEP => oaep_hash(algorithm).map(Self::Oaep),
            other => {
                Err(unsupported(format!("key encryption algorithm {other} (supported: RSA PKCS#1 v1.5, RSA-OAEP)")))
            }
        }
    }

    /// Decrypts the content key and says whether that worked, without branching on the answer.
    ///
    /// A failed RSA decryption must look, to whoever submits ciphertexts, exactly like a key that decrypts to the
    /// wrong content key — otherwise the difference is a Bleichenbacher (PKCS#1 v1.5) or Manger (OAEP) oracle. So
    /// a failure, or a result of the wrong length, yields random bytes of `key_len` instead, the caller decrypts
    /// the content with them all the same (RFC 3218 §2.3.2), and only the combined outcome is ever looked at.
    pub(super) fn decrypt(self, key: &RsaPrivateKey, encrypted_key: &[u8], key_len: usize) -> (SecretBytes, Choice) {
        let result = match self {
            Self::Pkcs1v15 => key.decrypt_blinded(&mut OsRng, Pkcs1v15Encrypt, encrypted_key),
            Self::Oaep(hash) => key.decrypt_blinded(&mut OsRng, hash.padding(), encrypted_key),
        };
        let decrypted_ok = Choice::from(u8::from(result.is_ok()));
        let decrypted = SecretBytes::new(result.unwrap_or_default());
        let fits = decrypted_ok & (decrypted.len() as u64).ct_eq(&(key_len as u64));
        let mut candidate = SecretBytes::new(vec![0; key_len]);
        let copied = decrypted.len().min(key_len);
        candidate[..copied].copy_from_slice(&decrypted[..copied]);
        let mut content_key = random_key(key_len);
        for (byte, candidate) in content_key.iter_mut().zip(candidate.iter()) {
            byte.conditional_assign(candidate, fits);
        }
        (content_key, fits)
    }
}

fn random_key(len: usize) -> SecretBytes {
    let mut key = SecretBytes::new(vec![0; len]);
    crate::crypto::random::fill(&mut key);
    key
}

/// The OAEP hash from RSAES-OAEP-params; absent parameters mean the defaults (SHA-1, MGF1-SHA-1, empty label).
fn oaep_hash(algorithm: &AlgorithmIdentifierOwned) -> Result<OaepHash, Error> {
    let invalid = |problem: &str| unsupported(format!("RSA-OAEP parameters: {problem}"));
    let Some(parameters) = &algorithm.parameters else {
        return Ok(OaepHash::Sha1);
    };
    let encoded = parameters.to_der().map_err(|_| invalid("cannot be encoded"))?;
    let parameters = RsaOaepParams::from_der(&encoded).map_err(|_| invalid("not RSAES-OAEP-params"))?;
    let hash = OaepHash::from_oid(parameters.hash.oid).ok_or_else(|| invalid("unknown hash function"))?;
    let mgf_hash = parameters.mask_gen.parameters.as_ref().map(|mgf| mgf.oid);
    // Go (and rsa here) use one hash for both; other combinations do not occur in practice.
    if parameters.mask_gen.oid != MGF1 || mgf_hash.and_then(OaepHash::from_oid) != Some(hash) {
        return Err(invalid("only MGF1 with the OAEP hash is supported"));
    }
    let label = parameters.p_source.parameters.map(|label| label.value().to_vec()).unwrap_or_default();
    if parameters.p_source.oid != P_SPECIFIED || !label.is_empty() {
        return Err(invalid("only the empty label is supported"));
    }
    Ok(hash)
}

#[cfg(test)]
mod tests {
    use super::*;
    use der::Any;

    fn algorithm(oid: ObjectIdentifier, parameters: Option<&[u8]>) -> AlgorithmIdentifierOwned {
        AlgorithmIdentifierOwned { oid, parameters: parameters.map(|der| Any::from_der(der).unwrap()) }
    }

    #[test]
    fn rsa_encryption_with_or_without_null() {
        assert_eq!(KeyTransport::parse(&algorithm(RSA_ENCRYPTION, None)).unwrap(), KeyTransport::Pkcs1v15);
        assert_eq!(KeyTransport::parse(&algorithm(RSA_ENCRYPTION, Some(&[5, 0]))).unwrap(), KeyTransport::Pkcs1v15);
    }

    #[test]
    fn oaep_parameters() {
        // OpenSSL's defaults: an empty SEQUENCE.
        assert_eq!(
            KeyTransport::parse(&algorithm(RSAES_OAEP, Some(&[0x30, 0]))).unwrap(),
            KeyTransport::Oaep(OaepHash::Sha1)
        );
        assert_eq!(KeyTransport::parse(&algorithm(RSAES_OAEP, None)).unwrap(), KeyTransport::Oaep(OaepHash::Sha1));
        let sha256 = RsaOaepParams::new::<sha2::Sha256>().to_der().unwrap();
        assert_eq!(
            KeyTransport::parse(&algorithm(RSAES_OAEP, Some(&sha256))).unwrap(),
            KeyTransport::Oaep(OaepHash::Sha256)
        );
        let labelled = RsaOaepParams::new_with_label::<sha2::Sha256>(b"label").to_der().unwrap();
        assert!(KeyTransport::parse(&algorithm(RSAES_OAEP, Some(&labelled))).is_err());
        let mut mixed = RsaOaepParams::new::<sha2::Sha256>();
        mixed.mask_gen.parameters = RsaOaepParams::new::<sha2::Sha512>().mask_gen.parameters;
        assert!(KeyTransport::parse(&algorithm(RSAES_OAEP, Some(&mixed.to_der().unwrap()))).is_err());
    }

    #[test]
    fn other_algorithms_are_unsupported() {
        let ecdh = ObjectIdentifier::new_unwrap("1.3.132.1.11.1");
        assert!(matches!(KeyTransport::parse(&algorithm(ecdh, None)), Err(Error::MalformedWrappedKey { .. })));
    }
}
